"""Shapes of kiln-tiny (main) and kiln-tiny-draft: Llama with GQA, tied embeddings, SwiGLU.

Invariant: both presets share vocabulary, special token ids, RoPE and norm settings, so the draft
can propose tokens for the main model in speculative decoding.
"""
from transformers import LlamaConfig

PRESETS = {
    # ~6.5M parameters: the main model, sized for ~90 minutes on 2 shared CPU cores.
    "main": dict(hidden_size=256, num_hidden_layers=6, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=64, intermediate_size=704),
    # ~1.8M parameters: the draft, ~3.6x smaller and ~2.5x faster per token.
    "draft": dict(hidden_size=128, num_hidden_layers=4, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=32, intermediate_size=352),
}


def llama_config(preset, tokenizer, max_position_embeddings):
    """A LlamaConfig for the named preset, with token ids taken from the tokenizer."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset '{preset}'; accepted: {sorted(PRESETS)}")
    eos_ids = [tokenizer.convert_tokens_to_ids(t) for t in ("<|end_of_text|>", "<|eot_id|>")]
    return LlamaConfig(
        vocab_size=len(tokenizer),
        max_position_embeddings=max_position_embeddings,
        rms_norm_eps=1e-5,
        rope_theta=10000.0,
        hidden_act="silu",
        tie_word_embeddings=True,
        attention_bias=False,
        mlp_bias=False,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=eos_ids,
        initializer_range=0.02,
        **PRESETS[preset],
    )
