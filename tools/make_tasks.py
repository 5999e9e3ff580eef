#!/usr/bin/env python3
"""Draw kiln-tiny's 50-item task set (tasks.jsonl) from the training Q/A pairs.

Invariant: items are a seeded, per-form stratified sample of qa.jsonl (so every item was
trained on: the set detects damage done by compression, it does not measure generalisation),
and every answer fits well inside the scorer's token limit.

  python3 tools/make_tasks.py --corpus out/corpus --tokenizer out/tokenizer \
      --out models/kiln-tiny/tasks.jsonl
"""
import argparse
import json
import os
import random
import sys

from transformers import AutoTokenizer

from tinylm.task_scoring import MAX_NEW_TOKENS

ITEMS_PER_FORM = {"name": 20, "header": 10, "prototype": 10, "section": 10}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default="out/corpus")
    parser.add_argument("--tokenizer", default="out/tokenizer")
    parser.add_argument("--out", default="models/kiln-tiny/tasks.jsonl")
    parser.add_argument("--seed", type=int, default=4)
    args = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    with open(os.path.join(args.corpus, "qa.jsonl"), encoding="utf-8") as f:
        pairs = [json.loads(line) for line in f]
    # Room for the newline that ends the answer, with margin for tokenisation differences.
    limit = MAX_NEW_TOKENS - 8
    rng = random.Random(args.seed)
    items = []
    for form, count in ITEMS_PER_FORM.items():
        # A disambiguated section question ("pipe(7)") gives its own answer away.
        candidates = [p for p in pairs if p["form"] == form and
                      not (form == "section" and "(" in p["question"]) and
                      len(tokenizer(" " + p["answer"], add_special_tokens=False)["input_ids"])
                      <= limit]
        if len(candidates) < count:
            sys.exit(f"only {len(candidates)} '{form}' pairs fit in {limit} tokens")
        for pair in rng.sample(candidates, count):
            items.append({"id": f"{form}-{len(items):02d}",
                          "prompt": f"Q: {pair['question']}\nA:",
                          "answer": pair["answer"], "page": pair["page_id"]})
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for item in items:
            f.write(json.dumps(item, ensure_ascii=False) + "\n")
    os.replace(tmp, args.out)
    print(f"wrote {len(items)} items to {args.out}")


if __name__ == "__main__":
    main()
