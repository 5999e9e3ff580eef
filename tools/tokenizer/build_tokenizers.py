#!/usr/bin/env python3
"""Build small tokenizers from scratch with PyPI `tokenizers`, one per family kiln must match:
GPT-2 style and Llama 3 style byte-level BPE, Llama 2 style SentencePiece BPE with byte fallback
(and a variant with <unk> fusing instead), the newer Metaspace "first" conversion, and "zoo"
tokenizers that between them use every normalizer, pre-tokenizer, split behaviour,
post-processor, decoder and added-token flag kiln implements. Each is trained on the extended
corpus and written with a tokenizer_config.json to tests/data/tokenizers/<name>/.

  python3 tools/tokenizer/build_tokenizers.py
"""
import gzip
import json
import os

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # fewer ties broken by thread timing

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors, trainers

import corpus

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "tokenizers")
LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
BYTE_TOKENS = ["<0x%02X>" % b for b in range(256)]


def training_texts():
    lines = [text for _, _, text in corpus.build(corpus.DEFAULT_SPECIALS)]
    return [t for t in lines if t] * 3


def flag_tokens():
    """Added tokens with every flag combination kiln handles."""
    return [
        AddedToken("<mask>", lstrip=True, special=True, normalized=False),
        AddedToken("<|im_start|>", rstrip=True, special=True, normalized=False),
        AddedToken("<|im_end|>", lstrip=True, rstrip=True, special=True, normalized=False),
        AddedToken("hello_sw", single_word=True, special=False, normalized=False),
        AddedToken("<think>", special=False, normalized=True),
        AddedToken("</think>", special=False, normalized=False),
    ]


def train(tok, trainer):
    tok.train_from_iterator(training_texts(), trainer)
    tok.add_tokens(flag_tokens())
    return tok


def gpt2_style():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    train(tok, trainers.BpeTrainer(vocab_size=3000, special_tokens=["<|endoftext|>"],
                                   initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    config = {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
              "clean_up_tokenization_spaces": True}
    return tok, config


def llama3_style():
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    train(tok, trainers.BpeTrainer(vocab_size=4000, special_tokens=specials,
                                   initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A $B",
                                      special_tokens=[("<|begin_of_text|>", bos)])])
    config = {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>", "clean_up_tokenization_spaces": True}
    return tok, config


def sentencepiece_bpe(byte_fallback, vocab_size=2500):
    """Llama 2 layout: <unk> <s> </s>, then the 256 byte tokens (with byte fallback), then pieces."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=byte_fallback, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("▁[^▁]*"), behavior="isolated")  # training only
    tok.train_from_iterator(training_texts(), trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"], limit_alphabet=120))
    spec = json.loads(tok.to_str())
    trained = sorted(spec["model"]["vocab"].items(), key=lambda kv: kv[1])
    head = ["<unk>", "<s>", "</s>"] + (BYTE_TOKENS if byte_fallback else [])
    order = head + [t for t, _ in trained if t not in head]
    spec["model"]["vocab"] = {t: i for i, t in enumerate(order)}
    spec["added_tokens"] = [dict(id=i, content=t, single_word=False, lstrip=False, rstrip=False,
                                 normalized=False, special=True) for i, t in enumerate(head[:3])]
    spec["pre_tokenizer"] = None
    steps = [decoders.Replace("▁", " ")] + ([decoders.ByteFallback()] if byte_fallback else [])
    spec["decoder"] = json.loads(decoders.Sequence(steps + [decoders.Fuse(), decoders.Strip(" ", 1, 0)]).__getstate__())
    tok = Tokenizer.from_str(json.dumps(spec))
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B",
                                                       special_tokens=[("<s>", 1)])
    tok.add_tokens(flag_tokens())
    return tok


def llama2_style():
    config = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "add_bos_token": True,
              "add_eos_token": False, "legacy": True, "clean_up_tokenization_spaces": False}
    return sentencepiece_bpe(byte_fallback=True), config


def sp_unk_style():
    # No byte fallback: rare characters become <unk>, runs of them one fused <unk>. The config
    # asks for </s> too, which transformers adds by rebuilding the post-processor.
    config = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "add_bos_token": True,
              "add_eos_token": True, "clean_up_tokenization_spaces": True}
    return sentencepiece_bpe(byte_fallback=False, vocab_size=1500), config


def metaspace_first():
    tok = sentencepiece_bpe(byte_fallback=True, vocab_size=2000)
    tok.normalizer = None
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    tok.decoder = decoders.Sequence([decoders.Metaspace(replacement="▁", prepend_scheme="first", split=False),
                                     decoders.ByteFallback(), decoders.Fuse()])
    return tok, {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}


def zoo_bert():
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##"))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                strip_accents=None, lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    train(tok, trainers.BpeTrainer(vocab_size=2000, special_tokens=specials, limit_alphabet=200,
                                   continuing_subword_prefix="##"))
    tok.post_processor = processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")),
                                                   ("[CLS]", tok.token_to_id("[CLS]")))
    return tok, {"cls_token": "[CLS]", "sep_token": "[SEP]", "unk_token": "[UNK]", "pad_token": "[PAD]",
                 "mask_token": "[MASK]", "clean_up_tokenization_spaces": True}


def zoo_suffix():
    tok = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    tok.normalizer = normalizers.Sequence([
        normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase(),
        normalizers.Replace(Regex(r"\s+"), " "), normalizers.Strip(left=True, right=True)])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation(behavior="contiguous"),
        pre_tokenizers.Digits(individual_digits=True)])
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    train(tok, trainers.BpeTrainer(vocab_size=1500, special_tokens=["<unk>", "<s>", "</s>"],
                                   limit_alphabet=150, end_of_word_suffix="</w>"))
    tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")),
                                                      ("<s>", tok.token_to_id("<s>")))
    return tok, {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}


def zoo_split():
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Nmt(), normalizers.Prepend("~")])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(" ", behavior="merged_with_previous"),
        pre_tokenizers.Split(Regex(r"\d+"), behavior="merged_with_next"),
        pre_tokenizers.Split(Regex(r"[aeiou]+"), behavior="contiguous"),
        pre_tokenizers.Split(Regex(r"\w+"), behavior="removed", invert=True),
        pre_tokenizers.CharDelimiterSplit("|"),
        pre_tokenizers.FixedLength(length=6)])
    tok.decoder = decoders.Sequence([
        decoders.Replace(Regex("~+"), ""), decoders.Strip(" ", 2, 0), decoders.Fuse(),
        decoders.Strip("z", 1, 2), decoders.Replace("ab", "<AB>"),
        decoders.Metaspace(replacement="_", prepend_scheme="always")])
    train(tok, trainers.BpeTrainer(vocab_size=1500, special_tokens=["<unk>", "<s>"], limit_alphabet=150))
    # <unk> not special, so skip_special_tokens keeps the text non-empty: HF's Strip(stop > 0)
    # after Fuse panics on an empty string.
    spec = json.loads(tok.to_str())
    for token in spec["added_tokens"]:
        token["special"] = token["special"] and token["content"] != "<unk>"
    return Tokenizer.from_str(json.dumps(spec)), {"unk_token": "<unk>", "bos_token": "<s>"}


def zoo_words():
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.Lowercase(), normalizers.NFKD(),
                                           normalizers.Strip(left=True, right=False)])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(),
                                                 pre_tokenizers.Digits(individual_digits=False)])
    # CTC drops empty tokens, so the per-token Strip after it never sees one (HF's Strip panics
    # on an empty token when stop > 0).
    tok.decoder = decoders.Sequence([decoders.CTC(pad_token="<pad>", word_delimiter_token="|", cleanup=True),
                                     decoders.Strip(".", 0, 1)])
    train(tok, trainers.BpeTrainer(vocab_size=1200, special_tokens=["<unk>", "<pad>", "|"], limit_alphabet=150))
    return tok, {"unk_token": "<unk>", "pad_token": "<pad>"}


def zoo_bytes():
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.ByteLevel()
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("Ġ"), behavior="merged_with_next")
    tok.decoder = decoders.ByteLevel()
    train(tok, trainers.BpeTrainer(vocab_size=1500, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                   special_tokens=["<|endoftext|>"]))
    return tok, {"eos_token": "<|endoftext|>"}


BUILDERS = {
    "gpt2_style": gpt2_style, "llama3_style": llama3_style, "llama2_style": llama2_style,
    "sp_unk_style": sp_unk_style, "metaspace_first": metaspace_first, "zoo_bert": zoo_bert,
    "zoo_suffix": zoo_suffix, "zoo_split": zoo_split, "zoo_words": zoo_words, "zoo_bytes": zoo_bytes,
}


def main():
    for name, build in BUILDERS.items():
        tok, config = build()
        folder = os.path.join(OUT, name)
        os.makedirs(folder, exist_ok=True)
        data = json.dumps(json.loads(tok.to_str()), ensure_ascii=False, separators=(",", ":"))
        with gzip.GzipFile(os.path.join(folder, "tokenizer.json.gz"), "wb", mtime=0) as f:
            f.write(data.encode())
        with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
            json.dump(config, f, indent=2, ensure_ascii=False)
            f.write("\n")
        print(name, tok.get_vocab_size(), "tokens")


if __name__ == "__main__":
    main()
