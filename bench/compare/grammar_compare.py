#!/usr/bin/env python3
"""kiln's grammar engine beside xgrammar (PyPI) on the same tokenizer, constraints and token walks
(tests/data/grammar/mask_goldens.json): compile time per constraint, and the allowed-token mask
time per step, cold (states met for the first time) and warm (the same walk again), one thread.

    VENV/bin/python bench/compare/grammar_compare.py --grammar-bench build/bench/grammar/grammar_bench \
        --tokenizer tests/data/tokenizers/qwen3 --name qwen3 [--rounds 3]

The two run alternately, each in its own process per round; figures are medians over rounds.
"""
import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDENS = ROOT / "tests" / "data" / "grammar" / "mask_goldens.json"

XGRAMMAR_RUN = r'''
import json, sys, time, statistics
import numpy as np, transformers, xgrammar as xgr
folder, goldens, name, repeat, tools = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
sys.path.insert(0, tools)
from make_grammar_goldens import compile_constraint  # the goldens' own xgrammar settings
entry = [t for t in json.load(open(goldens))["tokenizers"] if t["name"] == name][0]
tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
t0 = time.perf_counter()
info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=entry["vocab_size"])
info_ms = (time.perf_counter() - t0) * 1e3
print(json.dumps({"tokenizer_info_ms": info_ms}))
walks = {}
for c in entry["cases"]: walks.setdefault(c["name"], []).append(c)
bitmask = np.zeros((1, (entry["vocab_size"] + 31) // 32), dtype=np.int32)
for case_name, cases in walks.items():
    times = []
    for _ in range(repeat):
        compiler = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)
        t = time.perf_counter(); compiled = compile_constraint(compiler, cases[0]["kind"], cases[0]["source"]); times.append((time.perf_counter() - t) * 1e3)
    cold, warm = [], []
    for out in (cold, warm):
        for c in cases:
            m = xgr.GrammarMatcher(compiled)
            for s in c["steps"]:
                t = time.perf_counter(); m.fill_next_token_bitmask(bitmask); out.append((time.perf_counter() - t) * 1e6)
                m.accept_token(s["token"])
    q = lambda v, p: sorted(v)[int(p * (len(v) - 1))]
    print(json.dumps({"constraint": case_name, "compile_ms": statistics.median(times), "cold_mask_us_p50": q(cold, 0.5),
                      "cold_mask_us_p99": q(cold, 0.99), "cold_mask_us_mean": statistics.mean(cold),
                      "warm_mask_us_p50": q(warm, 0.5), "warm_mask_us_p99": q(warm, 0.99)}))
'''


def unpacked(folder: Path, scratch: Path) -> Path:
    if (folder / "tokenizer.json").exists():
        return folder
    target = scratch / folder.name
    target.mkdir(exist_ok=True)
    for f in folder.iterdir():
        if f.name == "tokenizer.json.gz":
            (target / "tokenizer.json").write_bytes(gzip.decompress(f.read_bytes()))
        elif f.is_file():
            shutil.copy(f, target / f.name)
    return target


def lines(cmd, env):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--grammar-bench", required=True)
    p.add_argument("--tokenizer", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1")
    runs = {"kiln": [], "xgrammar": []}
    with tempfile.TemporaryDirectory() as scratch:
        folder = unpacked(Path(args.tokenizer), Path(scratch))
        for r in range(args.rounds):
            order = ["kiln", "xgrammar"] if r % 2 == 0 else ["xgrammar", "kiln"]
            for engine in order:
                if engine == "kiln":
                    cmd = [args.grammar_bench, "--tokenizer", str(folder), "--goldens", str(GOLDENS), "--name", args.name,
                           "--repeat", str(args.repeat)]
                else:
                    cmd = [sys.executable, "-c", XGRAMMAR_RUN, str(folder), str(GOLDENS), args.name, str(args.repeat),
                           str(ROOT / "tools")]
                runs[engine].append(lines(cmd, env))
    def table(engine):
        per = {}
        for run in runs[engine]:
            for row in run:
                if "constraint" in row:
                    per.setdefault(row["constraint"], []).append(row)
        return {k: {f: statistics.median(r[f] for r in rows) for f in rows[0] if f != "constraint"} for k, rows in per.items()}
    k, x = table("kiln"), table("xgrammar")
    print(f"| constraint | kiln compile ms | xgrammar compile ms | kiln mask µs p50 / p99 (cold) | xgrammar mask µs p50 / p99 (cold) | kiln mask µs p50 (warm) | xgrammar mask µs p50 (warm) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in k:
        a, b = k[name], x[name]
        print(f"| {name} | {a['compile_ms']:.2f} | {b['compile_ms']:.2f} | {a['cold_mask_us_p50']:.0f} / {a['cold_mask_us_p99']:.0f} | "
              f"{b['cold_mask_us_p50']:.0f} / {b['cold_mask_us_p99']:.0f} | {a['warm_mask_us_p50']:.0f} | {b['warm_mask_us_p50']:.0f} |")
    for engine in runs:
        for row in runs[engine][0]:
            if "constraint" not in row:
                print(engine, row)


if __name__ == "__main__":
    main()
