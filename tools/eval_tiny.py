#!/usr/bin/env python3
"""Evaluate kiln-tiny and its draft with transformers: held-out perplexity / bits per byte,
task accuracy, and the draft's greedy agreement with the main model.

Invariant: reference_ppl.json holds the numbers `kiln eval ppl` is tested against (same text,
window and method); eval.json holds everything the model card quotes.

  python3 tools/eval_tiny.py --main models/kiln-tiny --draft models/kiln-tiny-draft \
      --heldout tests/data/heldout --report models/training/eval.json
"""
import argparse
import hashlib
import json
import os

import torch
import transformers
from transformers import AutoTokenizer, LlamaForCausalLM

from tinylm.perplexity import METHOD, perplexity, window_plan
from tinylm.task_scoring import SCORING, greedy_completion, is_right

HELDOUT_FILES = ("manpages-heldout.txt", "manpages-heldout-small.txt")
NUM_TEXT_PROMPTS = 20
TEXT_PROMPT_TOKENS = 32


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def load_model(path):
    model = LlamaForCausalLM.from_pretrained(path, dtype=torch.float32,
                                             attn_implementation="eager")
    model.eval()
    return model


@torch.no_grad()
def teacher_forced_agreement(main, draft, ids, context, stride):
    """Share of scored positions (as in the perplexity windows) where both argmaxes agree."""
    agree = total = 0
    for begin, end, first_target in window_plan(len(ids), context, stride):
        window = torch.tensor(ids[begin:end]).unsqueeze(0)
        rows = slice(first_target - 1 - begin, end - 1 - begin)
        main_top = main(input_ids=window).logits[0, rows].argmax(-1)
        draft_top = draft(input_ids=window).logits[0, rows].argmax(-1)
        agree += int((main_top == draft_top).sum())
        total += main_top.numel()
    return agree / total


@torch.no_grad()
def greedy_agreement(main, draft, tokenizer, prompts, eos_ids):
    """Share of the main model's greedy tokens that the draft predicts greedily too, given the
    same prefix: the acceptance rate of greedy speculative decoding."""
    agree = total = 0
    for prompt_ids in prompts:
        generated = []
        for _ in range(64):
            token = int(main(input_ids=torch.tensor([prompt_ids + generated])).logits[0, -1]
                        .argmax())
            generated.append(token)
            if token in eos_ids:
                break
        sequence = torch.tensor([prompt_ids + generated])
        draft_top = draft(input_ids=sequence).logits[0, len(prompt_ids) - 1:-1].argmax(-1)
        agree += int((draft_top == torch.tensor(generated)).sum())
        total += len(generated)
    return agree / total


def run_tasks(model, tokenizer, tasks, eos_ids):
    results = []
    for task in tasks:
        completion, _ = greedy_completion(model, tokenizer, task["prompt"], eos_ids)
        results.append({"id": task["id"], "right": is_right(completion, task["answer"]),
                        "completion": completion})
    return results


def text_prompts(tokenizer, text):
    """Prompts of TEXT_PROMPT_TOKENS tokens taken at evenly spaced points of held-out text."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    step = len(ids) // NUM_TEXT_PROMPTS
    return [[tokenizer.bos_token_id, *ids[i * step:i * step + TEXT_PROMPT_TOKENS]]
            for i in range(NUM_TEXT_PROMPTS)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--main", default="models/kiln-tiny")
    parser.add_argument("--draft", default="models/kiln-tiny-draft")
    parser.add_argument("--heldout", default="tests/data/heldout")
    parser.add_argument("--tasks", default="models/kiln-tiny/tasks.jsonl")
    parser.add_argument("--report", default="models/training/eval.json")
    parser.add_argument("--reference-out", default="tests/data/heldout/reference_ppl.json")
    parser.add_argument("--context", type=int, default=256)
    parser.add_argument("--stride", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    tokenizer = AutoTokenizer.from_pretrained(args.main)
    models = {os.path.basename(os.path.normpath(p)): (p, load_model(p))
              for p in (args.main, args.draft)}
    main_name, draft_name = list(models)
    eos_ids = set(models[main_name][1].generation_config.eos_token_id)

    reference = {"method": METHOD, "context": args.context, "stride": args.stride,
                 "tolerance": "kiln eval ppl must match ppl within 0.5% (relative)",
                 "transformers": transformers.__version__, "torch": torch.__version__,
                 "models": {name: {"path": path, "model_safetensors_sha256":
                                   sha256_of(os.path.join(path, "model.safetensors"))}
                            for name, (path, _) in models.items()},
                 "files": {}}
    for file_name in HELDOUT_FILES:
        path = os.path.join(args.heldout, file_name)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        entry = {"sha256": sha256_of(path), "results": {}}
        for name, (_, model) in models.items():
            entry["results"][name] = perplexity(model, tokenizer, text, args.context, args.stride)
            print(file_name, name, json.dumps(entry["results"][name]), flush=True)
        reference["files"][file_name] = entry
    with open(args.reference_out, "w", encoding="utf-8") as f:
        json.dump(reference, f, indent=1)
        f.write("\n")

    with open(args.tasks, encoding="utf-8") as f:
        tasks = [json.loads(line) for line in f]
    with open(os.path.join(args.heldout, HELDOUT_FILES[0]), encoding="utf-8") as f:
        heldout_text = f.read()
    main_model, draft_model = models[main_name][1], models[draft_name][1]
    report = {"scoring": SCORING, "tasks": {}, "reference_ppl": reference["files"]}
    for name, (_, model) in models.items():
        results = run_tasks(model, tokenizer, tasks, eos_ids)
        report["tasks"][name] = {"right": sum(r["right"] for r in results),
                                 "total": len(results), "items": results}
        print(name, "tasks right:", report["tasks"][name]["right"], flush=True)
    task_prompts = [tokenizer(t["prompt"])["input_ids"] for t in tasks]
    report["draft_agreement"] = {
        "heldout_teacher_forced_top1": teacher_forced_agreement(
            main_model, draft_model, tokenizer(heldout_text)["input_ids"], args.context,
            args.stride),
        "greedy_on_task_prompts": greedy_agreement(main_model, draft_model, tokenizer,
                                                   task_prompts, eos_ids),
        "greedy_on_heldout_prompts": greedy_agreement(
            main_model, draft_model, tokenizer, text_prompts(tokenizer, heldout_text), eos_ids),
    }
    print(json.dumps(report["draft_agreement"]), flush=True)
    os.makedirs(os.path.dirname(args.report), exist_ok=True)
    with open(args.report, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
