#!/usr/bin/env python3
"""Decode/prefill of one checkpoint on kiln's CPU runtime, OpenVINO GenAI and llama.cpp, in one run.

Every engine gets the same workload: a prompt of exactly --prompt-tokens token ids, greedy, EOS
ignored, --new-tokens generated, --threads threads, --warmup unmeasured runs then the median of
--runs. A streaming-read probe (kernels_bench) gives the bandwidth roofline for decode: the bytes
a token reads (model.bin: every matrix once, the tied head included) divided by the bandwidth.
An engine whose package is missing is reported as such, never guessed.

  python3 bench/compare/runtime_compare.py --kiln build/kiln --kernels-bench build/bench/kernels/kernels_bench \
      --kiln-model M-int4 --ov-model M-ov [--gguf M-q4_0.gguf] [--prompt-tokens 26] [--new-tokens 128]
"""
import argparse
import json
import os
import re
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
    return {"ttft_ms": statistics.median(x["ttft_ms"] for x in runs),
            "tpot_ms": statistics.median(x["tpot_ms"] for x in runs),
            "load_ms": r["load_ms"], "peak_rss_mib": r["peak_rss_bytes"] / 2**20}


def prompt_ids(n, vocab=256):
    # Fixed, tokenizer-free ids (byte range, present in every vocabulary here).
    return [(7 * i + 3) % vocab for i in range(n)]


def run_openvino(a):
    try:
        import numpy as np
        import openvino as ov
        import openvino_genai as genai
    except ImportError as e:
        return {"missing": f"openvino-genai not installed ({e})"}
    t0 = time.perf_counter()
    pipe = genai.LLMPipeline(a.ov_model, "CPU", INFERENCE_NUM_THREADS=a.threads)
    load_ms = (time.perf_counter() - t0) * 1e3
    cfg = genai.GenerationConfig()
    cfg.max_new_tokens = a.new_tokens
    cfg.min_new_tokens = a.new_tokens
    cfg.ignore_eos = True
    cfg.do_sample = False
    ids = ov.Tensor(np.array([prompt_ids(a.prompt_tokens)], dtype=np.int64))
    ttft, tpot = [], []
    for i in range(a.warmup + a.runs):
        res = pipe.generate(ids, cfg)
        pm = res.perf_metrics
        if i >= a.warmup:
            ttft.append(pm.get_ttft().mean)
            tpot.append(pm.get_tpot().mean)
    return {"ttft_ms": statistics.median(ttft), "tpot_ms": statistics.median(tpot), "load_ms": load_ms}


def run_llama_cpp(a):
    if not a.gguf:
        return {"missing": "no --gguf given"}
    try:
        from llama_cpp import Llama
    except ImportError as e:
        return {"missing": f"llama-cpp-python not installed ({e})"}
    t0 = time.perf_counter()
    llm = Llama(model_path=a.gguf, n_threads=a.threads, n_ctx=a.prompt_tokens + a.new_tokens + 8, verbose=False)
    load_ms = (time.perf_counter() - t0) * 1e3
    ids = prompt_ids(a.prompt_tokens)
    ttft, tpot = [], []
    for i in range(a.warmup + a.runs):
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(ids)
        tok = llm.sample(temp=0.0)
        t1 = time.perf_counter()
        for _ in range(a.new_tokens - 1):
            llm.eval([tok])
            tok = llm.sample(temp=0.0)
        t2 = time.perf_counter()
        if i >= a.warmup:
            ttft.append((t1 - t0) * 1e3)
            tpot.append((t2 - t1) * 1e3 / max(1, a.new_tokens - 1))
    return {"ttft_ms": statistics.median(ttft), "tpot_ms": statistics.median(tpot), "load_ms": load_ms}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln", required=True)
    p.add_argument("--kernels-bench", required=True)
    p.add_argument("--kiln-model", required=True, help="kiln IR directory (int4 sym g128 export)")
    p.add_argument("--ov-model", help="optimum-cli export openvino directory")
    p.add_argument("--gguf", help="GGUF Q4_0 of the same checkpoint")
    p.add_argument("--cache-dir", help="kiln CACHE_DIR (warm load)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--prompt-tokens", type=int, default=26)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--runs", type=int, default=5)
    a = p.parse_args()

    bw = bandwidth_gbs(a.kernels_bench, a.threads)
    token_bytes = os.path.getsize(os.path.join(a.kiln_model, "model.bin"))
    roofline_tpot_ms = token_bytes / (bw * 1e9) * 1e3
    results = {"kiln": run_kiln(a)}
    results["openvino-genai"] = run_openvino(a) if a.ov_model else {"missing": "no --ov-model given"}
    results["llama.cpp"] = run_llama_cpp(a)

    print(f"bandwidth {bw:.1f} GB/s ({a.threads} threads); a token reads {token_bytes / 1e6:.0f} MB: "
          f"roofline TPOT {roofline_tpot_ms:.1f} ms ({1e3 / roofline_tpot_ms:.1f} tokens/s)")
    print(f"{a.prompt_tokens} prompt tokens, {a.new_tokens} new, median of {a.runs} runs after {a.warmup} warm-up")
    print(f"{'engine':16} {'load ms':>9} {'TTFT ms':>9} {'TPOT ms':>9} {'tok/s':>7} {'roofline':>9} {'kiln x':>7}")
    k = results["kiln"]
    for name, r in results.items():
        if "missing" in r:
            print(f"{name:16} {r['missing']}")
            continue
        print(f"{name:16} {r['load_ms']:9.0f} {r['ttft_ms']:9.1f} {r['tpot_ms']:9.1f} {1e3 / r['tpot_ms']:7.2f} "
              f"{roofline_tpot_ms / r['tpot_ms']:8.0%} {r['tpot_ms'] / k['tpot_ms']:6.2f}x")
    print(json.dumps({"bandwidth_gbs": bw, "token_bytes": token_bytes, "results": results}))


if __name__ == "__main__":
    main()
