#!/usr/bin/env python3
"""Encode throughput, one thread, kiln vs PyPI `tokenizers` (Rust) on the same ~10 MB multilingual
text, in the same run, for the Llama 3, Qwen 3 and Mistral tokenizers. Both sides must produce
the same ids (compared by token count and a sha256 of the ids) or the row is marked MISMATCH.

The text is built from what a Debian machine carries: translated messages of the gettext
catalogs under /usr/share/locale (dozens of languages and scripts), English documentation
(/usr/share/doc) and Python source code, about 5 + 2.5 + 2.5 MB, in a fixed order.

  cmake --build build --target tokenizer_throughput
  python3 bench/compare/tokenizer_throughput.py --kiln build/bench/tokenizer/tokenizer_throughput

Modes: whole = the text in one encode call; lines = one call per line (HF: encode_batch on one
thread, so Python's per-call overhead is not counted against it). Times are CPU seconds of the
process (best of --repeat), so other load on a shared machine disturbs them less than wall time.
"""
import argparse
import array
import glob
import gettext
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

os.environ["RAYON_NUM_THREADS"] = "1"  # before tokenizers starts its thread pool
os.environ["TOKENIZERS_PARALLELISM"] = "false"
from tokenizers import Tokenizer  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MB = 1_000_000


def gettext_text(limit):
    parts, size = [], 0
    per_language = {}
    for path in sorted(glob.glob("/usr/share/locale/*/LC_MESSAGES/*.mo")):
        language = path.split("/")[4]
        if per_language.get(language, 0) > limit // 40:  # keep many languages in the mix
            continue
        try:
            with open(path, "rb") as f:
                catalog = gettext.GNUTranslations(f)._catalog
        except Exception:
            continue
        for key, value in sorted(catalog.items(), key=lambda kv: str(kv[0])):
            if not isinstance(value, str) or not value or key == "":
                continue
            parts.append(value)
            size += len(value.encode())
            per_language[language] = per_language.get(language, 0) + len(value.encode())
        if size >= limit:
            break
    return "\n".join(parts)


def files_text(patterns, limit):
    parts, size = [], 0
    for pattern in patterns:
        for path in sorted(glob.glob(pattern, recursive=True)):
            try:
                text = open(path, encoding="utf-8").read()
            except (UnicodeDecodeError, OSError):
                continue
            parts.append(text)
            size += len(text.encode())
            if size >= limit:
                return "\n".join(parts)
    return "\n".join(parts)


def build_text():
    python_lib = os.path.dirname(os.__file__)
    text = "\n".join([
        gettext_text(5 * MB),
        files_text(["/usr/share/doc/nodejs/api/*.md", "/usr/share/vim/vim90/doc/*.txt"], 5 * MB // 2),
        files_text([python_lib + "/*.py", python_lib + "/*/*.py"], 5 * MB // 2),
    ])
    return text


def tokenizer_dirs(scratch):
    """(name, folder with tokenizer.json) for the three tokenizers, unpacking .gz copies."""
    external = os.environ.get("KILN_EXTERNAL_FIXTURES", os.path.join(ROOT, "..", "shared", "fixtures"))
    candidates = [("llama3", os.path.join(external, "tokenizers", "llama3")),
                  ("qwen3", os.path.join(ROOT, "tests", "data", "tokenizers", "qwen3")),
                  ("mistral7b", os.path.join(ROOT, "tests", "data", "tokenizers", "mistral7b"))]
    out = []
    for name, folder in candidates:
        if os.path.exists(os.path.join(folder, "tokenizer.json")):
            out.append((name, folder))
        elif os.path.exists(os.path.join(folder, "tokenizer.json.gz")):
            target = os.path.join(scratch, name)
            os.makedirs(target, exist_ok=True)
            with gzip.open(os.path.join(folder, "tokenizer.json.gz"), "rb") as src, \
                    open(os.path.join(target, "tokenizer.json"), "wb") as dst:
                shutil.copyfileobj(src, dst)
            if os.path.exists(os.path.join(folder, "tokenizer_config.json")):
                shutil.copy(os.path.join(folder, "tokenizer_config.json"), target)
            out.append((name, target))
        else:
            print("skipping %s: not found at %s" % (name, folder), file=sys.stderr)
    return out


def hf_run(folder, text, mode, repeat):
    tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    lines = text.split("\n") if mode == "lines" else None
    best, ids = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        if lines is None:
            ids = tok.encode(text, add_special_tokens=False).ids
        else:
            encodings = tok.encode_batch(lines, add_special_tokens=False)
        best = min(best, time.process_time() - start)
        if lines is not None:
            ids = [i for e in encodings for i in e.ids]
    digest = hashlib.sha256(array.array("i", ids).tobytes()).hexdigest()
    return {"seconds": best, "mb_per_s": len(text.encode()) / best / MB, "tokens": len(ids), "ids_sha256": digest}


def kiln_run(binary, folder, text_path, mode, repeat):
    out = subprocess.run([binary, "--model", folder, "--text", text_path, "--mode", mode,
                          "--repeat", str(repeat)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", default=os.path.join(ROOT, "build", "bench", "tokenizer", "tokenizer_throughput"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--modes", default="whole,lines")
    parser.add_argument("--tokenizers", default="llama3,qwen3,mistral7b")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="kiln-tokbench-")
    try:
        text = build_text()
        text_path = os.path.join(scratch, "text.txt")
        with open(text_path, "w", encoding="utf-8") as f:
            f.write(text)
        size = len(text.encode())
        print("text: %.2f MB, %d lines, sha256 %s" % (size / MB, text.count("\n") + 1,
                                                      hashlib.sha256(text.encode()).hexdigest()[:16]))
        print("%-10s %-6s %12s %12s %8s %10s  %s" % ("tokenizer", "mode", "HF MB/s", "kiln MB/s", "ratio",
                                                    "tokens", "ids"))
        for name, folder in tokenizer_dirs(scratch):
            if name not in args.tokenizers.split(","):
                continue
            for mode in args.modes.split(","):
                hf = hf_run(folder, text, mode, args.repeat)
                kiln = kiln_run(args.kiln, folder, text_path, mode, args.repeat)
                same = hf["tokens"] == kiln["tokens"] and hf["ids_sha256"] == kiln["ids_sha256"]
                print("%-10s %-6s %12.2f %12.2f %7.2fx %10d  %s" % (
                    name, mode, hf["mb_per_s"], kiln["mb_per_s"], kiln["mb_per_s"] / hf["mb_per_s"],
                    kiln["tokens"], "identical" if same else "MISMATCH (HF %d tokens)" % hf["tokens"]))
                sys.stdout.flush()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
