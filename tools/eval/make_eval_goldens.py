#!/usr/bin/env python3
"""Records what transformers computes for `kiln eval` on the tiny golden checkpoints, so the C++
tests have an independent oracle: sliding-window perplexity, compare (KL, top-1 agreement)
against a perturbed copy, greedy task completions with their verdicts, and repetition ratios.

Invariant: every number here comes from transformers in f32 with the exact method that
transformers' perplexity guide, tools/tinylm (perplexity.METHOD, task_scoring.SCORING) or
docs/EVAL.md (compare, repetition) states; the C++ side must reproduce them, never the reverse.

Developer tool (not run by CI):
    python3 tools/eval/make_eval_goldens.py     # rewrites tests/data/eval/
"""
import json
import math
import pathlib
import sys

import torch
from transformers import AutoTokenizer, LlamaForCausalLM

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from tinylm.perplexity import perplexity, window_plan  # noqa: E402
from tinylm.task_scoring import greedy_completion, is_right  # noqa: E402

CHECKPOINTS = ROOT / "tests" / "data" / "checkpoints"
HELDOUT = ROOT / "tests" / "data" / "heldout" / "manpages-heldout-small.txt"
OUT = ROOT / "tests" / "data" / "eval"

# (checkpoint, context, stride): overlapping windows, a stride that does not divide the text,
# and stride == context (disjoint windows), each within the checkpoint's max_position_embeddings.
PPL_CASES = [("llama3_tiny", 256, 128), ("llama2_tiny", 128, 48), ("llama_bias_tiny", 96, 96)]
# The perturbed copy `kiln eval compare` is tested against: exact f32 multiplications by powers
# of two, so C++ can rebuild the same copy bit for bit. Keep in sync with tests/eval.
PERTURBATION = {"model.layers.0.self_attn.o_proj.weight": 0.5, "model.norm.weight": 2.0}
COMPARE_CASE = ("llama3_tiny", 128, 64)
TASK_PROMPTS = ["What does mmap do?", "What does chdir do?", "Which header declares bzero?",
                "What is eventfd?", "What does ioctl do?", "Which section is getent in?"]
# "The quick brown fox" ends at EOS before the limit; "aaaa aaaa aaaa" repeats a 4-gram.
REPETITION_PROMPTS = ["The quick brown fox", "Hello world", "aaaa aaaa aaaa", "int main(void) {"]
REPETITION_NEW_TOKENS = 100


def load(name):
    model = LlamaForCausalLM.from_pretrained(CHECKPOINTS / name, dtype=torch.float32,
                                             attn_implementation="eager")
    model.eval()
    return model, AutoTokenizer.from_pretrained(CHECKPOINTS / name)


@torch.no_grad()
def guide_perplexity(model, ids, num_bytes, context, stride):
    """The loop of transformers' guide "Perplexity of fixed-length models": labels are -100
    outside each window's new tokens and the model shifts them by one; each window's mean loss is
    weighted by the number of labels it actually used (the guide's own count is off by one when
    stride < context). With stride == context a window's first token is therefore not scored."""
    nll, scored, prev_end = 0.0, 0, 0
    for begin in range(0, len(ids), stride):
        end = min(begin + context, len(ids))
        input_ids = torch.tensor([ids[begin:end]])
        target_ids = input_ids.clone()
        target_ids[:, :-(end - prev_end)] = -100
        loss = model(input_ids=input_ids, labels=target_ids).loss
        used = int((target_ids[:, 1:] != -100).sum())
        nll += float(loss) * used
        scored += used
        prev_end = end
        if end == len(ids):
            break
    return {"tokens": len(ids), "scored_tokens": scored, "bytes": num_bytes, "nll_nats": nll,
            "ppl": math.exp(nll / scored), "bits_per_byte": nll / math.log(2) / num_bytes}


def ppl_goldens(text):
    out = []
    for name, context, stride in PPL_CASES:
        model, tokenizer = load(name)
        ids = tokenizer(text)["input_ids"]
        result = guide_perplexity(model, ids, len(text.encode("utf-8")), context, stride)
        if stride < context:  # tinylm's method is only defined there; both must agree
            method = perplexity(model, tokenizer, text, context, stride)
            assert method["scored_tokens"] == result["scored_tokens"]
            assert abs(method["nll_nats"] / result["nll_nats"] - 1) < 1e-5, (method, result)
        out.append({"checkpoint": name, "context": context, "stride": stride, **result})
        print("ppl", name, json.dumps(result), flush=True)
    return out


@torch.no_grad()
def compare_golden(text):
    name, context, stride = COMPARE_CASE
    reference, tokenizer = load(name)
    model, _ = load(name)
    params = dict(model.named_parameters())
    for tensor, factor in PERTURBATION.items():
        params[tensor].mul_(factor)
    ids = tokenizer(text)["input_ids"]
    kl_sum = agree = scored = 0
    nll = {"model": 0.0, "reference": 0.0}
    for begin, end, first_target in window_plan(len(ids), context, stride):
        window = torch.tensor(ids[begin:end]).unsqueeze(0)
        rows = slice(first_target - 1 - begin, end - 1 - begin)
        targets = torch.tensor(ids[first_target:end])
        ref = torch.log_softmax(reference(input_ids=window).logits[0, rows].double(), -1)
        mod = torch.log_softmax(model(input_ids=window).logits[0, rows].double(), -1)
        kl_sum += float((ref.exp() * (ref - mod)).sum())
        agree += int((ref.argmax(-1) == mod.argmax(-1)).sum())
        nll["reference"] -= float(ref[torch.arange(len(targets)), targets].sum())
        nll["model"] -= float(mod[torch.arange(len(targets)), targets].sum())
        scored += len(targets)
    result = {"checkpoint": name, "perturbation": PERTURBATION, "context": context,
              "stride": stride, "scored_tokens": scored, "mean_kl": kl_sum / scored,
              "top1_agreement": agree / scored,
              "ppl_model": math.exp(nll["model"] / scored),
              "ppl_reference": math.exp(nll["reference"] / scored)}
    print("compare", json.dumps(result), flush=True)
    return result


def ascii_upper(text):
    return "".join(c.upper() if "a" <= c <= "z" else c for c in text)


def task_goldens():
    """Items whose answers are cut from the model's own completion (right, after case and
    whitespace changes) or made up (wrong), with what transformers completes and decides."""
    model, tokenizer = load("llama3_tiny")
    eos_ids = set(model.generation_config.eos_token_id)
    items, expected = [], []
    for i, question in enumerate(TASK_PROMPTS):
        prompt = f"Q: {question}\nA:"
        completion, _ = greedy_completion(model, tokenizer, prompt, eos_ids)
        words = completion.split()
        if i % 2 == 0 and words:
            answer = "  " + ascii_upper(" \t ".join(words[: max(1, len(words) // 2)])) + " "
        else:
            answer = "definitely not what a random model says"
        item = {"id": f"item-{i}", "prompt": prompt, "answer": answer}
        items.append(item)
        expected.append({"id": item["id"], "completion": completion,
                         "right": is_right(completion, answer)})
    print("tasks", json.dumps(expected), flush=True)
    return items, expected


def repeated_4gram_ratio(tokens):
    grams = [tuple(tokens[i:i + 4]) for i in range(len(tokens) - 3)]
    return 0.0 if not grams else 1.0 - len(set(grams)) / len(grams)


@torch.no_grad()
def repetition_golden():
    model, tokenizer = load("llama3_tiny")
    eos_ids = set(model.generation_config.eos_token_id)
    generations = []
    for prompt in REPETITION_PROMPTS:
        ids = tokenizer(prompt)["input_ids"]
        generated = []
        for _ in range(REPETITION_NEW_TOKENS):
            token = int(model(input_ids=torch.tensor([ids + generated])).logits[0, -1].argmax())
            if token in eos_ids:
                break
            generated.append(token)
        generations.append({"prompt": prompt, "tokens": generated,
                            "ratio": repeated_4gram_ratio(generated)})
    result = {"checkpoint": "llama3_tiny", "max_new_tokens": REPETITION_NEW_TOKENS,
              "generations": generations,
              "mean_ratio": sum(g["ratio"] for g in generations) / len(generations)}
    print("repetition", json.dumps(result), flush=True)
    return result


def scoring_cases():
    """Hand-written completion / answer pairs with task_scoring.is_right's verdicts."""
    pairs = [("mmap, munmap - map or unmap files", "MMAP, munmap - map  or unmap files"),
             ("  The answer is\tmmap, munmap  ", "mmap, munmap"),
             ("mmap", "mmap, munmap"),
             ("anything", ""),
             ("anything", " \t "),
             ("Énorme", "énorme"),
             ("ÉNORME", "ÉNORME"),
             ("a\u00a0b", "a b"),
             ("x\vy\fz", "X Y Z"),
             ("<sys/mman.h>", "<SYS/MMAN.H>")]
    return [{"completion": c, "answer": a, "right": is_right(c, a)} for c, a in pairs]


def main():
    torch.set_num_threads(2)
    text = HELDOUT.read_text(encoding="utf-8")
    OUT.mkdir(parents=True, exist_ok=True)
    items, expected = task_goldens()
    with open(OUT / "tiny_tasks.jsonl", "w", encoding="utf-8") as f:
        for item in items:
            f.write(json.dumps(item, ensure_ascii=False) + "\n")
    with open(OUT / "repetition_prompts.jsonl", "w", encoding="utf-8") as f:
        for prompt in REPETITION_PROMPTS:
            f.write(json.dumps({"prompt": prompt}) + "\n")
    goldens = {
        "source": "transformers LlamaForCausalLM, f32, eager attention (tools/eval/make_eval_goldens.py)",
        "text": "tests/data/heldout/manpages-heldout-small.txt",
        "ppl": ppl_goldens(text),
        "compare": compare_golden(text),
        "tasks": {"checkpoint": "llama3_tiny", "file": "tiny_tasks.jsonl", "items": expected},
        "scoring_cases": scoring_cases(),
        "repetition": repetition_golden(),
    }
    with open(OUT / "goldens.json", "w", encoding="utf-8") as f:
        json.dump(goldens, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
