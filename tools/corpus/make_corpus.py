#!/usr/bin/env python3
"""Build kiln-tiny's training corpus from installed Debian man pages: pages, split, Q/A pairs.

Invariant: the output depends only on the installed packages and --seed. Held-out pages are
chosen from the `manpages`/`manpages-dev` pages only, and no Q/A pair comes from a held-out page.

  python3 tools/corpus/make_corpus.py --out out/corpus
"""
import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qa_pairs import build_qa_pairs  # noqa: E402
from render_manpages import render_packages  # noqa: E402

CORE_PACKAGES = ["manpages", "manpages-dev"]
# Extra DFSG-free technical text (train split only), all from Debian main. Licences are listed
# in models/MODEL_CARD.md; none of these pages is used for held-out evaluation.
EXTRA_PACKAGES = ["coreutils", "util-linux", "procps", "iproute2", "findutils", "grep", "sed",
                  "tar", "gzip", "diffutils", "make", "bash", "openssh-client"]


def split_pages(pages, heldout_fraction, seed):
    """Held-out page ids: a seeded sample of the sorted page ids (at least one page)."""
    ids = sorted(page.page_id for page in pages)
    count = max(1, round(len(ids) * heldout_fraction))
    return set(random.Random(seed).sample(ids, count))


def write_jsonl(path, records):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="out/corpus", help="output directory")
    parser.add_argument("--seed", type=int, default=1234, help="seed of the held-out split")
    parser.add_argument("--heldout-fraction", type=float, default=0.06)
    parser.add_argument("--no-extra", action="store_true",
                        help="only manpages + manpages-dev (no extra train-only packages)")
    args = parser.parse_args()
    if not 0.05 <= args.heldout_fraction < 0.5:
        parser.error("--heldout-fraction must be in [0.05, 0.5)")
    os.makedirs(args.out, exist_ok=True)

    core = render_packages(CORE_PACKAGES)
    heldout_ids = split_pages(core, args.heldout_fraction, args.seed)
    core_ids = {page.page_id for page in core}
    extra = [] if args.no_extra else [
        page for page in render_packages(EXTRA_PACKAGES) if page.page_id not in core_ids]
    train_core = [page for page in core if page.page_id not in heldout_ids]
    qa = build_qa_pairs(train_core)

    pages_records = []
    for page in core + extra:
        split = "heldout" if page.page_id in heldout_ids else "train"
        pages_records.append({"page_id": page.page_id, "package": page.package,
                              "section": page.section, "license": page.license,
                              "split": split, "text": page.text})
    write_jsonl(os.path.join(args.out, "pages.jsonl"), pages_records)
    write_jsonl(os.path.join(args.out, "qa.jsonl"),
                [{"question": p.question, "answer": p.answer, "form": p.form,
                  "page_id": p.page_id} for p in qa])

    summary = {
        "seed": args.seed,
        "core_pages": len(core), "extra_pages": len(extra),
        "heldout_pages": sorted(heldout_ids),
        "train_text_bytes": sum(len(r["text"].encode()) for r in pages_records
                                if r["split"] == "train"),
        "heldout_text_bytes": sum(len(r["text"].encode()) for r in pages_records
                                  if r["split"] == "heldout"),
        "qa_pairs": len(qa),
        "qa_by_form": {form: sum(1 for p in qa if p.form == form)
                       for form in sorted({p.form for p in qa})},
    }
    with open(os.path.join(args.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps({k: v for k, v in summary.items() if k != "heldout_pages"}, indent=1))


if __name__ == "__main__":
    main()
