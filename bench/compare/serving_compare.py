#!/usr/bin/env python3
"""Many users at once: kiln's ContinuousBatchingPipeline against OpenVINO GenAI's, in one run.

Every engine gets the same workload at each --concurrency level: --requests requests (default
max(4, concurrency)) of exactly --prompt-tokens prompt tokens with distinct content, --new-tokens
generated, greedy, EOS ignored, --threads threads, prefix caching off, and `concurrency` requests in
flight until all have run. Figures per level: output tokens/s of wall time (first request added to
last finished), and TTFT, TPOT and end-to-end latency percentiles. kiln runs `kiln bench
--concurrency` (its client threads read handles as they fill); OpenVINO GenAI runs in its own
interpreter (--ov-python) with the loop its own benchmark uses (add requests, step(), read the
handles that can be read). The engines alternate, --rounds times, in an order rotated each round;
figures are medians over rounds and the ratio is the median of per-round ratios with its range.

  python3 bench/compare/serving_compare.py --kiln build/kiln --kiln-model M-int4 --ov-model M-ov \
      --ov-python OV_VENV/bin/python [--concurrency 1 4 16 64] [--prompt-tokens 128] [--new-tokens 128]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

OV_DRIVER = r'''
import json, sys, time
import numpy as np
import openvino as ov
import openvino_genai as g

a = json.loads(sys.argv[1])
sc = g.SchedulerConfig()
sc.max_num_batched_tokens = a["max_num_batched_tokens"]
sc.max_num_seqs = max(a["concurrency"], 1)
sc.enable_prefix_caching = False
pipe = g.ContinuousBatchingPipeline(a["model"], sc, "CPU", {"INFERENCE_NUM_THREADS": a["threads"]})
cfg = g.GenerationConfig()
cfg.max_new_tokens = a["new_tokens"]
cfg.min_new_tokens = a["new_tokens"]
cfg.ignore_eos = True
cfg.do_sample = False

def prompt(i):
    # Distinct from the second token on; ids in the byte range every vocabulary here has.
    ids = [(7 * j + 3) % 256 for j in range(a["prompt_tokens"])]
    ids[1] = (ids[1] + 1 + i * 31) % 256
    return ov.Tensor(np.array([ids], dtype=np.int64))

def run(first_id, n, concurrency):
    live, t_add, t_first, tokens, e2e, ttft, tpot = {}, {}, {}, {}, [], [], []
    next_i, done = 0, 0
    start = time.perf_counter()
    while done < n:
        while len(live) < concurrency and next_i < n:
            rid = first_id + next_i
            t_add[rid] = time.perf_counter()
            live[rid] = pipe.add_request(rid, prompt(rid), cfg)
            tokens[rid] = 0
            next_i += 1
        pipe.step()
        now = time.perf_counter()
        for rid, h in list(live.items()):
            if h.can_read():
                for out in h.read().values():
                    if tokens[rid] == 0 and len(out.generated_ids) > 0:
                        t_first[rid] = now
                    tokens[rid] += len(out.generated_ids)
            if h.get_status() != g.GenerationStatus.RUNNING and not h.can_read():
                if tokens[rid] != a["new_tokens"]:
                    sys.exit(f"request {rid} generated {tokens[rid]} tokens, status {h.get_status()}")
                e2e.append((now - t_add[rid]) * 1e3)
                ttft.append((t_first[rid] - t_add[rid]) * 1e3)
                tpot.append((now - t_first[rid]) * 1e3 / max(tokens[rid] - 1, 1))
                del live[rid]
                done += 1
    wall = time.perf_counter() - start
    return {"output_tokens_per_s": n * a["new_tokens"] / wall, "ttft_ms": ttft, "tpot_ms": tpot, "e2e_ms": e2e}

run(10**6, 1, 1)  # warm-up
print(json.dumps({"version": g.__version__, **run(0, a["requests"], a["concurrency"])}))
'''


def pct(samples, p):
    s = sorted(samples)
    if not s:
        return 0.0
    rank = p / 100 * (len(s) - 1)
    lo = int(rank)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (rank - lo)


def run_kiln(a, concurrency, requests):
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "bench.json")
        cmd = [a.kiln, "bench", "--model", a.kiln_model, "--property", f"INFERENCE_NUM_THREADS={a.threads}",
               "--concurrency", str(concurrency), "--requests", str(requests),
               "--prompt-tokens", str(a.prompt_tokens), "--new-tokens", str(a.new_tokens),
               "--max-num-batched-tokens", str(a.max_num_batched_tokens), "--json", js]
        if a.cache_dir:
            cmd += ["--property", f"CACHE_DIR={a.cache_dir}"]
        subprocess.run(cmd, check=True, capture_output=True)
        r = json.load(open(js))
    return {"output_tokens_per_s": r["output_tokens_per_s"], "ttft_p50": r["ttft_ms"]["p50"],
            "ttft_p99": r["ttft_ms"]["p99"], "tpot_p50": r["tpot_ms"]["p50"], "e2e_p99": r["e2e_ms"]["p99"]}


def run_openvino(a, concurrency, requests):
    args = {"model": a.ov_model, "threads": a.threads, "concurrency": concurrency, "requests": requests,
            "prompt_tokens": a.prompt_tokens, "new_tokens": a.new_tokens,
            "max_num_batched_tokens": a.max_num_batched_tokens}
    out = subprocess.run([a.ov_python, "-c", OV_DRIVER, json.dumps(args)], check=True, capture_output=True,
                         text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return {"output_tokens_per_s": r["output_tokens_per_s"], "ttft_p50": pct(r["ttft_ms"], 50),
            "ttft_p99": pct(r["ttft_ms"], 99), "tpot_p50": pct(r["tpot_ms"], 50), "e2e_p99": pct(r["e2e_ms"], 99),
            "version": r["version"]}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln", required=True)
    p.add_argument("--kiln-model", required=True)
    p.add_argument("--cache-dir")
    p.add_argument("--ov-model", required=True)
    p.add_argument("--ov-python", default=sys.executable)
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    p.add_argument("--requests", type=int)
    p.add_argument("--prompt-tokens", type=int, default=128)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--max-num-batched-tokens", type=int, default=2048)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args()
    engines = [("kiln", run_kiln), ("openvino", run_openvino)]
    rows = []
    for c in a.concurrency:
        requests = a.requests or max(4, c)
        results = {name: [] for name, _ in engines}
        for rnd in range(a.rounds):
            order = engines[rnd % 2:] + engines[:rnd % 2]
            for name, fn in order:
                results[name].append(fn(a, c, requests))
                print(f"c={c} round {rnd} {name}: {results[name][-1]['output_tokens_per_s']:.1f} tok/s",
                      file=sys.stderr)
        med = {n: {k: statistics.median(r[k] for r in rs) for k in rs[0] if k != "version"} for n, rs in results.items()}
        ratios = [k["output_tokens_per_s"] / o["output_tokens_per_s"] for k, o in zip(results["kiln"], results["openvino"])]
        rows.append((c, requests, med, statistics.median(ratios), min(ratios), max(ratios)))
    print(f"| concurrency | requests | kiln tok/s | OpenVINO GenAI {results['openvino'][0]['version']} tok/s | ratio | "
          "kiln TTFT p50 / p99 ms | OpenVINO TTFT p50 / p99 ms | kiln TPOT p50 ms | OpenVINO TPOT p50 ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c, n, m, r, lo, hi in rows:
        k, o = m["kiln"], m["openvino"]
        print(f"| {c} | {n} | {k['output_tokens_per_s']:.1f} | {o['output_tokens_per_s']:.1f} | {r:.2f}x [{lo:.2f}-{hi:.2f}] | "
              f"{k['ttft_p50']:.0f} / {k['ttft_p99']:.0f} | {o['ttft_p50']:.0f} / {o['ttft_p99']:.0f} | "
              f"{k['tpot_p50']:.1f} | {o['tpot_p50']:.1f} |")


if __name__ == "__main__":
    main()
