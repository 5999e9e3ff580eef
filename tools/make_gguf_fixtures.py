#!/usr/bin/env python3
"""Writes tests/data/gguf/: a small GGUF file made by llama.cpp's own `gguf` package (gguf-py), and
what that package's GGUFReader reads back from it, as the oracle for kiln's GGUF reader.

Developer tool (not run by CI). Needs numpy and the gguf package (PyPI `gguf`, or the gguf-py
directory of llama.cpp's sources on PYTHONPATH):
    python3 -m venv .venv && .venv/bin/pip install numpy gguf
    .venv/bin/python tools/make_gguf_fixtures.py

tiny.gguf holds metadata of every value type (integers of each width and sign, floats, a bool,
strings, arrays of strings and of numbers) and a tensor of each element type kiln reads: F32, F16,
BF16, and Q4_0 / Q4_1 / Q5_0 / Q5_1 / Q8_0 and Q2_K ... Q6_K blocks of random bits with finite
scales. golden.json lists each key with its value, and each tensor with its type, ggml dimensions,
byte size, the sha256 of its bytes and its values as gguf.quants.dequantize computes them.
"""
import hashlib
import json
import pathlib

import numpy as np
import gguf

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "gguf"


# Each quantised type, with the number of rows of one block row (256 or 32 elements) each.
Q = gguf.GGMLQuantizationType
QUANTISED = [(Q.Q4_0, 3), (Q.Q4_1, 2), (Q.Q5_0, 2), (Q.Q5_1, 2), (Q.Q8_0, 2),
             (Q.Q2_K, 1), (Q.Q3_K, 1), (Q.Q4_K, 2), (Q.Q5_K, 1), (Q.Q6_K, 2)]
# Where each block keeps its f16 scale(s): random bytes there could be inf or NaN.
SCALE_OFFSETS = {Q.Q4_0: [0], Q.Q4_1: [0, 2], Q.Q5_0: [0], Q.Q5_1: [0, 2], Q.Q8_0: [0],
                 Q.Q2_K: [80, 82], Q.Q3_K: [108], Q.Q4_K: [0, 2], Q.Q5_K: [0, 2], Q.Q6_K: [208]}


def quantised_blocks(rng, qtype, rows):
    """Random blocks whose scales are finite f16 values in [0.01, 1): every other bit pattern is as
    random as a real model's."""
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    blocks = rng.integers(0, 256, size=(rows, 256 // block, size), dtype=np.uint8)
    for offset in SCALE_OFFSETS[qtype]:
        scales = rng.uniform(0.01, 1.0, size=(rows, 256 // block)).astype(np.float16)
        blocks[:, :, offset:offset + 2] = scales.view(np.uint8).reshape(rows, 256 // block, 2)
    return blocks.reshape(rows, -1)


def write(path):
    rng = np.random.default_rng(20261205)
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_uint8("test.u8", 200)
    w.add_int8("test.i8", -100)
    w.add_uint16("test.u16", 60000)
    w.add_int16("test.i16", -30000)
    w.add_uint32("test.u32", 4000000000)
    w.add_int32("test.i32", -2000000000)
    w.add_uint64("test.u64", 2**63 + 5)
    w.add_int64("test.i64", -(2**62))
    w.add_float32("test.f32", 0.15625)
    w.add_float64("test.f64", -1.0e300)
    w.add_bool("test.bool", True)
    w.add_string("test.string", "naïve ✓ \"quoted\"")
    w.add_array("tokenizer.ggml.tokens", ["<s>", "</s>", "▁hello", "é", ""])
    w.add_array("tokenizer.ggml.scores", [0.0, -1.5, 2.25])
    w.add_array("tokenizer.ggml.token_type", [3, 3, 1])
    w.add_context_length(256)
    w.add_embedding_length(64)
    w.add_tensor("f32", rng.standard_normal((3, 5)).astype(np.float32))
    w.add_tensor("f16", rng.standard_normal((2, 4)).astype(np.float16))
    bf16 = (rng.standard_normal((2, 8)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    w.add_tensor("bf16", bf16.view(np.uint8), raw_dtype=gguf.GGMLQuantizationType.BF16)
    for qtype, rows in QUANTISED:
        w.add_tensor(qtype.name.lower(), quantised_blocks(rng, qtype, rows), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def plain(value):
    if isinstance(value, (np.generic,)):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def values(t):
    """The tensor's elements as floats, by gguf's own dequantisation."""
    if t.tensor_type in (Q.F32, Q.F16):
        return t.data.astype(np.float32)
    return gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)


def golden(path):
    r = gguf.GGUFReader(str(path))
    keys = []
    for field in r.fields.values():
        if field.name.startswith("GGUF."):  # the reader's own header pseudo-fields
            continue
        keys.append({"key": field.name, "value": plain(field.contents())})
    tensors = [{"name": t.name, "type": t.tensor_type.name, "dims": [int(d) for d in t.shape],
                "bytes": int(t.n_bytes), "sha256": hashlib.sha256(t.data.tobytes()).hexdigest(),
                "values": [float(v) for v in values(t).reshape(-1)]}
               for t in r.tensors]
    return {"version": int(r.fields["GGUF.version"].contents()), "alignment": int(r.alignment),
            "metadata": keys, "tensors": tensors}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "tiny.gguf"
    write(path)
    (OUT / "golden.json").write_text(json.dumps(golden(path), indent=1, ensure_ascii=False) + "\n")
    print(path, path.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
