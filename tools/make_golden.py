#!/usr/bin/env python3
"""Builds kiln's tiny golden checkpoints and records Hugging Face transformers' outputs on them.

Developer tool (not run by CI). Needs PyPI torch, transformers, tokenizers, safetensors:
    python3 -m venv .venv && .venv/bin/pip install torch transformers tokenizers safetensors
    .venv/bin/python tools/make_golden.py            # rewrites tests/data/checkpoints/
    .venv/bin/python tools/make_golden.py qwen3_tiny # rewrites only the named checkpoints

Each checkpoint is a random-weight model of one supported class (Llama, Qwen2, Qwen3, Mistral,
Phi-3), made with transformers' own config class, with a small byte-level BPE tokenizer trained here in
Llama 3's format (split regex, ByteLevel, <|begin_of_text|> added by the post-processor). For
each prompt we record the token ids, the logits at every position of a full forward pass (f32),
and a 32-token greedy continuation. Weights are scaled up from HF's default init so that greedy
choices are decisive: seeds are tried in a fixed order until the top-2 logit margin of every recorded
greedy step is at least MIN_MARGIN.
"""
import json
import pathlib
import shutil
import sys

import torch
from safetensors.torch import save_file
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import (LlamaConfig, LlamaForCausalLM, MistralConfig, MistralForCausalLM, Phi3Config,
                          Phi3ForCausalLM, Qwen2Config, Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM)

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "checkpoints"
LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
SPECIAL = ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>"]
PROMPTS = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "Licensed under the Apache License, Version 2.0 (the \"License\");",
    "  indented code: for (int i = 0; i < 10; ++i) { sum += i; }",
    "Numbers 12345 and unicode: café, naïve, 日本語",
]
NEW_TOKENS = 32
MIN_MARGIN = 0.005  # 5x the 1e-3 logits tolerance the C++ tests allow
ONLY = set()  # checkpoint names given on the command line; empty: all


def training_text():
    texts = []
    for name in ["Apache-2.0", "GPL-3", "MPL-2.0", "Artistic"]:
        path = pathlib.Path("/usr/share/common-licenses") / name
        if path.exists():
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
    texts.extend(PROMPTS * 3)
    return texts


def train_tokenizer(vocab_size):
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size - len(SPECIAL), special_tokens=[],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(training_text(), trainer=trainer)
    tok.add_special_tokens(SPECIAL)
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
                                      special_tokens=[("<|begin_of_text|>", bos)]),
    ])
    return tok


def save_tokenizer(tok, out_dir):
    tok.save(str(out_dir / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<|begin_of_text|>",
        "eos_token": "<|end_of_text|>",
        "clean_up_tokenization_spaces": False,
        "model_max_length": 256,
        "chat_template": (
            "{{ bos_token }}{% for message in messages %}<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n"
            "{{ message['content'] | trim }}<|eot_id|>{% endfor %}"
            "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
        ),
    }
    (out_dir / "tokenizer_config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n")


def scale_weights(model, seed, std):
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(std * torch.randn(p.shape, generator=gen))


def greedy_margin(logits):
    top = torch.topk(logits, 2, dim=-1).values
    return float((top[..., 0] - top[..., 1]).min())


def record(model, tok, prompts):
    records, logits_tensors, margin = [], {}, float("inf")
    for i, prompt in enumerate(prompts):
        ids = tok.encode(prompt).ids
        input_ids = torch.tensor([ids])
        with torch.no_grad():
            logits = model(input_ids).logits[0].float()
            out = model.generate(input_ids, attention_mask=torch.ones_like(input_ids), max_new_tokens=NEW_TOKENS,
                                 min_new_tokens=NEW_TOKENS, do_sample=False, eos_token_id=None, pad_token_id=0,
                                 output_logits=True, return_dict_in_generate=True)
        step_logits = torch.stack(out.logits)[:, 0].float()
        margin = min(margin, greedy_margin(logits[-1:]), greedy_margin(step_logits))
        new_ids = out.sequences[0, len(ids):].tolist()
        logits_tensors[f"prompt{i}.logits"] = logits.contiguous()
        records.append({"prompt": prompt, "ids": ids, "greedy_ids": new_ids,
                        "greedy_text": tok.decode(new_ids), "logits_tensor": f"prompt{i}.logits"})
    return records, logits_tensors, margin


def build(name, config_kwargs, dtype, shards, seed, std, classes=(LlamaConfig, LlamaForCausalLM)):
    if ONLY and name not in ONLY:
        return
    config_class, model_class = classes
    out_dir = OUT / name
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    tok = train_tokenizer(config_kwargs.pop("vocab_size"))
    save_tokenizer(tok, out_dir)
    config = config_class(vocab_size=tok.get_vocab_size(), bos_token_id=tok.token_to_id("<|begin_of_text|>"),
                         eos_token_id=[tok.token_to_id("<|end_of_text|>"), tok.token_to_id("<|eot_id|>")],
                         **config_kwargs)
    # The first seed (in a fixed sequence) whose greedy choices are all decisive.
    for attempt in range(50):
        torch.manual_seed(seed + 1000 * attempt)
        model = model_class(config).float().eval()
        scale_weights(model, seed + 1000 * attempt, std)
        # Goldens use the weights exactly as stored: round the parameters (not the rotary
        # buffers, which a loader recomputes in f32) through the storage dtype first.
        with torch.no_grad():
            for param in model.parameters():
                param.copy_(param.to(dtype).float())
        records, logits, margin = record(model, tok, PROMPTS)
        if margin >= MIN_MARGIN:
            break
    else:
        raise SystemExit(f"{name}: no seed gave a greedy margin >= {MIN_MARGIN}")
    model.to(dtype).save_pretrained(out_dir, safe_serialization=True,
                                    max_shard_size="200KB" if shards else "1GB")
    save_file(logits, str(out_dir / "golden_logits.safetensors"))
    golden = {"source": f"transformers {model_class.__name__}, f32 compute", "storage_dtype": str(dtype),
              "min_greedy_margin": margin, "records": records}
    (out_dir / "golden.json").write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n")
    print(f"{name}: vocab {config.vocab_size}, min greedy margin {margin:.3f}, files:",
          sorted(p.name for p in out_dir.iterdir()))


def longrope_factors(count, seed):
    gen = torch.Generator().manual_seed(seed)
    return [round(float(f), 4) for f in 1.0 + 3.0 * torch.rand(count, generator=gen)]


def main():
    ONLY.update(sys.argv[1:])
    # Llama-3 style: GQA, tied embeddings, llama3 RoPE scaling (original context 32 so the tiny
    # prompts reach the scaled band), f32 weights.
    build("llama3_tiny", dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                              rope_theta=500000.0, tie_word_embeddings=True, rms_norm_eps=1e-5,
                              rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                            "high_freq_factor": 4.0, "original_max_position_embeddings": 32}),
          torch.float32, shards=False, seed=1, std=0.25)
    # Llama-2 style: no GQA, untied head, no scaling, bf16 weights in shards.
    build("llama2_tiny", dict(vocab_size=384, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                              num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=128,
                              rope_theta=10000.0, tie_word_embeddings=False, rms_norm_eps=1e-6),
          torch.bfloat16, shards=True, seed=2, std=0.25)
    # The remaining config fields: explicit head_dim (≠ hidden / heads), attention and MLP biases,
    # linear RoPE scaling, f16 weights.
    build("llama_bias_tiny", dict(vocab_size=320, hidden_size=48, intermediate_size=96, num_hidden_layers=3,
                                  num_attention_heads=4, num_key_value_heads=1, head_dim=16,
                                  max_position_embeddings=128, rope_theta=10000.0, tie_word_embeddings=False,
                                  attention_bias=True, mlp_bias=True, rms_norm_eps=1e-6,
                                  rope_scaling={"rope_type": "linear", "factor": 2.0}),
          torch.float16, shards=False, seed=3, std=0.25)
    # Qwen2.5 style: biases on q/k/v only, tied embeddings; the sliding window (off in Qwen2.5,
    # where this is the Llama path) switched on from layer 1 (max_window_layers) with 8 positions.
    build("qwen2_tiny", dict(vocab_size=384, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                             rope_theta=1000000.0, tie_word_embeddings=True, rms_norm_eps=1e-6,
                             use_sliding_window=True, sliding_window=8, max_window_layers=1),
          torch.float32, shards=False, seed=4, std=0.25, classes=(Qwen2Config, Qwen2ForCausalLM))
    # Qwen3 style: per-head q/k RMSNorm, explicit head_dim (≠ hidden / heads), no biases, f16.
    build("qwen3_tiny", dict(vocab_size=352, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, head_dim=32, max_position_embeddings=256,
                             rope_theta=1000000.0, tie_word_embeddings=True, rms_norm_eps=1e-6, attention_bias=False),
          torch.float16, shards=False, seed=5, std=0.25, classes=(Qwen3Config, Qwen3ForCausalLM))
    # Mistral v0.1 style with a tiny sliding window (8), so prompts and continuations run past it.
    build("mistral_tiny", dict(vocab_size=320, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                               num_attention_heads=4, num_key_value_heads=1, head_dim=16, max_position_embeddings=256,
                               rope_theta=10000.0, tie_word_embeddings=False, rms_norm_eps=1e-5, sliding_window=8),
          torch.float32, shards=False, seed=6, std=0.25, classes=(MistralConfig, MistralForCausalLM))
    # Phi-3 style: fused qkv_proj / gate_up_proj, LongRoPE (short factors: prompts and continuations
    # stay within the original 96 positions), partial rotary (half of each head), f16.
    build("phi3_tiny", dict(vocab_size=320, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=384,
                            original_max_position_embeddings=96, tie_word_embeddings=False, rms_norm_eps=1e-5,
                            sliding_window=None, pad_token_id=0,
                            rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0, "partial_rotary_factor": 0.5,
                                             "short_factor": longrope_factors(4, 7), "long_factor": longrope_factors(4, 8)}),
          torch.float16, shards=False, seed=7, std=0.25, classes=(Phi3Config, Phi3ForCausalLM))


if __name__ == "__main__":
    main()
