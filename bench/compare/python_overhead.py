#!/usr/bin/env python3
"""What the Python package costs over the C++ binary: the same generation through `kiln run` and
through `kiln.LLMPipeline`, in one run.

Each side is a fresh process that loads the model and generates --new-tokens tokens greedily
(EOS ignored) after the same raw-text prompt, --runs times; the Python side once with a text
streamer that writes each piece to stdout (as `kiln run` does) and once without a streamer. The
sides take turns, --rounds times, in an order rotated each round; figures are medians over all
runs, and each ratio is the median of the per-round ratios of medians, with their range, because a
shared host drifts by tens of percent within minutes. TPOT and TTFT are kiln's own perf metrics on
both sides (`kiln run` prints them on stderr).

  python3 bench/compare/python_overhead.py --kiln build/kiln --python-path build/python \
      --model M-int4 [--new-tokens 128] [--rounds 5] [--runs 3] [--threads 2]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

PROMPT = "Q: What does mmap do?\nA:"

PYTHON_SIDE = r"""
import json, sys
import kiln
model, device_threads, new_tokens, runs, stream = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
pipe = kiln.LLMPipeline(model, "CPU", INFERENCE_NUM_THREADS=device_threads)
config = kiln.GenerationConfig(max_new_tokens=new_tokens, ignore_eos=True, apply_chat_template=False)

def streamer(piece):
    sys.stdout.write(piece)
    sys.stdout.flush()

out = []
for _ in range(runs):
    m = pipe.generate(sys.argv[6], config, streamer if stream else None).perf_metrics
    out.append({"tpot": m.get_tpot().mean, "ttft": m.get_ttft().mean})
print("\n" + json.dumps(out))
"""


def run_cli(a):
    figures = []
    for _ in range(a.runs):
        done = subprocess.run(
            [a.kiln, "run", "--model", a.model, "-p", PROMPT, "-n", str(a.new_tokens), "--ignore-eos",
             "--property", f"INFERENCE_NUM_THREADS={a.threads}"],
            capture_output=True, text=True, check=True, env=dict(os.environ, KILN_LOG_LEVEL="error"))
        tpot = re.search(r"TPOT ([0-9.]+)", done.stderr)
        ttft = re.search(r"TTFT ([0-9.]+)", done.stderr)
        if not tpot or not ttft:
            sys.exit(f"kiln run printed no TPOT/TTFT:\n{done.stderr}")
        figures.append({"tpot": float(tpot.group(1)), "ttft": float(ttft.group(1))})
    return figures


def run_python(a, stream):
    env = dict(os.environ, KILN_LOG_LEVEL="error", PYTHONPATH=a.python_path)
    done = subprocess.run(
        [a.python, "-c", PYTHON_SIDE, a.model, str(a.threads), str(a.new_tokens), str(a.runs), "1" if stream else "0",
         PROMPT], capture_output=True, text=True, check=True, env=env)
    return json.loads(done.stdout.rstrip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln", required=True)
    p.add_argument("--python-path", required=True, help="the folder holding the kiln package (BINARY_DIR/python)")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--model", required=True)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()

    sides = {
        "kiln run (C++)": lambda: run_cli(a),
        "Python, text streamer": lambda: run_python(a, True),
        "Python, no streamer": lambda: run_python(a, False),
    }
    names = list(sides)
    runs = {name: [] for name in names}
    per_round = {name: {"tpot": [], "ttft": []} for name in names}
    for r in range(a.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            figures = sides[name]()
            runs[name] += figures
            for key in ("tpot", "ttft"):
                per_round[name][key].append(statistics.median(f[key] for f in figures))
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)

    base = names[0]
    print(f"| side | TPOT | TTFT | side ÷ C++: TPOT | side ÷ C++: TTFT |")
    print("|---|---:|---:|---|---|")
    for name in names:
        cells = []
        for key in ("tpot", "ttft"):
            ratios = [x / y for x, y in zip(per_round[name][key], per_round[base][key])]
            cells.append(f"{statistics.median(ratios):.3f}× [{min(ratios):.3f}-{max(ratios):.3f}]")
        tpot = statistics.median(f["tpot"] for f in runs[name])
        ttft = statistics.median(f["ttft"] for f in runs[name])
        print(f"| {name} | {tpot:.2f} ms | {ttft:.1f} ms | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
