"""Learning-rate schedules for train_tiny.py: linear warm-up then cosine decay, either over a
fixed number of steps, over a wall-time budget, or replayed step by step from a logged run.

Invariant: every schedule returns None exactly when training must stop, and a replayed schedule
gives bit-identical learning rates (the log holds float.hex values) and the same step count.
"""
import math
import time


def cosine(peak, floor_ratio, progress):
    floor = peak * floor_ratio
    return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))


class StepSchedule:
    """Warm-up for `warmup` steps, then cosine to peak * floor_ratio at `total_steps`."""

    def __init__(self, peak, floor_ratio, warmup, total_steps):
        self.peak, self.floor_ratio = peak, floor_ratio
        self.warmup, self.total_steps = warmup, total_steps

    def lr(self, step):
        if step >= self.total_steps:
            return None
        if step < self.warmup:
            return self.peak * (step + 1) / self.warmup
        progress = (step - self.warmup) / max(1, self.total_steps - self.warmup)
        return cosine(self.peak, self.floor_ratio, progress)


class WallTimeSchedule:
    """Warm-up for `warmup` steps, then cosine over the wall time left until `budget_s` after
    construction. The step count follows from the machine's speed (which on a shared machine
    varies), so the learning rates taken are logged for replay."""

    def __init__(self, peak, floor_ratio, warmup, budget_s):
        self.peak, self.floor_ratio, self.warmup = peak, floor_ratio, warmup
        self.start = time.time()
        self.budget_s = budget_s
        self.decay_start = None

    def lr(self, step):
        now = time.time() - self.start
        if now >= self.budget_s:
            return None
        if step < self.warmup:
            return self.peak * (step + 1) / self.warmup
        if self.decay_start is None:
            self.decay_start = now
        progress = (now - self.decay_start) / max(1e-9, self.budget_s - self.decay_start)
        return cosine(self.peak, self.floor_ratio, progress)


class ReplaySchedule:
    """The learning rates of a previous run, read from its lr_schedule.csv."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            header = f.readline().strip()
            if header != "step,lr_hex":
                raise ValueError(f"{path}: expected header 'step,lr_hex', got '{header}'")
            self.lrs = [float.fromhex(line.split(",")[1]) for line in f if line.strip()]

    def lr(self, step):
        return self.lrs[step] if step < len(self.lrs) else None
