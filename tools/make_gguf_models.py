#!/usr/bin/env python3
"""Writes tests/data/gguf/models/: small model GGUFs made by llama.cpp's own converter and quantiser,
and golden.json, what llama.cpp itself (through llama-cpp-python) computes with them, as the
independent oracle for kiln's GGUF loader, tokenizers and kernels, and what transformers computes
in f32 with each file's own (dequantised) weights, the exact oracle for the weight import.

Developer tool (not run by CI). Needs a venv with llama-cpp-python (the ctypes bindings to libllama,
with the llama.cpp sources it vendors), torch, transformers, safetensors, sentencepiece and numpy:
    python3 -m venv .venv && .venv/bin/pip install llama-cpp-python==0.3.36 numpy \\
        safetensors sentencepiece transformers torch --extra-index-url https://download.pytorch.org/whl/cpu
    .venv/bin/python tools/make_gguf_models.py --llama-cpp <llama-cpp-python sdist>/vendor/llama.cpp
--goldens-only recomputes golden.json from the .gguf files already in place (they are not rewritten).
The llama.cpp directory (--llama-cpp, or $LLAMA_CPP_DIR) gives convert_hf_to_gguf.py and gguf-py;
use the one vendored by the same llama-cpp-python release, so that converter and libllama agree.

What it writes:
  <ckpt>.f16.gguf         llama3_tiny, qwen2_tiny, qwen3_tiny, mistral_tiny from tests/data/checkpoints,
                          converted by convert_hf_to_gguf.py --outtype f16. The converter does not
                          know these tiny tokenizers' pre-tokenizer hash, so get_vocab_base_pre is
                          patched to answer "llama-bpe" (llama3, mistral) or "qwen2" (qwen2, qwen3).
  llama3_tiny.{q8_0,q4_0,q4_1}.gguf
                          llama3_tiny.f16.gguf quantised by llama.cpp (llama_model_quantize).
  ktiny.{q4_k_m,q5_k_m,q6_k}.gguf, ktiny.config.json
                          a synthetic Llama (hidden 256, so rows fit K-quant blocks) with random
                          weights from a fixed seed and llama3_tiny's tokenizer, written as HF
                          safetensors (f32, kept in --ktiny-dir, by default ktiny_hf in the
                          system's temporary directory, not in the repo), converted to F16
                          GGUF and quantised by llama.cpp to Q4_K_M, Q5_K_M and Q6_K.
  spm_vocab.gguf, spm_vocab.model
                          a vocab-only GGUF (tokenizer.ggml.model "llama") of a small SentencePiece
                          BPE model (byte fallback) trained here, written by the converter's
                          --vocab-only path (_set_vocab_sentencepiece); .model is the
                          SentencePiece model it was made from.
  golden.json             per file: tokenize / detokenize results (vocab_only load) and, for model
                          files, the prompt's logits and a 16-token greedy continuation with its
                          top-1 minus top-2 logit margins (n_threads=1, n_ctx=256, logits_all).
                          Model files also get dequantized_logits / _greedy_ids / _greedy_margins:
                          the same from transformers (f32, eager attention, no KV cache) on the
                          file's tensors decoded by gguf.quants.dequantize, mapped to HF names,
                          with llama-arch Q/K rows un-permuted, in the checkpoint's HF config
                          with sliding-window attention off (as llama.cpp runs the file).
See tests/data/gguf/models/README.md for the exact llama-cpp-python calls behind each field.
"""
import argparse
import ctypes
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "gguf" / "models"
CKPT = ROOT / "tests" / "data" / "checkpoints"

# Checkpoint -> the pre-tokenizer name the patched converter writes as tokenizer.ggml.pre.
F16_MODELS = {"llama3_tiny": "llama-bpe", "qwen2_tiny": "qwen2", "qwen3_tiny": "qwen2",
              "mistral_tiny": "llama-bpe"}
LLAMA3_QUANTS = {"q8_0": "LLAMA_FTYPE_MOSTLY_Q8_0", "q4_0": "LLAMA_FTYPE_MOSTLY_Q4_0",
                 "q4_1": "LLAMA_FTYPE_MOSTLY_Q4_1"}
KTINY_QUANTS = {"q4_k_m": "LLAMA_FTYPE_MOSTLY_Q4_K_M", "q5_k_m": "LLAMA_FTYPE_MOSTLY_Q5_K_M",
                "q6_k": "LLAMA_FTYPE_MOSTLY_Q6_K"}

# The synthetic K-quant model. Its weight scales are chosen so that next-token distributions are
# peaky (a wide top-1 / top-2 logit margin), so that greedy runs are robust to rounding.
KTINY_SEED = 20261206
KTINY = dict(hidden=256, intermediate=512, layers=1, heads=4, kv_heads=2)
KTINY_STD = dict(embed=1.0, attn=0.12, mlp=0.10, output=0.8, norm=0.1)

PROMPT = "The cat"
GREEDY_STEPS = 16

TOKENIZE_TEXTS = [
    ("Hello world", False),
    ("The quick brown fox jumps over the lazy dog.", True),
    (" leading space", False),
    ("trailing space ", False),
    ("multiple   spaces  between   words", False),
    ("   ", False),
    ("tabs\tand\nnewlines\n\nand\r\nCRLF", False),
    ("12345678 and 3.14159", False),
    ("don't I'll we're THEY'VE", False),
    ("café naïve résumé Ünïcödé", False),
    ("日本語のテキスト 中文", False),
    ("emoji 🦙🚀 done ✅", False),
    ("x = f(a, b) ** 2; // done!!", False),
    ("", False),
    ("", True),
]


def llama_cpp_dir(args):
    where = args.llama_cpp or os.environ.get("LLAMA_CPP_DIR")
    if not where:
        sys.exit("name llama.cpp's sources with --llama-cpp DIR or $LLAMA_CPP_DIR")
    return pathlib.Path(where)


def convert_worker(pre, llama_cpp, argv):
    """Runs convert_hf_to_gguf.main() on argv in this process, with the pre-tokenizer name patched."""
    sys.path.insert(0, str(pathlib.Path(llama_cpp) / "gguf-py"))
    sys.path.insert(0, str(llama_cpp))
    from conversion.base import TextModel
    if pre != "-":
        TextModel.get_vocab_base_pre = lambda self, tokenizer: pre
    import convert_hf_to_gguf
    sys.argv = ["convert_hf_to_gguf.py", *argv]
    convert_hf_to_gguf.main()


def convert(llama_cpp, model_dir, outfile, pre="-", vocab_only=False, model_name=None):
    argv = [str(model_dir), "--outtype", "f16", "--outfile", str(outfile)]
    if model_name:
        argv += ["--model-name", model_name]
    if vocab_only:
        argv.append("--vocab-only")
    subprocess.run([sys.executable, __file__, "--convert-worker", pre, "--llama-cpp", str(llama_cpp),
                    "--", *argv], check=True)


def checkpoint_copy(src, dst):
    """Copies an HF checkpoint for the converter. transformers 5 loads a model_type "qwen2" tokenizer
    as Qwen2Tokenizer, which adds an <|endoftext|> unk/pad token that the tokenizer files do not have
    (and whose id is then past vocab_size): tokenizer_config.json's unk_token/pad_token are set to
    null in the copy to stop that."""
    shutil.copytree(src, dst)
    if json.loads((dst / "config.json").read_text())["model_type"] == "qwen2":
        path = dst / "tokenizer_config.json"
        tok_config = json.loads(path.read_text())
        tok_config.setdefault("unk_token", None)
        tok_config.setdefault("pad_token", None)
        path.write_text(json.dumps(tok_config, indent=2) + "\n")
    return dst


def quantize(src, dst, ftype_name):
    import llama_cpp
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, ftype_name)
    params.nthread = 1
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params))
    if rc != 0:
        raise RuntimeError(f"llama_model_quantize({src} -> {dst}, {ftype_name}) returned {rc}")


def write_ktiny(ckpt_dir):
    """Writes the synthetic Llama checkpoint (HF layout, f32 safetensors) to ckpt_dir; returns config."""
    from safetensors.numpy import save_file
    src = CKPT / "llama3_tiny"
    base = json.loads((src / "config.json").read_text())
    H, I, L = KTINY["hidden"], KTINY["intermediate"], KTINY["layers"]
    nh, nkv = KTINY["heads"], KTINY["kv_heads"]
    hd = H // nh
    V = base["vocab_size"]
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "attention_bias": False, "attention_dropout": 0.0, "mlp_bias": False,
        "bos_token_id": base["bos_token_id"], "eos_token_id": base["eos_token_id"],
        "head_dim": hd, "hidden_act": "silu", "hidden_size": H, "intermediate_size": I,
        "initializer_range": 0.02, "max_position_embeddings": 256,
        "num_attention_heads": nh, "num_hidden_layers": L, "num_key_value_heads": nkv,
        "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
        "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
        "tie_word_embeddings": False, "torch_dtype": "float32", "use_cache": True, "vocab_size": V,
    }
    rng = np.random.default_rng(KTINY_SEED)
    s = KTINY_STD

    def normal(shape, std):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    def norm():
        return (1.0 + rng.standard_normal(H) * s["norm"]).astype(np.float32)

    t = {"model.embed_tokens.weight": normal((V, H), s["embed"])}
    for i in range(L):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = norm()
        t[p + "self_attn.q_proj.weight"] = normal((nh * hd, H), s["attn"])
        t[p + "self_attn.k_proj.weight"] = normal((nkv * hd, H), s["attn"])
        t[p + "self_attn.v_proj.weight"] = normal((nkv * hd, H), s["attn"])
        t[p + "self_attn.o_proj.weight"] = normal((H, nh * hd), s["attn"])
        t[p + "post_attention_layernorm.weight"] = norm()
        t[p + "mlp.gate_proj.weight"] = normal((I, H), s["mlp"])
        t[p + "mlp.up_proj.weight"] = normal((I, H), s["mlp"])
        t[p + "mlp.down_proj.weight"] = normal((H, I), s["mlp"])
    t["model.norm.weight"] = norm()
    t["lm_head.weight"] = normal((V, H), s["output"])

    ckpt_dir.mkdir(parents=True, exist_ok=True)
    save_file(t, str(ckpt_dir / "model.safetensors"), metadata={"format": "pt"})
    (ckpt_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        shutil.copy(src / name, ckpt_dir / name)
    return config


SPM_EXTRA_TEXT = """\
Café, naïve, résumé, façade, jalapeño, Zürich, São Paulo, Ångström, œuvre, smörgåsbord.
Größe und Übermaß; élève à l'école; ¿Dónde está la biblioteca? ¡Olé!
Don't stop; I'll go; we're here; they've left; she'd say it's fine.
Numbers: 0 1 2 3 4 5 6 7 8 9 10 42 100 1234 2026 3.14159 -7 +8 1e-5.
Code: def f(x): return x ** 2 # comment; if (a && b) { c[i] = d->e; }
"""


def write_spm_dir(spm_dir):
    """Trains a small SentencePiece BPE model (byte fallback) and writes an HF-like directory for the
    converter: tokenizer.model, tokenizer_config.json and a minimal Llama config.json."""
    import sentencepiece as spm
    lines = []
    heldout = ROOT / "tests" / "data" / "heldout" / "manpages-heldout-small.txt"
    lines += [l for l in heldout.read_text(encoding="utf-8").splitlines() if l.strip()]
    tasks = ROOT / "models" / "kiln-tiny" / "tasks.jsonl"
    for l in tasks.read_text(encoding="utf-8").splitlines():
        for v in json.loads(l).values():
            if isinstance(v, str):
                lines += [x for x in v.splitlines() if x.strip()]
    lines += SPM_EXTRA_TEXT.splitlines() * 20
    spm_dir.mkdir(parents=True, exist_ok=True)
    model = io.BytesIO()
    # Identity normalisation and no whitespace folding, like Llama 2's tokenizer.model (llama.cpp's
    # SPM tokenizer does neither).
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=model, model_type="bpe", vocab_size=512,
        byte_fallback=True, character_coverage=0.9995, num_threads=1, shuffle_input_sentence=False,
        split_digits=True, normalization_rule_name="identity", remove_extra_whitespaces=False,
        unk_id=0, bos_id=1, eos_id=2, pad_id=-1, minloglevel=2)
    (spm_dir / "tokenizer.model").write_bytes(model.getvalue())
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 512,
              "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1,
              "num_attention_heads": 4, "num_key_value_heads": 4, "max_position_embeddings": 256,
              "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "bos_token_id": 1, "eos_token_id": 2}
    (spm_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    tok_config = {"tokenizer_class": "LlamaTokenizer", "add_bos_token": True, "add_eos_token": False,
                  "add_prefix_space": True, "bos_token": "<s>", "eos_token": "</s>",
                  "unk_token": "<unk>"}
    (spm_dir / "tokenizer_config.json").write_text(json.dumps(tok_config, indent=2) + "\n")


# ---------------------------------------------------------------------------------------------
# Goldens

def r6(x):
    return float(f"{float(x):.6g}")


def control_tokens(path):
    import gguf
    reader = gguf.GGUFReader(str(path))
    f = reader.fields
    tokens = [bytes(f["tokenizer.ggml.tokens"].parts[i]).decode("utf-8")
              for i in f["tokenizer.ggml.tokens"].data]
    types = [int(f["tokenizer.ggml.token_type"].parts[i][0]) for i in f["tokenizer.ggml.token_type"].data]
    return [t for t, ty in zip(tokens, types) if ty == gguf.TokenType.CONTROL]


def c_detokenize(llm, ids, remove_special, unparse_special):
    """llama.cpp's own llama_detokenize (the C API), as opposed to llama-cpp-python's per-piece one."""
    import llama_cpp
    arr = (llama_cpp.llama_token * max(1, len(ids)))(*ids)
    size = 64 + 32 * len(ids)
    buf = ctypes.create_string_buffer(size)
    n = llama_cpp.llama_detokenize(llm._model.vocab, arr, len(ids), buf, size, remove_special,
                                   unparse_special)
    if n < 0:
        raise RuntimeError("llama_detokenize: buffer too small")
    return buf.raw[:n].decode("utf-8", errors="replace")


def vocab_goldens(path):
    import llama_cpp
    llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    ctrl = control_tokens(path)
    special_text = f"{ctrl[0]}hi{''.join(ctrl[1:])} there {ctrl[0]}"  # every control token
    texts = list(TOKENIZE_TEXTS) + [(special_text, False), (special_text, True)]
    tok = []
    for text, add_bos in texts:
        ids = llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True)
        tok.append({"text": text, "add_bos": add_bos, "special": True, "ids": ids})
    # The same string of special tokens, parsed as plain text.
    ids = llm.tokenize(special_text.encode("utf-8"), add_bos=False, special=False)
    tok.append({"text": special_text, "add_bos": False, "special": False, "ids": ids})

    detok = []
    seen = set()
    for e in tok:
        ids = e["ids"]
        if not ids or tuple(ids) in seen:
            continue
        seen.add(tuple(ids))
        detok.append({
            "ids": ids,
            "text": llm.detokenize(ids, special=False).decode("utf-8", errors="replace"),
            "text_special": llm.detokenize(ids, special=True).decode("utf-8", errors="replace"),
            "llama_detokenize": c_detokenize(llm, ids, False, True),
        })
    del llm
    return {"tokenize": tok, "detokenize": detok}


def disable_extra_buffer_types():
    """Loads models with use_extra_bufts = false: llama.cpp's CPU backend then runs the plain ggml
    kernels on the weights as stored instead of repacking them (AMX / interleaved layouts), so the
    goldens do not depend on which of those the CPU has. (llama-cpp-python 0.3.36 segfaults in decode
    with the AMX buffer type on a Sapphire Rapids CPU for these K-quant models.)"""
    import llama_cpp.llama_cpp as lib
    default = lib.llama_model_default_params
    if getattr(default, "kiln_patched", False):
        return

    def params():
        p = default()
        p.use_extra_bufts = False
        return p
    params.kiln_patched = True
    lib.llama_model_default_params = params


def model_goldens(path):
    import llama_cpp
    disable_extra_buffer_types()
    llm = llama_cpp.Llama(model_path=str(path), n_threads=1, n_threads_batch=1, n_ctx=256,
                          logits_all=True, seed=0, verbose=False)
    prompt = llm.tokenize(PROMPT.encode("utf-8"), add_bos=True, special=True)
    llm.reset()
    llm.eval(prompt)
    prompt_logits = np.array(llm.scores[:len(prompt)], dtype=np.float32)
    greedy, margins = [], []
    for _ in range(GREEDY_STEPS):
        row = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        top = np.argsort(-row, kind="stable")[:2]
        greedy.append(int(top[0]))
        margins.append(r6(row[top[0]] - row[top[1]]))
        llm.eval([int(top[0])])
    del llm
    return {"prompt": PROMPT, "prompt_ids": prompt, "greedy_ids": greedy, "greedy_margins": margins,
            "prompt_logits": [[r6(x) for x in row] for row in prompt_logits]}


# ---------------------------------------------------------------------------------------------
# Dequantized goldens: transformers in f32 on the weights as the GGUF defines them

# GGUF tensor name -> Hugging Face name (without ".weight" / ".bias"); blk.N.* -> model.layers.N.*.
GGUF_TO_HF = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}
GGUF_BLOCK_TO_HF = {
    "attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "attn_q_norm": "self_attn.q_norm",
    "attn_k_norm": "self_attn.k_norm", "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj",
}


def hf_name(gguf_name):
    parts = gguf_name.split(".")
    if parts[0] == "blk":
        return f"model.layers.{parts[1]}.{GGUF_BLOCK_TO_HF[parts[2]]}.{parts[3]}"
    return f"{GGUF_TO_HF[parts[0]]}.{parts[1]}"


def unpermute(w, n_head):
    """Inverse of the converter's LlamaModel.permute (HF rotate-half rows -> GGML interleaved pairs):
    w.reshape(n_head, 2, d // 2, ...).swapaxes(1, 2).reshape(w.shape), d = rows / n_head."""
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def gguf_field(reader, key):
    return reader.fields[key].contents()


def dequantized_state_dict(path):
    """The GGUF's tensors decoded to f32 by gguf.quants.dequantize, under their HF names, with the
    llama architecture's Q/K row permutation undone. Returns (state dict of numpy arrays, reader)."""
    import gguf
    from gguf.quants import dequantize
    reader = gguf.GGUFReader(str(path))
    arch = gguf_field(reader, "general.architecture")
    n_head = gguf_field(reader, f"{arch}.attention.head_count")
    n_head_kv = gguf_field(reader, f"{arch}.attention.head_count_kv")
    sd = {}
    for t in reader.tensors:
        # np.array copies: dequantize returns F32 tensors as the reader's read-only memmap.
        w = np.array(dequantize(t.data, t.tensor_type), dtype=np.float32)
        # gguf shapes are innermost first: numpy's [out, in] is the reversed gguf shape.
        assert w.shape == tuple(int(n) for n in reversed(t.shape)), (path.name, t.name, w.shape)
        if t.name == "rope_freqs.weight":  # llama3 RoPE factors: checked against the HF config instead
            sd[t.name] = w
            continue
        base = t.name.rsplit(".", 1)[0].split(".")[-1]
        if arch == "llama" and base in ("attn_q", "attn_k"):
            w = unpermute(w, n_head if base == "attn_q" else n_head_kv)
        sd[hf_name(t.name)] = w
    return sd, reader


def hf_config(path):
    """The HF config of the checkpoint a model GGUF was made from, with sliding-window attention off
    (the GGUFs carry no window and llama.cpp runs them with full attention)."""
    from transformers import CONFIG_MAPPING
    stem = path.name.split(".")[0]
    src = OUT / "ktiny.config.json" if stem == "ktiny" else CKPT / stem / "config.json"
    d = json.loads(src.read_text())
    d["sliding_window"] = None
    if "use_sliding_window" in d:
        d["use_sliding_window"] = False
    if "layer_types" in d:
        d["layer_types"] = ["full_attention"] * d["num_hidden_layers"]
    config = CONFIG_MAPPING[d["model_type"]].from_dict(d)
    assert config.sliding_window is None
    assert all(t == "full_attention" for t in getattr(config, "layer_types", None) or []), path.name
    return config


def check_hparams(reader, config, sd, path):
    """The GGUF's hyperparameters are the config's (so the config describes the file's model)."""
    arch = gguf_field(reader, "general.architecture")
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    want = {"block_count": config.num_hidden_layers, "embedding_length": config.hidden_size,
            "feed_forward_length": config.intermediate_size,
            "attention.head_count": config.num_attention_heads,
            "attention.head_count_kv": config.num_key_value_heads}
    for key, value in want.items():
        assert gguf_field(reader, f"{arch}.{key}") == value, (path.name, key)
    rope = config.rope_parameters
    assert gguf_field(reader, f"{arch}.rope.freq_base") == np.float32(rope["rope_theta"]), path.name
    eps = gguf_field(reader, f"{arch}.attention.layer_norm_rms_epsilon")
    assert np.float32(eps) == np.float32(config.rms_norm_eps), path.name
    if f"{arch}.attention.key_length" in reader.fields:
        assert gguf_field(reader, f"{arch}.attention.key_length") == head_dim, path.name
    assert sd["model.embed_tokens.weight"].shape == (config.vocab_size, config.hidden_size), path.name
    assert ("rope_freqs.weight" in sd) == (rope.get("rope_type") == "llama3"), path.name
    return head_dim


def check_against_checkpoint(path, sd):
    """For an F16 GGUF of a checkpoint in tests/data/checkpoints: every decoded (and un-permuted)
    tensor equals the checkpoint's, rounded to f16 where the file stores f16."""
    from safetensors.numpy import load_file
    import gguf
    stem = path.name.split(".")[0]
    ckpt = load_file(str(CKPT / stem / "model.safetensors"))
    types = {hf_name(t.name): t.tensor_type for t in gguf.GGUFReader(str(path)).tensors
             if t.name != "rope_freqs.weight"}
    assert set(ckpt) == set(types), (path.name, sorted(set(ckpt) ^ set(types)))
    for name, ref in ckpt.items():
        ref = ref.astype(np.float16 if types[name] == gguf.GGMLQuantizationType.F16 else np.float32)
        assert np.array_equal(sd[name], ref.astype(np.float32)), (path.name, name)


def dequantized_goldens(path, prompt_ids):
    """transformers (f32, eager attention, full attention) on the GGUF's own weights: the prompt's
    logits and a 16-token greedy continuation (full recompute per step)."""
    import torch
    from transformers import AutoModelForCausalLM
    torch.set_num_threads(1)
    sd, reader = dequantized_state_dict(path)
    config = hf_config(path)
    head_dim = check_hparams(reader, config, sd, path)
    if path.name.endswith(".f16.gguf") and (CKPT / path.name.split(".")[0]).is_dir():
        check_against_checkpoint(path, sd)
    rope_freqs = sd.pop("rope_freqs.weight", None)
    if "lm_head.weight" not in sd:
        assert config.tie_word_embeddings, path.name
        sd["lm_head.weight"] = sd["model.embed_tokens.weight"]
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32, attn_implementation="eager")
    model.eval()
    model.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()}, strict=True)
    if config.tie_word_embeddings:
        assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    if rope_freqs is not None:
        # llama.cpp divides the base frequencies by rope_freqs; HF's llama3 inv_freq must agree.
        base = 1.0 / (config.rope_parameters["rope_theta"] **
                      (np.arange(0, head_dim, 2, dtype=np.float32) / head_dim))
        inv_freq = model.model.rotary_emb.inv_freq.numpy()
        assert np.allclose(inv_freq, base / rope_freqs, rtol=1e-6, atol=0), path.name

    def logits(ids):
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids], dtype=torch.long), use_cache=False)
        return out.logits[0].to(torch.float32).numpy()

    prompt_logits = logits(prompt_ids)
    ids = list(prompt_ids)
    greedy, margins = [], []
    for _ in range(GREEDY_STEPS):
        row = logits(ids)[-1]
        top = np.argsort(-row, kind="stable")[:2]
        greedy.append(int(top[0]))
        margins.append(r6(row[top[0]] - row[top[1]]))
        ids.append(int(top[0]))
    return {"dequantized_greedy_ids": greedy, "dequantized_greedy_margins": margins,
            "dequantized_logits": [[r6(x) for x in row] for row in prompt_logits]}


def describe(path):
    import gguf
    reader = gguf.GGUFReader(str(path))
    print(f"  {path.name}: {path.stat().st_size} bytes, {len(reader.tensors)} tensors")
    for t in reader.tensors:
        print(f"    {t.name:28s} {t.tensor_type.name:5s} {list(map(int, t.shape))}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llama-cpp", help="llama.cpp sources (default $LLAMA_CPP_DIR)")
    ap.add_argument("--ktiny-dir", default=os.path.join(tempfile.gettempdir(), "ktiny_hf"),
                    help="where the synthetic HF checkpoint goes (outside the repository)")
    ap.add_argument("--goldens-only", action="store_true", help="recompute golden.json only")
    ap.add_argument("--convert-worker", metavar="PRE", help=argparse.SUPPRESS)
    ap.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    lcpp = llama_cpp_dir(args)
    if args.convert_worker:
        convert_worker(args.convert_worker, lcpp, args.rest)
        return
    sys.path.insert(0, str(lcpp / "gguf-py"))

    OUT.mkdir(parents=True, exist_ok=True)
    if not args.goldens_only:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            for name, pre in F16_MODELS.items():
                convert(lcpp, checkpoint_copy(CKPT / name, tmp / name), OUT / f"{name}.f16.gguf", pre)
            for suffix, ftype in LLAMA3_QUANTS.items():
                quantize(OUT / "llama3_tiny.f16.gguf", OUT / f"llama3_tiny.{suffix}.gguf", ftype)

            ktiny_dir = pathlib.Path(args.ktiny_dir)
            config = write_ktiny(ktiny_dir)
            (OUT / "ktiny.config.json").write_text(json.dumps(config, indent=2) + "\n")
            ktiny_f16 = tmp / "ktiny.f16.gguf"
            convert(lcpp, ktiny_dir, ktiny_f16, "llama-bpe", model_name="ktiny")
            shutil.copy(ktiny_f16, ktiny_dir / "ktiny.f16.gguf")
            for suffix, ftype in KTINY_QUANTS.items():
                quantize(ktiny_f16, OUT / f"ktiny.{suffix}.gguf", ftype)

            spm_dir = tmp / "spm"
            write_spm_dir(spm_dir)
            convert(lcpp, spm_dir, OUT / "spm_vocab.gguf", vocab_only=True, model_name="spm_vocab")
            shutil.copy(spm_dir / "tokenizer.model", OUT / "spm_vocab.model")

    files = sorted(OUT.glob("*.gguf"))
    golden = {}
    for path in files:
        entry = {}
        if not path.name.startswith("llama3_tiny.q"):  # the quantised llama3_tiny share f16's vocab
            entry.update(vocab_goldens(path))
        if path.name != "spm_vocab.gguf":
            entry.update(model_goldens(path))
            entry.update(dequantized_goldens(path, entry["prompt_ids"]))
            print(f"{path.name}: greedy {entry['greedy_ids']} min margin {min(entry['greedy_margins'])}")
            print(f"{' ' * len(path.name)}  dequantized greedy {entry['dequantized_greedy_ids']} "
                  f"min margin {min(entry['dequantized_greedy_margins'])}")
        golden[path.name] = entry
    with open(OUT / "golden.json", "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    for path in files:
        describe(path)


if __name__ == "__main__":
    main()
