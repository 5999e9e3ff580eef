#!/usr/bin/env python3
"""Train kiln-tiny or its draft (Llama, GQA, tied embeddings) on CPU to a step or time budget.

Invariant: the weights are a pure function of the corpus, tokenizer, arguments, seed and the
per-step learning rates (bit-exact on the same torch build, thread count and CPU ISA). With
--minutes the cosine runs over wall time, so the step count depends on the machine's load; the
learning rates taken are logged (lr_schedule.csv) and --replay-lr repeats the run exactly.

  python3 tools/train_tiny.py --preset main --minutes 80 --out out/kiln-tiny
"""
import argparse
import csv
import json
import os
import platform
import time

# NOTE: on a machine shared with compile jobs, spinning OpenMP workers lose their time slice
# at every barrier; passive waiting measured faster there. Must be set before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from transformers import AutoTokenizer, LlamaForCausalLM  # noqa: E402

from tinylm.checkpoint import save_checkpoint  # noqa: E402
from tinylm.data import IGNORE_INDEX, BatchMaker, load_corpus  # noqa: E402
from tinylm.model_presets import PRESETS, llama_config  # noqa: E402
from tinylm.schedule import ReplaySchedule, StepSchedule, WallTimeSchedule  # noqa: E402

LOG_FIELDS = ["step", "tokens", "elapsed_s", "lr", "train_loss", "text_loss", "qa_loss",
              "heldout_loss", "tokens_per_s"]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", choices=["main", "draft"], required=True)
    parser.add_argument("--corpus", default="out/corpus")
    parser.add_argument("--tokenizer", default="out/tokenizer")
    parser.add_argument("--out", required=True, help="checkpoint directory to write")
    budget = parser.add_mutually_exclusive_group(required=True)
    budget.add_argument("--minutes", type=float, help="wall-time budget; steps calibrated once")
    budget.add_argument("--steps", type=int, help="exact number of optimizer steps")
    budget.add_argument("--replay-lr", metavar="CSV",
                        help="a previous run's lr_schedule.csv: same steps, same learning rates")
    parser.add_argument("--init-from", metavar="DIR",
                        help="start from this checkpoint's weights (same preset) instead of "
                             "a seeded random initialisation")
    parser.add_argument("--seq-len", type=int, default=512)
    parser.add_argument("--batch", type=int, default=8, help="sequences per step")
    parser.add_argument("--qa-rows", type=int, default=3, help="Q/A sequences per step")
    parser.add_argument("--chat-fraction", type=float, default=0.2,
                        help="share of Q/A items rendered with the chat template")
    parser.add_argument("--qa-loss", choices=["all", "answer"], default="all",
                        help="train on every Q/A token, or on the answers only (prompt masked)")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--min-lr-ratio", type=float, default=0.05)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--eval-every", type=int, default=200)
    parser.add_argument("--save-every", type=int, default=0,
                        help="also write the checkpoint to --out every N steps (0: only at the "
                             "end), so a long stage can be evaluated while it runs")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if not 0 <= args.qa_rows <= args.batch:
        parser.error("--qa-rows must be in [0, --batch]")
    return args


def make_schedule(args):
    if args.replay_lr:
        return ReplaySchedule(args.replay_lr)
    if args.steps:
        return StepSchedule(args.lr, args.min_lr_ratio, args.warmup, args.steps)
    return WallTimeSchedule(args.lr, args.min_lr_ratio, args.warmup, args.minutes * 60)


def make_optimizer(model, args):
    """AdamW; matrices (embedding included) decay, norm gains do not."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr, betas=(0.9, 0.95), eps=1e-8, fused=False)


def token_losses(model, input_ids, labels):
    """[batch, seq_len - 1] cross-entropy per predicted token (0 where masked), and the mask."""
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(input_ids=input_ids).logits  # [batch, seq_len, vocab]
    targets = labels[:, 1:]
    mask = targets != IGNORE_INDEX
    # Flattened to [tokens, vocab]: cross_entropy over a transposed [batch, vocab, seq] view
    # takes a strided path that is several times slower on CPU.
    vocab = logits.shape[-1]
    losses = F.cross_entropy(logits[:, :-1].reshape(-1, vocab).float(),
                             targets.clamp(min=0).reshape(-1), reduction="none")
    return losses.view_as(targets) * mask, mask


def heldout_windows(tokenizer, texts, seq_len, count):
    """[count, seq_len] fixed, non-overlapping windows of held-out text for progress logging."""
    ids = []
    for text in texts:
        ids += [tokenizer.bos_token_id, *tokenizer(text, add_special_tokens=False)["input_ids"]]
    usable = min(count, len(ids) // seq_len)
    return torch.tensor(ids[:usable * seq_len]).view(usable, seq_len)


@torch.no_grad()
def heldout_loss(model, windows):
    model.eval()
    losses, mask = token_losses(model, windows, windows)
    model.train()
    return (losses.sum() / mask.sum()).item()


def progress_record(step, tokens_per_step, start, lr, sums, model, windows):
    """One training_log.csv row: means over the steps since the previous row."""
    elapsed = time.time() - start
    return {
        "step": step, "tokens": step * tokens_per_step, "elapsed_s": round(elapsed, 1),
        "lr": f"{lr:.6g}",
        "train_loss": f"{sums['train'] / sums['n']:.4f}",
        "text_loss": f"{sums['text'] / sums['n']:.4f}",
        "qa_loss": f"{sums['qa'] / sums['n']:.4f}",
        "heldout_loss": f"{heldout_loss(model, windows):.4f}",
        "tokens_per_s": round(step * tokens_per_step / elapsed),
    }


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    train_texts, heldout_texts, pairs = load_corpus(args.corpus)
    batches = BatchMaker(tokenizer, train_texts, pairs, args.seq_len, args.chat_fraction,
                         args.qa_loss)
    windows = heldout_windows(tokenizer, heldout_texts, args.seq_len, 16)

    config = llama_config(args.preset, tokenizer, args.seq_len)
    model = LlamaForCausalLM(config)
    if args.init_from:
        start_weights = LlamaForCausalLM.from_pretrained(args.init_from, dtype=torch.float32)
        for key in [*PRESETS[args.preset], "vocab_size"]:
            if getattr(start_weights.config, key) != getattr(config, key):
                raise SystemExit(f"{args.init_from}: config.json {key} = "
                                 f"{getattr(start_weights.config, key)}, preset "
                                 f"'{args.preset}' has {getattr(config, key)}")
        model.load_state_dict(start_weights.state_dict())
    model.train()
    num_params = sum(p.numel() for p in model.parameters())
    print(f"{args.preset}: {num_params / 1e6:.2f}M parameters, text stream "
          f"{batches.num_text_tokens} tokens, {len(pairs)} Q/A pairs", flush=True)
    optimizer = make_optimizer(model, args)

    os.makedirs(args.out, exist_ok=True)
    log_path = os.path.join(args.out, "training_log.csv")
    log_file = open(log_path, "w", newline="", encoding="utf-8")
    log = csv.DictWriter(log_file, fieldnames=LOG_FIELDS)
    log.writeheader()

    lr_log = open(os.path.join(args.out, "lr_schedule.csv"), "w", encoding="utf-8")
    lr_log.write("step,lr_hex\n")
    tokens_per_step = args.batch * args.seq_len
    start = time.time()
    schedule = make_schedule(args)
    sums = {"train": 0.0, "text": 0.0, "qa": 0.0, "n": 0}
    step, lr_taken = 0, None
    while True:
        lr = schedule.lr(step)
        if lr is None:
            break
        lr_taken = lr
        lr_log.write(f"{step},{lr.hex()}\n")
        for group in optimizer.param_groups:
            group["lr"] = lr
        inputs, labels = batches.batch(rng, args.batch, args.qa_rows)
        inputs, labels = torch.from_numpy(inputs), torch.from_numpy(labels)
        losses, mask = token_losses(model, inputs, labels)
        loss = losses.sum() / mask.sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        step += 1

        row_loss = (losses.sum(1) / mask.sum(1)).detach()  # [batch]
        sums["train"] += loss.item()
        sums["qa"] += row_loss[:args.qa_rows].mean().item() if args.qa_rows else 0.0
        sums["text"] += row_loss[args.qa_rows:].mean().item() if args.qa_rows < args.batch else 0
        sums["n"] += 1
        if step % args.eval_every == 0:
            record = progress_record(step, tokens_per_step, start, lr, sums, model, windows)
            log.writerow(record)
            log_file.flush()
            print(json.dumps(record), flush=True)
            sums = {"train": 0.0, "text": 0.0, "qa": 0.0, "n": 0}
        if args.save_every and step % args.save_every == 0:
            save_checkpoint(model, args.tokenizer, args.out)

    wall_s = time.time() - start
    total_steps = step
    if sums["n"]:
        log.writerow(progress_record(step, tokens_per_step, start, lr_taken, sums, model,
                                     windows))
    log_file.close()
    lr_log.close()
    save_checkpoint(model, args.tokenizer, args.out)
    run = {
        "preset": args.preset, "parameters": num_params, "steps": total_steps,
        "tokens": total_steps * tokens_per_step, "wall_s": round(wall_s, 1),
        "tokens_per_s": round(total_steps * tokens_per_step / wall_s),
        "args": vars(args), "torch": torch.__version__, "threads": torch.get_num_threads(),
        "cpu": platform.processor() or platform.machine(),
        "replay": "--replay-lr lr_schedule.csv (with the same other arguments)",
    }
    with open(os.path.join(args.out, "training_run.json"), "w", encoding="utf-8") as f:
        json.dump(run, f, indent=1)
    print(json.dumps({k: v for k, v in run.items() if k != "args"}), flush=True)


if __name__ == "__main__":
    main()
