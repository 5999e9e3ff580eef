#!/usr/bin/env python3
"""Decode/prefill of one checkpoint on kiln's CPU runtime, OpenVINO GenAI and llama.cpp, in one run.

Every engine gets the same workload: a prompt of exactly --prompt-tokens tokens, greedy, EOS ignored,
--new-tokens generated, --threads threads, --warmup unmeasured runs then --runs measured ones. The
engines take turns, --rounds times, in an order rotated each round; figures are medians over all runs,
and the ratios are medians of per-round ratios with their range, because a shared host drifts by tens
of percent within minutes. TTFT runs from the start of a generation to its first token; TPOT is the
mean gap between later tokens; prefill tokens/s is prompt tokens / TTFT (use --prompt-tokens 512
--new-tokens 8 for the prefill figure). OpenVINO GenAI and llama.cpp get the same token ids, different
in every run so no prefix cache can serve one; kiln bench builds a text prompt of exactly as many
tokens (a dense model does the same work for any ids). A streaming-read probe
(kernels_bench) gives the bandwidth roofline for decode: the bytes a token reads (each engine's own
weight file: every matrix once, the tied head included) divided by the bandwidth.

Each Python engine runs in its own interpreter (--ov-python, --llama-python; default this one), so
their packages need not share a venv and each reports its own peak RSS. An engine whose package is
missing is reported as such, never guessed.

  python3 bench/compare/runtime_compare.py --kiln build/kiln --kernels-bench build/bench/kernels/kernels_bench \
      --kiln-model M-int4 --cache-dir CACHE --ov-model M-ov --ov-python OV_VENV/bin/python \
      --gguf M-q4_0.gguf --llama-python LLAMA_VENV/bin/python [--prompt-tokens 26] [--new-tokens 128]

The GGUF comes from make_gguf.py; llama-cpp-python is built from its sdist, CPU only, native ISA:
  CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
              -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=OFF" pip install llama_cpp_python-0.3.36.tar.gz
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def bandwidth_gbs(kernels_bench, threads):
    out = subprocess.run([kernels_bench, "--benchmark_filter=^$"], capture_output=True, text=True, check=True).stdout
    m = re.search(rf"stream read, {threads} thread\(s\), 1 GiB: median ([0-9.]+) GB/s", out)
    if not m:
        sys.exit(f"kernels_bench printed no {threads}-thread bandwidth:\n{out}")
    return float(m.group(1))


def model_file_bytes(model):
    """What a token reads, near enough: an IR's model.bin, an OpenVINO IR's openvino_model.bin,
    or a GGUF file itself."""
    if os.path.isfile(model):
        return os.path.getsize(model)
    for name in ("model.bin", "openvino_model.bin"):
        if os.path.exists(os.path.join(model, name)):
            return os.path.getsize(os.path.join(model, name))
    sys.exit(f"{model}: neither model.bin nor openvino_model.bin")


def run_kiln(a):
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "bench.json")
        cmd = [a.kiln, "bench", "--model", a.kiln_model, "--property", f"INFERENCE_NUM_THREADS={a.threads}",
               "--prompt-tokens", str(a.prompt_tokens), "--new-tokens", str(a.new_tokens),
               "--warmup", str(a.warmup), "--runs", str(a.runs), "--json", js]
        if a.cache_dir:
            cmd += ["--property", f"CACHE_DIR={a.cache_dir}"]
        subprocess.run(cmd, check=True, capture_output=True)
        r = json.load(open(js))
    runs = r["runs"]
    return {"ttft_ms": [x["ttft_ms"] for x in runs], "tpot_ms": [x["tpot_ms"] for x in runs],
            "load_ms": r["load_ms"], "peak_rss_mib": r["peak_rss_bytes"] / 2**20,
            "token_bytes": model_file_bytes(a.kiln_model)}


def prompt_ids(n, run, vocab=256):
    # Tokenizer-free ids (byte range, present in every vocabulary here), different for every run so that
    # no engine can serve a run's prompt from a cache of an earlier one.
    return [(7 * i + 3 + 11 * run) % vocab for i in range(n)]


def run_openvino(a):
    try:
        import numpy as np
        import openvino as ov
        import openvino_genai as genai
    except ImportError as e:
        return {"missing": f"openvino-genai not installed ({e})"}
    # Its default (latency-oriented) configuration, as a user gets it; its prefix cache cannot serve a run
    # from an earlier one because every run's prompt differs from the first token on.
    t0 = time.perf_counter()
    pipe = genai.LLMPipeline(a.ov_model, "CPU", INFERENCE_NUM_THREADS=a.threads)
    load_ms = (time.perf_counter() - t0) * 1e3
    cfg = genai.GenerationConfig()
    cfg.max_new_tokens = a.new_tokens
    cfg.min_new_tokens = a.new_tokens
    cfg.ignore_eos = True
    cfg.do_sample = False
    ttft, tpot = [], []
    for i in range(a.warmup + a.runs):
        ids = ov.Tensor(np.array([prompt_ids(a.prompt_tokens, i)], dtype=np.int64))
        res = pipe.generate(ids, cfg)
        pm = res.perf_metrics
        if i >= a.warmup:
            ttft.append(pm.get_ttft().mean)
            tpot.append(pm.get_tpot().mean)
    return {"ttft_ms": ttft, "tpot_ms": tpot, "load_ms": load_ms,
            "token_bytes": os.path.getsize(os.path.join(a.ov_model, "openvino_model.bin")),
            "version": genai.__version__}


def llama_decode(lc, ctx, tokens, n):
    rc = lc.llama_decode(ctx, lc.llama_batch_get_one(tokens, n))
    if rc != 0:
        sys.exit(f"llama_decode returned {rc} on a batch of {n} tokens")


def run_llama_cpp(a):
    # llama.cpp's C API through llama-cpp-python's ctypes bindings: decode + a greedy sampler in C, so
    # the timings hold llama.cpp's work and a few ctypes calls, as kiln's and OpenVINO's hold theirs.
    try:
        import llama_cpp as lc
    except ImportError as e:
        return {"missing": f"llama-cpp-python not installed ({e})"}
    n_prompt = a.prompt_tokens
    lc.llama_backend_init()
    t0 = time.perf_counter()
    mp = lc.llama_model_default_params()
    mp.use_extra_bufts = not a.llama_no_repack
    model = lc.llama_model_load_from_file(a.gguf.encode(), mp)
    if not model:
        sys.exit(f"llama.cpp could not load {a.gguf}")
    cp = lc.llama_context_default_params()
    cp.n_ctx = n_prompt + a.new_tokens + 16
    cp.n_batch = cp.n_ctx  # the whole prompt in one llama_decode; llama.cpp splits it into n_ubatch
    cp.n_threads = cp.n_threads_batch = a.threads
    ctx = lc.llama_init_from_model(model, cp)
    if not ctx:
        sys.exit("llama.cpp could not create a context")
    load_ms = (time.perf_counter() - t0) * 1e3
    sampler = lc.llama_sampler_chain_init(lc.llama_sampler_chain_default_params())
    lc.llama_sampler_chain_add(sampler, lc.llama_sampler_init_greedy())
    last = (lc.llama_token * 1)()
    ttft, tpot = [], []
    for i in range(a.warmup + a.runs):
        lc.llama_memory_clear(lc.llama_get_memory(ctx), True)
        lc.llama_sampler_reset(sampler)
        prompt = (lc.llama_token * n_prompt)(*prompt_ids(n_prompt, i))
        t0 = time.perf_counter()
        llama_decode(lc, ctx, prompt, n_prompt)
        last[0] = lc.llama_sampler_sample(sampler, ctx, -1)
        t1 = time.perf_counter()
        for _ in range(a.new_tokens - 1):  # EOS ignored: every run decodes the same count
            llama_decode(lc, ctx, last, 1)
            last[0] = lc.llama_sampler_sample(sampler, ctx, -1)
        t2 = time.perf_counter()
        if i >= a.warmup:
            ttft.append((t1 - t0) * 1e3)
            tpot.append((t2 - t1) * 1e3 / max(1, a.new_tokens - 1))
    token_bytes = lc.llama_model_size(model)
    lc.llama_sampler_free(sampler)
    lc.llama_free(ctx)
    lc.llama_model_free(model)
    return {"ttft_ms": ttft, "tpot_ms": tpot, "load_ms": load_ms,
            "token_bytes": token_bytes, "version": lc.__version__,
            "system_info": lc.llama_print_system_info().decode().strip()}


ENGINES = {"openvino-genai": ("ov_model", "ov_python", run_openvino), "llama.cpp": ("gguf", "llama_python", run_llama_cpp)}


def run_engine_child(a, name):
    # Runs one Python engine in its own interpreter; the child prints one JSON line.
    model_attr, python_attr, _ = ENGINES[name]
    if not getattr(a, model_attr):
        return {"missing": f"no --{model_attr.replace('_', '-')} given"}
    cmd = [getattr(a, python_attr) or sys.executable, os.path.abspath(__file__), "--engine", name,
           f"--{model_attr.replace('_', '-')}", getattr(a, model_attr), "--threads", str(a.threads),
           "--prompt-tokens", str(a.prompt_tokens), "--new-tokens", str(a.new_tokens),
           "--warmup", str(a.warmup), "--runs", str(a.runs)] + (["--llama-no-repack"] if a.llama_no_repack else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"missing": f"{name} failed (exit {proc.returncode}): {proc.stderr.strip()[-400:]}"}
    return json.loads(lines[-1])


def engine_main(a):
    r = ENGINES[a.engine][2](a)
    if "missing" not in r:
        r["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    print(json.dumps(r))


def run_round(a, r):
    # One measurement of every engine, in an order rotated each round so no engine always follows the same one.
    names = ["kiln", *ENGINES]
    names = names[r % len(names):] + names[:r % len(names)]
    bw = bandwidth_gbs(a.kernels_bench, a.threads)
    return bw, {n: run_kiln(a) if n == "kiln" else run_engine_child(a, n) for n in names}


def ratio_spread(rounds, name, key):
    # The engine's median over kiln's median, per round: same-time ratios, robust to a host that drifts.
    per = [statistics.median(res[name][key]) / statistics.median(res["kiln"][key]) for _, res in rounds]
    return statistics.median(per), min(per), max(per)


def summarise(rounds):
    out = {}
    for name in rounds[0][1]:
        rs = [res[name] for _, res in rounds]
        if any("missing" in r for r in rs):
            out[name] = next(r for r in rs if "missing" in r)
            continue
        out[name] = {"ttft_ms": statistics.median(x for r in rs for x in r["ttft_ms"]),
                     "tpot_ms": statistics.median(x for r in rs for x in r["tpot_ms"]),
                     "load_ms": statistics.median(r["load_ms"] for r in rs),
                     "peak_rss_mib": max(r["peak_rss_mib"] for r in rs),
                     "token_bytes": rs[0]["token_bytes"],
                     **{k: rs[0][k] for k in ("version", "system_info") if k in rs[0]}}
        if name != "kiln":
            out[name]["tpot_ratio"] = ratio_spread(rounds, name, "tpot_ms")
            out[name]["ttft_ratio"] = ratio_spread(rounds, name, "ttft_ms")
    return out


def print_table(a, bws, results):
    bw = statistics.median(bws)
    print(f"bandwidth {bw:.1f} GB/s ({a.threads} threads; per round {', '.join(f'{b:.1f}' for b in bws)})")
    print(f"{a.prompt_tokens} prompt tokens, {a.new_tokens} new; {a.rounds} rounds, each {a.warmup} warm-up + "
          f"{a.runs} runs per engine; medians over all runs; kiln x = the engine's time / kiln's, median of "
          f"the per-round ratios [min-max]")
    print(f"{'engine':16} {'MB/tok':>7} {'load ms':>8} {'TTFT ms':>8} {'prefill t/s':>11} {'TPOT ms':>8} "
          f"{'tok/s':>6} {'roofline':>8} {'RSS MiB':>8} {'kiln x decode':>19} {'kiln x TTFT':>19}")
    for name, r in results.items():
        if "missing" in r:
            print(f"{name:16} {r['missing']}")
            continue
        roof_ms = r["token_bytes"] / (bw * 1e9) * 1e3
        prefill = a.prompt_tokens / r["ttft_ms"] * 1e3
        ratios = "".join(f" {m:5.2f}x [{lo:.2f}-{hi:.2f}]" for m, lo, hi in (r.get("tpot_ratio", (1, 1, 1)),
                                                                            r.get("ttft_ratio", (1, 1, 1))))
        print(f"{name:16} {r['token_bytes'] / 1e6:7.0f} {r['load_ms']:8.0f} {r['ttft_ms']:8.1f} {prefill:11.1f} "
              f"{r['tpot_ms']:8.1f} {1e3 / r['tpot_ms']:6.2f} {roof_ms / r['tpot_ms']:8.0%} {r['peak_rss_mib']:8.0f}"
              f"{ratios}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln")
    p.add_argument("--kernels-bench")
    p.add_argument("--kiln-model", help="kiln IR directory (int4 sym g128 export), the OpenVINO IR directory itself, or the GGUF file itself")
    p.add_argument("--ov-model", help="optimum-cli export openvino directory")
    p.add_argument("--ov-python", help="interpreter with openvino-genai (default: this one)")
    p.add_argument("--gguf", help="GGUF Q4_0 of the same checkpoint (make_gguf.py)")
    p.add_argument("--llama-python", help="interpreter with llama-cpp-python (default: this one)")
    p.add_argument("--llama-no-repack", action="store_true",
                   help="llama.cpp keeps the file's layout (use_extra_bufts off): its AMX repacking crashes "
                        "llama-cpp-python 0.3.36 on some Xeons")
    p.add_argument("--cache-dir", help="kiln CACHE_DIR (warm load)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--prompt-tokens", type=int, default=26)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--rounds", type=int, default=3, help="engines measured in turn this many times")
    p.add_argument("--engine", choices=sorted(ENGINES), help=argparse.SUPPRESS)  # internal: one engine, JSON out
    a = p.parse_args()
    if a.engine:
        return engine_main(a)
    if not (a.kiln and a.kernels_bench and a.kiln_model):
        p.error("--kiln, --kernels-bench and --kiln-model are required")

    rounds = [run_round(a, r) for r in range(a.rounds)]
    bws = [bw for bw, _ in rounds]
    results = summarise(rounds)
    print_table(a, bws, results)
    print(json.dumps({"bandwidth_gbs": bws, "prompt_tokens": a.prompt_tokens, "new_tokens": a.new_tokens,
                      "rounds": [res for _, res in rounds], "results": results}))


if __name__ == "__main__":
    main()
