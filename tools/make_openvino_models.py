#!/usr/bin/env python3
"""Writes tests/data/openvino/models/: small OpenVINO IR model directories exported by optimum-intel
(`optimum-cli export openvino`) from the tiny checkpoints in tests/data/checkpoints, and
golden.json, what OpenVINO itself computes with them (the runtime in f32 and openvino_genai's
LLMPipeline), the decoded weights of a few tensors per model, and transformers' logits of the
source checkpoint and of the IR's own (decoded) weights: the independent oracle for kiln's
OpenVINO IR importer.

Developer tool (not run by CI). Needs a venv with exactly these versions (the goldens and the
files depend on them; the CPU build of torch is enough):
    python3.11 -m venv .ovenv && .ovenv/bin/pip install openvino==2026.4.1 \\
        openvino-tokenizers==2026.4.1.0 openvino-genai==2026.4.1.0 optimum-intel==2.2.0 \\
        optimum==2.3.0 nncf==3.4.0 transformers==5.5.4 tokenizers==0.22.2 torch==2.15.0 \\
        numpy==2.4.6 --extra-index-url https://download.pytorch.org/whl/cpu
    .ovenv/bin/python tools/make_openvino_models.py
It runs the venv's own `optimum-cli` (the one beside sys.executable) with HF_HUB_OFFLINE=1 on the
local checkpoint directories; nothing is downloaded. --only NAME[,NAME] limits the run to some
model directories (golden.json keeps the other entries). --keep DIR keeps the full temporary
exports (with openvino_tokenizer / openvino_detokenizer, which GenAI needs) in DIR.

What it writes, per model directory (see MODELS below for the exact export arguments):
  openvino_model.xml / .bin, config.json, generation_config.json, tokenizer.json,
  tokenizer_config.json, chat_template.jinja, and openvino_config.json (quantised exports only):
  the files optimum-cli wrote, copied unchanged except that openvino_config.json's
  quantization_config.tokenizer, the absolute path of the checkpoint the export read, is replaced
  by its repo-relative path (tests/data/checkpoints/<name>). Nothing else optimum writes holds a
  path or a timestamp (the XML's rt_info has versions and the NNCF parameters only). The
  openvino_tokenizer.* / openvino_detokenizer.* models are not kept: the goldens are computed in the
  temporary full export first.
  golden.json: one object keyed by directory name; see tests/data/openvino/models/README.md.
The output is deterministic: running it twice gives byte-identical files.
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
import xml.etree.ElementTree as ET

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "openvino" / "models"
CKPT = ROOT / "tests" / "data" / "checkpoints"

PROMPT = "The cat"
GREEDY_STEPS = 16
# Last prompt positions whose full logit rows are stored (the last one is also `logits`).
LOGIT_ROWS = 2

# f32 compute, f32 KV cache, no dynamic (activation) quantisation, one thread (so that sums are
# always taken in the same order).
OV_PROPS = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32",
            "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0", "INFERENCE_NUM_THREADS": "1"}
# LLMPipeline: the same, on the stateful SDPA path (not the paged-attention backend).
GENAI_PROPS = dict(OV_PROPS, ATTENTION_BACKEND="SDPA")

TASK = ["--task", "text-generation-with-past"]
Q0, D1, EMB, LMH = ("model.layers.0.self_attn.q_proj.weight", "model.layers.1.mlp.down_proj.weight",
                    "model.embed_tokens.weight", "lm_head.weight")
# directory name -> (checkpoint, optimum-cli arguments after the task, HF tensors for `weights`)
MODELS = {
    "llama3_tiny-fp16": ("llama3_tiny", ["--weight-format", "fp16"], [Q0, D1, EMB]),
    "llama3_tiny-int8": ("llama3_tiny", ["--weight-format", "int8"], [Q0, D1, EMB]),
    "llama3_tiny-int4-sym-g32": ("llama3_tiny", ["--weight-format", "int4", "--sym", "--group-size", "32",
                                                 "--ratio", "1.0"], [Q0, D1, EMB]),
    "llama3_tiny-int4-asym-cw-r05": ("llama3_tiny", ["--weight-format", "int4", "--group-size", "-1",
                                                     "--ratio", "0.5"], [Q0, D1, EMB]),
    "llama3_tiny-nf4": ("llama3_tiny", ["--weight-format", "nf4", "--group-size", "32", "--ratio", "1.0"],
                        [Q0, D1, EMB]),
    "qwen2_tiny-int4-asym-g32": ("qwen2_tiny", ["--weight-format", "int4", "--group-size", "32",
                                                "--ratio", "1.0"], [Q0, D1, EMB]),
    "qwen3_tiny-int8-sym": ("qwen3_tiny", ["--weight-format", "int8", "--sym"], [Q0, D1, EMB]),
    "mistral_tiny-fp16-stateless": ("mistral_tiny", ["--weight-format", "fp16", "--disable-stateful"],
                                    [Q0, D1, EMB, LMH]),
    "phi3_tiny-int4-sym-g16": ("phi3_tiny", ["--weight-format", "int4", "--sym", "--group-size", "16",
                                             "--ratio", "1.0"],
                               ["model.layers.0.self_attn.qkv_proj.weight",
                                "model.layers.1.mlp.gate_up_proj.weight", EMB, LMH]),
}
KEEP = ["openvino_model.xml", "openvino_model.bin", "config.json", "generation_config.json",
        "openvino_config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
        "chat_template.jinja"]

# ov::ConvertNF4's table: an nf4 code is an index into it.
NF4 = np.array([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
                -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
                0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
                0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0], dtype=np.float32)
NP_TYPES = {"u8": np.uint8, "i8": np.int8, "f16": np.float16, "f32": np.float32, "i32": np.int32,
            "i64": np.int64}


def r7(x):
    """A logit, rounded to 7 significant digits."""
    return float(f"{float(x):.7g}")


def f32(x):
    """An f32 value exactly (json writes the shortest double that reads back to it)."""
    return float(np.float32(x))


# ---------------------------------------------------------------------------------------------
# Export

def export(name, workdir):
    ckpt, args, _ = MODELS[name]
    out = workdir / name
    cli = pathlib.Path(sys.executable).parent / "optimum-cli"
    cmd = [str(cli), "export", "openvino", "-m", str(CKPT / ckpt)] + TASK + args + [str(out)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false")
    print("  $ optimum-cli " + " ".join(cmd[1:]).replace(str(CKPT), "tests/data/checkpoints")
          .replace(str(workdir) + "/", ""), flush=True)
    p = subprocess.run(cmd, env=env, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0 or not (out / "openvino_model.xml").exists():
        sys.exit(f"export of {name} failed (rc {p.returncode}):\n{p.stdout[-6000:]}")
    for line in p.stdout.splitlines():  # NNCF's bit-width table
        if line.startswith("│"):
            print("    " + line)
    # The only absolute path in what optimum writes: the checkpoint, in openvino_config.json.
    cfg = out / "openvino_config.json"
    if cfg.exists():
        text = cfg.read_text()
        text = text.replace(json.dumps(str(CKPT / ckpt)), json.dumps(f"tests/data/checkpoints/{ckpt}"))
        cfg.write_text(text)
    for f in out.iterdir():
        if f.name not in KEEP and not f.name.startswith(("openvino_tokenizer.", "openvino_detokenizer.")):
            sys.exit(f"{name}: optimum wrote an unexpected file {f.name}")
        if f.name in KEEP and f.suffix in (".json", ".xml", ".jinja"):
            text = f.read_text()
            for bad in (str(workdir), str(ROOT), os.path.expanduser("~")):
                if bad in text:
                    sys.exit(f"{name}/{f.name} contains the path {bad}")
    return out


# ---------------------------------------------------------------------------------------------
# The IR read directly: XML Const records and the .bin, decoded with numpy

class IR:
    def __init__(self, d):
        self.dir = d
        self.root = ET.parse(d / "openvino_model.xml").getroot()
        self.bin = (d / "openvino_model.bin").read_bytes()
        self.consts = {}
        for layer in self.root.iter("layer"):
            if layer.get("type") == "Const":
                data = layer.find("data")
                shape = [int(s) for s in data.get("shape").split(",") if s.strip()]
                self.consts[layer.get("name")] = (data.get("element_type"), shape, int(data.get("offset")),
                                                  int(data.get("size")))

    def raw(self, name):
        """The Const as stored: 4-bit types unpacked (element 2k = low nibble of byte k), i4 sign-
        extended, nf4 as its code indices."""
        et, shape, off, size = self.consts[name]
        n = int(np.prod(shape)) if shape else 1
        if et in ("u4", "i4", "nf4"):
            b = np.frombuffer(self.bin, np.uint8, size, off)
            v = np.empty(b.size * 2, np.uint8)
            v[0::2], v[1::2] = b & 15, b >> 4
            v = v[:n]
            if et == "i4":
                v = v.astype(np.int8)
                v[v >= 8] -= 16
            return v.reshape(shape)
        dt = np.dtype(NP_TYPES[et])
        assert size == n * dt.itemsize, (name, et, shape, size)
        return np.frombuffer(self.bin, dt, n, off).reshape(shape)

    def value(self, name):
        """A float Const (f32 or f16) as f32."""
        et = self.consts[name][0]
        assert et in ("f32", "f16"), (name, et)
        return self.raw(name).astype(np.float32)

    def dequantize(self, code, scale=None, zero_point=None):
        """codes -> (nf4 table) -> minus zero point -> times scale, all in f32, reshaped to
        [out, in]. This is what the CPU plugin computes at f32 inference precision (checked
        bit-exactly in weight_record)."""
        et = self.consts[code][0]
        w = self.raw(code)
        w = NF4[w] if et == "nf4" else w.astype(np.float32)
        if zero_point is not None:
            w = w - self.raw(zero_point).astype(np.float32)
        if scale is not None:
            w = w * self.raw(scale).astype(np.float32)
        return np.ascontiguousarray(w.reshape(w.shape[0], -1), dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# The graph, through the openvino API: which Consts feed which MatMul / Gather / norm / bias

def walk_up(output):
    """The decompression subgraph above a MatMul / Gather weight input: (ops top-down, consts)."""
    ops, consts = [], {}

    def visit(o):
        node = o.get_node()
        t = node.get_type_name()
        if t == "Constant":
            return node
        assert t in ("Convert", "Subtract", "Multiply", "Reshape"), (t, node.get_friendly_name())
        srcs = [visit(i.get_source_output()) for i in node.inputs()]
        ops.append({"type": t, "name": node.get_friendly_name(), "element_type":
                    node.get_output_element_type(0).get_type_name(),
                    "shape": [int(d) for d in node.get_output_shape(0)]})
        if t == "Convert" and srcs[0] is not None:
            consts.setdefault("_converted", []).append(srcs[0])
        elif t == "Multiply" and srcs[1] is not None:
            consts["scale"] = srcs[1]
        elif t == "Multiply" and srcs[0] is not None:
            consts["scale"] = srcs[0]
        elif t == "Reshape":
            consts["reshape_shape"] = srcs[1]
        return None

    top = visit(output)
    if top is not None:  # a plain f32 Const
        consts["_converted"] = [top]
    conv = consts.pop("_converted")
    out = {"weight": conv[0].get_friendly_name()}
    if len(conv) > 1:
        out["zero_point"] = conv[1].get_friendly_name()
    for k in ("scale", "reshape_shape"):
        if k in consts:
            out[k] = consts[k].get_friendly_name()
    return ops, out


def hf_name(const_name):
    """`self.model.x.weight`, `self.model.x.weight_compressed`, `self.model.x._openvino_orig_weight`
    -> `model.x.weight`."""
    n = const_name[len("self."):] if const_name.startswith("self.") else const_name
    if n.endswith("_compressed"):
        n = n[:-len("_compressed")]
    if n.endswith("._openvino_orig_weight"):
        n = n[:-len("._openvino_orig_weight")] + ".weight"
    return n


def module_of(op_name):
    """`__module.model.layers.0.input_layernorm/aten::mul/Multiply_1` -> `model.layers.0.input_layernorm`."""
    return op_name.split("/")[0][len("__module."):]


def const_input(found, op, key, kind):
    """Records the Const input of `op` (maybe behind a Convert from f16) as HF tensor `key`."""
    for i in op.inputs():
        s = i.get_source_output().get_node()
        if s.get_type_name() == "Convert":
            s = s.input(0).get_source_output().get_node()
        if s.get_type_name() == "Constant":
            found[key] = {"kind": kind, "consts": {"weight": s.get_friendly_name()},
                          "consumers": [op.get_friendly_name()]}


def graph_tensors(ov_model, ir):
    """HF name -> info for every weight the IR holds: linear / embedding weights (from the MatMul /
    Gather weight inputs), RMSNorm gammas (the Const of `<norm>/aten::mul/Multiply_1`), linear
    biases (the Const of `<linear>/.../Add` after the MatMul). Returns {name: dict(kind, consts,
    ops, consumers)}."""
    found = {}
    for op in ov_model.get_ordered_ops():
        t, name = op.get_type_name(), op.get_friendly_name()
        is_linear = t == "MatMul" and "::linear/" in name
        is_embedding = t == "Gather" and "::embedding/" in name
        if name.startswith("__module.") and (is_linear or is_embedding):
            src = op.input(1 if t == "MatMul" else 0).get_source_output()
            ops, consts = walk_up(src)
            key = hf_name(consts["weight"])
            rec = found.setdefault(key, {"kind": "weight", "consts": consts, "ops": ops, "consumers": []})
            assert rec["consts"] == consts, key
            rec["consumers"].append(name)
            rec["output"] = src
        elif t == "Multiply" and name.endswith("/aten::mul/Multiply_1") and module_of(name).endswith("norm"):
            const_input(found, op, module_of(name) + ".weight", "norm")
        elif t == "Add" and "::linear/Add" in name:
            const_input(found, op, module_of(name) + ".bias", "bias")
    return found


def rope_inv_freq(ov_model, ir):
    """The RoPE inverse frequencies, where the IR holds them as one Const (input 0 of
    `__module.model.rotary_emb/aten::matmul/MatMul`, maybe through a Convert from f16): None where
    they are computed in the graph (phi3's longrope selects short / long factors by length)."""
    for op in ov_model.get_ordered_ops():
        if op.get_friendly_name() == "__module.model.rotary_emb/aten::matmul/MatMul":
            src = op.input(0).get_source_output().get_node()
            if src.get_type_name() == "Convert":
                src = src.input(0).get_source_output().get_node()
            if src.get_type_name() != "Constant":
                return None
            name = src.get_friendly_name()
            et, shape = ir.consts[name][:2]
            return {"const": name, "element_type": et, "shape": shape,
                    "values": [f32(x) for x in ir.value(name).reshape(-1)]}
    return None


def tensor_value(ir, rec):
    c = rec["consts"]
    if rec["kind"] == "weight":
        return ir.dequantize(c["weight"], c.get("scale"), c.get("zero_point"))
    return ir.value(c["weight"]).reshape(-1)


def weight_record(core, ir, name, rec, w):
    """The `weights` entry of one tensor; checks the numpy decoding against the CPU plugin itself:
    an identity matrix through a MatMul on the same decompression subgraph returns the weight the
    plugin uses, which must equal `w` bit for bit."""
    import openvino as ov
    import openvino.opset13 as ops13
    p = ops13.parameter([w.shape[1], w.shape[1]], ov.Type.f32)
    probe = ov.Model([ops13.matmul(p, rec["output"], False, True)], [p])
    seen = core.compile_model(probe, "CPU", OV_PROPS)(np.eye(w.shape[1], dtype=np.float32))[0].T
    if not np.array_equal(seen, w):
        sys.exit(f"{name}: numpy decoding differs from the CPU plugin's by {np.abs(seen - w).max()}")
    c = rec["consts"]
    code_type, code_shape = ir.consts[c["weight"]][:2]
    out = {"consts": c, "consumers": rec["consumers"], "ops": rec["ops"],
           "element_type": code_type, "shape": code_shape}
    if "scale" in c:
        out["scale_type"], out["scale_shape"] = ir.consts[c["scale"]][:2]
    if "zero_point" in c:
        out["zero_point_type"], out["zero_point_shape"] = ir.consts[c["zero_point"]][:2]
    raw = ir.raw(c["weight"]).reshape(code_shape[0], -1)
    out["first_row_codes"] = [int(x) for x in raw[0, :8]]
    if "scale" in c:
        out["first_row_scale"] = f32(ir.raw(c["scale"]).reshape(-1)[0])
    if "zero_point" in c:
        out["first_row_zero_point"] = int(ir.raw(c["zero_point"]).reshape(-1)[0])
    out["dequantized_shape"] = list(w.shape)
    out["first_row_dequantized"] = [f32(x) for x in w[0, :8]]
    out["sha256"] = hashlib.sha256(w.astype("<f4").tobytes()).hexdigest()
    return out


# ---------------------------------------------------------------------------------------------
# OpenVINO runtime: prompt logits and a stepwise greedy loop

def ov_run(core, xml, prompt_ids):
    cm = core.compile_model(str(xml), "CPU", OV_PROPS)
    names = [i.get_any_name() for i in cm.inputs]
    stateful = "beam_idx" in names
    req = cm.create_infer_request()
    past = {}
    if not stateful:
        for i in cm.inputs:
            n = i.get_any_name()
            if n.startswith("past_key_values."):
                ps = i.get_partial_shape()  # [batch, kv_heads, seq, head_dim]: start with seq 0
                past[n] = np.zeros((1, ps[1].get_length(), 0, ps[3].get_length()), np.float32)
    cur, pos = np.array([prompt_ids], np.int64), 0
    ids, margins, prompt_rows = [], [], None
    for step in range(GREEDY_STEPS):
        n = cur.shape[1]
        feed = {"input_ids": cur, "attention_mask": np.ones((1, pos + n), np.int64),
                "position_ids": np.arange(pos, pos + n, dtype=np.int64)[None]}
        if stateful:
            feed["beam_idx"] = np.zeros(1, np.int32)
        feed.update(past)
        req.infer(feed)
        logits = req.get_tensor("logits").data[0].astype(np.float32)
        if step == 0:
            prompt_rows = logits.copy()
        if not stateful:
            for o in cm.outputs:
                on = o.get_any_name()
                if on.startswith("present."):
                    past["past_key_values." + on[len("present."):]] = req.get_tensor(on).data.copy()
        row = logits[-1]
        order = np.argsort(-row, kind="stable")  # ties to the lowest id
        ids.append(int(order[0]))
        margins.append(float(row[order[0]] - row[order[1]]))
        pos += n
        cur = np.array([[ids[-1]]], np.int64)
    return stateful, names, prompt_rows, ids, margins


def genai_greedy(model_dir, prompt_ids, stateful, tmp):
    """openvino_genai.LLMPipeline's greedy ids from the prompt ids (TokenizedInputs). GenAI runs
    stateful models only ("Model should have 3 or 4 inputs ..."), so a stateless IR is first made
    stateful in memory the way optimum does it (patch_stateful) and saved to a scratch dir with
    the tokenizer models."""
    import openvino as ov
    import openvino_genai as genai
    if not stateful:
        from optimum.exporters.openvino.stateful import patch_stateful
        from transformers import AutoConfig
        sdir = tmp / (model_dir.name + "-made-stateful")
        sdir.mkdir()
        m = ov.Core().read_model(model_dir / "openvino_model.xml")
        patch_stateful(AutoConfig.from_pretrained(model_dir), m)
        ov.save_model(m, sdir / "openvino_model.xml", compress_to_fp16=False)
        for f in model_dir.iterdir():
            if f.name not in ("openvino_model.xml", "openvino_model.bin"):
                shutil.copy(f, sdir / f.name)
        model_dir = sdir
    pipe = genai.LLMPipeline(str(model_dir), "CPU", **GENAI_PROPS)
    cfg = genai.GenerationConfig()
    cfg.max_new_tokens = cfg.min_new_tokens = GREEDY_STEPS
    cfg.ignore_eos = True
    cfg.do_sample = False
    ids = np.array([prompt_ids], np.int64)
    res = pipe.generate(genai.TokenizedInputs(ov.Tensor(ids), ov.Tensor(np.ones_like(ids))), cfg)
    out = [int(t) for t in res.tokens[0]]
    assert len(out) == GREEDY_STEPS, out
    return out


# ---------------------------------------------------------------------------------------------
# transformers: the source checkpoint, and the same architecture on the IR's decoded tensors

def hf_logits(ckpt_dir, prompt_ids, state=None):
    import torch
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(ckpt_dir, dtype=torch.float32, attn_implementation="eager")
    model.eval()
    if state is not None:
        sd = model.state_dict()
        missing = [k for k in sd if k not in state]
        tied = getattr(model.config, "tie_word_embeddings", False)
        if tied and "lm_head.weight" in missing:
            missing.remove("lm_head.weight")
        if missing or set(state) - set(sd):
            sys.exit(f"IR tensors do not cover the HF model: missing {missing}, extra {set(state) - set(sd)}")
        new = {k: torch.from_numpy(np.ascontiguousarray(v).reshape(sd[k].shape)) for k, v in state.items()}
        model.load_state_dict(new, strict=False)
        if tied:
            assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    with torch.no_grad():
        return model(torch.tensor([prompt_ids])).logits[0].float().numpy()


# ---------------------------------------------------------------------------------------------

def goldens_for(name, full_dir, tmp):
    import openvino as ov
    from transformers import AutoTokenizer
    ckpt, args, wanted = MODELS[name]
    core = ov.Core()
    tok = AutoTokenizer.from_pretrained(full_dir)
    prompt_ids = [int(t) for t in tok(PROMPT)["input_ids"]]  # add_special_tokens: BOS first
    assert prompt_ids[0] == tok.bos_token_id, prompt_ids
    g = {"checkpoint": f"tests/data/checkpoints/{ckpt}", "export_args": TASK + args,
         "prompt": PROMPT, "prompt_ids": prompt_ids}

    stateful, inputs, rows, ids, margins = ov_run(core, full_dir / "openvino_model.xml", prompt_ids)
    g["stateful"] = stateful
    g["inputs"] = inputs
    g["logits"] = [r7(x) for x in rows[-1]]
    g["logits_rows"] = {"positions": list(range(len(prompt_ids) - LOGIT_ROWS, len(prompt_ids))),
                        "logits": [[r7(x) for x in r] for r in rows[-LOGIT_ROWS:]]}
    g["greedy_ids"] = ids
    g["greedy_margins"] = [float(f"{m:.6g}") for m in margins]
    gen = genai_greedy(full_dir, prompt_ids, stateful, tmp)
    g["genai_greedy_ids"] = gen
    g["genai_matches_stepwise"] = gen == ids

    ir = IR(full_dir)
    model = core.read_model(full_dir / "openvino_model.xml")
    tensors = graph_tensors(model, ir)
    state = {k: tensor_value(ir, rec) for k, rec in tensors.items()}
    g["weights"] = {}
    for w in wanted:
        if w not in tensors:
            sys.exit(f"{name}: no {w} in the IR (it has {sorted(tensors)})")
        g["weights"][w] = weight_record(core, ir, w, tensors[w], state[w])
    g["tensors"] = {}
    for k, rec in sorted(tensors.items()):
        et, shape = ir.consts[rec["consts"]["weight"]][:2]
        g["tensors"][k] = {"kind": rec["kind"], "consts": rec["consts"], "consumers": rec["consumers"],
                           "element_type": et, "shape": shape, "dequantized_shape": list(state[k].shape),
                           "sha256": hashlib.sha256(state[k].astype("<f4").tobytes()).hexdigest()}
    g["rope_inv_freq"] = rope_inv_freq(model, ir)

    ref = hf_logits(CKPT / ckpt, prompt_ids)
    deq = hf_logits(CKPT / ckpt, prompt_ids, state)
    g["transformers_logits"] = [r7(x) for x in ref[-1]]
    g["dequantized_logits"] = [r7(x) for x in deq[-1]]
    g["max_abs_diff"] = {
        "logits_vs_transformers": r7(np.abs(rows - ref).max()),
        "logits_vs_dequantized": r7(np.abs(rows - deq).max()),
        "dequantized_vs_transformers": r7(np.abs(deq - ref).max()),
    }
    print(f"  prompt_ids {prompt_ids}\n  greedy {ids}\n  genai  {gen} (equal: {gen == ids})\n"
          f"  min margin {min(margins):.4g}; max |ov - hf| {g['max_abs_diff']}", flush=True)
    return g


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated model directory names")
    ap.add_argument("--keep", type=pathlib.Path, help="keep the full temporary exports here")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(MODELS)
    for n in names:
        if n not in MODELS:
            sys.exit(f"unknown model {n}; known: {', '.join(MODELS)}")
    import torch
    torch.set_num_threads(1)

    OUT.mkdir(parents=True, exist_ok=True)
    golden_path = OUT / "golden.json"
    golden = json.loads(golden_path.read_text()) if golden_path.exists() and args.only else {}
    with tempfile.TemporaryDirectory(prefix="kiln_ov_") as t:
        tmp = pathlib.Path(t)
        work = args.keep or tmp / "exports"
        work.mkdir(parents=True, exist_ok=True)
        for name in names:
            print(f"{name}:", flush=True)
            full = work / name
            if full.exists():
                shutil.rmtree(full)
            export(name, work)
            golden[name] = goldens_for(name, full, tmp)
            dst = OUT / name
            if dst.exists():
                shutil.rmtree(dst)
            dst.mkdir()
            for f in KEEP:
                if (full / f).exists():
                    shutil.copyfile(full / f, dst / f)
    golden = {k: golden[k] for k in MODELS if k in golden}
    with golden_path.open("w") as f:
        json.dump(golden, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    total = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"wrote {OUT.relative_to(ROOT)} ({total} bytes)")


if __name__ == "__main__":
    main()
