#!/usr/bin/env python3
"""Token-mask goldens for kiln's grammar engine, made by xgrammar (PyPI) on real tokenizers.

For each tokenizer and each constraint (a JSON schema, a regex, a GBNF grammar, a choice, tags with
triggers), a seeded random walk picks allowed tokens one at a time; at every step the golden records the
allowed-token mask xgrammar computes (as the sha256 of its little-endian 32-bit words, and the
number of allowed tokens) and the token taken. kiln's test replays each walk and must compute
the same masks: xgrammar is the independent oracle.

    python3 -m venv VENV && VENV/bin/pip install xgrammar==0.2.9 transformers tokenizers
    VENV/bin/python tools/make_grammar_goldens.py --tokenizer qwen3=tests/data/tokenizers/qwen3 \
        --tokenizer llama3=FIXTURES/tokenizers/llama3 --out tests/data/grammar/mask_goldens.json

A folder may hold tokenizer.json.gz instead of tokenizer.json. Where kiln deliberately accepts
a different language than xgrammar, the constraint is left out here (see NOT_COMPARED), and where
xgrammar would let a token make the text invalid UTF-8 (it encodes the UTF-16 surrogates D800-DFFF
as if they were characters: after the byte ED it allows A0-BF; the free text around tags takes any
bytes), that token is taken out of its mask: kiln never lets the output stop being UTF-8. kiln also bounds a JSON number's digit runs (16, and
3 in the exponent, as llama.cpp does; xgrammar has no bound), so the walks keep numbers short: a
walk that has written 10 digits in a row takes a token without digits next.
"""
import argparse
import gzip
import hashlib
import json
import random
import shutil
import tempfile
from pathlib import Path

import numpy as np
import transformers
import xgrammar as xgr

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "score": {"type": "number"},
        "active": {"type": "boolean"},
    },
    "required": ["name", "age"],
}
TREE = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "required": ["value"],
        }
    },
    "$ref": "#/$defs/node",
}
CONSTRAINTS = [
    ("schema_person", "json_schema", json.dumps(PERSON)),
    ("schema_tree", "json_schema", json.dumps(TREE)),
    ("schema_enum", "json_schema", json.dumps({"enum": ["red", "green", 7, None, {"x": [1, 2]}]})),
    ("schema_any_of", "json_schema", json.dumps({"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 3}]})),
    ("schema_any_object", "json_schema", json.dumps({"type": "object"})),
    ("schema_any", "json_schema", json.dumps({})),
    ("schema_int_range", "json_schema", json.dumps({
        "type": "object",
        "properties": {"a": {"type": "integer", "minimum": -40, "maximum": 1234},
                       "b": {"type": "integer", "exclusiveMinimum": 7, "exclusiveMaximum": 100}},
        "required": ["a", "b"]})),
    ("regex_date", "regex", r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"),
    ("regex_email", "regex", r"[a-z0-9._]+@[a-z]+\.(com|org|net)"),
    ("regex_unicode", "regex", r"(héllo|日本語|[α-ω]+) ?[^a-z\n]{1,3}"),
    ("gbnf_arithmetic", "gbnf", 'root ::= expr\nexpr ::= term (("+" | "-") term)*\nterm ::= factor (("*" | "/") factor)*\n'
                                'factor ::= [0-9]+ | "(" expr ")"\n'),
    ("gbnf_list", "gbnf", 'root ::= "- " item ("\\n- " item){0,3}\nitem ::= [A-Za-z ]{1,12}\n'),
    ("choice", "choice", json.dumps(["positive", "negative", "neutral", "pos"])),
    # Hermes / Qwen tool calls (tool_choice auto): free text in which "<tool_call>" opens a call.
    ("tags_tool_calls", "tags", json.dumps({"triggers": ["<tool_call>"], "tags": [
        {"begin": '<tool_call>\n{"name": "' + name + '", "arguments": ', "schema": schema, "end": "}\n</tool_call>"}
        for name, schema in [("get_weather", json.dumps(PERSON)), ("get_time", '{"type": "object", "properties": {}}')]]})),
]
# How often a tags walk steers into a trigger instead of picking a token at random (free text
# would almost never write one by chance), and stops where it may (free text may stop anywhere).
TRIGGER_BIAS = 0.3
TAGS_STOP_CHANCE = 0.05
# Where kiln's language differs on purpose: xgrammar lets a length-limited string hold raw control
# characters, which JSON forbids; kiln keeps such strings valid JSON (checked by the jsonschema test).
# A bounded number: xgrammar cuts its fraction at 6 digits, kiln allows 16 (as an unbounded number's)
# and checks the bound on the exact digits (checked by json_schema_range_test).
NOT_COMPARED = {"minLength/maxLength strings", "number ranges"}


def load_tokenizer(folder: Path, scratch: Path):
    target = scratch / folder.name
    target.mkdir()
    for f in folder.iterdir():
        if f.name == "tokenizer.json.gz":
            (target / "tokenizer.json").write_bytes(gzip.decompress(f.read_bytes()))
        elif f.is_file():
            shutil.copy(f, target / f.name)
    return transformers.AutoTokenizer.from_pretrained(str(target))


def vocab_size_of(tokenizer) -> int:
    return max(tokenizer.get_vocab().values()) + 1


def compile_constraint(compiler, kind, source):
    if kind == "json_schema":
        return compiler.compile_json_schema(source, max_whitespace_cnt=20)  # kiln's bound
    if kind == "regex":
        return compiler.compile_regex(source)
    if kind == "gbnf":
        return compiler.compile_grammar(source)
    if kind == "tags":
        spec = json.loads(source)
        tags = [{"type": "tag", "begin": t["begin"], "end": t["end"],
                 "content": {"type": "json_schema", "json_schema": json.loads(t["schema"]), "max_whitespace_cnt": 20}}
                for t in spec["tags"]]
        return compiler.compile_structural_tag(json.dumps({"type": "structural_tag", "format": {
            "type": "triggered_tags", "triggers": spec["triggers"], "tags": tags}}))
    choices = json.loads(source)
    return compiler.compile_grammar("root ::= " + " | ".join(json.dumps(c) for c in choices))


def toward_trigger(text, triggers, candidates, decoded):
    """The longest candidate that writes more of a trigger (from the longest part of one the text
    ends in), or None."""
    best = None
    for trigger in triggers:
        trigger = trigger.encode()
        done = next(k for k in range(len(trigger), -1, -1) if text.endswith(trigger[:k]))
        rest = trigger[done:]
        for t in candidates:
            b = decoded[t]
            if b and rest.startswith(b) and (best is None or len(b) > len(decoded[best])):
                best = t
    return best


def incomplete_tail(data: bytes) -> bytes:
    """The trailing bytes of an unfinished UTF-8 character (b"" when the text ends on a boundary)."""
    for back in range(1, min(4, len(data)) + 1):
        lead = data[-back]
        if lead & 0xC0 != 0x80:
            need = 1 if lead < 0x80 else 2 if lead >> 5 == 6 else 3 if lead >> 4 == 14 else 4
            return data[-back:] if need > back else b""
    return b""


def breaks_utf8(tail: bytes, token: bytes, whole: bool = False) -> bool:
    """Whether tail + token stops being a prefix of valid UTF-8 (Unicode's table 3-7: no overlong
    forms, no surrogates, nothing past U+10FFFF); only the token's first 4 bytes unless whole."""
    data = tail + (token if whole else token[:4])
    need, low, high = 0, 0x80, 0xBF
    for b in data:
        if need:
            if not low <= b <= high:
                return True
            need, low, high = need - 1, 0x80, 0xBF
        elif b < 0x80:
            continue
        elif 0xC2 <= b <= 0xDF:
            need = 1
        elif 0xE0 <= b <= 0xEF:
            need, low, high = 2, (0xA0 if b == 0xE0 else 0x80), (0x9F if b == 0xED else 0xBF)
        elif 0xF0 <= b <= 0xF4:
            need, low, high = 3, (0x90 if b == 0xF0 else 0x80), (0x8F if b == 0xF4 else 0xBF)
        else:
            return True
    return False


def invalid_inside(token: bytes) -> bool:
    """Whether the token holds invalid UTF-8 whatever precedes it (its leading continuation bytes
    aside, which belong to the character before it)."""
    start = 0
    while start < len(token) and token[start] & 0xC0 == 0x80:
        start += 1
    return breaks_utf8(b"", token[start:], whole=True)


def walk(info, compiled, vocab_size, seed, max_steps, never, continuing, triggers=()):
    matcher = xgr.GrammarMatcher(compiled)
    rng = random.Random(seed)
    decoded = info.decoded_vocab
    stop_ids = set(info.stop_token_ids)
    words = (vocab_size + 31) // 32
    bitmask = np.zeros((1, words), dtype=np.int32)
    steps = []
    text = b""
    for _ in range(max_steps):
        if matcher.is_terminated():
            break
        matcher.fill_next_token_bitmask(bitmask)
        raw = bitmask[0].astype("<i4").tobytes()
        bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little")
        bits[never] = 0
        bits[vocab_size:] = 0  # the last word's padding (xgrammar sets it where all tokens are allowed)
        tail = incomplete_tail(text)
        if tail:
            for t in np.flatnonzero(bits[:vocab_size]):
                if int(t) not in stop_ids and breaks_utf8(tail, decoded[t]):
                    bits[t] = 0
        else:  # xgrammar's free text (tags' triggers) takes any bytes, a stray continuation byte too
            bits[continuing] = 0
        raw = np.packbits(bits, bitorder="little").tobytes()
        allowed = np.flatnonzero(bits[:vocab_size])
        if len(allowed) == 0:
            raise SystemExit(f"no token allowed after {text[-12:]!r} (tail {incomplete_tail(text)!r})")
        stops = sorted(stop_ids.intersection(allowed.tolist()))
        candidates = allowed.tolist()
        if len(text) - len(text.rstrip(b"0123456789")) >= 10:
            candidates = [t for t in candidates if not any(48 <= c <= 57 for c in decoded[t])] or candidates
        steer = None
        if triggers and rng.random() < TRIGGER_BIAS:
            steer = toward_trigger(text, triggers, candidates, decoded)
        # Half the time the shortest of a few allowed tokens, so walks reach the end of values.
        if steer is not None:
            token = steer
        elif stops and rng.random() < (TAGS_STOP_CHANCE if triggers else 0.4):
            token = int(stops[0])
        elif rng.random() < 0.5:
            sample = [int(t) for t in rng.sample(candidates, min(40, len(candidates)))]
            token = min(sample, key=lambda t: (len(decoded[t]), t))
        else:
            token = int(candidates[rng.randrange(len(candidates))])
        steps.append({"mask_sha256": hashlib.sha256(raw).hexdigest(), "allowed": int(len(allowed)), "token": token})
        assert matcher.accept_token(token)
        text += decoded[token]
    return {"steps": steps, "terminated": matcher.is_terminated()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokenizer", action="append", required=True, help="NAME=FOLDER")
    parser.add_argument("--out", required=True)
    parser.add_argument("--walks", type=int, default=3)
    parser.add_argument("--max-steps", type=int, default=48)
    args = parser.parse_args()
    result = {"xgrammar": "0.2.9", "tokenizers": []}
    with tempfile.TemporaryDirectory() as scratch:
        for spec in args.tokenizer:
            name, folder = spec.split("=", 1)
            tokenizer = load_tokenizer(Path(folder), Path(scratch))
            vocab_size = vocab_size_of(tokenizer)
            info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size)
            compiler = xgr.GrammarCompiler(info)
            never = [t for t, b in enumerate(info.decoded_vocab[:vocab_size])
                     if t not in info.stop_token_ids and invalid_inside(b)]
            continuing = [t for t, b in enumerate(info.decoded_vocab[:vocab_size]) if b and b[0] & 0xC0 == 0x80]
            cases = []
            for case_name, kind, source in CONSTRAINTS:
                print(f"{name}: {case_name}", flush=True)
                compiled = compile_constraint(compiler, kind, source)
                for w in range(args.walks):
                    cases.append({"name": case_name, "kind": kind, "source": source, "seed": w,
                                  **walk(info, compiled, vocab_size, seed=w, max_steps=args.max_steps, never=never, continuing=continuing,
                                         triggers=json.loads(source)["triggers"] if kind == "tags" else ())})
            result["tokenizers"].append({"name": name, "vocab_size": vocab_size,
                                         "stop_token_ids": sorted(int(t) for t in info.stop_token_ids), "cases": cases})
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
