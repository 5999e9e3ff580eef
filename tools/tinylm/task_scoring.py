"""Scoring of the Q/A task set (tasks.jsonl): greedy completion judged by normalised containment.

Invariant: this is the specification `kiln eval task` implements; SCORING below is copied
into models/MODEL_CARD.md, and any change here must change both.
"""
import re

import torch

MAX_NEW_TOKENS = 64
SCORING = (
    "Prompt: the item's `prompt` (\"Q: <question>\\nA:\") encoded by the tokenizer with its "
    "post-processor (so it starts with <|begin_of_text|>), no chat template. Decoding: greedy "
    "(argmax of the logits; ties go to the lowest token id), at most 64 new tokens, stopping "
    "after a token in generation_config's eos_token_id or as soon as the decoded new text "
    "contains a newline. The completion is the decoded new tokens (special tokens skipped) up "
    "to, not including, the first newline. normalise(s): ASCII letters lower-cased, every run of "
    "whitespace replaced by one space, leading and trailing spaces removed. An item is right "
    "when normalise(answer) is non-empty and is a substring of normalise(completion) (an exact "
    "match is the special case of equal strings).")

_WHITESPACE = re.compile(r"[ \t\n\r\f\v]+")


def normalise(text):
    lowered = "".join(c.lower() if "A" <= c <= "Z" else c for c in text)
    return _WHITESPACE.sub(" ", lowered).strip(" ")


def is_right(completion, answer):
    want = normalise(answer)
    return bool(want) and want in normalise(completion)


@torch.no_grad()
def greedy_completion(model, tokenizer, prompt, eos_ids):
    """(completion text up to the first newline, list of generated token ids)."""
    ids = tokenizer(prompt)["input_ids"]
    generated = []
    for _ in range(MAX_NEW_TOKENS):
        logits = model(input_ids=torch.tensor([ids + generated])).logits[0, -1]
        token = int(torch.argmax(logits))  # torch.argmax returns the first maximum
        generated.append(token)
        if token in eos_ids:
            break
        if "\n" in tokenizer.decode(generated, skip_special_tokens=True):
            break
    text = tokenizer.decode(generated, skip_special_tokens=True)
    return text.split("\n", 1)[0], generated
