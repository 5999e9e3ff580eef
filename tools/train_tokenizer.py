#!/usr/bin/env python3
"""Train kiln-tiny's byte-level BPE tokenizer (Llama 3 format) on the corpus train split.

Invariant: ordinary tokens take ids [0, vocab - 5) and the five Llama 3 special tokens the last
five ids, as in Llama 3; encoding adds <|begin_of_text|> like Llama 3.1's post-processor.

  python3 tools/train_tokenizer.py --corpus out/corpus --out out/tokenizer --vocab-size 8192
"""
import argparse
import json
import os

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

# Llama 3's pre-tokenizer split pattern, verbatim from its tokenizer.json.
LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
BOS, EOS, EOT = "<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"
START_HEADER, END_HEADER = "<|start_header_id|>", "<|end_header_id|>"
SPECIAL_TOKENS = [BOS, EOS, START_HEADER, END_HEADER, EOT]
# Meta Llama 3 8B Instruct's chat template, verbatim.
CHAT_TEMPLATE = (
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'"
    "+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}"
    "{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}"
    "{% endif %}")


def corpus_texts(corpus_dir):
    """Train-split page texts and rendered Q/A pairs, in file order."""
    with open(os.path.join(corpus_dir, "pages.jsonl"), encoding="utf-8") as f:
        for line in f:
            page = json.loads(line)
            if page["split"] == "train":
                yield page["text"]
    with open(os.path.join(corpus_dir, "qa.jsonl"), encoding="utf-8") as f:
        for line in f:
            pair = json.loads(line)
            yield f"Q: {pair['question']}\nA: {pair['answer']}\n"


def build_tokenizer(corpus_dir, vocab_size):
    tokenizer = Tokenizer(models.BPE(ignore_merges=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
    ])
    tokenizer.decoder = decoders.ByteLevel(add_prefix_space=True, trim_offsets=True,
                                           use_regex=True)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - len(SPECIAL_TOKENS), min_frequency=2, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(corpus_texts(corpus_dir), trainer=trainer)
    if tokenizer.get_vocab_size() != vocab_size - len(SPECIAL_TOKENS):
        raise SystemExit(f"BPE training reached only {tokenizer.get_vocab_size()} tokens; "
                         f"the corpus is too small for --vocab-size {vocab_size}")
    tokenizer.add_special_tokens(SPECIAL_TOKENS)
    bos_id = tokenizer.token_to_id(BOS)
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{BOS}:0 $A:0", pair=f"{BOS}:0 $A:0 {BOS}:1 $B:1",
        special_tokens=[(BOS, bos_id)])
    return tokenizer


def tokenizer_config(tokenizer, model_max_length):
    added = {}
    for token in SPECIAL_TOKENS:
        added[str(tokenizer.token_to_id(token))] = {
            "content": token, "lstrip": False, "normalized": False, "rstrip": False,
            "single_word": False, "special": True}
    return {
        "added_tokens_decoder": added,
        "bos_token": BOS,
        "eos_token": EOS,
        "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,  # decode is byte-exact
        "model_input_names": ["input_ids", "attention_mask"],
        "model_max_length": model_max_length,
        "tokenizer_class": "PreTrainedTokenizerFast",
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default="out/corpus")
    parser.add_argument("--out", default="out/tokenizer")
    parser.add_argument("--vocab-size", type=int, default=8192)
    parser.add_argument("--model-max-length", type=int, default=512)
    args = parser.parse_args()
    if not 1024 <= args.vocab_size <= 65536:
        parser.error("--vocab-size must be in [1024, 65536]")
    os.makedirs(args.out, exist_ok=True)
    tokenizer = build_tokenizer(args.corpus, args.vocab_size)
    tokenizer.save(os.path.join(args.out, "tokenizer.json"))
    with open(os.path.join(args.out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_config(tokenizer, args.model_max_length), f, indent=2)
    sample = "Q: What does mmap do?\nA:"
    print(f"vocab {tokenizer.get_vocab_size()}; {sample!r} -> "
          f"{tokenizer.encode(sample).tokens}")


if __name__ == "__main__":
    main()
