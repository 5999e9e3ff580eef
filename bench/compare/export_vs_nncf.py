#!/usr/bin/env python3
"""kiln export vs NNCF weight compression on the same checkpoint, calibration data and recipe.

Both compress the same Hugging Face checkpoint with the same recipe (default: int4 symmetric,
group 128, AWQ + scale estimation, 128 samples of 128 tokens of kiln's built-in calibration text,
embedding/head int8_asym); both results are then evaluated by the same PyTorch forward pass on
held-out text: kiln's IR is decoded back to f32 by an independent Python reader of docs/FORMAT.md,
NNCF's model is NNCF's own decompressing torch model. Reports perplexity and export wall time,
and the CPU seconds (user + sys) each export used: on a shared machine the wall times measure the
load as much as the exporters.

NOTE: optimum-intel (the optimum-cli path) pins transformers<5.6, older than the venv's, so this
script calls NNCF's compress_weights on the torch model directly; that is the same NNCF
algorithm code optimum-cli runs, on NNCF's torch backend instead of its OpenVINO backend.

  python3 bench/compare/export_vs_nncf.py --model models/kiln-tiny --kiln build/kiln
"""
import argparse
import json
import math
import os
import resource
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

REPO = pathlib.Path(__file__).resolve().parents[2]
NF4 = np.array([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
                -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
                0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
                0.7229568362236023, 1.0], dtype=np.float32)


def calibration_samples(tokenizer, text, num_samples, sample_tokens, bos_id):
    """The samples kiln's load_calibration_data cuts: evenly spread windows, BOS first."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    body = sample_tokens - (1 if bos_id is not None else 0)
    available = len(ids) // body
    if available < num_samples:
        sys.exit(f"calibration text makes {available} samples, fewer than {num_samples}")
    samples = []
    for i in range(num_samples):
        w = i * available // num_samples
        samples.append(([bos_id] if bos_id is not None else []) + ids[w * body:(w + 1) * body])
    return samples


def read_storage(raw, entry):
    dtype, shape = entry["dtype"], entry["shape"]
    n = int(np.prod(shape)) if shape else 1
    if dtype == "F32":
        return np.frombuffer(raw, np.float32, n).reshape(shape)
    if dtype == "F16":
        return np.frombuffer(raw, np.float16, n).astype(np.float32).reshape(shape)
    if dtype == "BF16":
        return (np.frombuffer(raw, np.uint16, n).astype(np.uint32) << 16).view(np.float32).reshape(shape)
    if dtype in ("I8", "U8"):
        return np.frombuffer(raw, np.int8 if dtype == "I8" else np.uint8, n).astype(np.int32).reshape(shape)
    nibbles = np.frombuffer(raw, np.uint8)
    flat = np.empty(nibbles.size * 2, np.int32)
    flat[0::2], flat[1::2] = nibbles & 0xF, nibbles >> 4  # even index in the low nibble
    flat = flat[:n]
    if dtype == "I4":
        flat = np.where(flat >= 8, flat - 16, flat)
    return flat.reshape(shape)


def load_kiln_ir(ir_dir):
    """State dict of f32 tensors decoded from model.json + model.bin (docs/FORMAT.md)."""
    meta = json.loads((ir_dir / "model.json").read_text())
    data = (ir_dir / "model.bin").read_bytes()
    by_name = {e["name"]: e for e in meta["tensors"]}
    raw = lambda e: data[e["offset"]:e["offset"] + e["size"]]
    companions = {q[k] for e in meta["tensors"] if (q := e.get("quantization")) for k in ("scale", "zero_point") if k in q}
    state = {}
    for e in meta["tensors"]:
        if e["name"] in companions:
            continue
        q = e.get("quantization")
        if not q:
            state[e["name"]] = torch.from_numpy(read_storage(raw(e), e).astype(np.float32).copy())
            continue
        out, inp = e["shape"]
        gs = q["group_size"]
        codes = read_storage(raw(e), e)
        scale = read_storage(raw(by_name[q["scale"]]), by_name[q["scale"]])
        groups = scale.shape[1]
        zp = read_storage(raw(by_name[q["zero_point"]]), by_name[q["zero_point"]]) if "zero_point" in q else np.zeros_like(scale, dtype=np.int32)
        col_group = np.arange(inp) // gs
        levels = NF4[codes] if q["scheme"] == "nf4" else (codes - zp[:, col_group]).astype(np.float32)
        state[e["name"]] = torch.from_numpy((levels * scale[:, col_group]).astype(np.float32))
        assert groups == math.ceil(inp / gs)
    return state


def children_cpu_s():
    """User + sys CPU seconds of the finished child processes (the kiln exports)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@torch.no_grad()
def perplexity(model, ids, window):
    nll, count = 0.0, 0
    for start in range(0, len(ids) - 1, window):
        chunk = torch.tensor([ids[start:start + window + 1]])
        if chunk.shape[1] < 2:
            break
        logits = model(chunk[:, :-1]).logits.float()
        nll += torch.nn.functional.cross_entropy(logits[0], chunk[0, 1:], reduction="sum").item()
        count += chunk.shape[1] - 1
    return math.exp(nll / count)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, help="Hugging Face checkpoint directory")
    p.add_argument("--kiln", default=str(REPO / "build" / "kiln"))
    p.add_argument("--group-size", type=int, default=128)
    p.add_argument("--num-samples", type=int, default=128)
    p.add_argument("--sample-tokens", type=int, default=128)
    p.add_argument("--eval-text", default=str(REPO / "tests" / "data" / "heldout" / "manpages-heldout.txt"))
    p.add_argument("--eval-tokens", type=int, default=8192)
    p.add_argument("--window", type=int, default=256)
    p.add_argument("--json", help="write the results here")
    args = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    model_dir = pathlib.Path(args.model)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    eval_ids = tokenizer(pathlib.Path(args.eval_text).read_text(), add_special_tokens=False)["input_ids"][: args.eval_tokens]
    calib_text = (REPO / "src" / "export" / "data" / "builtin_calibration.txt").read_text()
    results = {"model": str(model_dir), "eval_tokens": len(eval_ids), "window": args.window,
               "recipe": f"int4_sym g{args.group_size} awq+scale_estimation, {args.num_samples}x{args.sample_tokens} builtin"}

    base = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    results["ppl_fp32"] = perplexity(base, eval_ids, args.window)

    # kiln: RTN and AWQ + scale estimation.
    with tempfile.TemporaryDirectory() as tmp:
        for name, extra in (("kiln_rtn", []), ("kiln_awq_se", ["--awq", "--scale-estimation", "--dataset", "builtin",
                                                                   "--num-samples", str(args.num_samples),
                                                                   "--sample-tokens", str(args.sample_tokens)])):
            out = pathlib.Path(tmp) / name
            cmd = [args.kiln, "export", "--model", str(model_dir), "--weight-format", "int4", "--sym",
                   "--group-size", str(args.group_size), "-q", *extra, str(out)]
            t0, cpu0 = time.perf_counter(), children_cpu_s()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            results[f"{name}_export_s"] = time.perf_counter() - t0
            results[f"{name}_export_cpu_s"] = children_cpu_s() - cpu0
            m = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
            state = load_kiln_ir(out)
            missing, unexpected = m.load_state_dict(state, strict=False)
            assert not unexpected, unexpected
            assert all(k == "lm_head.weight" for k in missing), missing  # tied heads are the embedding
            results[f"ppl_{name}"] = perplexity(m, eval_ids, args.window)

    # NNCF on the torch model, same recipe and samples.
    import nncf
    samples = calibration_samples(tokenizer, calib_text, args.num_samples, args.sample_tokens, base.config.bos_token_id)
    dataset = nncf.Dataset([{"input_ids": torch.tensor([s])} for s in samples])
    # The torch backend needs a dataset even for round to nearest (to trace the model).
    for name, kwargs in (("nncf_rtn", {"dataset": dataset}),
                         ("nncf_awq_se", {"awq": True, "scale_estimation": True, "dataset": dataset,
                                          "subset_size": args.num_samples})):
        m = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
        t0, cpu0 = time.perf_counter(), time.process_time()
        m = nncf.compress_weights(m, mode=nncf.CompressWeightsMode.INT4_SYM, group_size=args.group_size, ratio=1.0,
                                  backup_mode=nncf.BackupMode.INT8_ASYM, **kwargs)
        results[f"{name}_export_s"] = time.perf_counter() - t0
        results[f"{name}_export_cpu_s"] = time.process_time() - cpu0  # every thread of this process
        results[f"ppl_{name}"] = perplexity(m, eval_ids, args.window)

    print(json.dumps(results, indent=1))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
