#!/usr/bin/env python3
"""Record which strings Python's re.fullmatch (with re.ASCII) accepts and rejects for each
pattern below: the independent oracle kiln's regex front end and matcher are replayed against
(tests/grammar/regex_golden_test.cpp).

Invariant: every recorded verdict is re.fullmatch's own; the generator below only proposes
candidates (strings built by walking Python's parse of the pattern, their one-character
mutations, random strings, and the hand-picked ones listed with each pattern). Seeded, so the
file changes only when this script or the Python version's `re` does.

  python3 tools/make_regex_goldens.py            # writes tests/data/grammar/regex_goldens.json
"""
import argparse
import json
import os
import random
import re
import sys

try:  # the parser behind `re`; private, but only used to propose candidates
    import re._parser as sre_parse
    from re._constants import MAXREPEAT
except ImportError:  # Python < 3.11
    import sre_parse
    from sre_constants import MAXREPEAT

SEED = 20261205
NUM_WALKS = 40  # candidate strings built from the pattern's parse
NUM_MUTATIONS = 40  # one-character edits of accepted strings
NUM_RANDOM = 20  # strings over the alphabet
MAX_PER_VERDICT = 25  # accepted / rejected strings kept per pattern

# Characters random choices draw from: ASCII, controls, Latin-1, CJK, an astral emoji and
# the Unicode spaces and digits where re.ASCII classes differ from Unicode ones.
ALPHABET = ([chr(c) for c in range(0x20, 0x7F)] + ["\t", "\n", "\r", "\x0b", "\x0c", "\x00", "\x7f"] +
            ["\u00e9", "\u00a0", "\u0660", "\u4e2d", "\u2028", "\U0001F600", "\ufeff"])

# (pattern, hand-picked strings); Python `re` syntax only (kiln also takes (?<name>...)).
PATTERNS = [
    # Constructs, one at a time.
    ("", ["", "a"]),
    ("abc", ["abc", "ab", "abcd", "ABC"]),
    ("ab*c", ["ac", "abbbc", "abc", "a", "bc"]),
    ("a+b?c{2}d{1,3}e{2,}f{,2}", ["acceddeeff", "abccdee", "accdddee", "ccdee", "accddddee"]),
    ("a*?b+?c??d{2}?", ["bdd", "aabbcdd", "dd"]),
    ("x{,}y", ["y", "xxxy"]),
    ("{a}x{}y{,z}", ["{a}x{}y{,z}", "ax{}y"]),
    ("a|bc|", ["", "a", "bc", "b", "abc"]),
    ("((a|b)c)*", ["", "ac", "acbc", "abc", "c"]),
    ("x(?:y|z)?(?P<n>\\d{2})()", ["x12", "xy12", "xz99", "xyz12", "x1"]),
    (".", ["a", "\n", "\u00e9", "\U0001F600", "", "ab", "\r"]),
    (".+", ["abc", "a\nb", "\u4e2d\u6587"]),
    ("\\d+", ["0123", "\u0660", "12a", ""]),
    ("\\D\\w\\W\\s\\S", ["a_ -x", "1_ -x", "\u00e9a-\tb", "xa-\u00a0b", "x\u00e9-\tb"]),
    ("[a-z0-9_-]+", ["abc-1_", "ABC", "a b", "-"]),
    ("[^a-c]", ["d", "a", "\n", "\u00e9", "\U0001F600"]),
    ("[^\\d\\s]+", ["abc", "a1", "a b", "\u0660\u00a0"]),
    ("[\\D]", ["a", "5", "\u0660"]),
    ("[^\\W]", ["a", "_", "-", "\u00e9"]),
    ("[]a]+", ["]a]", "a", "b"]),
    ("[.*+?(){}|$^]+", [".*+?(){}|$^", "a"]),
    ("[\\]\\\\\\-\\b\\n\\x41]+", ["]\\-\b\nA", "B"]),
    ("\\.\\\\\\n\\t\\r\\f\\v\\a\\x41\\u00e9\\U0001F600\\-\\{\\*", [".\\\n\t\r\f\v\aA\u00e9\U0001F600-{*"]),
    ("\\0\\101\\07", ["\x00A\x07", "\x00A7"]),
    ("^abc$", ["abc", "abc\n", "xabc"]),
    ("^a$|^b$|c", ["a", "b", "c", "ab", ""]),
    ("\\Aab\\Z", ["ab", "ab\n"]),
    ("a(?#note)b", ["ab", "a(?#note)b"]),
    ("caf\u00e9|na\u00efve|\u4e2d\u6587+", ["caf\u00e9", "cafe", "na\u00efve", "\u4e2d\u6587\u6587"]),
    ("[\u00e0-\u00ff]{2}[\\u4e00-\\u9fff]", ["\u00e9\u00e0\u4e2d", "ee\u4e2d"]),
    ("[\\U0001F600-\\U0001F64F]+", ["\U0001F600\U0001F64F", "\U0001F650"]),
    ("a{0,3}b{3}", ["bbb", "aaabbb", "aaaabbb", "bb"]),
    # Patterns from structured-output requests and JSON schemas.
    ("^\\d{4}-\\d{2}-\\d{2}$", ["2024-01-31", "2024-1-31", "20240131", "2024-01-31 "]),
    ("^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$",
     ["john.doe@example.com", "a@b.co", "a@b.c", "john@", "@example.com", "j d@example.com"]),
    ("^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
     ["123e4567-e89b-12d3-a456-426614174000", "123e4567e89b12d3a456426614174000",
      "123e4567-e89b-12d3-a456-42661417400g"]),
    ("^\\+?1?[-. ]?\\(?\\d{3}\\)?[-. ]?\\d{3}[-. ]?\\d{4}$",
     ["+1 (555) 123-4567", "555.123.4567", "5551234567", "555-1234", "+44 20 7946 0958"]),
    ("^([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d)?$", ["00:00", "23:59:59", "24:00", "9:30", "12:60"]),
    ("^((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)$",
     ["192.168.0.1", "255.255.255.255", "256.1.1.1", "1.2.3", "01.2.3.4"]),
    ("^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)"
     "(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$",
     ["1.0.0", "1.0.0-alpha.1", "1.0.0+build.5", "01.0.0", "1.0", "1.0.0-"]),
    ("^#(?:[0-9a-fA-F]{3}){1,2}$", ["#fff", "#A0b1C2", "#ffff", "fff"]),
    ("^https?://[^\\s/$.?#].[^\\s]*$", ["https://example.com/a?b=c", "http://x.y", "ftp://x.y", "https:// x"]),
    ("^\\d{5}(-\\d{4})?$", ["12345", "12345-6789", "1234", "12345-678"]),
    ("^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$",
     ["2024-01-31T12:00:00Z", "2024-01-31T12:00:00.123+05:30", "2024-01-31 12:00:00Z", "2024-01-31T12:00:00"]),
    ("^[a-z0-9]+(?:-[a-z0-9]+)*$", ["hello-world-2", "hello--world", "-hello", "Hello"]),
    ("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?", ["0", "-1.5e+10", "01", "1.", ".5", "1e5"]),
    ("\\w+@\\w+\\.com\\n", ["alice@example.com\n", "alice@example.com", "a.b@example.com\n"]),
    ("(Paris|London|Berlin)", ["Paris", "London", "Berlin", "Rome", "ParisLondon"]),
    ("[A-Z]{3}-\\d{3,4}", ["ABC-123", "ABC-1234", "AB-123", "ABC-12345"]),
    ("\\d+(\\.\\d{1,2})?", ["10", "10.5", "10.55", "10.555", ".5"]),
    ("(?P<year>\\d{4})-(?P<month>0[1-9]|1[0-2])", ["2024-01", "2024-12", "2024-13", "2024-00"]),
    ("^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$", ["a@b.c", "a@@b.c", "a b@c.d"]),
    ("^\\$?\\d{1,3}(,\\d{3})*(\\.\\d{2})?$", ["$1,234.56", "1234", "12,34", "$0.99"]),
    ("^[A-Z]{2}\\d{2}[A-Z0-9]{1,30}$", ["GB82WEST12345698765432", "gb82WEST", "GB8"]),
    ("^(\\([0-9]{3}\\) |[0-9]{3}-)[0-9]{3}-[0-9]{4}$", ["(888) 555-1212", "888-555-1212", "(888)555-1212"]),
    ("^[a-zA-Z_][a-zA-Z0-9_]*$", ["_private", "x1", "1x", ""]),
    ("\\{\"name\": \"[A-Za-z ]+\", \"age\": \\d+\\}",
     ['{"name": "Ada Lovelace", "age": 36}', '{"name": "", "age": 36}']),
]


def category_chars(category):
    """The ASCII members of an sre category (re.ASCII meanings) and whether it is negated."""
    digit = [chr(c) for c in range(0x30, 0x3A)]
    word = digit + [chr(c) for c in range(0x41, 0x5B)] + [chr(c) for c in range(0x61, 0x7B)] + ["_"]
    space = [" ", "\t", "\n", "\r", "\x0b", "\x0c"]
    name = str(category)
    for key, members in (("DIGIT", digit), ("WORD", word), ("SPACE", space)):
        if key in name:
            return members, "NOT_" in name
    raise ValueError(f"unexpected category {name}")


def random_code_point(rng, lo, hi):
    while True:
        c = rng.randint(lo, hi)
        if not 0xD800 <= c <= 0xDFFF:
            return chr(c)


def char_from_set(rng, items):
    """A character an IN node matches (or, negated, does not), by sampling."""
    negated = any(str(op) == "NEGATE" for op, _ in items)
    items = [(op, av) for op, av in items if str(op) != "NEGATE"]
    if negated:
        # Draw from the alphabet until one is outside the set; the verdict is re's anyway.
        for _ in range(100):
            c = rng.choice(ALPHABET)
            if not set_contains(items, c):
                return c
        return rng.choice(ALPHABET)
    op, av = rng.choice(items)
    op = str(op)
    if op == "LITERAL":
        return chr(av)
    if op == "RANGE":
        return random_code_point(rng, av[0], av[1])
    if op == "CATEGORY":
        members, negated_category = category_chars(av)
        if negated_category:
            return rng.choice([c for c in ALPHABET if c not in members])
        return rng.choice(members)
    raise ValueError(f"unexpected set item {op}")


def set_contains(items, c):
    for op, av in items:
        op = str(op)
        if op == "LITERAL" and ord(c) == av:
            return True
        if op == "RANGE" and av[0] <= ord(c) <= av[1]:
            return True
        if op == "CATEGORY":
            members, negated_category = category_chars(av)
            if (c in members) != negated_category:
                return True
    return False


def walk(rng, nodes):
    """A string built by taking random choices through a parsed pattern."""
    out = []
    for op, av in nodes:
        op = str(op)
        if op == "LITERAL":
            out.append(chr(av))
        elif op == "NOT_LITERAL":
            out.append(rng.choice([c for c in ALPHABET if ord(c) != av]))
        elif op == "ANY":
            out.append(rng.choice([c for c in ALPHABET if c != "\n"]))
        elif op == "IN":
            out.append(char_from_set(rng, av))
        elif op == "CATEGORY":
            out.append(char_from_set(rng, [("CATEGORY", av)]))
        elif op == "BRANCH":
            out.append(walk(rng, rng.choice(av[1])))
        elif op == "SUBPATTERN":
            out.append(walk(rng, av[-1]))
        elif op in ("MAX_REPEAT", "MIN_REPEAT"):
            lo, hi, sub = av
            top = lo + 3 if hi == MAXREPEAT else min(hi, lo + 3)
            out.extend(walk(rng, sub) for _ in range(rng.randint(lo, top)))
        elif op == "AT":
            pass
        else:
            raise ValueError(f"unexpected node {op}")
    return "".join(out)


def mutate(rng, s):
    i = rng.randint(0, len(s))
    kind = rng.choice(("insert", "delete", "replace") if s else ("insert",))
    if kind == "insert":
        return s[:i] + rng.choice(ALPHABET) + s[i:]
    i = min(i, len(s) - 1)
    if kind == "delete":
        return s[:i] + s[i + 1:]
    return s[:i] + rng.choice(ALPHABET) + s[i + 1:]


def goldens_for(index, pattern, hand_picked):
    rng = random.Random(SEED + index)
    compiled = re.compile(pattern, re.ASCII)
    parsed = sre_parse.parse(pattern, re.ASCII)
    candidates = list(hand_picked)
    candidates += [walk(rng, parsed) for _ in range(NUM_WALKS)]
    walked = [s for s in candidates if compiled.fullmatch(s)] or [""]
    candidates += [mutate(rng, rng.choice(walked)) for _ in range(NUM_MUTATIONS)]
    candidates += ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 8))) for _ in range(NUM_RANDOM)]
    accept, reject = [], []
    for s in dict.fromkeys(candidates):  # unique, first occurrence order
        verdict = accept if compiled.fullmatch(s) else reject
        if len(verdict) < MAX_PER_VERDICT:
            verdict.append(s)
    return {"pattern": pattern, "accept": accept, "reject": reject}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_out = os.path.join(here, "..", "tests", "data", "grammar", "regex_goldens.json")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=default_out)
    args = parser.parse_args()
    cases = [goldens_for(i, p, picked) for i, (p, picked) in enumerate(PATTERNS)]
    document = {
        "generator": "tools/make_regex_goldens.py",
        "oracle": f"re.fullmatch(pattern, s, re.ASCII), Python {sys.version.split()[0]}",
        "seed": SEED,
        "cases": cases,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=1, ensure_ascii=True)
        f.write("\n")
    total = sum(len(c["accept"]) + len(c["reject"]) for c in cases)
    print(f"{args.out}: {len(cases)} patterns, {total} strings")


if __name__ == "__main__":
    main()
