#!/usr/bin/env python3
"""Three `kiln serve` replicas behind a router: round-robin against cache-aware routing, measured by
GuideLLM, with each replica's prefix-cache hit rate from its own /metrics.

The router is sglang-router (PyPI `sglang-router`), the same binary for both policies:
`--policy round_robin` and `--policy cache_aware` (a radix tree of the text each replica has been
sent; a request goes to the replica that shares the longest prefix with it while the load stays
balanced). The load generator is GuideLLM (PyPI `guidellm`): synthetic /v1/completions requests
in --groups groups, each group's prompts starting with one shared prefix of --prefix-tokens tokens
(guidellm's prefix_count / prefix_tokens), then --prompt-tokens tokens of their own, --new-tokens
generated with ignore_eos, --concurrency requests in flight. Every replica has a KV cache of
--kv-blocks blocks, sized by default for its share: 1/replicas of the prefixes, and of the
requests in flight. Together the replicas hold every prefix, if each group stays on one replica:
cache-aware routing can do that; round-robin sends every prefix to every replica, where they push
each other out. Hit rate = prefix-cache hits / prompt tokens looked up, summed over the replicas
(kiln:prefix_cache_hits_total / kiln:prefix_cache_queries_total).

Each round starts the replicas and the router afresh for each policy (cold caches for both), the
policies alternating; a cell is the median over rounds.

  python3 -m venv VENV && VENV/bin/pip install guidellm sglang-router
  VENV/bin/python bench/compare/routing_compare.py --kiln build/kiln [--model models/kiln-tiny]
      [--rounds 3] [--json out.json]

The model directory must hold an HF tokenizer (tokenizer.json): GuideLLM counts tokens with it,
offline.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import statistics
import sys
import tempfile
import urllib.request

from serve_compare import Server, figures, free_port, run_guidellm

POLICIES = ["round_robin", "cache_aware"]
METRICS = [("req_s", "requests_per_second", "mean"), ("tok_s", "output_tokens_per_second", "mean"),
           ("ttft_p50", "time_to_first_token_ms", "p50"), ("ttft_p99", "time_to_first_token_ms", "p99")]


def counters(url: str) -> dict[str, float]:
    text = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    return {name: sum(float(v) for v in re.findall(rf"^kiln:{name}(?:{{[^}}]*}})? (\S+)$", text, re.M))
            for name in ("prefix_cache_hits_total", "prefix_cache_queries_total", "request_success_total")}


def guidellm(a, url: str, outdir: str, tag: str) -> dict:
    data = {"kind": "synthetic_text", "prompt_tokens": a.prompt_tokens, "output_tokens": a.new_tokens,
            "prefix_tokens": a.prefix_tokens, "prefix_count": a.groups}
    spec = {"backend": {"kind": "openai_http", "target": url, "model": "m", "request_format": "/v1/completions",
                        "extras": {"body": {"temperature": 0}}},
            "profile": {"kind": "concurrent", "streams": [a.concurrency]},
            "constraints": [{"kind": "max_requests", "count": a.requests}],
            "tokenizer": {"kind": "huggingface_auto", "model": a.model},
            "data": [data],
            "seed": {"kind": "static", "value": 1}}  # the same prompts for every policy and round
    report = run_guidellm(a.guidellm, spec, outdir, tag)
    m = report["benchmarks"][0]["metrics"]
    res = figures(m, METRICS)
    res.update(requests=m["request_totals"]["successful"], errored=m["request_totals"]["errored"],
               prompt_tokens_mean=m["prompt_token_count"]["successful"]["mean"],
               guidellm_version=report["metadata"]["guidellm_version"])
    if res["errored"]:
        errors = [r.get("info", {}).get("error") or r.get("error") for r in
                  report["benchmarks"][0].get("requests", {}).get("errored", [])[:3]]
        print(f"  warning: {res['errored']} requests failed, e.g. {errors}", file=sys.stderr)
    return res


def run_policy(a, policy: str, outdir: str, tag: str) -> dict:
    replicas, router = [], None
    try:
        for i in range(a.replicas):
            cmd = [a.kiln, "serve", "--model", a.model, "--host", "127.0.0.1", "--port", "0",
                   "--served-model-name", "m", "--num-kv-blocks", str(a.kv_blocks),
                   "--property", f"INFERENCE_NUM_THREADS={a.threads}"] + shlex.split(a.kiln_args)
            replicas.append(Server(f"kiln-{i}", cmd, None, a.startup_timeout))
        port = free_port()
        router_cmd = shlex.split(a.router) if a.router else [sys.executable, "-m", "sglang_router.launch_router"]
        router_cmd += ["--host", "127.0.0.1", "--port", str(port), "--prometheus-port", str(free_port()),
                       "--policy", policy, "--log-level", "warn",
                       "--worker-urls", *[r.url for r in replicas]]
        router = Server(f"router-{policy}", router_cmd, port, a.startup_timeout)
        before = [counters(r.url) for r in replicas]
        res = guidellm(a, router.url, outdir, tag)
        after = [counters(r.url) for r in replicas]
    finally:
        for s in ([router] if router else []) + replicas:
            s.stop()
    delta = [{k: x[k] - b[k] for k in x} for b, x in zip(before, after)]
    hits = sum(d["prefix_cache_hits_total"] for d in delta)
    queries = sum(d["prefix_cache_queries_total"] for d in delta)
    res.update(hit_rate=hits / queries if queries else 0.0,
               replica_hit_rates=[d["prefix_cache_hits_total"] / d["prefix_cache_queries_total"]
                                  if d["prefix_cache_queries_total"] else 0.0 for d in delta],
               replica_requests=[d["request_success_total"] for d in delta],
               commands={"replica": shlex.join(cmd), "router": shlex.join(router_cmd)})
    return res


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln", required=True, help="the kiln binary")
    p.add_argument("--model", default="models/kiln-tiny", help="model directory (with tokenizer.json)")
    p.add_argument("--kiln-args", default="", help="more `kiln serve` flags, one string")
    p.add_argument("--router", help="sglang-router command (default: this interpreter's -m sglang_router...)")
    p.add_argument("--guidellm", help="GuideLLM command (default: this interpreter's -m guidellm)")
    p.add_argument("--replicas", type=int, default=3)
    p.add_argument("--groups", type=int, default=12, help="shared prefixes")
    p.add_argument("--prefix-tokens", type=int, default=256)
    p.add_argument("--prompt-tokens", type=int, default=64, help="each prompt's own tokens after its prefix")
    p.add_argument("--new-tokens", type=int, default=16)
    p.add_argument("--concurrency", type=int, default=6)
    p.add_argument("--requests", type=int, default=240)
    p.add_argument("--kv-blocks", type=int, help="KV blocks per replica (default: a replica's share of the "
                   "prefixes' blocks and of the requests in flight)")
    p.add_argument("--threads", type=int, default=1, help="threads per replica")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--startup-timeout", type=float, default=600)
    p.add_argument("--json", help="write every run's figures here")
    a = p.parse_args()
    block = 16
    if a.kv_blocks is None:
        per_prompt = -(-(a.prefix_tokens + a.prompt_tokens + a.new_tokens) // block)
        share = -(-a.groups // a.replicas) * -(-a.prefix_tokens // block)
        a.kv_blocks = share + -(-a.concurrency // a.replicas) * per_prompt

    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(a.rounds):
            for policy in POLICIES if rnd % 2 == 0 else reversed(POLICIES):
                r = run_policy(a, policy, tmp, f"{rnd}-{policy}")
                runs.append({"round": rnd, "policy": policy, **r})
                print(f"round {rnd} {policy}: hit rate {100 * r['hit_rate']:.1f}% "
                      f"({', '.join(f'{100 * h:.0f}%' for h in r['replica_hit_rates'])}), "
                      f"TTFT p50 {r['ttft_p50']:.0f} p99 {r['ttft_p99']:.0f} ms, {r['req_s']:.2f} req/s, "
                      f"requests per replica {r['replica_requests']}, errored {r['errored']}", file=sys.stderr)
    if a.json:
        json.dump({"args": vars(a), "runs": runs}, open(a.json, "w"), indent=1)

    def cell(policy, key):
        return statistics.median(r[key] for r in runs if r["policy"] == policy)

    def ratio(key):
        rr = [r[key] for r in runs if r["policy"] == "round_robin"]
        ca = [r[key] for r in runs if r["policy"] == "cache_aware"]
        rs = [c / b for c, b in zip(ca, rr) if b]
        return f"{statistics.median(rs):.2f}x [{min(rs):.2f}-{max(rs):.2f}]" if rs else "n/a"

    print(f"GuideLLM {runs[0]['guidellm_version']}; {a.replicas} replicas of {a.model}, {a.threads} thread(s) "
          f"each, {a.kv_blocks} KV blocks each; {a.groups} groups x {a.prefix_tokens}-token prefix + "
          f"{a.prompt_tokens} own tokens, {a.new_tokens} new tokens, {a.concurrency} in flight, "
          f"{a.requests} requests; median of {a.rounds} rounds\n")
    print("| routing | prefix-cache hit rate | TTFT p50 ms | TTFT p99 ms | requests/s | output tok/s |")
    print("|---|---|---|---|---|---|")
    for policy in POLICIES:
        print(f"| {policy} | {100 * cell(policy, 'hit_rate'):.1f}% | {cell(policy, 'ttft_p50'):.0f} | "
              f"{cell(policy, 'ttft_p99'):.0f} | {cell(policy, 'req_s'):.2f} | {cell(policy, 'tok_s'):.1f} |")
    print(f"| cache-aware / round-robin | {ratio('hit_rate')} | {ratio('ttft_p50')} | {ratio('ttft_p99')} | "
          f"{ratio('req_s')} | {ratio('tok_s')} |")


if __name__ == "__main__":
    main()
