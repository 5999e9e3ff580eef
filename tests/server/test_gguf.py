"""`kiln serve` on a GGUF file (llama.cpp's format) in place of a model directory: it tokenizes as
llama.cpp does on that file (tests/data/gguf/models/golden.json, made by llama.cpp itself) and
generates what `kiln run` generates from the same file (tested against transformers on the
weights the file defines); chat goes through the chat template the file carries.
"""

import json
import pathlib

import jsonschema
import pytest

from conftest import start_server
from serve_helpers import FINISH_SCHEMA, chat_schema, user

GGUF_DIR = pathlib.Path(__file__).resolve().parent.parent / "data" / "gguf" / "models"
GGUF = GGUF_DIR / "llama3_tiny.f16.gguf"
NAME = "tiny-gguf"


@pytest.fixture(scope="module")
def gguf_server():
    s = start_server(["--model", str(GGUF)], NAME)
    yield s
    s.stop_gracefully()


@pytest.fixture(scope="module")
def golden():
    return json.loads((GGUF_DIR / "golden.json").read_text())[GGUF.name]


def test_tokenizes_as_llama_cpp(gguf_server, golden):
    with gguf_server.http() as http:
        r = http.post("/tokenize", json={"model": NAME, "prompt": golden["prompt"]})
    assert r.status_code == 200, r.text
    assert r.json()["tokens"] == golden["prompt_ids"]


def test_greedy_completion_is_kiln_runs_on_the_file(gguf_server, kiln_cli, golden):
    with gguf_server.client() as client:
        r = client.completions.create(model=NAME, prompt=golden["prompt"], max_tokens=12, temperature=0,
                                      extra_body={"ignore_eos": True})
    assert r.choices[0].text == kiln_cli.greedy(golden["prompt"], 12, "--model", str(GGUF))
    assert r.usage.prompt_tokens == len(golden["prompt_ids"])
    assert r.usage.completion_tokens == 12


def test_chat_uses_the_files_template(gguf_server):
    with gguf_server.http() as http:
        r = http.post("/v1/chat/completions", json={"model": NAME, "messages": user("Hi there"), "max_tokens": 4,
                                                    "temperature": 0})
        assert r.status_code == 200, r.text
        message = {"type": "object", "required": ["role", "content"],
                   "properties": {"role": {"const": "assistant"}, "content": {"type": "string"}}}
        jsonschema.validate(r.json(), chat_schema(NAME, message, FINISH_SCHEMA))
        rendered = http.post("/tokenize", json={"model": NAME, "messages": user("Hi there"),
                                                "add_generation_prompt": True})
    assert rendered.status_code == 200, rendered.text
    assert r.json()["usage"]["prompt_tokens"] == rendered.json()["count"]
