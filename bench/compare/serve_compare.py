#!/usr/bin/env python3
"""Many users over HTTP: `kiln serve` against llama.cpp's `llama-server`, measured by GuideLLM.

The load generator is GuideLLM (PyPI `guidellm`), not code of ours: it makes the prompts, holds the
streams open, times every streamed token and computes the figures; this script only starts the
servers, runs it and tabulates its JSON. One server runs at a time, on the same --threads:
`kiln serve` (--max-num-seqs = the largest concurrency), then `llama-server` (--parallel slots = the
largest concurrency, continuous batching, -c = slots x (prompt + new tokens + 64), which this
llama-server raises to 512 a slot). Both load the same model shape: the kiln int4 export and the
Q4_0 GGUF (bench/compare/make_gguf.py) of one HF checkpoint.

At each --concurrency level GuideLLM keeps exactly that many streaming /v1/completions requests in
flight: synthetic prompts of --prompt-tokens tokens (counted with the checkpoint's tokenizer; each
level's are seeded apart from the other levels', so no prompt or prefix cache serves a prompt the
server has seen, and every engine and round gets the same ones), max_tokens = --new-tokens with
ignore_eos, so every request generates exactly that many tokens, sampled at --temperature (default
0: greedy, the same work on both servers). Before each level an unmeasured warm-up wave of that
many requests of the same shape (token-id prompts) runs; then GuideLLM measures
--requests-per-level requests (default max(2c, 8)), or a --duration in seconds (requests still in
flight at its end are dropped: prefer a count). The engines alternate, kiln then llama-server,
--rounds times, each server started afresh per round; a cell is the median over rounds, a ratio
the median of per-round ratios with their range.

  python3 -m venv VENV && VENV/bin/pip install guidellm
  pip download --no-binary :all: --no-deps llama-cpp-python   # unpack; its vendor/llama.cpp:
  CC=clang CXX=clang++ cmake -S LLAMA_CPP -B LLAMA_BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DGGML_NATIVE=ON -DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DBUILD_SHARED_LIBS=OFF \
      "-DCMAKE_C_FLAGS=-D__AMX_INT8__ -D__AMX_TILE__" "-DCMAKE_CXX_FLAGS=-D__AMX_INT8__ -D__AMX_TILE__"
  ninja -C LLAMA_BUILD llama-server
  VENV/bin/python bench/compare/serve_compare.py --kiln build/kiln --kiln-model M-int4 \
      --llama-server LLAMA_BUILD/bin/llama-server --gguf M-q4_0.gguf --tokenizer HF_DIR \
      [--concurrency 1 4 16 64] [--rounds 2] [--threads 2] [--json out.json]

HF_DIR is the checkpoint both models came from, read offline; GuideLLM runs as `python -m guidellm`
with this interpreter unless --guidellm names a command. The clang build with the two defines is
for AMX CPUs: GCC 12 compiles ggml's AMX kernels so that ldtilecfg faults (it drops the stores to
the tile config, the bug kiln's own AMX code works around), and clang 14 spells the macro
__AMXINT8__, so without the defines ggml leaves AMX out. With them llama-server's log says
"AMX model buffer" and its greedy output matches the AVX-512 build's. Elsewhere plain cmake does.

What the numbers mean (GuideLLM's definitions): tok/s is output tokens of the measured requests
over the measured window (first measured request's start to last completion), the server's
throughput; TTFT is request sent to first streamed token; ITL is per request (last token time -
first token time) / (tokens - 1), its p50/p99 over tokens; TPOT is a request's latency over its
output tokens. Token counts are the servers' own `usage` figures; the script warns when a request
did not produce exactly --new-tokens.

kiln's server overhead: `kiln serve` does all its HTTP, JSON and SSE work on one thread (the
process's main thread, Boost.Beast's event loop); tokens are sampled and detokenized on the engine
thread and its workers, as in-process. Over each measured window the script reads every thread's
CPU time from /proc and reports the main thread's share of the process's CPU time ("HTTP CPU"):
on a machine whose cores the engine keeps busy, that is the share of compute the server takes from
generation. Compare it with the 3% goal; the tok/s against `kiln bench` in-process also counts
GuideLLM's own use of the same cores.
"""
import argparse
import json
import os
import re
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

METRICS = [("tok_s", "output_tokens_per_second", "mean"), ("ttft_p50", "time_to_first_token_ms", "p50"),
           ("ttft_p99", "time_to_first_token_ms", "p99"), ("itl_p50", "inter_token_latency_ms", "p50"),
           ("itl_p99", "inter_token_latency_ms", "p99"), ("tpot_p50", "time_per_output_token_ms", "p50"),
           ("tpot_p99", "time_per_output_token_ms", "p99")]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def health(url):
    try:
        with urllib.request.urlopen(url + "/health", timeout=5) as r:
            return r.status == 200
    except OSError:
        return False


class Server:
    """One server process: started, waited for (/health 200), stopped with SIGTERM."""

    def __init__(self, name, cmd, port, timeout):
        self.name, self.log = name, tempfile.NamedTemporaryFile("w+", prefix=f"{name}-", suffix=".log")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        self.url = f"http://127.0.0.1:{port}" if port else None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.fail(f"exited with {self.proc.returncode}")
            if self.url is None:  # kiln serve --port 0 prints the port it got
                m = re.search(r"listening on (http://[\d.]+:\d+)", open(self.log.name).read())
                self.url = m and m.group(1)
            if self.url and health(self.url):
                return
            time.sleep(0.5)
        self.fail(f"not healthy after {timeout} s")

    def fail(self, why):
        self.stop()
        sys.exit(f"{self.name}: {why}; its log ends:\n{open(self.log.name).read()[-3000:]}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def warm_up(a, url, streams):
    """One unmeasured wave: `streams` concurrent requests of the measured shape, distinct prompts."""
    def one(i):
        body = {"model": "m", "prompt": [1000 + (7 * j + 131 * i) % 30000 for j in range(a.prompt_tokens)],
                "max_tokens": a.new_tokens, "ignore_eos": True, "temperature": a.temperature}
        req = urllib.request.Request(url + "/v1/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=3600) as r:
            r.read()
    with ThreadPoolExecutor(streams) as pool:
        list(pool.map(one, range(1000 * streams, 1001 * streams)))


def thread_cpu_seconds(pid):
    """CPU time (user + system) of each thread of `pid`: {tid: seconds}."""
    ticks, out = os.sysconf("SC_CLK_TCK"), {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = open(f"/proc/{pid}/task/{tid}/stat").read()
        except FileNotFoundError:  # the thread ended
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return out


def main_thread_share(pid, before, after):
    """The main thread's share of the process's CPU time between two thread_cpu_seconds()."""
    spent = {t: after[t] - before.get(t, 0.0) for t in after}
    total = sum(spent.values())
    return spent.get(pid, 0.0) / total if total > 0 else 0.0


def run_guidellm(command, spec, outdir, tag):
    """GuideLLM on a scenario `spec` (its outputs are set here), offline; returns its JSON report."""
    out = os.path.join(outdir, f"guidellm-{tag}.json")
    scenario = os.path.join(outdir, f"scenario-{tag}.json")
    json.dump({"spec": {**spec, "outputs": [{"kind": "json", "path": out}]}}, open(scenario, "w"))
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    cmd = shlex.split(command) if command else [sys.executable, "-m", "guidellm"]
    r = subprocess.run(cmd + ["run", "-c", scenario, "--disable-console"], env=env, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"guidellm failed ({r.returncode}):\n{(r.stdout + r.stderr)[-3000:]}")
    return json.load(open(out))


def figures(metrics, wanted):
    """(key, GuideLLM metric, "mean" or a percentile) -> {key: value} over successful requests."""
    return {key: metrics[k]["successful"]["mean"] if p == "mean" else metrics[k]["successful"]["percentiles"][p]
            for key, k, p in wanted}


def guidellm(a, url, streams, outdir):
    requests = a.requests_per_level or max(2 * streams, 8)
    constraints = [{"kind": "max_duration", "seconds": a.duration}] if a.duration else \
        [{"kind": "max_requests", "count": requests}]
    spec = {"backend": {"kind": "openai_http", "target": url, "model": "m", "request_format": "/v1/completions",
                        "extras": {"body": {"temperature": a.temperature}}},
            "profile": {"kind": "concurrent", "streams": [streams]},
            "constraints": constraints,
            "tokenizer": {"kind": "huggingface_auto", "model": a.tokenizer},
            "data": [{"kind": "synthetic_text", "prompt_tokens": a.prompt_tokens, "output_tokens": a.new_tokens}],
            "seed": {"kind": "static", "value": streams}}  # other prompts than the other levels'
    report = run_guidellm(a.guidellm, spec, outdir, str(streams))
    b, m = report["benchmarks"][0], report["benchmarks"][0]["metrics"]
    res = figures(m, METRICS)
    out_tok, in_tok = m["output_token_count"]["successful"], m["prompt_token_count"]["successful"]
    res.update(requests=m["request_totals"]["successful"], errored=m["request_totals"]["errored"],
               duration_s=b["duration"], output_tokens_min=out_tok["min"], output_tokens_max=out_tok["max"],
               prompt_tokens_mean=in_tok["mean"], guidellm_version=report["metadata"]["guidellm_version"])
    if res["errored"] or out_tok["min"] != a.new_tokens or out_tok["max"] != a.new_tokens:
        print(f"  warning: {res['errored']} errored, output tokens per request {out_tok['min']:g}.."
              f"{out_tok['max']:g} (asked {a.new_tokens})", file=sys.stderr)
    return res


def engines(a, port):
    """(name, command line, port or None when the server prints it) for each server."""
    top = max(a.concurrency)
    kiln = [a.kiln, "serve", "--model", a.kiln_model, "--host", "127.0.0.1", "--port", "0",
            "--served-model-name", "m", "--max-num-seqs", str(top),
            "--property", f"INFERENCE_NUM_THREADS={a.threads}"] + shlex.split(a.kiln_args)
    llama = [a.llama_server, "-m", a.gguf, "--host", "127.0.0.1", "--port", str(port), "-t", str(a.threads),
             "-tb", str(a.threads), "--parallel", str(top), "-c", str(top * (a.prompt_tokens + a.new_tokens + 64)),
             "--cont-batching", "--alias", "m"] + shlex.split(a.llama_args)
    return [("kiln", kiln, None), ("llama-server", llama, port)]


def version(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return " ".join((r.stdout + r.stderr).split())[:80]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln", required=True, help="the kiln binary")
    p.add_argument("--kiln-model", required=True, help="kiln int4 export of the checkpoint")
    p.add_argument("--kiln-args", default="", help="more `kiln serve` flags, one string")
    p.add_argument("--llama-server", required=True, help="llama.cpp's llama-server binary")
    p.add_argument("--gguf", required=True, help="Q4_0 GGUF of the checkpoint")
    p.add_argument("--llama-args", default="", help="more llama-server flags, one string")
    p.add_argument("--tokenizer", required=True, help="HF checkpoint directory (GuideLLM's tokenizer)")
    p.add_argument("--guidellm", help="GuideLLM command (default: this interpreter's -m guidellm)")
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    p.add_argument("--requests-per-level", type=int, help="measured requests per level (default max(2c, 8))")
    p.add_argument("--duration", type=float, help="measure each level this many seconds instead")
    p.add_argument("--prompt-tokens", type=int, default=128)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--startup-timeout", type=float, default=600)
    p.add_argument("--json", help="write every run's figures here")
    a = p.parse_args()

    runs, commands = [], {}  # runs: one dict per (round, engine, concurrency)
    versions = {"kiln": version([a.kiln, "--version"]), "llama-server": version([a.llama_server, "--version"])}
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(a.rounds):
            for name, cmd, port in engines(a, free_port()):
                commands[name] = shlex.join(cmd)
                print(f"round {rnd} {name}: {commands[name]}", file=sys.stderr)
                server = Server(name, cmd, port, a.startup_timeout)
                try:
                    for c in a.concurrency:
                        warm_up(a, server.url, c)
                        before = thread_cpu_seconds(server.proc.pid)
                        r = guidellm(a, server.url, c, tmp)
                        r["main_thread_cpu_share"] = main_thread_share(server.proc.pid, before,
                                                                       thread_cpu_seconds(server.proc.pid))
                        runs.append({"round": rnd, "engine": name, "concurrency": c, **r})
                        print(f"  c={c}: {r['tok_s']:.1f} tok/s, TTFT p99 {r['ttft_p99']:.0f} ms, "
                              f"ITL p50 {r['itl_p50']:.1f} ms ({r['requests']} requests)", file=sys.stderr)
                finally:
                    server.stop()
    if a.json:
        json.dump({"args": vars(a), "versions": versions, "commands": commands, "runs": runs}, open(a.json, "w"), indent=1)

    def cell(engine, c, key):
        return statistics.median(r[key] for r in runs if r["engine"] == engine and r["concurrency"] == c)

    def ratio(c, key):
        k = [r[key] for r in runs if r["engine"] == "kiln" and r["concurrency"] == c]
        l = [r[key] for r in runs if r["engine"] == "llama-server" and r["concurrency"] == c]
        rs = [x / y for x, y in zip(k, l)]
        return f"{statistics.median(rs):.2f}x [{min(rs):.2f}-{max(rs):.2f}]"

    print(f"GuideLLM {runs[0]['guidellm_version']}; kiln: {versions['kiln']}; "
          f"llama-server: {versions['llama-server']}; {a.threads} threads, {a.prompt_tokens} prompt tokens, "
          f"{a.new_tokens} new tokens, median of {a.rounds} rounds\n")
    print("| streams | requests | kiln tok/s | llama-server tok/s | kiln / llama tok/s | "
          "kiln TTFT p50 / p99 ms | llama TTFT p50 / p99 ms | kiln / llama TTFT p99 | "
          "kiln ITL p50 / p99 ms | llama ITL p50 / p99 ms | kiln HTTP CPU |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for c in a.concurrency:
        k = {key: cell("kiln", c, key) for key, _, _ in METRICS + [("requests", 0, 0)]}
        ll = {key: cell("llama-server", c, key) for key, _, _ in METRICS}
        print(f"| {c} | {k['requests']:.0f} | {k['tok_s']:.1f} | {ll['tok_s']:.1f} | {ratio(c, 'tok_s')} | "
              f"{k['ttft_p50']:.0f} / {k['ttft_p99']:.0f} | {ll['ttft_p50']:.0f} / {ll['ttft_p99']:.0f} | "
              f"{ratio(c, 'ttft_p99')} | {k['itl_p50']:.1f} / {k['itl_p99']:.1f} | "
              f"{ll['itl_p50']:.1f} / {ll['itl_p99']:.1f} | "
              f"{100 * cell('kiln', c, 'main_thread_cpu_share'):.1f}% |")


if __name__ == "__main__":
    main()
