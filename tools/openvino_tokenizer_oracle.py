#!/usr/bin/env python3
"""Checks the OpenVINO tokenizer models kiln writes (openvino_tokenizer.xml / openvino_detokenizer.xml
beside `kiln export --format openvino`'s decoder) against Hugging Face `tokenizers` on the same
tokenizer.json: OpenVINO (with the openvino_tokenizers extension) must give the ids `tokenizers`
gives, special tokens included, and decode them back to `tokenizers`' text with special tokens
skipped. Where openvino-tokenizers' own ops cannot (its BPETokenizer has no `ignore_merges`, which
Llama 3 sets), the models openvino-tokenizers' `convert_tokenizer` makes of the same files are the
second oracle: kiln's must give their ids and text, and the differing texts are recorded. Used by tools/make_openvino_export_goldens.py; also runs alone on an exported directory:
    .ovenv/bin/python tools/openvino_tokenizer_oracle.py OUT_DIR [TOKENIZER_FIXTURE_DIR]
(a fixture's golden.jsonl texts are checked too).
Versions: those of tools/make_openvino_export_goldens.py (openvino 2026.4.1, openvino-tokenizers
2026.4.1.0, tokenizers 0.23.3).
"""
import hashlib
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

FILES = ["openvino_tokenizer.xml", "openvino_tokenizer.bin", "openvino_detokenizer.xml",
         "openvino_detokenizer.bin"]

# ASCII, contractions, digit runs, whitespace runs and newlines, accents (precomposed and
# combining), CJK, emoji (multi-byte, joiners), and the empty string.
TEXTS = [
    "The cat sat on the mat.",
    "I'm sure they'll say it's fine, don't you think?",
    "Numbers: 1234567890, 3.14159 and 2026-12-05.",
    "   leading spaces, two  inner   runs\tand a tab\n\nnew lines\r\n",
    "Café déjà vu — naïve façade; e\u0301 combines.",
    "日本語のテキストと中文文本。",
    "Emoji: 🙂🚀 👩‍💻 🇫🇷!",
    "",
]


def hf_tokenizer(model_dir):
    from tokenizers import Tokenizer
    return Tokenizer.from_file(str(pathlib.Path(model_dir) / "tokenizer.json"))


def hf_decode(model_dir, ids):
    return hf_tokenizer(model_dir).decode(list(ids), skip_special_tokens=True)


def texts_for(model_dir):
    """TEXTS, plus one with the first two added tokens inline (special tokens split out)."""
    added = json.loads((pathlib.Path(model_dir) / "tokenizer.json").read_text())["added_tokens"]
    extra = [f"{added[0]['content']}Hello{added[-1]['content']} world"] if added else []
    return TEXTS + extra


def fixture_texts(fixture_dir):
    """The texts of a tokenizer fixture's golden.jsonl (its 169 cases), when it has one."""
    path = pathlib.Path(fixture_dir) / "golden.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)["text"] for line in path.read_text().splitlines() if line.strip()]


def run_models(model_dir, texts):
    """(ids, decoded text) per text from OpenVINO running the directory's tokenizer models."""
    import openvino as ov
    import openvino_tokenizers  # noqa: F401 (registers the tokenizer ops)
    core = ov.Core()
    tokenizer = core.compile_model(str(pathlib.Path(model_dir) / "openvino_tokenizer.xml"), "CPU")
    detokenizer = core.compile_model(str(pathlib.Path(model_dir) / "openvino_detokenizer.xml"), "CPU")
    out = []
    for text in texts:
        ids = [int(t) for t in tokenizer([text])["input_ids"][0]]
        out.append((ids, str(detokenizer(np.array([ids], np.int64))["string_output"][0])))
    return out


def convert_tokenizer_models(model_dir, texts):
    """run_models on what openvino-tokenizers' own convert_tokenizer makes of the same files."""
    with tempfile.TemporaryDirectory() as tmp:
        convert = pathlib.Path(sys.executable).parent / "convert_tokenizer"
        p = subprocess.run([str(convert), str(model_dir), "--with-detokenizer", "-o", tmp],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            sys.exit(f"convert_tokenizer failed on {model_dir}:\n{p.stdout[-4000:]}")
        return run_models(tmp, texts)


def check(model_dir, record_ids, extra_texts=()):
    """OpenVINO on kiln's tokenizer models against Hugging Face tokenizers and against
    convert_tokenizer's models. Exits when kiln's differ from convert_tokenizer's, or from
    tokenizers where convert_tokenizer's do not."""
    model_dir = pathlib.Path(model_dir)
    missing = [f for f in FILES if not (model_dir / f).exists()]
    if missing:
        sys.exit(f"{model_dir}: kiln did not write {missing}")
    texts = texts_for(model_dir) + list(extra_texts)
    ours = run_models(model_dir, texts)
    theirs = convert_tokenizer_models(model_dir, texts)
    hf = hf_tokenizer(model_dir)
    cases, encode_differs, decode_differs, own_faults = [], [], [], []
    for text, (ids, decoded), (their_ids, their_text) in zip(texts, ours, theirs):
        want = hf.encode(text).ids
        want_text = hf.decode(want, skip_special_tokens=True)
        if ids != want:
            encode_differs.append(text)
            print(f"  encode differs on {text!r}:\n    OpenVINO {ids}\n    tokenizers {want}", flush=True)
        if decoded != want_text:
            decode_differs.append(text)
            print(f"  decode differs on {text!r}:\n    OpenVINO {decoded!r}\n    tokenizers {want_text!r}",
                  flush=True)
        if (ids, decoded) != (their_ids, their_text) and (ids != want or decoded != want_text):
            own_faults.append(text)
        cases.append({"text": text, "ids": ids, "decoded": decoded})
    result = {f"{f.replace('.', '_')}_sha256": hashlib.sha256((model_dir / f).read_bytes()).hexdigest()
              for f in FILES}
    if record_ids:
        result["tokenizer_cases"] = cases
    result["texts_checked"] = len(texts)
    result["tokenizer_matches_hf"] = not encode_differs
    result["detokenizer_matches_hf"] = not decode_differs
    result["encode_differs_from_hf"] = encode_differs
    result["decode_differs_from_hf"] = decode_differs
    result["same_as_convert_tokenizer"] = ours == theirs
    print(f"  tokenizer models on {len(texts)} texts: encode {len(encode_differs)} and decode "
          f"{len(decode_differs)} differ from tokenizers; convert_tokenizer's models "
          f"{'give the same' if ours == theirs else 'DIFFER'}", flush=True)
    if own_faults:
        sys.exit(f"{model_dir}: kiln's tokenizer models differ from tokenizers where convert_tokenizer's "
                 f"do not: {own_faults}")
    return result


if __name__ == "__main__":
    check(sys.argv[1], record_ids=False, extra_texts=fixture_texts(sys.argv[2]) if len(sys.argv) > 2 else ())
