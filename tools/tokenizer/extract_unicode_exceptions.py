#!/usr/bin/env python3
"""Where HF `tokenizers` and kiln's Unicode libraries disagree about a character, measured.

HF's Rust crates carry Unicode tables of different ages (unicode-normalization-alignments and
unicode_categories are several versions older than the std library's); kiln reads utf8proc. This
script asks PyPI `tokenizers` about every code point, compares with utf8proc (through ctypes, the
same shared library kiln links) and writes the differences as C++ range tables:

  normalization_opaque  code points HF's NFC/NFD/NFKC/NFKD tables do not know: kiln leaves them
                        untouched and normalizes the text between them separately
  punctuation_flips     Punctuation / BertPreTokenizer disagree with utf8proc's P* (+ ASCII)
  numeric_flips         Digits disagrees with utf8proc's Nd/Nl/No
  combining_mark_flips  StripAccents disagrees with utf8proc's M*
  bert_control_flips    BertNormalizer clean_text removal disagrees with utf8proc's Cc Cf Co Cs
  bert_mark_flips       BertNormalizer strip_accents disagrees with utf8proc's Mn
  lowercase_overrides   Lowercase gives another (single) code point than utf8proc

  python3 tools/tokenizer/extract_unicode_exceptions.py > src/tokenizer/hf_unicode_exceptions.inc
"""
import ctypes
import ctypes.util
import sys

import tokenizers
from tokenizers import normalizers, pre_tokenizers

U = ctypes.CDLL(ctypes.util.find_library("utf8proc") or "libutf8proc.so.2")
U.utf8proc_category.argtypes = [ctypes.c_int32]
U.utf8proc_tolower.argtypes = [ctypes.c_int32]
U.utf8proc_tolower.restype = ctypes.c_int32
U.utf8proc_version.restype = ctypes.c_char_p
for _name in ("utf8proc_NFC", "utf8proc_NFD", "utf8proc_NFKC", "utf8proc_NFKD"):
    getattr(U, _name).argtypes = [ctypes.c_char_p]
    getattr(U, _name).restype = ctypes.c_void_p
LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
LIBC.free.argtypes = [ctypes.c_void_p]
CATEGORIES = ["Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps",
              "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"]
CODE_POINTS = [c for c in range(1, 0x110000) if not 0xD800 <= c <= 0xDFFF]


def utf8proc(form, text):
    pointer = getattr(U, "utf8proc_" + form)(text.encode())
    result = ctypes.string_at(pointer).decode()
    LIBC.free(pointer)
    return result


def category(c):
    return CATEGORIES[U.utf8proc_category(c)]


def normalization_opaque():
    hf = {form: getattr(normalizers, form)() for form in ("NFC", "NFD", "NFKC", "NFKD")}
    probes = ["{}", "a{}\u0316", "a\u0316{}", "a\u0301{}"]  # also catches unknown combining classes
    opaque = []
    for c in CODE_POINTS:
        if category(c) == "Cn":
            continue
        for probe in probes:
            text = probe.format(chr(c))
            if any(n.normalize_str(text) != utf8proc(form, text) for form, n in hf.items()):
                opaque.append(c)
                break
    # Second halves of compositions HF does not know (both halves of a new script's vowel sign).
    known = set(opaque)
    for c in list(opaque):
        decomposed = utf8proc("NFD", chr(c))
        if len(decomposed) == 2 and hf["NFC"].normalize_str(decomposed) != utf8proc("NFC", decomposed):
            known.update(ord(x) for x in decomposed)
    return sorted(known)


def removed_by(pre_tokenizer):
    text = "".join(chr(c) for c in CODE_POINTS)
    kept = set()
    for _, (start, end) in pre_tokenizer.pre_tokenize_str(text):
        kept.update(range(start, end))
    return {CODE_POINTS[i] for i in range(len(CODE_POINTS)) if i not in kept}


def punctuation_flips():
    hf = removed_by(pre_tokenizers.Punctuation(behavior="removed"))
    def mine(c):
        if c < 0x80:
            return chr(c) in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
        return category(c)[0] == "P"
    return [c for c in CODE_POINTS if (c in hf) != mine(c)]


def numeric_flips():
    digits = pre_tokenizers.Digits(individual_digits=True)
    flips = []
    for c in CODE_POINTS:
        pieces = [p for p, _ in digits.pre_tokenize_str("x" + chr(c) + "x")]
        hf = len(pieces) == 3
        if hf != (category(c) in ("Nd", "Nl", "No")):
            flips.append(c)
    return flips


def combining_mark_flips():
    strip = normalizers.StripAccents()
    return [c for c in CODE_POINTS
            if (strip.normalize_str(chr(c)) == "") != (category(c) in ("Mn", "Mc", "Me"))]


def bert_control_flips():
    clean = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False,
                                       lowercase=False)
    flips = []
    for c in CODE_POINTS:
        hf_removed = clean.normalize_str(chr(c)) == ""
        mine = c == 0xFFFD or (chr(c) not in "\t\n\r" and category(c) in ("Cc", "Cf", "Co", "Cs"))
        if hf_removed != mine:
            flips.append(c)
    return flips


def bert_mark_flips():
    strip = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True,
                                       lowercase=False)
    flips = []
    for c in CODE_POINTS:
        if utf8proc("NFD", chr(c)) != chr(c):
            continue  # decomposed characters are covered by their parts
        if (strip.normalize_str(chr(c)) == "") != (category(c) == "Mn"):
            flips.append(c)
    return flips


def lowercase_overrides():
    lower = normalizers.Lowercase()
    out = []
    for c in CODE_POINTS:
        hf = lower.normalize_str(chr(c))
        mine = "i\u0307" if c == 0x130 else chr(U.utf8proc_tolower(c))
        if hf != mine:
            if len(hf) != 1:
                sys.exit("U+%04X lowercases to %d code points in HF; extend kiln" % (c, len(hf)))
            out.append((c, ord(hf)))
    return out


def ranges(code_points):
    out = []
    for c in code_points:
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def emit_ranges(name, code_points):
    rows = ranges(code_points)
    print("inline constexpr CodePointRange %s[] = {" % name)
    for i in range(0, len(rows), 4):
        print("    " + " ".join("{0x%04X, 0x%04X}," % (lo, hi) for lo, hi in rows[i:i + 4]))
    if not rows:
        print("    {0x110000, 0x110000},  // none")
    print("};")


def main():
    print("// Generated by tools/tokenizer/extract_unicode_exceptions.py from tokenizers %s and utf8proc %s;"
          % (tokenizers.__version__, U.utf8proc_version().decode()))
    print("// do not edit. Code points where HF's Unicode tables and utf8proc's disagree (see the script).")
    emit_ranges("kNormalizationOpaque", normalization_opaque())
    emit_ranges("kPunctuationFlips", punctuation_flips())
    emit_ranges("kNumericFlips", numeric_flips())
    emit_ranges("kCombiningMarkFlips", combining_mark_flips())
    emit_ranges("kBertControlFlips", bert_control_flips())
    emit_ranges("kBertMarkFlips", bert_mark_flips())
    print("inline constexpr std::pair<char32_t, char32_t> kLowercaseOverrides[] = {")
    for c, lower in lowercase_overrides():
        print("    {0x%04X, 0x%04X}," % (c, lower))
    print("};")


if __name__ == "__main__":
    main()
