#!/usr/bin/env python3
"""Builds the generation-pipeline fixtures in tests/data/genai/ with Hugging Face transformers.

Developer tool (not run by CI). Needs torch, transformers, safetensors (see tools/make_golden.py).
    python tools/make_generation_golden.py

1. beam_search_golden.json: transformers' beam search (GenerationMixin._beam_search) on the
   golden checkpoints for several (num_beams, length_penalty, early_stopping,
   num_return_sequences) settings. So that hypotheses finish at different lengths, each case
   stops on two EOS ids picked from the case's own no-EOS beam output (tokens the search does
   reach). Recorded: every returned hypothesis' generated ids (ending with its EOS, if any) and
   sequences_scores.
2. llama3_tiny_draft/: a draft model for llama3_tiny's speculative-decoding tests: the same
   tokenizer and shapes, weights = main weights + Gaussian noise (NOISE x each tensor's std), so
   the draft agrees with the main model often but not always. Its greedy agreement is recorded
   in draft_agreement.json.
"""
import json
import pathlib
import shutil

import torch
from transformers import LlamaForCausalLM

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHECKPOINTS = ROOT / "tests" / "data" / "checkpoints"
OUT = ROOT / "tests" / "data" / "genai"
NOISE = 0.05
NEW_TOKENS = 12

CASES = [
    # (checkpoint, prompt index, num_beams, length_penalty, early_stopping, num_return_sequences)
    ("llama3_tiny", 0, 4, 1.0, False, 2),
    ("llama3_tiny", 1, 3, 0.5, True, 3),
    ("llama3_tiny", 3, 4, 2.0, "never", 1),
    ("llama3_tiny", 2, 2, -0.5, False, 2),
    ("llama2_tiny", 0, 5, 1.0, "never", 5),
    ("llama2_tiny", 4, 3, 0.0, True, 2),
    ("llama_bias_tiny", 1, 4, 1.5, False, 3),
]


def prompt_ids(name, index):
    golden = json.loads((CHECKPOINTS / name / "golden.json").read_text())
    return golden["records"][index]["ids"]


def beam_search(model, ids, num_beams, length_penalty, early_stopping, num_return_sequences, eos):
    input_ids = torch.tensor([ids])
    with torch.no_grad():
        out = model.generate(input_ids, attention_mask=torch.ones_like(input_ids), do_sample=False,
                             num_beams=num_beams, length_penalty=length_penalty, early_stopping=early_stopping,
                             num_return_sequences=num_return_sequences, max_new_tokens=NEW_TOKENS,
                             eos_token_id=eos, pad_token_id=0, output_scores=True, return_dict_in_generate=True)
    hypotheses = []
    for i in range(num_return_sequences):
        length = int((out.beam_indices[i] != -1).sum())
        hypotheses.append({"generated_ids": out.sequences[i, len(ids):len(ids) + length].tolist(),
                           "score": float(out.sequences_scores[i])})
    return hypotheses


def make_beam_golden():
    records = []
    for name, index, num_beams, length_penalty, early_stopping, nrs in CASES:
        model = LlamaForCausalLM.from_pretrained(CHECKPOINTS / name, dtype=torch.float32).eval()
        ids = prompt_ids(name, index)
        # EOS ids the search reaches: tokens of its own best hypotheses without EOS.
        free = beam_search(model, ids, num_beams, length_penalty, early_stopping, num_beams, None)
        eos = sorted({free[0]["generated_ids"][3], free[-1]["generated_ids"][6]})
        hypotheses = beam_search(model, ids, num_beams, length_penalty, early_stopping, nrs, eos)
        records.append({"checkpoint": name, "prompt_ids": ids, "num_beams": num_beams,
                        "length_penalty": length_penalty,
                        "early_stopping": early_stopping if isinstance(early_stopping, str)
                        else ("true" if early_stopping else "false"),
                        "num_return_sequences": nrs, "max_new_tokens": NEW_TOKENS, "eos_token_ids": eos,
                        "hypotheses": hypotheses})
        print(name, num_beams, length_penalty, early_stopping, [len(h["generated_ids"]) for h in hypotheses])
    golden = {"source": "transformers GenerationMixin beam search, f32", "transformers": __import__("transformers").__version__,
              "records": records}
    (OUT / "beam_search_golden.json").write_text(json.dumps(golden, indent=1) + "\n")


def make_draft():
    main_dir = CHECKPOINTS / "llama3_tiny"
    out_dir = OUT / "llama3_tiny_draft"
    if out_dir.exists():
        shutil.rmtree(out_dir)
    model = LlamaForCausalLM.from_pretrained(main_dir, dtype=torch.float32).eval()
    main = LlamaForCausalLM.from_pretrained(main_dir, dtype=torch.float32).eval()
    gen = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(NOISE * p.std() * torch.randn(p.shape, generator=gen))
    model.save_pretrained(out_dir, safe_serialization=True)
    for name in ["tokenizer.json", "tokenizer_config.json", "generation_config.json"]:
        shutil.copy(main_dir / name, out_dir / name)
    # Greedy agreement: how often the draft's argmax equals the main model's along the main
    # model's own greedy continuations.
    golden = json.loads((main_dir / "golden.json").read_text())
    agree = total = 0
    for r in golden["records"]:
        seq = torch.tensor([r["ids"] + r["greedy_ids"]])
        with torch.no_grad():
            a = main(seq).logits[0, len(r["ids"]) - 1:-1].argmax(-1)
            b = model(seq).logits[0, len(r["ids"]) - 1:-1].argmax(-1)
        agree += int((a == b).sum())
        total += len(a)
    (OUT / "draft_agreement.json").write_text(json.dumps({"noise": NOISE, "greedy_agreement": agree / total}) + "\n")
    print(f"draft greedy agreement {agree / total:.2f}")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    make_beam_golden()
    make_draft()


if __name__ == "__main__":
    main()
