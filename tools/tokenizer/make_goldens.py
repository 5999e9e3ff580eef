#!/usr/bin/env python3
"""Extended tokenizer goldens: every tokenizer under tests/data/tokenizers encoded and decoded by
PyPI `tokenizers` over the extended corpus (corpus.py), written as golden_extended.jsonl.gz.

What each field means (the oracle kiln's tests compare against):
  ids                  Tokenizer.encode(text, add_special_tokens=False).ids
  ids_with_special     the same with add_special_tokens=True, after applying transformers' rule
                       that add_bos_token / add_eos_token in tokenizer_config.json rebuild the
                       post-processor as "[bos] $A [eos]"
  decoded_no_cleanup   Tokenizer.decode(ids, skip_special_tokens=False)
  decoded              that, then transformers' clean_up_tokenization when the config's
                       clean_up_tokenization_spaces is true (transformers 4.x behaviour; 5.x
                       skips it for BPE models, see the comment on cleanup below)
  decoded_skip_special decode(ids, skip_special_tokens=True), cleaned up the same way
  hf_decode_panics     true where HF's decode panics (its Strip decoder indexes out of bounds
  hf_skip_decode_panics  on short or empty strings), so there is no decode to compare with
To keep the files small a decoded field is left out when it equals the one before it
(decoded_no_cleanup -> text, decoded -> decoded_no_cleanup, decoded_skip_special -> decoded).

  python3 tools/tokenizer/corpus.py --out tests/data/tokenizers/extended_corpus.jsonl.gz
  python3 tools/tokenizer/make_goldens.py
"""
import gzip
import json
import os
import sys

from tokenizers import Tokenizer, processors

import corpus

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "tokenizers")


def clean_up_tokenization(text):
    # transformers PreTrainedTokenizerBase.clean_up_tokenization, verbatim. transformers 5 skips
    # it for BPE models even when the config asks for it; kiln follows the config (as 4.x and
    # the shared fixtures do).
    return (text.replace(" .", ".").replace(" ?", "?").replace(" !", "!").replace(" ,", ",")
            .replace(" ' ", "'").replace(" n't", "n't").replace(" 'm", "'m").replace(" 's", "'s")
            .replace(" 've", "'ve").replace(" 're", "'re"))


def load(folder):
    path = os.path.join(folder, "tokenizer.json")
    if os.path.exists(path):
        tok = Tokenizer.from_file(path)
    else:
        with gzip.open(path + ".gz", "rt", encoding="utf-8") as f:
            tok = Tokenizer.from_str(f.read())
    config_path = os.path.join(folder, "tokenizer_config.json")
    config = json.load(open(config_path)) if os.path.exists(config_path) else {}
    return tok, config


def token_content(value):
    return value["content"] if isinstance(value, dict) else value


def apply_bos_eos_rule(tok, config):
    """transformers' TokenizersBackend.update_post_processor, for configs that set the flags."""
    if "add_bos_token" not in config and "add_eos_token" not in config:
        return
    bos, eos = token_content(config.get("bos_token")), token_content(config.get("eos_token"))
    add_bos = bool(config.get("add_bos_token")) and bos is not None
    add_eos = bool(config.get("add_eos_token")) and eos is not None
    single = ("%s:0 " % bos if add_bos else "") + "$A:0" + (" %s:0" % eos if add_eos else "")
    specials = ([(bos, tok.token_to_id(bos))] if add_bos else []) + ([(eos, tok.token_to_id(eos))] if add_eos else [])
    tok.post_processor = processors.TemplateProcessing(single=single, pair=single + " $B:1", special_tokens=specials)


def hf_decode(tok, ids, skip_special_tokens):
    try:
        return tok.decode(ids, skip_special_tokens=skip_special_tokens)
    except BaseException:  # pyo3 PanicException: HF's Strip decoder on a short or empty string
        return None


def golden_record(tok, config, id_, text):
    ids = tok.encode(text, add_special_tokens=False).ids
    record = {"id": id_, "ids": ids, "ids_with_special": tok.encode(text, add_special_tokens=True).ids}
    cleanup = config.get("clean_up_tokenization_spaces", False)
    raw = hf_decode(tok, ids, False)
    skipped = hf_decode(tok, ids, True)
    if raw is None:
        record["hf_decode_panics"] = True
    else:
        decoded = clean_up_tokenization(raw) if cleanup else raw
        if raw != text:
            record["decoded_no_cleanup"] = raw
        if decoded != raw:
            record["decoded"] = decoded
    if skipped is None:
        record["hf_skip_decode_panics"] = True
    else:
        skipped = clean_up_tokenization(skipped) if cleanup else skipped
        if raw is None or skipped != decoded:
            record["decoded_skip_special"] = skipped
    return record


def main():
    names = sys.argv[1:] or sorted(n for n in os.listdir(DATA) if os.path.isdir(os.path.join(DATA, n)))
    lines = corpus.build(corpus.DEFAULT_SPECIALS)
    for name in names:
        tok, config = load(os.path.join(DATA, name))
        apply_bos_eos_rule(tok, config)
        out = os.path.join(DATA, name, "golden_extended.jsonl.gz")
        with gzip.GzipFile(out, "wb", mtime=0) as f:
            for id_, _, text in lines:
                record = golden_record(tok, config, id_, text)
                f.write((json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode())
        print(name, os.path.getsize(out), "bytes")


if __name__ == "__main__":
    main()
