"""`kiln serve` on an OpenVINO IR directory as optimum-cli exports it: it tokenizes as OpenVINO
GenAI did on that directory (tests/data/openvino/models/golden.json, made by OpenVINO itself) and
generates what `kiln run` generates from it (tested against OpenVINO's logits and GenAI's greedy
tokens in the C++ suite).
"""

import json
import pathlib

import pytest

from conftest import start_server

MODELS = pathlib.Path(__file__).resolve().parent.parent / "data" / "openvino" / "models"
MODEL = "llama3_tiny-int4-sym-g32"
NAME = "tiny-openvino"


@pytest.fixture(scope="module")
def openvino_server():
    s = start_server(["--model", str(MODELS / MODEL)], NAME)
    yield s
    s.stop_gracefully()


@pytest.fixture(scope="module")
def golden():
    return json.loads((MODELS / "golden.json").read_text())[MODEL]


def test_tokenizes_as_openvino_genai(openvino_server, golden):
    with openvino_server.http() as http:
        r = http.post("/tokenize", json={"model": NAME, "prompt": golden["prompt"]})
    assert r.status_code == 200, r.text
    assert r.json()["tokens"] == golden["prompt_ids"]


def test_greedy_completion_is_kiln_runs_on_the_directory(openvino_server, kiln_cli, golden):
    with openvino_server.client() as client:
        r = client.completions.create(model=NAME, prompt=golden["prompt"], max_tokens=16, temperature=0,
                                      extra_body={"ignore_eos": True})
    assert r.choices[0].text == kiln_cli.greedy(golden["prompt"], 16, "--model", str(MODELS / MODEL))
    assert r.usage.prompt_tokens == len(golden["prompt_ids"])
    assert r.usage.completion_tokens == 16
