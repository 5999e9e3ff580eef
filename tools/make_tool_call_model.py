#!/usr/bin/env python3
"""Builds tests/data/checkpoints/tool_call_tiny: a tiny Llama checkpoint that always writes the same
Hermes-style tool-call "script", whatever the prompt, for the tests of `kiln serve --tool-call-parser`.

Developer tool (not run by CI). Needs PyPI numpy, safetensors, tokenizers (no torch):
    python3 -m venv .venv && .venv/bin/pip install numpy safetensors tokenizers
    .venv/bin/python tools/make_tool_call_model.py    # rewrites tests/data/checkpoints/tool_call_tiny/

The model is a bigram table written as a one-layer Llama. Its attention o_proj and MLP down_proj are
zero, so the residual stream at every position is just the current token's embedding, and the logits
are RMSNorm(embedding) @ lm_head.T: the next token depends on the current token only. The row of
lm_head for a token u is SCALE times the sum of the normalized embeddings of the tokens whose
successor is u. Embeddings are random Gaussian (fixed seed) in two orthogonal subspaces: the seven
tokens whose successor is not <|im_end|> ("\n", " ", '"', P0, P1, P2, P4) are orthonormal within the
first 8 dimensions; every other token lies in the remaining 56, with a shared offset along one
direction there. (With plain random embeddings in all 64 dimensions the sum for <|im_end|>, which
258 tokens precede, is noise that outweighs a single token's own direction.) So each token's successor leads
every other logit by at least MIN_MARGIN, which this script checks for every token; greedy decoding
and temperature-1 sampling (any other token has probability < 1e-10 per step) give the same text.

The tokenizer is byte-level BPE without merges (the 256 ByteLevel symbols; the id of byte b is b),
no BOS, special tokens <|endoftext|>, <|im_start|>, <|im_end|>, and five non-special added tokens,
the pieces of the script:
    P0 = 'Let me look that up.\\n'
    P1 = '<tool_call>\\n{"name": "get_weather", "arguments": '
    P2 = '{"city": "Paris", "note": "braces {} and a literal </tool_call> inside"}}'
    P3 = '\\n</tool_call>\\n<tool_call>\\n{"name": "get_time", "arguments": {}}\\n</tool_call>'
    P4 = 'get_time", "arguments": {"tz": "UTC"}}\\n</tool_call>'
Successors: "\\n" -> P0 -> P1 -> P2 -> P3 -> <|im_end|> (the end of sequence); " " -> P2; '"' -> P4 ->
<|im_end|>; any other token -> <|im_end|>. A chat prompt ends in "<|im_start|>assistant\\n", so the answer is P0 P1 P2 P3: a
content prefix and two tool calls, the first with a "</tool_call>" and braces inside a JSON string.
A prefill that ends in a space (a forced call's '..."arguments": ') is continued with P2 P3; one
that ends in a quote (tool_choice "required": '<tool_call>\\n{"name": "') with P4.
The chat template (Hermes / Qwen2.5 style, written here) lists tools in the system turn, renders an
assistant's tool_calls as <tool_call> blocks and tool results as <tool_response> blocks in a user turn.
"""
import json
import pathlib

import numpy as np
from safetensors.numpy import save_file
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from tokenizers import AddedToken

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "checkpoints" / "tool_call_tiny"

SEED = 20261202
HIDDEN, HEADS, KV_HEADS, HEAD_DIM, INTERMEDIATE = 64, 4, 2, 16, 64
# Every byte is a token, so a prompt listing two tools and a follow-up turn already takes ~1000.
MAX_POSITIONS = 4096
SCALE = 5.0  # the final norm makes each hidden state's length sqrt(HIDDEN) = 8: a margin of 8 * SCALE
MIN_MARGIN = 30.0
SPECIAL_DIMS = 8  # the subspace of the tokens with a successor of their own

# Same split as tools/make_golden.py's Llama-3 tokenizers; without merges it only decides the pieces
# that the ByteLevel step maps byte by byte.
LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
PIECES = [
    "Let me look that up.\n",
    '<tool_call>\n{"name": "get_weather", "arguments": ',
    '{"city": "Paris", "note": "braces {} and a literal </tool_call> inside"}}',
    '\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>',
    'get_time", "arguments": {"tz": "UTC"}}\n</tool_call>',
]

# The chat template. Written with explicit '\n' literals and {%- -%} so that the result does not
# depend on trim_blocks / lstrip_blocks.
CHAT_TEMPLATE = "".join([
    "{%- set ns = namespace(system_done=false) %}",
    "{%- if tools %}",
    "{{- '<|im_start|>system\\n' }}",
    "{%- if messages and messages[0].role == 'system' %}",
    "{{- messages[0].content }}{{- '\\n\\n' }}",
    "{%- set ns.system_done = true %}",
    "{%- endif %}",
    "{{- 'Tools are available. Each one is described by a JSON object inside <tools></tools>:\\n<tools>' }}",
    "{%- for tool in tools %}",
    "{{- '\\n' }}{{- tool | tojson }}",
    "{%- endfor %}",
    "{{- '\\n</tools>\\n\\nTo use tools, write one block per call, each holding a JSON object with the tool '"
    " + 'name and its arguments:\\n<tool_call>\\n{\"name\": \"<tool name>\", \"arguments\": {<arguments>}}\\n'"
    " + '</tool_call><|im_end|>\\n' }}",
    "{%- endif %}",
    "{%- for message in messages %}",
    "{%- if loop.first and ns.system_done %}",
    "{%- elif message.role == 'user' or message.role == 'system' %}",
    "{{- '<|im_start|>' + message.role + '\\n' }}{{- message.content }}{{- '<|im_end|>\\n' }}",
    "{%- elif message.role == 'assistant' %}",
    "{{- '<|im_start|>assistant\\n' }}",
    "{%- if message.content %}",
    "{{- message.content }}",
    "{%- if message.tool_calls and not message.content.endswith('\\n') %}{{- '\\n' }}{%- endif %}",
    "{%- endif %}",
    "{%- for tc in message.tool_calls or [] %}",
    "{%- if not loop.first %}{{- '\\n' }}{%- endif %}",
    "{{- '<tool_call>\\n{\"name\": \"' + tc.function.name + '\", \"arguments\": ' }}",
    "{{- tc.function.arguments | tojson }}",
    "{{- '}\\n</tool_call>' }}",
    "{%- endfor %}",
    "{{- '<|im_end|>\\n' }}",
    "{%- elif message.role == 'tool' %}",
    "{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}",
    "{{- '\\n<tool_response>\\n' }}{{- message.content }}{{- '\\n</tool_response>' }}",
    "{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}",
    "{%- endif %}",
    "{%- endfor %}",
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}",
])


def byte_level_symbols():
    """GPT-2's bytes_to_unicode: the ByteLevel symbol of each byte, in byte order."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    symbols, extra = {}, 0
    for b in range(256):
        if b in printable:
            symbols[b] = chr(b)
        else:
            symbols[b] = chr(256 + extra)
            extra += 1
    return [symbols[b] for b in range(256)]


def make_tokenizer():
    symbols = byte_level_symbols()
    assert sorted(symbols) == sorted(pre_tokenizers.ByteLevel.alphabet())
    tok = Tokenizer(models.BPE(vocab={s: i for i, s in enumerate(symbols)}, merges=[], ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in SPECIAL])
    tok.add_tokens([AddedToken(p, special=False, normalized=False) for p in PIECES])
    return tok


def successors(tok):
    vocab = tok.get_vocab_size()
    pieces = [tok.token_to_id(p) for p in PIECES]
    end = tok.token_to_id("<|im_end|>")
    nl, space, quote = tok.encode("\n").ids, tok.encode(" ").ids, tok.encode('"').ids
    assert nl == [10] and space == [32] and quote == [34], (nl, space, quote)
    succ = np.full(vocab, end, dtype=np.int64)
    succ[10] = pieces[0]
    succ[pieces[0]] = pieces[1]
    succ[pieces[1]] = pieces[2]
    succ[pieces[2]] = pieces[3]
    succ[pieces[3]] = end
    succ[32] = pieces[2]
    succ[34] = pieces[4]
    succ[pieces[4]] = end
    return succ


def rms_norm(x, eps):
    return x / np.sqrt(np.mean(x.astype(np.float64) ** 2, axis=-1, keepdims=True) + eps)


def make_weights(succ, eps):
    rng = np.random.default_rng(SEED)
    vocab = len(succ)
    end = int(np.bincount(succ).argmax())  # <|im_end|>, the successor of most tokens
    own = [t for t in range(vocab) if succ[t] != end]  # "\n", " ", '"', P0, P1, P2, P4
    rest = [t for t in range(vocab) if succ[t] == end]
    assert len(own) <= SPECIAL_DIMS
    embed = np.zeros((vocab, HIDDEN))
    # Orthonormal rows (QR of a Gaussian) in the first SPECIAL_DIMS dimensions, scaled to RMS 1.
    q, _ = np.linalg.qr(rng.standard_normal((SPECIAL_DIMS, len(own))))
    embed[own, :SPECIAL_DIMS] = q.T * np.sqrt(HIDDEN)
    # The others: Gaussian in the remaining dimensions plus a shared offset along the first of them.
    g = rng.standard_normal((len(rest), HIDDEN - SPECIAL_DIMS))
    g[:, 0] += 0.5 * np.sqrt(HIDDEN - SPECIAL_DIMS)
    embed[rest, SPECIAL_DIMS:] = g
    embed = embed.astype(np.float32)

    unit = rms_norm(embed.astype(np.float64), eps)
    unit /= np.linalg.norm(unit, axis=-1, keepdims=True)
    lm_head = np.zeros((vocab, HIDDEN))
    for t in range(vocab):
        lm_head[succ[t]] += SCALE * unit[t]
    lm_head = lm_head.astype(np.float32)

    def rand(*shape, std=0.2):
        return (std * rng.standard_normal(shape)).astype(np.float32)

    layer = "model.layers.0."
    weights = {
        "model.embed_tokens.weight": embed,
        layer + "input_layernorm.weight": np.ones(HIDDEN, np.float32),
        layer + "self_attn.q_proj.weight": rand(HEADS * HEAD_DIM, HIDDEN),
        layer + "self_attn.k_proj.weight": rand(KV_HEADS * HEAD_DIM, HIDDEN),
        layer + "self_attn.v_proj.weight": rand(KV_HEADS * HEAD_DIM, HIDDEN),
        layer + "self_attn.o_proj.weight": np.zeros((HIDDEN, HEADS * HEAD_DIM), np.float32),
        layer + "post_attention_layernorm.weight": np.ones(HIDDEN, np.float32),
        layer + "mlp.gate_proj.weight": rand(INTERMEDIATE, HIDDEN),
        layer + "mlp.up_proj.weight": rand(INTERMEDIATE, HIDDEN),
        layer + "mlp.down_proj.weight": np.zeros((HIDDEN, INTERMEDIATE), np.float32),
        "model.norm.weight": np.ones(HIDDEN, np.float32),
        "lm_head.weight": lm_head,
    }
    return weights


def check_margins(weights, succ, eps):
    """Every token's successor must lead every other logit by MIN_MARGIN; returns the smallest lead."""
    h = rms_norm(weights["model.embed_tokens.weight"].astype(np.float64), eps)
    h = h * weights["model.norm.weight"]
    logits = h @ weights["lm_head.weight"].astype(np.float64).T
    rows = np.arange(len(succ))
    chosen = logits[rows, succ]
    others = logits.copy()
    others[rows, succ] = -np.inf
    margins = chosen - others.max(axis=1)
    worst = int(margins.argmin())
    assert (logits.argmax(axis=1) == succ).all()
    assert margins.min() >= MIN_MARGIN, f"token {worst}: margin {margins[worst]:.2f} < {MIN_MARGIN}"
    return float(margins.min()), worst


def write(tok, weights, succ, eps):
    OUT.mkdir(parents=True, exist_ok=True)  # README.md there is kept
    end = tok.token_to_id("<|im_end|>")
    tok.save(str(OUT / "tokenizer.json"))
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": None,
        "eos_token_id": end,
        "pad_token_id": tok.token_to_id("<|endoftext|>"),
        "dtype": "float32",
        "head_dim": HEAD_DIM,
        "hidden_act": "silu",
        "hidden_size": HIDDEN,
        "initializer_range": 0.02,
        "intermediate_size": INTERMEDIATE,
        "max_position_embeddings": MAX_POSITIONS,
        "mlp_bias": False,
        "num_attention_heads": HEADS,
        "num_hidden_layers": 1,
        "num_key_value_heads": KV_HEADS,
        "rms_norm_eps": eps,
        "rope_theta": 10000.0,
        "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
        "tie_word_embeddings": False,
        "use_cache": True,
        "vocab_size": len(succ),
    }
    (OUT / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    generation = {"eos_token_id": end, "pad_token_id": config["pad_token_id"], "do_sample": False}
    (OUT / "generation_config.json").write_text(json.dumps(generation, indent=2) + "\n")
    tok_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": None,
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "add_bos_token": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": MAX_POSITIONS,
        "chat_template": CHAT_TEMPLATE,
    }
    (OUT / "tokenizer_config.json").write_text(json.dumps(tok_config, indent=2, ensure_ascii=False) + "\n")
    save_file(weights, str(OUT / "model.safetensors"), metadata={"format": "pt"})


def main():
    eps = 1e-5
    tok = make_tokenizer()
    succ = successors(tok)
    weights = make_weights(succ, eps)
    margin, worst = check_margins(weights, succ, eps)
    write(tok, weights, succ, eps)
    # The script, followed greedily from "\n" as a chat prompt's last token.
    script, t = [], 10
    while True:
        t = int(succ[t])
        if t == tok.token_to_id("<|im_end|>"):
            break
        script.append(t)
    assert tok.decode(script) == "".join(PIECES[:4]), tok.decode(script)
    print(f"tool_call_tiny: vocab {len(succ)}, min margin {margin:.2f} (token {worst}), script ids {script}, files:",
          sorted(p.name for p in OUT.iterdir()))


if __name__ == "__main__":
    main()
