#!/usr/bin/env python3
"""Writes tests/data/openvino/exports/golden.json: what OpenVINO itself computes on the OpenVINO IR
that `kiln export --format openvino` writes, the independent oracle for kiln's OpenVINO IR writer
(tests/export/openvino_export_test.cpp checks that kiln still writes these exact bytes and computes
these logits on them).

Developer tool (not run by CI). Needs the venv of tools/make_openvino_models.py (openvino 2026.4.1,
openvino-tokenizers and openvino-genai 2026.4.1.0, transformers, tokenizers, numpy; torch is not
needed) and a built kiln:
    .ovenv/bin/python tools/make_openvino_export_goldens.py --kiln build/kiln

Per case (CASES below) it runs `kiln export --model tests/data/checkpoints/<ckpt> OUT --format
openvino <args>` in a scratch directory, then:
  - the sha256 of the openvino_model.xml and openvino_model.bin kiln wrote;
  - prompt_ids: transformers' AutoTokenizer on the written directory, "The cat" (BOS first);
  - the OpenVINO runtime (`ov.Core().read_model` + `compile_model` on CPU with f32 inference
    precision, f32 KV cache, no dynamic quantisation, one thread): the prompt in one call, the last
    position's `logits`, then 16 greedy steps fed one token at a time (`greedy_ids`, and
    `greedy_margins`, top-1 minus top-2 logit at each step);
  - `genai_greedy_ids`: openvino_genai.LLMPipeline on the directory as kiln wrote it (its own
    openvino_tokenizer / openvino_detokenizer, no convert_tokenizer step), greedy 16 new tokens
    from prompt_ids, with the SDPA attention backend (the stateful graph as written) and
    `genai_pa_greedy_ids` with GenAI's default backend (its SDPA-to-paged-attention rewrite);
    `genai_matches_stepwise` says whether the SDPA run equals greedy_ids; `genai_text` is the
    pipeline's text for the text prompt and `genai_text_matches` whether it is Hugging Face
    `tokenizers`' decode of greedy_ids;
  - for phi3_tiny, `longrope_vs_optimum`: OpenVINO on kiln's graph against OpenVINO on
    optimum-cli's export of the same checkpoint and format (tests/data/openvino/models) at
    contexts past original_max_position_embeddings, where LongRoPE takes the long factors and
    kiln's forward refuses;
  - the tokenizer models kiln wrote (tools/openvino_tokenizer_oracle.py): their sha256, and per
    test string the ids and decoded text of OpenVINO running them, checked against Hugging Face
    `tokenizers` on the same tokenizer.json.
It also writes tests/data/openvino/exports/tokenizers.json (only when every one was found): the
same tokenizer check for the real tokenizers REAL_TOKENIZERS (Llama 3 and 3.1 from
$KILN_EXTERNAL_FIXTURES/tokenizers, Qwen3 and Mistral 7B from tests/data/tokenizers), each
exported beside llama3_tiny's weights and checked on the test strings and the 169 texts of the
fixture's golden.jsonl; hashes, counts and the differing texts are recorded, no ids.
Logits are rounded to 7 significant digits, margins to 6. Nothing here holds a path or a time.
"""
import argparse
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import openvino_tokenizer_oracle as tokenizer_oracle  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "openvino" / "exports" / "golden.json"
TOKENIZERS_OUT = ROOT / "tests" / "data" / "openvino" / "exports" / "tokenizers.json"
# Real tokenizers: tests/data/tokenizers/<name>, else $KILN_EXTERNAL_FIXTURES/tokenizers/<name>.
REAL_TOKENIZERS = ["llama3", "llama3_1", "qwen3", "mistral7b"]
CKPT = ROOT / "tests" / "data" / "checkpoints"

PROMPT = "The cat"
GREEDY_STEPS = 16
OV_PROPS = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32",
            "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0", "INFERENCE_NUM_THREADS": "1"}

# name -> (checkpoint, kiln export arguments after --format openvino)
CASES = {
    "llama3_tiny-int4-sym-g32": ("llama3_tiny", ["--weight-format", "int4", "--sym", "--group-size", "32"]),
    "qwen2_tiny-int8": ("qwen2_tiny", ["--weight-format", "int8"]),
    "qwen3_tiny-fp16": ("qwen3_tiny", ["--weight-format", "fp16"]),
    "mistral_tiny-int4-asym-g32": ("mistral_tiny", ["--weight-format", "int4", "--group-size", "32"]),
    "phi3_tiny-int4-sym-g16": ("phi3_tiny", ["--weight-format", "int4", "--sym", "--group-size", "16"]),
}


def r7(x):
    return float(f"{float(x):.7g}")


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def kiln_export(kiln, name, work, ckpt, args=None):
    args = CASES[name][1] if args is None else args
    out = work / name
    cmd = [str(kiln), "export", "--model", str(ckpt), str(out), "--format", "openvino", "--quiet"] + args
    print("  $ kiln " + " ".join(cmd[1:]).replace(str(CKPT), "tests/data/checkpoints")
          .replace(str(work) + "/", ""), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"kiln export of {name} failed (rc {p.returncode}):\n{p.stdout[-6000:]}")
    return out


def ov_run(core, xml, prompt_ids):
    cm = core.compile_model(str(xml), "CPU", OV_PROPS)
    req = cm.create_infer_request()
    cur, pos = np.array([prompt_ids], np.int64), 0
    ids, margins, last = [], [], None
    for step in range(GREEDY_STEPS):
        n = cur.shape[1]
        req.infer({"input_ids": cur, "attention_mask": np.ones((1, pos + n), np.int64),
                   "position_ids": np.arange(pos, pos + n, dtype=np.int64)[None],
                   "beam_idx": np.zeros(1, np.int32)})
        logits = req.get_tensor("logits").data[0].astype(np.float32)
        row = logits[-1]
        if step == 0:
            last = row.copy()
        order = np.argsort(-row, kind="stable")  # ties to the lowest id
        ids.append(int(order[0]))
        margins.append(float(row[order[0]] - row[order[1]]))
        pos += n
        cur = np.array([[ids[-1]]], np.int64)
    return last, ids, margins


def genai_greedy(model_dir, prompt_ids, backend):
    import openvino as ov
    import openvino_genai as genai
    props = dict(OV_PROPS)
    if backend:
        props["ATTENTION_BACKEND"] = backend
    pipe = genai.LLMPipeline(str(model_dir), "CPU", **props)
    cfg = genai.GenerationConfig()
    cfg.max_new_tokens = cfg.min_new_tokens = GREEDY_STEPS
    cfg.ignore_eos = True
    cfg.do_sample = False
    ids = np.array([prompt_ids], np.int64)
    res = pipe.generate(genai.TokenizedInputs(ov.Tensor(ids), ov.Tensor(np.ones_like(ids))), cfg)
    return [int(t) for t in res.tokens[0]]


def longrope_cross_check(out, optimum_dir):
    """Phi-3's LongRoPE past original_max_position_embeddings, where kiln's forward refuses to go:
    OpenVINO on kiln's graph against OpenVINO on optimum-cli's export of the same checkpoint
    (its own int4 rounding, so not equal) at contexts on both sides of the factor switch, and how
    far the switch itself moves kiln's logits (what a wrong long branch would show)."""
    import openvino as ov
    core = ov.Core()
    kiln_cm = core.compile_model(str(out / "openvino_model.xml"), "CPU", OV_PROPS)
    optimum_cm = core.compile_model(str(optimum_dir / "openvino_model.xml"), "CPU", OV_PROPS)
    original = json.loads((out / "config.json").read_text())["rope_scaling"]["original_max_position_embeddings"]
    ids = np.random.default_rng(0).integers(1, 300, size=original + 44).tolist()

    def logits(cm, n):
        req = cm.create_infer_request()
        req.infer({"input_ids": np.array([ids[:n]], np.int64), "attention_mask": np.ones((1, n), np.int64),
                   "position_ids": np.arange(n, dtype=np.int64)[None], "beam_idx": np.zeros(1, np.int32)})
        return req.get_tensor("logits").data[0].copy()

    contexts = [original - 6, original + 1, original + 44]
    diffs = [float(np.abs(logits(kiln_cm, n)[-1] - logits(optimum_cm, n)[-1]).max()) for n in contexts]
    switch = float(np.abs(logits(kiln_cm, original + 1)[original - 1] - logits(kiln_cm, original)[original - 1]).max())
    print(f"  LongRoPE: kiln vs optimum graph max |diff| {diffs} at contexts {contexts}; the factor switch "
          f"moves logits by {switch:.3g}", flush=True)
    return {"contexts": contexts, "max_abs_diff_vs_optimum": [float(f"{d:.4g}") for d in diffs],
            "factor_switch_max_abs_diff": float(f"{switch:.4g}")}


def genai_text(model_dir):
    import openvino_genai as genai
    pipe = genai.LLMPipeline(str(model_dir), "CPU", ATTENTION_BACKEND="SDPA", **OV_PROPS)
    cfg = genai.GenerationConfig()
    cfg.max_new_tokens = cfg.min_new_tokens = GREEDY_STEPS
    cfg.ignore_eos = True
    cfg.do_sample = False
    cfg.apply_chat_template = False  # the plain prompt, tokenized by kiln's openvino_tokenizer
    return str(pipe.generate(PROMPT, cfg))


def tokenizer_fixture(name):
    committed = ROOT / "tests" / "data" / "tokenizers" / name
    if committed.is_dir():
        return committed
    external = os.environ.get("KILN_EXTERNAL_FIXTURES")
    if external and (pathlib.Path(external) / "tokenizers" / name).is_dir():
        return pathlib.Path(external) / "tokenizers" / name
    return None


def real_tokenizer(kiln, name, src, work):
    """llama3_tiny's weights with a real tokenizer beside them: only the tokenizer is checked."""
    import gzip
    ckpt = work / f"ckpt-{name}"
    shutil.copytree(CKPT / "llama3_tiny", ckpt)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        if (src / f).exists():
            shutil.copy(src / f, ckpt / f)
    if (src / "tokenizer.json.gz").exists():
        (ckpt / "tokenizer.json").write_bytes(gzip.decompress((src / "tokenizer.json.gz").read_bytes()))
    out = kiln_export(kiln, f"tokenizer-{name}", work, ckpt, ["--weight-format", "fp16"])
    return tokenizer_oracle.check(out, record_ids=False, extra_texts=tokenizer_oracle.fixture_texts(src))


def goldens_for(kiln, name, work):
    import openvino as ov
    from transformers import AutoTokenizer
    out = kiln_export(kiln, name, work, CKPT / CASES[name][0])
    g = {"checkpoint": f"tests/data/checkpoints/{CASES[name][0]}",
         "export_args": ["--format", "openvino"] + CASES[name][1],
         "xml_sha256": sha256(out / "openvino_model.xml"), "bin_sha256": sha256(out / "openvino_model.bin")}
    tok = AutoTokenizer.from_pretrained(out)
    prompt_ids = [int(t) for t in tok(PROMPT)["input_ids"]]
    g["prompt"] = PROMPT
    g["prompt_ids"] = prompt_ids
    last, ids, margins = ov_run(ov.Core(), out / "openvino_model.xml", prompt_ids)
    g["logits"] = [r7(x) for x in last]
    g["greedy_ids"] = ids
    g["greedy_margins"] = [float(f"{m:.6g}") for m in margins]
    g.update(tokenizer_oracle.check(out, record_ids=True))
    optimum_dir = ROOT / "tests" / "data" / "openvino" / "models" / name
    if CASES[name][0] == "phi3_tiny" and optimum_dir.is_dir():
        g["longrope_vs_optimum"] = longrope_cross_check(out, optimum_dir)
    # GenAI on kiln's directory as written: its own tokenizer models, no convert_tokenizer.
    g["genai_greedy_ids"] = genai_greedy(out, prompt_ids, "SDPA")
    g["genai_text"] = genai_text(out)
    g["genai_text_matches"] = g["genai_text"] == tokenizer_oracle.hf_decode(out, ids)
    g["genai_matches_stepwise"] = g["genai_greedy_ids"] == ids
    try:
        g["genai_pa_greedy_ids"] = genai_greedy(out, prompt_ids, None)
    except Exception as e:  # recorded, not fatal: the SDPA run is the oracle
        print(f"  paged-attention backend failed: {e}", flush=True)
        g["genai_pa_greedy_ids"] = None
    print(f"  {name}: greedy {ids}; GenAI SDPA {'matches' if g['genai_matches_stepwise'] else 'DIFFERS'}; "
          f"GenAI PA {'matches' if g['genai_pa_greedy_ids'] == ids else 'differs'}; min margin {min(margins):.4g}",
          flush=True)
    return g


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kiln", default=str(ROOT / "build" / "kiln"), help="the kiln binary (default build/kiln)")
    args = ap.parse_args()
    kiln = pathlib.Path(args.kiln).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        golden = {name: goldens_for(kiln, name, pathlib.Path(tmp)) for name in CASES}
        external = {}
        for n in REAL_TOKENIZERS:
            src = tokenizer_fixture(n)
            if src is None:
                print(f"{n}: not in tests/data/tokenizers and KILN_EXTERNAL_FIXTURES is not set: not checked",
                      flush=True)
                continue
            external[n] = real_tokenizer(kiln, n, src, pathlib.Path(tmp))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")
    if set(external) == set(REAL_TOKENIZERS):
        TOKENIZERS_OUT.write_text(json.dumps(external, indent=1) + "\n")
        print(f"wrote {TOKENIZERS_OUT.relative_to(ROOT)}")
    bad = [n for n, g in golden.items() if not (g["tokenizer_matches_hf"] and g["detokenizer_matches_hf"])]
    if bad:
        sys.exit(f"OpenVINO running kiln's tokenizer models differs from Hugging Face tokenizers: {bad}")


if __name__ == "__main__":
    main()
