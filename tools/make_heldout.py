#!/usr/bin/env python3
"""Write the committed held-out evaluation text (whole held-out man pages) and its SOURCE.md.

Invariant: only pages of the corpus's held-out split are used (never trained on); the sample
is the held-out pages in page-id order, each kept whole, as many as fit in --max-bytes; the
small sample is the large one's first lines up to --small-bytes.

  python3 tools/make_heldout.py --corpus out/corpus --out tests/data/heldout
"""
import argparse
import json
import os

def heldout_pages(corpus_dir):
    with open(os.path.join(corpus_dir, "pages.jsonl"), encoding="utf-8") as f:
        pages = [json.loads(line) for line in f]
    return sorted((p for p in pages if p["split"] == "heldout"), key=lambda p: p["page_id"])


def select_pages(pages, max_bytes):
    chosen, total = [], 0
    for page in pages:
        size = len(page["text"].encode("utf-8")) + 1
        if total + size <= max_bytes:
            chosen.append(page)
            total += size
    return chosen


def head_lines(text, max_bytes):
    out, total = [], 0
    for line in text.splitlines(keepends=True):
        if total + len(line.encode("utf-8")) > max_bytes:
            break
        out.append(line)
        total += len(line.encode("utf-8"))
    return "".join(out)


def source_md(chosen, all_heldout, args):
    lines = [
        "# Held-out man-page text for `kiln eval ppl` tests",
        "",
        "Plain UTF-8 renderings of man pages from Debian 12's `manpages` and `manpages-dev`",
        "packages (version 6.03-2) that are in kiln-tiny's held-out split: no model shipped in",
        "`models/` was trained on them (neither their text nor Q/A pairs made from them).",
        "",
        f"- `manpages-heldout.txt`: {len(chosen)} whole pages in page-id order, separated by a",
        f"  blank line ({args.max_bytes} bytes at most).",
        f"- `manpages-heldout-small.txt`: the first lines of it, at most {args.small_bytes} bytes,",
        "  for fast tests.",
        "- `reference_ppl.json`: perplexity and bits per byte of both shipped models on both",
        "  files, computed with transformers (`tools/eval_tiny.py`); the method is written in it.",
        "",
        "Regenerate (Debian 12 with `manpages`, `manpages-dev` and `groff-base` installed):",
        "",
        "    python3 tools/corpus/make_corpus.py --out out/corpus",
        "    python3 tools/make_heldout.py --corpus out/corpus --out tests/data/heldout",
        "",
        f"The held-out split has {len(all_heldout)} pages, chosen with seed {args.seed_note}.",
        "Rendering: `groff -t -man -Tutf8 -rLL=78n -rHY=0 -P-cbou` with justification off, the",
        "running header and footer removed and blank-line runs collapsed",
        "(`tools/corpus/render_manpages.py`).",
        "",
        "## Pages and licences",
        "",
        "Licences are the SPDX identifier (or man-pages licence tag) in each page's source; the",
        "full texts are in `/usr/share/doc/manpages/copyright` and",
        "`/usr/share/doc/manpages-dev/copyright`. All permit redistribution.",
        "",
        "| page | package | licence |",
        "|---|---|---|",
    ]
    for page in chosen:
        lines.append(f"| {page['page_id']} | {page['package']} | {page['license']} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default="out/corpus")
    parser.add_argument("--out", default="tests/data/heldout")
    parser.add_argument("--max-bytes", type=int, default=200 * 1024)
    parser.add_argument("--small-bytes", type=int, default=16 * 1024)
    args = parser.parse_args()
    with open(os.path.join(args.corpus, "summary.json"), encoding="utf-8") as f:
        args.seed_note = json.load(f)["seed"]
    pages = heldout_pages(args.corpus)
    chosen = select_pages(pages, args.max_bytes)
    text = "\n".join(page["text"] for page in chosen)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "manpages-heldout.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    with open(os.path.join(args.out, "manpages-heldout-small.txt"), "w", encoding="utf-8") as f:
        f.write(head_lines(text, args.small_bytes))
    with open(os.path.join(args.out, "SOURCE.md"), "w", encoding="utf-8") as f:
        f.write(source_md(chosen, pages, args))
    print(f"{len(chosen)} of {len(pages)} held-out pages, {len(text.encode())} bytes")


if __name__ == "__main__":
    main()
