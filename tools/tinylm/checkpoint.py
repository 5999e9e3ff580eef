"""Write a trained model as an ordinary Hugging Face checkpoint directory readable by old and new
transformers and by kiln's config parser.

Invariant: config.json carries both the transformers-5 `rope_parameters` and the classic
top-level `rope_theta` / `torch_dtype` keys with the same values.
"""
import json
import os
import shutil

import torch
from transformers import GenerationConfig

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


def _add_classic_config_keys(config_path, dtype_name):
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    rope = config.get("rope_parameters") or {}
    config["rope_theta"] = rope.get("rope_theta", config.get("rope_theta", 10000.0))
    config.setdefault("rope_scaling", None)
    config["torch_dtype"] = dtype_name
    config["dtype"] = dtype_name
    with open(config_path, "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")


def save_checkpoint(model, tokenizer_dir, out_dir, dtype=torch.float16):
    """Save weights (safetensors, `dtype`), config, generation config and tokenizer files."""
    os.makedirs(out_dir, exist_ok=True)
    config = model.config
    # Copy, so the caller's float32 training weights stay untouched.
    export = type(model)(config)
    export.load_state_dict(model.state_dict())
    export = export.to(dtype)
    export.save_pretrained(out_dir, safe_serialization=True)
    generation = GenerationConfig(
        bos_token_id=config.bos_token_id, eos_token_id=config.eos_token_id, do_sample=False)
    generation.save_pretrained(out_dir)
    _add_classic_config_keys(os.path.join(out_dir, "config.json"),
                             str(dtype).replace("torch.", ""))
    for name in TOKENIZER_FILES:
        shutil.copyfile(os.path.join(tokenizer_dir, name), os.path.join(out_dir, name))
