#!/usr/bin/env python3
"""The varied corpus the extended tokenizer goldens are computed on (deterministic, seeded).

Categories: a line of words for every Unicode block with letters (every script utf8proc's
tables know), emoji ZWJ / skin-tone / flag / keycap / tag
sequences, NFD and NFKC-sensitive text, whitespace runs of every kind, code, numbers in many
scripts, contractions (with the case-folding traps ſ and K), special-token strings inside text,
long runs, Latin-1 noise and random mixtures of all of these.

  python3 tools/tokenizer/corpus.py --out tests/data/tokenizers/extended_corpus.jsonl.gz
"""
import argparse
import ctypes
import ctypes.util
import gzip
import json
import random
import unicodedata

# Only code points utf8proc (kiln's Unicode tables) knows; code points assigned later are
# unknown to kiln and may classify differently from HF's newest tables (docs/TOKENIZER.md).
_UTF8PROC = ctypes.CDLL(ctypes.util.find_library("utf8proc") or "libutf8proc.so.2")
_UTF8PROC.utf8proc_category.argtypes = [ctypes.c_int32]


def is_old(cp):
    return _UTF8PROC.utf8proc_category(cp) != 0  # 0 is Cn, unassigned


def assigned_letters(lo, hi):
    out = []
    for cp in range(lo, hi + 1):
        if 0xD800 <= cp <= 0xDFFF or not is_old(cp):
            continue
        cat = unicodedata.category(chr(cp))
        if cat[0] in "LMN" and cat != "Cn":
            out.append(chr(cp))
    return out


def script_lines(rng):
    """One line of pseudo-words per 256-code-point block with at least 8 letters, at most three
    blocks per script (named by the first word of the letters' names: LATIN, CJK, HANGUL...)."""
    lines = []
    per_script = {}
    for lo in range(0, 0x30000, 0x100):
        letters = assigned_letters(lo, lo + 0xFF)
        if len(letters) < 8:
            continue
        script = unicodedata.name(letters[len(letters) // 2], "?").split()[0]
        per_script[script] = per_script.get(script, 0) + 1
        if per_script[script] > 3:
            continue
        words = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 8))) for _ in range(8)]
        seps = [" ", " ", " ", ", ", ". ", "\n", "  ", "\u00a0"]
        text = words[0] + "".join(rng.choice(seps) + w for w in words[1:])
        lines.append(("script_%05X" % lo, "script", text))
    return lines


EMOJI = [
    "👨‍👩‍👧‍👦", "👩🏽‍💻", "🏳️‍🌈", "🏴‍☠️", "🧑🏿‍🤝‍🧑🏻", "👍🏻👍🏼👍🏽👍🏾👍🏿", "🇺🇸🇯🇵🇩🇪🇧🇷", "🏴󠁧󠁢󠁥󠁮󠁧󠁿",
    "1️⃣ 2️⃣ #️⃣ *️⃣", "❤️‍🔥", "🤷‍♂️", "👁️‍🗨️", "😀😃😄😁", "🫠🫡🫢", "☺︎ ☺️", "©️®️™️",
]

CODE = [
    "#include <vector>\nint main() {\n    std::vector<int> v{1, 2, 3};\n    return v[0] + v.size();\n}\n",
    "def f(x):\n\tif x is None:\n\t\treturn {'a': [1, 2.5e-3]}\n\treturn x ** 2  # square\n",
    "fn main() { let s: &str = \"héllo\"; println!(\"{s:?} {}\", s.len()); }",
    "SELECT u.id, COUNT(*) AS n FROM users u JOIN orders o ON o.uid = u.id GROUP BY u.id;",
    "<div class=\"a\"><p>&lt;b&gt; &amp; &#x1F600;</p></div>",
    "const f = async (a, b) => { await g?.(a ?? b); return `${a}${b}`; };",
    "\\begin{equation} \\int_0^\\infty e^{-x^2} dx = \\frac{\\sqrt{\\pi}}{2} \\end{equation}",
    "{\"key\": [true, false, null], \"n\": -0.0e+10, \"s\": \"\\u00e9\\n\"}",
    "ls -la ~/.config | grep -E '^d.*\\.(json|ya?ml)$' >> /tmp/out.txt 2>&1",
    "x+=1;y-=2;z*=3;w/=4;a<<=1;b>>=2;c&&d||e;f!==g;h===i;j<=>k;",
    "    indented\n        more\n\t\ttabs\n  \t mixed\n",
]

NUMBERS = [
    "0 1 12 123 1234 12345 123456 1234567 12345678 123456789 1234567890",
    "3.14159 -42 +7 1,000,000 1e-10 0x1F 0b1010 100% $1,234.56 €9,99 ¥1000",
    "٠١٢٣٤٥٦٧٨٩ ۰۱۲۳ १२३४५ ০১২৩ ๐๑๒๓ ０１２３ ①②③ ⅠⅡⅢⅣ ²³¹ ¼½¾ 𝟘𝟙𝟚",
    "2024-01-15T10:30:00Z 10:30 1/2/2024 v1.2.3-beta.4+build.5",
    "99999999999999999999999999999999999999999999999999999999",
]

CONTRACTIONS = [
    "'s 't 're 've 'm 'll 'd 'S 'T 'RE 'VE 'M 'LL 'D",
    "it'ſ the caſe 'ſ 'K 'k — don't won't y'all o'clock rock 'n' roll",
    "He's sure it's odd, they're here, we've won, I'm in, you'll see, he'd go.",
    "it’s don’t they’re ‘quoted’ «guillemets» „Anführung“",
]

WHITESPACE = [
    " ", "  ", "\t", "\n", "\r\n", "\r", "\n\n\n", " \n \n ", "\t\t \t",
    "a\u00a0b\u2000c\u2001d\u2002e\u2003f\u2009g\u200ah\u202fi\u205fj\u3000k",
    "a\u180eb\u200bc\u200cd\u200de\ufefff\u0085g\u2028h\u2029i\u000bj\u000ck",
    "end of line   \nnext   \r\n  last  ",
]


def nfd_lines():
    base = ["café naïve résumé Ångström Zürich Straße", "Tiếng Việt có dấu: Hà Nội, Đà Nẵng",
            "한국어 토큰화 테스트", "Ça va? Où êtes-vous? Ñandú pingüino", "ﬁ ﬂ ﬀ Ⅻ ㎏ ＡＢＣ ｶﾀｶﾅ ½ ²"]
    out = []
    for i, s in enumerate(base):
        for form in ("NFC", "NFD", "NFKC", "NFKD"):
            out.append(("norm_%d_%s" % (i, form.lower()), "normalization", unicodedata.normalize(form, s)))
    out.append(("norm_combining_runs", "normalization", "a\u0301\u0301\u0301 Z\u0337\u0327a\u0336l\u0335 \u0308x \u0301"))
    out.append(("norm_dotted_i", "normalization", "İstanbul İİ ıi ΣΑΣ σας ẞ ß ǅ ǈ"))
    return out


def special_lines(specials):
    out = []
    for i, tok in enumerate(specials):
        for j, fmt in enumerate(["{t}", "x{t}y", " {t} ", "a {t}\n{t}{t} b", "{t}Hello", "  {t}  end",
                                 "pre{t}", "{t}." , "word {t}word"]):
            out.append(("special_%02d_%d" % (i, j), "special_text", fmt.format(t=tok)))
    out.append(("special_near_miss", "special_text", "<|im_start <s > < /s> <|endoftext| |eot_id|> <0x41>"))
    return out


def mixed_lines(rng, pool, count):
    out = []
    for i in range(count):
        parts = [rng.choice(pool) for _ in range(rng.randint(2, 6))]
        out.append(("mixed_%03d" % i, "mixed", rng.choice(["", " ", "\n", "  "]).join(parts)))
    return out


def build(specials, seed=20240601):
    rng = random.Random(seed)
    lines = [("empty", "edge", ""), ("one_space", "edge", " "), ("one_char", "edge", "a")]
    lines += script_lines(rng)
    lines += [("emoji_%02d" % i, "emoji", s) for i, s in enumerate(EMOJI)]
    lines += [("code_%02d" % i, "code", s) for i, s in enumerate(CODE)]
    lines += [("numbers_%02d" % i, "numbers", s) for i, s in enumerate(NUMBERS)]
    lines += [("contraction_%02d" % i, "contractions", s) for i, s in enumerate(CONTRACTIONS)]
    lines += [("whitespace_%02d" % i, "whitespace", s) for i, s in enumerate(WHITESPACE)]
    lines += nfd_lines()
    lines += special_lines(specials)
    lines += [
        ("run_spaces_300", "runs", "x" + " " * 300 + "y"),
        ("run_newlines_200", "runs", "\n" * 200),
        ("run_letters_1000", "runs", "ab" * 500),
        ("run_digits_500", "runs", "7" * 500),
        ("run_punct_400", "runs", "!?" * 200),
        ("run_mixed_ws", "runs", (" \t\n\u3000" * 50) + "z"),
        ("latin1_noise", "bytes", "".join(chr(c) for c in range(0xA0, 0x100)) + " ÿþý"),
        ("controls", "bytes", "a\x00b\x01\x02\x1b[31mred\x1b[0m\x7f\ufffd\ue000\uf8ff"),
        ("marker_chars", "bytes", "Ġ Ċ ▁ Ā ##a a</w> <0x0A> <0xFF> <unk>"),
    ]
    pool = [t for _, _, t in lines if 0 < len(t) < 200]
    lines += mixed_lines(rng, pool, 120)
    return lines


DEFAULT_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>",
                    "<s>", "</s>", "<unk>", "<|begin_of_text|>", "<|eot_id|>", "<mask>", "[CLS]",
                    "[SEP]", "hello_sw"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    with gzip.GzipFile(args.out, "wb", mtime=0) as f:
        for id_, category, text in build(DEFAULT_SPECIALS):
            f.write((json.dumps({"id": id_, "category": category, "text": text}, ensure_ascii=False) + "\n").encode())


if __name__ == "__main__":
    main()
