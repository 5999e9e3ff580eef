#!/usr/bin/env python3
"""Plot the loss curves of kiln-tiny and its draft from their training_log.csv files.

Invariant: the plot shows exactly the logged numbers (no smoothing beyond the per-interval mean
the trainer logs).

  python3 tools/plot_training.py --log kiln-tiny=models/training/kiln-tiny.csv \
      --log kiln-tiny-draft=models/training/kiln-tiny-draft.csv \
      --out models/training/loss_curves.png
"""
import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SERIES = [("text_loss", "train text"), ("qa_loss", "train Q/A"), ("heldout_loss", "held-out")]


def read_log(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--log", action="append", required=True, metavar="NAME=CSV")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    figure, axes = plt.subplots(1, len(SERIES), figsize=(15, 4.5), sharey=True)
    for spec in args.log:
        name, _, path = spec.partition("=")
        rows = read_log(path)
        tokens = [int(r["tokens"]) / 1e6 for r in rows]
        for axis, (field, title) in zip(axes, SERIES):
            axis.plot(tokens, [float(r[field]) for r in rows], label=name)
            axis.set_title(f"{title} loss (nats/token)")
            axis.set_xlabel("training tokens (millions)")
            axis.grid(alpha=0.3)
    axes[0].set_ylim(0, 6)
    axes[0].legend()
    figure.tight_layout()
    figure.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
