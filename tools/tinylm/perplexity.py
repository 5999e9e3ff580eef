"""Sliding-window perplexity and bits per byte (transformers' "perplexity of fixed-length models").

Invariant: every token after the leading <|begin_of_text|> is scored exactly once, from the
logits of the window whose new (not yet scored) part contains it; nothing else is scored.
"""
import math

import torch

METHOD = (
    "ids = tokenizer(text) (the post-processor prepends <|begin_of_text|>), N = len(ids). "
    "Windows begin at 0, S, 2S, ... (S = stride); a window holds ids[begin:end] with "
    "end = min(begin + C, N) (C = context) and is run as one fresh sequence (positions from 0, "
    "no cache). Its scored targets are positions t with max(prev_end, 1) <= t < end, where "
    "prev_end is the end of the previous window (0 for the first); target t is scored with the "
    "log-softmax of the window's logits at t - 1. The loop stops after the window with "
    "end == N. nll = sum of -ln p(ids[t]) over scored t (N - 1 tokens); "
    "ppl = exp(nll / (N - 1)); bits_per_byte = nll / ln(2) / len(text as UTF-8 bytes). "
    "This is the loop of the transformers docs ('Perplexity of fixed-length models') with each "
    "window's mean loss weighted by its number of scored tokens. Weights are the checkpoint's "
    "f16 values converted to f32; all arithmetic in f32 (eager attention).")


def window_plan(num_tokens, context, stride):
    """[(begin, end, first_target)]: the windows and the first position each one scores."""
    if context < 2 or not 1 <= stride <= context:
        raise ValueError(f"need context >= 2 and 1 <= stride <= context "
                         f"(context {context}, stride {stride})")
    plan, prev_end, begin = [], 0, 0
    while True:
        end = min(begin + context, num_tokens)
        plan.append((begin, end, max(prev_end, 1)))
        prev_end = end
        if end == num_tokens:
            return plan
        begin += stride


@torch.no_grad()
def target_logprobs(model, ids, context, stride):
    """[N - 1] float64 log-probabilities of ids[1:], each from its window (see METHOD)."""
    out = torch.empty(len(ids) - 1, dtype=torch.float64)
    for begin, end, first_target in window_plan(len(ids), context, stride):
        window = torch.tensor(ids[begin:end]).unsqueeze(0)  # [1, end - begin]
        logits = model(input_ids=window).logits[0].float()  # [end - begin, vocab]
        logprobs = torch.log_softmax(logits, dim=-1)
        targets = torch.arange(first_target, end)
        picked = logprobs[targets - 1 - begin, torch.tensor(ids)[targets]]
        out[first_target - 1:end - 1] = picked.double()
    return out


def perplexity(model, tokenizer, text, context, stride):
    """Dict of tokens, bytes, nll, ppl and bits per byte of `text` under `model`."""
    ids = tokenizer(text)["input_ids"]
    if len(ids) < 2 or ids[0] != tokenizer.bos_token_id:
        raise ValueError("text must encode to <|begin_of_text|> and at least one token")
    logprobs = target_logprobs(model, ids, context, stride)
    nll = -logprobs.sum().item()
    num_bytes = len(text.encode("utf-8"))
    return {
        "tokens": len(ids), "scored_tokens": len(ids) - 1, "bytes": num_bytes,
        "nll_nats": nll, "ppl": math.exp(nll / (len(ids) - 1)),
        "bits_per_byte": nll / math.log(2) / num_bytes,
    }
