#!/usr/bin/env python3
"""Makes the GGUF Q4_0 that runtime_compare.py runs on llama.cpp, from the same HF checkpoint the other
engines are exported from: llama.cpp's own convert_hf_to_gguf.py (bf16, lossless for a bf16 checkpoint),
then llama.cpp's default Q4_0 recipe (llama_model_quantize), then a summary of the tensor types and the
bytes a decoded token reads (every tensor once: the tied embedding is also the output head).

Run it with an interpreter that has torch, transformers and sentencepiece (the converter needs them);
--llama-python names one with llama-cpp-python for the quantisation step:

  python3 bench/compare/make_gguf.py --checkpoint HF_DIR --llama-cpp-src LLAMA_CPP_DIR \
      --out M-q4_0.gguf --llama-python LLAMA_VENV/bin/python [--threads 2]

LLAMA_CPP_DIR is the llama.cpp tree vendored in the llama-cpp-python sdist (vendor/llama.cpp), so the
converter and gguf-py match the library that runs the benchmark.
"""
import argparse
import json
import os
import runpy
import subprocess
import sys


def gpt2_byte_level(checkpoint):
    # A tokenizer.json whose only pre-tokenizer is ByteLevel with its built-in regex splits text exactly
    # like llama.cpp's "gpt-2" pre-tokenizer (the GPT-2 pattern), whatever its vocabulary.
    path = os.path.join(checkpoint, "tokenizer.json")
    if not os.path.isfile(path):
        return False
    pre = json.load(open(path, encoding="utf-8")).get("pre_tokenizer") or {}
    return pre.get("type") == "ByteLevel" and pre.get("use_regex", True)


def convert(a, bf16_path):
    sys.path.insert(0, a.llama_cpp_src)
    sys.path.insert(1, os.path.join(a.llama_cpp_src, "gguf-py"))
    from conversion import base  # the vendored converter's model classes

    recognise = base.TextModel.get_vocab_base_pre

    def recognise_or_gpt2(self, tokenizer):
        # The converter knows pre-tokenizers by the hash of a test string's ids, i.e. by vocabulary; a
        # synthetic vocabulary has an unknown hash even when its pre-tokenizer is plain GPT-2 byte level.
        try:
            return recognise(self, tokenizer)
        except NotImplementedError:
            if gpt2_byte_level(a.checkpoint):
                print("make_gguf: unknown vocabulary hash, ByteLevel pre-tokenizer: using 'gpt-2'")
                return "gpt-2"
            raise

    base.TextModel.get_vocab_base_pre = recognise_or_gpt2
    sys.argv = ["convert_hf_to_gguf.py", a.checkpoint, "--outtype", "bf16", "--outfile", bf16_path]
    runpy.run_path(os.path.join(a.llama_cpp_src, "convert_hf_to_gguf.py"), run_name="__main__")


def quantize(src, dst, threads):
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_0
    params.nthread = threads
    if llama_cpp.llama_model_quantize(src.encode(), dst.encode(), params) != 0:
        sys.exit(f"make_gguf: llama_model_quantize failed on {src}")


def summary(path, llama_cpp_src):
    sys.path.insert(1, os.path.join(llama_cpp_src, "gguf-py"))
    import gguf

    reader = gguf.GGUFReader(path)
    types, tensor_bytes = {}, 0
    for t in reader.tensors:
        name = t.tensor_type.name
        types[name] = types.get(name, 0) + 1
        tensor_bytes += int(t.n_bytes)
        if t.name in ("token_embd.weight", "output.weight"):
            print(f"  {t.name}: {name} {list(map(int, t.shape))}, {t.n_bytes / 1e6:.1f} MB")
    print(f"  tensor types: {types}")
    print(f"  file {os.path.getsize(path) / 1e6:.1f} MB, tensors {tensor_bytes / 1e6:.1f} MB (bytes a token reads)")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", help="HF checkpoint directory (read only)")
    p.add_argument("--llama-cpp-src", help="llama.cpp source tree with convert_hf_to_gguf.py and gguf-py/")
    p.add_argument("--out", required=True, help="Q4_0 GGUF to write; the bf16 GGUF goes next to it")
    p.add_argument("--llama-python", default=sys.executable, help="interpreter with llama-cpp-python")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--quantize-from", help=argparse.SUPPRESS)  # internal: the --llama-python step
    a = p.parse_args()

    if a.quantize_from:
        quantize(a.quantize_from, a.out, a.threads)
        return
    if not (a.checkpoint and a.llama_cpp_src):
        p.error("--checkpoint and --llama-cpp-src are required")
    bf16_path = os.path.splitext(a.out)[0] + "-bf16.gguf"
    convert(a, bf16_path)
    subprocess.run([a.llama_python, os.path.abspath(__file__), "--out", a.out, "--threads", str(a.threads),
                    "--quantize-from", bf16_path], check=True)
    print(f"{a.out}:")
    summary(a.out, a.llama_cpp_src)


if __name__ == "__main__":
    main()
