#!/usr/bin/env python3
"""Plot the loss curves of kiln-tiny and its draft from their training_log.csv files.

Invariant: the plot shows exactly the logged numbers (no smoothing beyond the per-interval mean
the trainer logs).

  python3 tools/plot_training.py --log kiln-tiny=STAGE1.csv,STAGE2.csv \
      --log kiln-tiny-draft=models/training/kiln-tiny-draft.csv \
      --out models/training/loss_curves.png
"""
import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SERIES = [("text_loss", "train text"), ("qa_loss", "train Q/A"), ("heldout_loss", "held-out")]


def read_stages(paths):
    """Rows of consecutive training stages, with tokens counted from the start of the first."""
    rows, offset = [], 0
    for path in paths.split(","):
        with open(path, newline="", encoding="utf-8") as f:
            stage = list(csv.DictReader(f))
        for row in stage:
            row["tokens"] = int(row["tokens"]) + offset
        offset = stage[-1]["tokens"] if stage else offset
        rows += stage
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--log", action="append", required=True, metavar="NAME=CSV[,CSV...]",
                        help="a model's training logs, stages in order")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    figure, axes = plt.subplots(1, len(SERIES), figsize=(15, 4.5), sharey=True)
    for spec in args.log:
        name, _, paths = spec.partition("=")
        rows = read_stages(paths)
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
