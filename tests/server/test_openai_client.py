"""Black-box tests of `kiln serve` through the official OpenAI Python client and raw HTTP.

The server is judged only from outside, by oracles that do not share its code paths: the openai
client's own parsing of every response, JSON schemas of the OpenAI shapes, `kiln run` (already
tested) for the greedy text a prompt must produce, and `kiln tokenize`/`detokenize`/`template`
for token ids. The embedded model is tiny (512-token context, well under a millisecond a token),
so every request is short; there is no per-test timeout, so every HTTP call carries its own.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import jsonschema
import openai
import pytest

if not os.environ.get("KILN_BINARY"):
    pytest.skip("KILN_BINARY is not set: it must name the kiln binary whose `serve` these tests start",
                allow_module_level=True)

from conftest import (MODEL_NAME, SMALL_MAX_BODY_BYTES, SMALL_MAX_TOKENS_LIMIT, child_env,  # noqa: E402
                      kiln_binary, start_server)

CONTEXT = 512
PROMPTS = ["Q: What does mmap do?\nA:", "Hello world", "The quick brown fox", "int main(void) {\n"]

# --- Schemas of the OpenAI shapes the contract promises -------------------------------------

_USAGE = {
    "type": "object",
    "required": ["prompt_tokens", "completion_tokens", "total_tokens"],
    "properties": {k: {"type": "integer", "minimum": 0}
                   for k in ("prompt_tokens", "completion_tokens", "total_tokens")},
}
_FINISH = {"enum": ["stop", "length"]}

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {
        "type": "object",
        "required": ["message", "type", "param", "code"],
        "properties": {
            "message": {"type": "string", "minLength": 1},
            "type": {"type": "string", "minLength": 1},
            "param": {"type": ["string", "null"]},
            "code": {"type": ["string", "integer", "null"]},
        },
    }},
}

MODELS_SCHEMA = {
    "type": "object",
    "required": ["object", "data"],
    "properties": {
        "object": {"const": "list"},
        "data": {"type": "array", "minItems": 1, "maxItems": 1, "items": {
            "type": "object",
            "required": ["id", "object", "created", "owned_by", "max_model_len"],
            "properties": {
                "id": {"const": MODEL_NAME},
                "object": {"const": "model"},
                "created": {"type": "integer"},
                "owned_by": {"const": "kiln"},
                "max_model_len": {"const": CONTEXT},
            },
        }},
    },
}

COMPLETION_SCHEMA = {
    "type": "object",
    "required": ["id", "object", "created", "model", "choices", "usage"],
    "properties": {
        "id": {"type": "string", "pattern": "^cmpl-."},
        "object": {"const": "text_completion"},
        "created": {"type": "integer"},
        "model": {"const": MODEL_NAME},
        "choices": {"type": "array", "minItems": 1, "items": {
            "type": "object",
            "required": ["index", "text", "finish_reason"],
            "properties": {"index": {"type": "integer", "minimum": 0}, "text": {"type": "string"},
                           "finish_reason": _FINISH},
        }},
        "usage": _USAGE,
    },
}

CHAT_SCHEMA = {
    "type": "object",
    "required": ["id", "object", "created", "model", "choices", "usage"],
    "properties": {
        "id": {"type": "string", "pattern": "^chatcmpl-."},
        "object": {"const": "chat.completion"},
        "created": {"type": "integer"},
        "model": {"const": MODEL_NAME},
        "choices": {"type": "array", "minItems": 1, "items": {
            "type": "object",
            "required": ["index", "message", "finish_reason"],
            "properties": {
                "index": {"type": "integer", "minimum": 0},
                "message": {"type": "object", "required": ["role", "content"],
                            "properties": {"role": {"const": "assistant"}, "content": {"type": "string"}}},
                "finish_reason": _FINISH,
            },
        }},
        "usage": _USAGE,
    },
}

CHAT_CHUNK_SCHEMA = {
    "type": "object",
    "required": ["id", "object", "created", "model", "choices"],
    "properties": {
        "id": {"type": "string", "pattern": "^chatcmpl-."},
        "object": {"const": "chat.completion.chunk"},
        "model": {"const": MODEL_NAME},
        "choices": {"type": "array", "items": {
            "type": "object", "required": ["index", "delta"],
            "properties": {"index": {"type": "integer"}, "delta": {"type": "object"},
                           "finish_reason": {"enum": ["stop", "length", None]}},
        }},
    },
}

COMPLETION_CHUNK_SCHEMA = {
    "type": "object",
    "required": ["id", "object", "created", "model", "choices"],
    "properties": {
        "id": {"type": "string", "pattern": "^cmpl-."},
        "object": {"const": "text_completion"},
        "model": {"const": MODEL_NAME},
        "choices": {"type": "array", "items": {
            "type": "object", "required": ["index", "text"],
            "properties": {"index": {"type": "integer"}, "text": {"type": "string"},
                           "finish_reason": {"enum": ["stop", "length", None]}},
        }},
    },
}

TOKENIZE_SCHEMA = {
    "type": "object",
    "required": ["tokens", "count", "max_model_len"],
    "properties": {"tokens": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                   "count": {"type": "integer"}, "max_model_len": {"const": CONTEXT}},
}


# --- Helpers ----------------------------------------------------------------------------------

def greedy_completion(client: openai.OpenAI, prompt, max_tokens: int, **kw):
    extra = {"ignore_eos": True, **kw.pop("extra_body", {})}
    return client.completions.create(model=MODEL_NAME, prompt=prompt, max_tokens=max_tokens, temperature=0,
                                     extra_body=extra, **kw)


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def assert_error(r: httpx.Response, status: int, names: str | None = None) -> dict:
    """The response is an OpenAI error object with this status; its message names `names`."""
    assert r.status_code == status, f"expected {status}, got {r.status_code}: {r.text[:500]}"
    try:
        body = r.json()
    except ValueError:
        pytest.fail(f"error body is not JSON: {r.text[:500]!r}")
    jsonschema.validate(body, ERROR_SCHEMA)
    if names is not None:
        err = body["error"]
        assert names in err["message"], f"the error message should name {names!r}: {err}"
    return body["error"]


def read_sse(r: httpx.Response) -> list[dict]:
    """Checks the SSE framing of a whole streamed body; returns the JSON payloads before [DONE]."""
    assert r.status_code == 200, r.read()[:500]
    assert r.headers["content-type"].startswith("text/event-stream"), r.headers["content-type"]
    body = r.read().decode("utf-8")
    assert body.endswith("data: [DONE]\n\n"), f"stream does not end with [DONE]: {body[-200:]!r}"
    events = body.split("\n\n")[:-1]
    assert events[-1] == "data: [DONE]"
    payloads = []
    for e in events[:-1]:
        assert e.startswith("data: "), f"not an SSE data event: {e[:200]!r}"
        payloads.append(json.loads(e[len("data: "):]))
    return payloads


def parse_metrics(text: str) -> list[tuple[str, dict, float]]:
    samples = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$", line)
        assert m, f"not a Prometheus sample line: {line!r}"
        labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        samples.append((m.group(1), labels, float(m.group(3))))
    return samples


def metric(samples, name: str, **labels) -> float:
    """The value of a metric, summed over its series that carry `labels`."""
    found = [v for n, ls, v in samples if n == name and all(ls.get(k) == w for k, w in labels.items())]
    assert found, f"metric {name} {labels or ''} missing"
    return sum(found)


def get_metrics(server) -> list:
    r = httpx.get(server.url + "/metrics", timeout=10)
    assert r.status_code == 200, r.text[:500]
    return parse_metrics(r.text)


def wait_for_metrics(server, pred, timeout: float = 5.0, what: str = "") -> list:
    deadline = time.monotonic() + timeout
    while True:
        m = get_metrics(server)
        if pred(m):
            return m
        if time.monotonic() > deadline:
            summary = {n: v for n, _, v in m if n in ("kiln:num_requests_running", "kiln:num_requests_waiting",
                                                       "kiln:kv_cache_usage_perc")}
            pytest.fail(f"metrics did not reach {what} within {timeout} s: {summary}")
        time.sleep(0.05)


def idle(m) -> bool:
    return (metric(m, "kiln:num_requests_running") == 0 and metric(m, "kiln:num_requests_waiting") == 0
            and metric(m, "kiln:kv_cache_usage_perc") == 0)


@pytest.fixture(scope="module")
def client(server):
    c = server.client()
    yield c
    c.close()


@pytest.fixture(scope="module")
def http(server):
    with server.http() as c:
        yield c


# --- Command line, authentication and discovery ----------------------------------------------

SERVE_FLAGS = ["--model", "--host", "--port", "--api-key", "--served-model-name", "--max-waiting",
               "--max-body-bytes", "--max-tokens-limit", "--max-num-seqs", "--cache-size"]


def test_serve_help_lists_the_documented_flags():
    p = subprocess.run([kiln_binary(), "serve", "--help"], capture_output=True, env=child_env(), timeout=30)
    assert p.returncode == 0, p.stderr
    text = p.stdout.decode()
    missing = [f for f in SERVE_FLAGS if not re.search(r"^\s+(?:-\w,)?" + re.escape(f) + r"(?![\w-])", text, re.M)]
    assert not missing, f"kiln serve --help does not offer {missing}"


V1_ROUTES = [("GET", "/v1/models", None),
             ("POST", "/v1/chat/completions", {"model": MODEL_NAME, "messages": user("hi"), "max_tokens": 2}),
             ("POST", "/v1/completions", {"model": MODEL_NAME, "prompt": "hi", "max_tokens": 2})]


@pytest.mark.parametrize("method,path,body", V1_ROUTES)
@pytest.mark.parametrize("header", [None, "Bearer wrong-key", "test-key", "Basic dGVzdC1rZXk="])
def test_v1_routes_require_the_api_key(server, method, path, body, header):
    headers = {"Authorization": header} if header else {}
    r = httpx.request(method, server.url + path, json=body, headers=headers, timeout=30)
    err = assert_error(r, 401)
    assert err["type"] == "invalid_request_error"
    assert err["param"] is None
    assert err["code"] == "invalid_api_key"


def test_openai_client_with_a_wrong_key_gets_authentication_error(server):
    with server.client(api_key="not-the-key") as c:
        with pytest.raises(openai.AuthenticationError) as e:
            c.models.list()
    assert e.value.status_code == 401
    assert e.value.code == "invalid_api_key"


def test_operational_routes_need_no_key(server, kiln_cli):
    assert httpx.get(server.url + "/health", timeout=10).status_code == 200
    assert httpx.get(server.url + "/metrics", timeout=10).status_code == 200
    r = httpx.post(server.url + "/tokenize", json={"prompt": "Hello world"}, timeout=10)
    assert r.status_code == 200, r.text
    r = httpx.post(server.url + "/detokenize", json={"tokens": kiln_cli.tokenize("Hello", special=False)}, timeout=10)
    assert r.status_code == 200, r.text


def test_models_list(http, client):
    r = http.get("/v1/models")
    assert r.status_code == 200, r.text
    jsonschema.validate(r.json(), MODELS_SCHEMA)
    models = client.models.list()
    assert [m.id for m in models.data] == [MODEL_NAME]
    assert models.data[0].owned_by == "kiln"


# --- Completions: greedy text against `kiln run` ---------------------------------------------

@pytest.mark.parametrize("prompt", PROMPTS)
def test_completion_greedy_matches_kiln_run(client, kiln_cli, prompt):
    n = 24
    r = greedy_completion(client, prompt, n)
    assert r.choices[0].text == kiln_cli.greedy(prompt, n)
    assert r.choices[0].finish_reason == "length"
    assert r.usage.completion_tokens == n
    assert r.usage.prompt_tokens == len(kiln_cli.tokenize(prompt))


def test_completion_response_shape(http, kiln_cli):
    prompt = PROMPTS[0]
    r = http.post("/v1/completions", json={"model": MODEL_NAME, "prompt": prompt, "max_tokens": 8,
                                           "temperature": 0, "ignore_eos": True})
    assert r.status_code == 200, r.text
    body = r.json()
    jsonschema.validate(body, COMPLETION_SCHEMA)
    assert r.headers["content-type"].startswith("application/json")
    assert len(body["choices"]) == 1 and body["choices"][0]["index"] == 0
    u = body["usage"]
    assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"]
    assert u["prompt_tokens"] == len(kiln_cli.tokenize(prompt)) and u["completion_tokens"] == 8


def test_completion_prompt_as_token_ids_matches_text(client, kiln_cli):
    prompt = PROMPTS[1]
    text = greedy_completion(client, prompt, 16).choices[0].text
    ids = kiln_cli.tokenize(prompt)
    r = greedy_completion(client, ids, 16)
    assert r.choices[0].text == text
    assert r.usage.prompt_tokens == len(ids)


def test_completion_prompt_lists_give_one_choice_each(client, kiln_cli):
    a, b = PROMPTS[0], PROMPTS[2]
    want = [kiln_cli.greedy(a, 12), kiln_cli.greedy(b, 12)]
    for prompt in ([a, b], [kiln_cli.tokenize(a), kiln_cli.tokenize(b)]):
        r = greedy_completion(client, prompt, 12)
        assert sorted(c.index for c in r.choices) == [0, 1]
        assert [c.text for c in sorted(r.choices, key=lambda c: c.index)] == want
        assert r.usage.completion_tokens == 24
        assert r.usage.prompt_tokens == len(kiln_cli.tokenize(a)) + len(kiln_cli.tokenize(b))


def test_completion_stream_matches_non_stream(client):
    prompt = PROMPTS[0]
    n = 200  # long enough to cross many scheduler steps
    whole = greedy_completion(client, prompt, n).choices[0].text
    pieces, finish = [], None
    with greedy_completion(client, prompt, n, stream=True) as stream:
        for chunk in stream:
            assert chunk.object == "text_completion" and chunk.id.startswith("cmpl-")
            for c in chunk.choices:
                pieces.append(c.text)
                finish = c.finish_reason or finish
    assert "".join(pieces) == whole
    assert finish == "length"


def test_completion_stream_sse_framing_and_usage(http, kiln_cli):
    prompt = PROMPTS[1]
    req = {"model": MODEL_NAME, "prompt": prompt, "max_tokens": 10, "temperature": 0, "ignore_eos": True,
           "stream": True, "stream_options": {"include_usage": True}}
    with http.stream("POST", "/v1/completions", json=req) as r:
        chunks = read_sse(r)
    for c in chunks:
        jsonschema.validate(c, COMPLETION_CHUNK_SCHEMA)
    assert len({c["id"] for c in chunks}) == 1
    last = chunks[-1]
    assert last["choices"] == []
    jsonschema.validate(last["usage"], _USAGE)
    assert last["usage"]["completion_tokens"] == 10
    assert last["usage"]["prompt_tokens"] == len(kiln_cli.tokenize(prompt))
    assert all(not c.get("usage") for c in chunks[:-1])
    assert "".join(ch["text"] for c in chunks for ch in c["choices"]) == kiln_cli.greedy(prompt, 10)
    finishes = [ch["finish_reason"] for c in chunks for ch in c["choices"] if ch.get("finish_reason")]
    assert finishes == ["length"]


def test_stream_without_include_usage_has_no_usage_chunk(http):
    req = {"model": MODEL_NAME, "prompt": "Hello", "max_tokens": 4, "temperature": 0, "stream": True}
    with http.stream("POST", "/v1/completions", json=req) as r:
        chunks = read_sse(r)
    assert all(c["choices"] for c in chunks), "a chunk without choices is only sent for include_usage"
    assert all(not c.get("usage") for c in chunks)


# --- Stop strings -----------------------------------------------------------------------------

def pick_stop(text: str) -> tuple[str, int]:
    """A 3-character piece from the middle of `text` that is not all blank, and where it first is."""
    for k in range(len(text) // 2, len(text) - 3):
        s = text[k:k + 3]
        if s.strip() and text.find(s) > 0:
            return s, text.find(s)
    pytest.fail(f"no usable stop string in {text!r}")


def test_stop_string_ends_the_text_before_it(client, kiln_cli):
    prompt = PROMPTS[0]
    full = kiln_cli.greedy(prompt, 32)
    s, at = pick_stop(full)
    for stop in ([s], s):
        r = greedy_completion(client, prompt, 32, stop=stop)
        assert r.choices[0].text == full[:at], f"stop={stop!r}"
        assert r.choices[0].finish_reason == "stop"
    r = greedy_completion(client, prompt, 32, stop=["never-appears", s],
                          extra_body={"include_stop_str_in_output": True})
    assert r.choices[0].text == full[:at + len(s)]
    assert r.choices[0].finish_reason == "stop"


def test_stop_string_when_streaming(client, kiln_cli):
    prompt = PROMPTS[0]
    full = kiln_cli.greedy(prompt, 32)
    s, at = pick_stop(full)
    for include, want in ((False, full[:at]), (True, full[:at + len(s)])):
        pieces, finish = [], None
        with greedy_completion(client, prompt, 32, stop=[s], stream=True,
                               extra_body={"include_stop_str_in_output": include}) as stream:
            for chunk in stream:
                for c in chunk.choices:
                    pieces.append(c.text)
                    finish = c.finish_reason or finish
        assert "".join(pieces) == want, f"include_stop_str_in_output={include}"
        assert finish == "stop"


def test_chat_stop_string(client, kiln_cli):
    full = kiln_cli.greedy("Hi there", 24, "--apply-chat-template", "true")
    s, at = pick_stop(full)
    r = client.chat.completions.create(model=MODEL_NAME, messages=user("Hi there"), max_tokens=24, temperature=0,
                                       stop=[s], extra_body={"ignore_eos": True})
    assert r.choices[0].message.content == full[:at]
    assert r.choices[0].finish_reason == "stop"


# --- Sampling parameters ----------------------------------------------------------------------

def test_completion_logprobs(client):
    r = greedy_completion(client, PROMPTS[0], 12, logprobs=2)
    lp = r.choices[0].logprobs
    assert lp is not None
    n = r.usage.completion_tokens
    assert len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) == n == 12
    assert "".join(lp.tokens) == r.choices[0].text
    for chosen, top in zip(lp.token_logprobs, lp.top_logprobs):
        assert chosen <= 0
        assert len(top) == 2, top
        assert all(v <= 0 for v in top.values())
        assert abs(chosen - max(top.values())) <= 1e-4  # greedy picks the most likely token


def test_chat_logprobs(client, kiln_cli):
    prompt = "Hi there"
    r = client.chat.completions.create(model=MODEL_NAME, messages=user(prompt), max_tokens=16, temperature=0,
                                       logprobs=True, top_logprobs=3, extra_body={"ignore_eos": True})
    assert r.choices[0].logprobs is not None, "logprobs=True must return logprobs"
    content = r.choices[0].logprobs.content
    assert len(content) == r.usage.completion_tokens == 16
    for entry in content:
        assert entry.logprob <= 0
        assert len(entry.top_logprobs) == 3
        assert all(t.logprob <= 0 for t in entry.top_logprobs)
        assert abs(entry.logprob - max(t.logprob for t in entry.top_logprobs)) <= 1e-4
    # `kiln run --logprobs` scores the same greedy continuation: the values must agree.
    want = kiln_cli.greedy_logprobs(prompt, 16, 3, "--apply-chat-template", "true")
    assert len(want) == 16
    for i, (entry, (lp, _tok, tops)) in enumerate(zip(content, want)):
        assert abs(entry.logprob - lp) <= 1e-2, f"token {i}: server {entry.logprob}, kiln run {lp}"
        got_tops = sorted((t.logprob for t in entry.top_logprobs), reverse=True)
        assert all(abs(a - b) <= 1e-2 for a, b in zip(got_tops, sorted(tops, reverse=True))), (i, got_tops, tops)


def test_n_with_seed_is_reproducible(client):
    def sample():
        r = client.completions.create(model=MODEL_NAME, prompt=PROMPTS[0], max_tokens=24, temperature=1.0, n=3,
                                      seed=1234, extra_body={"ignore_eos": True})
        assert sorted(c.index for c in r.choices) == [0, 1, 2]
        assert r.usage.completion_tokens == 72
        return [c.text for c in sorted(r.choices, key=lambda c: c.index)]

    first, second = sample(), sample()
    assert first == second
    assert len(set(first)) > 1, f"n=3 at temperature 1 gave three identical samples: {first!r}"


def test_chat_n_with_seed_is_reproducible(client):
    def sample():
        r = client.chat.completions.create(model=MODEL_NAME, messages=user("Tell me about files"), max_tokens=16,
                                           temperature=1.0, n=3, seed=99, extra_body={"ignore_eos": True})
        assert sorted(c.index for c in r.choices) == [0, 1, 2]
        return [c.message.content for c in sorted(r.choices, key=lambda c: c.index)]

    assert sample() == sample()


@pytest.mark.parametrize("kw", [{"extra_body": {"ignore_eos": True, "top_k": 1}},
                                {"extra_body": {"ignore_eos": True, "min_p": 1.0}},
                                {"extra_body": {"ignore_eos": True}, "top_p": 1e-3}], ids=["top_k", "min_p", "top_p"])
def test_truncation_to_one_token_is_greedy(client, kiln_cli, kw):
    # Sampling at temperature 1 from a distribution cut down to its most likely token is greedy.
    prompt = PROMPTS[2]
    r = client.completions.create(model=MODEL_NAME, prompt=prompt, max_tokens=24, temperature=1.0, seed=7, **kw)
    assert r.choices[0].text == kiln_cli.greedy(prompt, 24)


@pytest.mark.parametrize("field,value,flag", [
    ("presence_penalty", 2.0, "--presence-penalty"),
    ("frequency_penalty", 2.0, "--frequency-penalty"),
    ("presence_penalty", -1.0, "--presence-penalty"),
    ("repetition_penalty", 2.0, "--repetition-penalty"),
])
def test_penalties_match_kiln_run(client, kiln_cli, field, value, flag):
    prompt, n = "Hello world", 48
    want = kiln_cli.greedy(prompt, n, flag, str(value))
    assert want != kiln_cli.greedy(prompt, n), "the penalty should change this continuation"
    kw = {field: value} if field != "repetition_penalty" else {"extra_body": {field: value}}
    r = greedy_completion(client, prompt, n, **kw)
    assert r.choices[0].text == want


def test_logit_bias_forces_a_token(client, kiln_cli):
    (tok,) = kiln_cli.tokenize(" the", special=False)
    r = greedy_completion(client, PROMPTS[0], 8, logit_bias={str(tok): 100})
    assert r.choices[0].text == kiln_cli.detokenize([tok] * 8)
    # A strong negative bias on the greedy first token must change the first token.
    (_, first, _), = kiln_cli.greedy_logprobs(PROMPTS[0], 1, 1)
    r = greedy_completion(client, PROMPTS[0], 1, logit_bias={str(first): -100})
    assert r.choices[0].text != kiln_cli.greedy(PROMPTS[0], 1)


# --- Chat completions -------------------------------------------------------------------------

@pytest.mark.parametrize("prompt", ["Hi there", "What does mmap do?"])
def test_chat_greedy_matches_kiln_run_with_chat_template(client, kiln_cli, prompt):
    r = client.chat.completions.create(model=MODEL_NAME, messages=user(prompt), max_tokens=24, temperature=0,
                                       extra_body={"ignore_eos": True})
    assert r.choices[0].message.content == kiln_cli.greedy(prompt, 24, "--apply-chat-template", "true")
    assert r.choices[0].finish_reason == "length"
    assert r.usage.completion_tokens == 24


def test_chat_response_shape_and_prompt_tokens(http, kiln_cli):
    messages = [{"role": "system", "content": "You answer briefly."}, *user("Hi"),
                {"role": "assistant", "content": "Hello."}, *user("What is a file?")]
    r = http.post("/v1/chat/completions", json={"model": MODEL_NAME, "messages": messages, "max_tokens": 6,
                                                "temperature": 0, "ignore_eos": True})
    assert r.status_code == 200, r.text
    body = r.json()
    jsonschema.validate(body, CHAT_SCHEMA)
    u = body["usage"]
    assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"] and u["completion_tokens"] == 6
    # The template text already starts with the BOS token, so the prompt holds it once.
    assert u["prompt_tokens"] == len(kiln_cli.tokenize(kiln_cli.template(messages), special=False))


def test_chat_stops_at_end_of_turn(client, kiln_cli):
    # Without ignore_eos this prompt ends its answer with <|eot_id|> well within 32 tokens.
    r = client.chat.completions.create(model=MODEL_NAME, messages=user("Hi there"), max_tokens=32, temperature=0)
    assert r.choices[0].finish_reason == "stop"
    assert r.usage.completion_tokens < 32
    want = kiln_cli.generate("Hi there", 32, "--temperature", "0", "--apply-chat-template", "true")
    assert r.choices[0].message.content == want
    assert "<|eot_id|>" not in r.choices[0].message.content


def test_chat_ignore_eos_runs_to_the_length(client):
    r = client.chat.completions.create(model=MODEL_NAME, messages=user("Hi there"), max_tokens=32, temperature=0,
                                       extra_body={"ignore_eos": True})
    assert r.choices[0].finish_reason == "length"
    assert r.usage.completion_tokens == 32


def test_chat_max_completion_tokens(client):
    r = client.chat.completions.create(model=MODEL_NAME, messages=user("Hi there"), max_completion_tokens=5,
                                       temperature=0, extra_body={"ignore_eos": True})
    assert r.usage.completion_tokens == 5
    assert r.choices[0].finish_reason == "length"


def test_chat_stream_roles_content_and_usage(client):
    kw = dict(model=MODEL_NAME, messages=user("What does mmap do?"), max_tokens=20, temperature=0,
              extra_body={"ignore_eos": True})
    whole = client.chat.completions.create(**kw)
    got = collect_chat_stream(client, stream_options={"include_usage": True}, **kw)
    assert got["first_role"] == {0: "assistant"}
    assert got["texts"] == {0: whole.choices[0].message.content}
    assert got["finishes"] == {0: "length"}
    assert got["usage"].completion_tokens == 20
    assert got["usage"].prompt_tokens == whole.usage.prompt_tokens


def test_chat_stream_several_choices(client):
    # Sampled, because n > 1 is meant for sampling; the seed makes the stream comparable.
    kw = dict(model=MODEL_NAME, messages=user("What does mmap do?"), max_tokens=12, temperature=1.0, seed=42, n=2,
              extra_body={"ignore_eos": True})
    whole = client.chat.completions.create(**kw)
    got = collect_chat_stream(client, stream_options={"include_usage": True}, **kw)
    assert got["first_role"] == {0: "assistant", 1: "assistant"}
    assert got["finishes"] == {0: "length", 1: "length"}
    assert got["usage"].completion_tokens == 24
    assert got["texts"] == {c.index: c.message.content for c in whole.choices}


def collect_chat_stream(client, **kw) -> dict:
    """Streams a chat completion: per choice its text, the role of its first delta and its finish."""
    texts, first_role, finishes, usage_chunks = {}, {}, {}, []
    with client.chat.completions.create(stream=True, **kw) as stream:
        chunks = list(stream)
    for chunk in chunks:
        assert chunk.object == "chat.completion.chunk" and chunk.id.startswith("chatcmpl-")
        assert chunk.id == chunks[0].id
        if not chunk.choices:
            usage_chunks.append(chunk)
            continue
        assert chunk.usage is None
        for c in chunk.choices:
            first_role.setdefault(c.index, c.delta.role)
            texts[c.index] = texts.get(c.index, "") + (c.delta.content or "")
            if c.finish_reason:
                assert c.index not in finishes, "one finish_reason per choice"
                finishes[c.index] = c.finish_reason
    assert len(usage_chunks) == 1 and usage_chunks[0] is chunks[-1], "the usage chunk must be the last one"
    return {"texts": texts, "first_role": first_role, "finishes": finishes, "usage": usage_chunks[0].usage}


def test_n_greedy_gives_identical_choices(client, kiln_cli):
    # OpenAI's API accepts n > 1 at temperature 0; every choice is then the greedy text.
    r = greedy_completion(client, PROMPTS[1], 8, n=2)
    assert [c.text for c in sorted(r.choices, key=lambda c: c.index)] == [kiln_cli.greedy(PROMPTS[1], 8)] * 2


def test_chat_stream_sse_framing(http):
    req = {"model": MODEL_NAME, "messages": user("Hi"), "max_tokens": 6, "temperature": 0, "stream": True,
           "stream_options": {"include_usage": True}}
    with http.stream("POST", "/v1/chat/completions", json=req) as r:
        chunks = read_sse(r)
    for c in chunks:
        jsonschema.validate(c, CHAT_CHUNK_SCHEMA)
    assert chunks[0]["choices"][0]["delta"].get("role") == "assistant"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] <= 6


def test_response_format_text_is_accepted(client):
    r = client.chat.completions.create(model=MODEL_NAME, messages=user("Hi"), max_tokens=4, temperature=0,
                                       response_format={"type": "text"})
    assert r.choices[0].message.role == "assistant"


# --- Continuous batching must not change greedy output ------------------------------------

def test_concurrent_streams_match_solo(server):
    prompts = PROMPTS * 4  # 16 requests, four different lengths interleaved

    def stream_text(c: openai.OpenAI, prompt: str, barrier: threading.Barrier | None) -> str:
        if barrier:
            barrier.wait(timeout=30)
        out = []
        with greedy_completion(c, prompt, 32, stream=True) as stream:
            for chunk in stream:
                out.extend(ch.text for ch in chunk.choices)
        return "".join(out)

    with server.client() as c:
        solo = {p: stream_text(c, p, None) for p in PROMPTS}
        barrier = threading.Barrier(len(prompts))
        with ThreadPoolExecutor(len(prompts)) as pool:
            futures = [pool.submit(stream_text, c, p, barrier) for p in prompts]
            results = [f.result(timeout=120) for f in futures]
    for p, got in zip(prompts, results):
        assert got == solo[p], f"prompt {p!r}"


# --- Errors -----------------------------------------------------------------------------------

CHAT = "/v1/chat/completions"
COMP = "/v1/completions"


def chat_body(**kw):
    return {"model": MODEL_NAME, "messages": user("Hi"), "max_tokens": 4, **kw}


def comp_body(**kw):
    return {"model": MODEL_NAME, "prompt": "Hi", "max_tokens": 4, **kw}


@pytest.mark.parametrize("path", [CHAT, COMP, "/tokenize", "/detokenize"])
def test_malformed_json_is_400(http, path):
    r = http.post(path, content=b'{"model": "kiln-tiny", "prompt": ', headers={"Content-Type": "application/json"})
    assert_error(r, 400)


@pytest.mark.parametrize("path", [CHAT, COMP])
def test_non_object_json_is_400(http, path):
    assert_error(http.post(path, json=[1, 2, 3]), 400)


WRONG_TYPES = [
    (COMP, "max_tokens", "ten"), (COMP, "temperature", "hot"), (COMP, "prompt", {"text": "hi"}),
    (COMP, "stop", 5), (COMP, "n", "two"), (COMP, "stream", "yes"), (COMP, "logprobs", "many"),
    (COMP, "seed", "abc"), (COMP, "logit_bias", [1, 2]), (COMP, "top_k", "x"), (COMP, "top_p", []),
    (COMP, "ignore_eos", "sure"), (COMP, "prompt", [1.5, 2.5]),
    (CHAT, "messages", "hi"), (CHAT, "max_completion_tokens", "x"), (CHAT, "top_logprobs", "x"),
    (CHAT, "stream_options", "x"), (CHAT, "presence_penalty", "x"), (CHAT, "min_p", "x"),
    (CHAT, "model", 7),
]


@pytest.mark.parametrize("path,field,value", WRONG_TYPES)
def test_wrong_field_type_is_400_naming_the_field(http, path, field, value):
    body = (chat_body if path == CHAT else comp_body)(**{field: value})
    assert_error(http.post(path, json=body), 400, names=field)


OUT_OF_RANGE = [
    (COMP, "temperature", -0.5), (COMP, "top_p", 1.5), (COMP, "n", 0), (COMP, "max_tokens", -1),
    (COMP, "presence_penalty", 2.5), (COMP, "frequency_penalty", -3), (COMP, "logprobs", 21),
    (COMP, "logprobs", -1), (COMP, "min_p", 1.5), (COMP, "top_k", -5), (COMP, "repetition_penalty", 0),
    (COMP, "logit_bias", {"1000000": 5}), (COMP, "prompt", [1000000]),
    (CHAT, "top_logprobs", 21), (CHAT, "top_logprobs", -1), (CHAT, "temperature", -1),
    (CHAT, "messages", []),
]


@pytest.mark.parametrize("path,field,value", OUT_OF_RANGE)
def test_out_of_range_value_is_400_naming_the_field(http, path, field, value):
    body = (chat_body if path == CHAT else comp_body)(**{field: value})
    if field == "top_logprobs":
        body["logprobs"] = True
    assert_error(http.post(path, json=body), 400, names=field)


@pytest.mark.parametrize("path,field", [(CHAT, "messages"), (COMP, "prompt")])
def test_missing_required_field_is_400(http, path, field):
    body = (chat_body if path == CHAT else comp_body)()
    del body[field]
    assert_error(http.post(path, json=body), 400, names=field)


@pytest.mark.parametrize("path", [CHAT, COMP])
def test_unknown_model_is_404(http, path):
    body = (chat_body if path == CHAT else comp_body)(model="gpt-17")
    err = assert_error(http.post(path, json=body), 404)
    assert err["code"] == "model_not_found"


def test_unknown_model_through_the_client(client):
    with pytest.raises(openai.NotFoundError) as e:
        client.completions.create(model="no-such-model", prompt="Hi", max_tokens=2)
    assert e.value.code == "model_not_found"


def test_prompt_longer_than_the_context_is_400(http, client):
    assert_error(http.post(COMP, json=comp_body(prompt=[39] * (CONTEXT + 10))), 400)
    assert_error(http.post(COMP, json=comp_body(prompt="word " * 600)), 400)
    assert_error(http.post(CHAT, json=chat_body(messages=user("word " * 600))), 400)
    with pytest.raises(openai.BadRequestError):
        client.completions.create(model=MODEL_NAME, prompt="word " * 600, max_tokens=2)


@pytest.mark.parametrize("field,value", [
    ("tools", [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]),
    ("response_format", {"type": "json_object"}),
    ("response_format", {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}),
])
def test_unsupported_field_is_400_naming_it(http, field, value):
    assert_error(http.post(CHAT, json=chat_body(**{field: value})), 400, names=field)


def test_unsupported_field_through_the_client(client):
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=MODEL_NAME, messages=user("Hi"), max_tokens=2,
                                       response_format={"type": "json_object"})
    assert "response_format" in str(e.value)


@pytest.mark.parametrize("method,path", [("GET", "/v1/nope"), ("POST", "/v1/embeddings"), ("GET", "/nope")])
def test_unknown_route_is_404(http, method, path):
    assert_error(http.request(method, path, json={}), 404)


@pytest.mark.parametrize("method,path", [("GET", CHAT), ("GET", COMP), ("POST", "/v1/models"),
                                         ("DELETE", "/v1/models"), ("GET", "/tokenize"), ("POST", "/health")])
def test_wrong_method_is_405(http, method, path):
    assert_error(http.request(method, path), 405)


def test_body_larger_than_max_body_bytes_is_413(limited_server):
    with limited_server.http() as h:
        small = h.post(COMP, json=comp_body(temperature=0))
        assert small.status_code == 200, small.text
        big = comp_body(prompt="x" * (SMALL_MAX_BODY_BYTES + 100))
        assert_error(h.post(COMP, json=big), 413)
        assert_error(h.post(CHAT, json=chat_body(messages=user("x" * (SMALL_MAX_BODY_BYTES + 100)))), 413)


def test_max_tokens_above_the_limit_is_400(limited_server):
    with limited_server.http() as h:
        ok = h.post(COMP, json=comp_body(max_tokens=SMALL_MAX_TOKENS_LIMIT, temperature=0, ignore_eos=True))
        assert ok.status_code == 200, ok.text
        assert ok.json()["usage"]["completion_tokens"] == SMALL_MAX_TOKENS_LIMIT
        assert_error(h.post(COMP, json=comp_body(max_tokens=SMALL_MAX_TOKENS_LIMIT + 1)), 400, names="max_tokens")
        assert_error(h.post(CHAT, json=chat_body(max_tokens=SMALL_MAX_TOKENS_LIMIT + 1)), 400, names="max_tokens")
        body = chat_body(max_completion_tokens=SMALL_MAX_TOKENS_LIMIT + 1)
        del body["max_tokens"]
        err = assert_error(h.post(CHAT, json=body), 400)
        assert "max_completion_tokens" in err["message"] or "max_tokens" in err["message"], err
    with limited_server.client() as c:
        with pytest.raises(openai.BadRequestError) as e:
            c.completions.create(model=MODEL_NAME, prompt="Hi", max_tokens=SMALL_MAX_TOKENS_LIMIT * 4)
        assert "max_tokens" in str(e.value)


# --- Tokenizer routes -------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["Hello world", "int main(void) {\n  return 0;\n}", "caf\u00e9 \u2014 na\u00efve"])
def test_tokenize_matches_kiln_tokenize(server, kiln_cli, text):
    r = httpx.post(server.url + "/tokenize", json={"prompt": text}, timeout=10)
    assert r.status_code == 200, r.text
    body = r.json()
    jsonschema.validate(body, TOKENIZE_SCHEMA)
    assert body["tokens"] == kiln_cli.tokenize(text) and body["count"] == len(body["tokens"])
    r = httpx.post(server.url + "/tokenize", json={"prompt": text, "add_special_tokens": False}, timeout=10)
    assert r.json()["tokens"] == kiln_cli.tokenize(text, special=False)


def test_tokenize_messages_uses_the_chat_template(server, kiln_cli):
    messages = [{"role": "system", "content": "Be brief."}, *user("Hi there")]
    with_prompt = kiln_cli.tokenize(kiln_cli.template(messages, True), special=False)
    without_prompt = kiln_cli.tokenize(kiln_cli.template(messages, False), special=False)
    r = httpx.post(server.url + "/tokenize", json={"messages": messages, "add_special_tokens": False}, timeout=10)
    assert r.status_code == 200, r.text
    body = r.json()
    jsonschema.validate(body, TOKENIZE_SCHEMA)
    assert body["tokens"] in (with_prompt, without_prompt)
    r = httpx.post(server.url + "/tokenize", json={"messages": messages}, timeout=10)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["count"] == len(body["tokens"])
    assert body["tokens"][-len(without_prompt):] in (with_prompt[-len(without_prompt):], without_prompt)


def test_detokenize_matches_kiln_detokenize(server, kiln_cli):
    text = "Hello world, this is kiln.\n\tTabs and caf\u00e9."
    ids = kiln_cli.tokenize(text, special=False)
    r = httpx.post(server.url + "/detokenize", json={"tokens": ids}, timeout=10)
    assert r.status_code == 200, r.text
    assert r.json() == {"prompt": kiln_cli.detokenize(ids)}
    assert r.json()["prompt"] == text


@pytest.mark.parametrize("path,body,field", [("/tokenize", {"prompt": 5}, "prompt"),
                                             ("/detokenize", {"tokens": "abc"}, "tokens"),
                                             ("/detokenize", {"tokens": [1000000]}, "tokens")])
def test_tokenizer_routes_reject_bad_fields(server, path, body, field):
    assert_error(httpx.post(server.url + path, json=body, timeout=10), 400, names=field)


# --- Metrics ----------------------------------------------------------------------------------

GAUGES = ["kiln:num_requests_running", "kiln:num_requests_waiting", "kiln:kv_cache_usage_perc",
          "vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
          "vllm:gpu_cache_usage_perc"]
COUNTERS = ["kiln:prompt_tokens_total", "kiln:generation_tokens_total", "kiln:prefix_cache_queries_total",
            "kiln:prefix_cache_hits_total", "kiln:num_preemptions_total"]
HISTOGRAMS = ["kiln:time_to_first_token_seconds", "kiln:inter_token_latency_seconds",
              "kiln:e2e_request_latency_seconds"]


def test_metrics_exposition(server, client):
    greedy_completion(client, "Hello", 4)  # so that the histograms hold something
    r = httpx.get(server.url + "/metrics", timeout=10)
    assert r.headers["content-type"].startswith("text/plain"), r.headers["content-type"]
    m = wait_for_metrics(server, idle, what="idle")
    for name in GAUGES + COUNTERS:
        metric(m, name)
    for name in ("kiln:kv_cache_usage_perc", "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"):
        assert 0.0 <= metric(m, name) <= 1.0
    for kiln_name, vllm_name in (("kiln:num_requests_running", "vllm:num_requests_running"),
                                 ("kiln:num_requests_waiting", "vllm:num_requests_waiting"),
                                 ("kiln:kv_cache_usage_perc", "vllm:kv_cache_usage_perc"),
                                 ("kiln:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")):
        assert metric(m, kiln_name) == metric(m, vllm_name)
    assert metric(m, "kiln:prefix_cache_hits_total") <= metric(m, "kiln:prefix_cache_queries_total")
    for name in HISTOGRAMS:
        buckets = sorted(((float(ls["le"]), v) for n, ls, v in m if n == name + "_bucket"), key=lambda b: b[0])
        assert buckets and buckets[-1][0] == math.inf, f"{name} has no +Inf bucket"
        counts = [v for _, v in buckets]
        assert counts == sorted(counts), f"{name} buckets are not cumulative: {buckets}"
        assert buckets[-1][1] == metric(m, name + "_count")
        assert metric(m, name + "_sum") >= 0
    assert metric(m, "kiln:e2e_request_latency_seconds_count") >= 1
    assert metric(m, "kiln:time_to_first_token_seconds_count") >= 1


def test_metrics_count_a_request(server, client):
    before = wait_for_metrics(server, idle, what="idle")
    r = greedy_completion(client, PROMPTS[3], 20)

    def counted(m):
        return (metric(m, "kiln:generation_tokens_total") - metric(before, "kiln:generation_tokens_total")
                >= r.usage.completion_tokens
                and metric(m, "kiln:e2e_request_latency_seconds_count")
                > metric(before, "kiln:e2e_request_latency_seconds_count"))

    after = wait_for_metrics(server, counted, timeout=5, what="the request counted")

    def delta(name):
        return metric(after, name) - metric(before, name)

    assert delta("kiln:generation_tokens_total") == r.usage.completion_tokens
    assert delta("kiln:prompt_tokens_total") == r.usage.prompt_tokens
    assert delta("kiln:e2e_request_latency_seconds_count") == 1
    assert delta("kiln:time_to_first_token_seconds_count") == 1
    assert delta("kiln:inter_token_latency_seconds_count") > 0
    assert delta("kiln:num_preemptions_total") >= 0
    assert delta("kiln:prefix_cache_queries_total") >= 0


def test_metrics_show_a_running_request(server):
    seen = {"running": 0.0, "kv": 0.0}
    done = threading.Event()

    def watch():
        while not done.is_set():
            m = get_metrics(server)
            seen["running"] = max(seen["running"], metric(m, "kiln:num_requests_running"))
            seen["kv"] = max(seen["kv"], metric(m, "kiln:kv_cache_usage_perc"))
            time.sleep(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    with server.client() as c:
        watcher.start()
        try:
            c.completions.create(model=MODEL_NAME, prompt=PROMPTS[0], max_tokens=400, n=8, temperature=1.0,
                                 seed=3, extra_body={"ignore_eos": True})
        finally:
            done.set()
            watcher.join(timeout=10)
    assert seen["running"] >= 1, "num_requests_running never showed the request"
    assert 0 < seen["kv"] <= 1, f"kv_cache_usage_perc never rose above 0: {seen}"
    wait_for_metrics(server, idle, what="idle after the request")


# --- Client disconnects cancel generation -----------------------------------------------------

CANCEL_MAX_TOKENS = 480  # close to the context, so that a generation nobody stops takes a while


def test_closing_a_stream_cancels_its_generation(server):
    before = wait_for_metrics(server, idle, what="idle")
    req = {"model": MODEL_NAME, "prompt": PROMPTS[0], "max_tokens": CANCEL_MAX_TOKENS, "temperature": 0,
           "ignore_eos": True, "stream": True}
    # Eight streams read for two events each, then closed together: leaving the ExitStack
    # closes each response before its end, which closes its socket.
    with contextlib.ExitStack() as stack:
        for _ in range(8):
            h = stack.enter_context(server.http())
            r = stack.enter_context(h.stream("POST", COMP, json=req))
            assert r.status_code == 200
            lines = r.iter_lines()
            got = 0
            while got < 2:
                if next(lines).startswith("data: "):
                    got += 1
    after = wait_for_metrics(server, idle, timeout=5, what="no running request and an empty KV cache")
    generated = metric(after, "kiln:generation_tokens_total") - metric(before, "kiln:generation_tokens_total")
    assert generated < 8 * CANCEL_MAX_TOKENS / 2, f"{generated} tokens generated: the streams were not cancelled"
    # The server goes on serving.
    with server.client() as c:
        assert greedy_completion(c, "Hello", 4).usage.completion_tokens == 4


def test_a_client_timeout_cancels_a_non_streaming_request(server):
    before = wait_for_metrics(server, idle, what="idle")
    req = {"model": MODEL_NAME, "prompt": PROMPTS[0], "max_tokens": CANCEL_MAX_TOKENS, "n": 8, "temperature": 1.0,
           "seed": 5, "ignore_eos": True}
    with server.http(timeout=0.05) as h:
        with pytest.raises(httpx.TimeoutException):
            h.post(COMP, json=req)
    after = wait_for_metrics(server, idle, timeout=5, what="no running request and an empty KV cache")
    generated = metric(after, "kiln:generation_tokens_total") - metric(before, "kiln:generation_tokens_total")
    assert generated < 8 * CANCEL_MAX_TOKENS / 2, f"{generated} tokens generated: the request was not cancelled"
    with server.client() as c:
        assert greedy_completion(c, "Hello", 4).usage.completion_tokens == 4


# --- Graceful shutdown ------------------------------------------------------------------------

def test_sigterm_lets_a_running_stream_finish(kiln_cli):
    # A server of its own, since it is stopped in the middle of a request.
    s = start_server([])
    try:
        req = {"model": MODEL_NAME, "prompt": PROMPTS[0], "max_tokens": CANCEL_MAX_TOKENS, "temperature": 0,
               "ignore_eos": True, "stream": True}
        pieces = []
        with s.http() as h, h.stream("POST", COMP, json=req) as r:
            assert r.status_code == 200
            lines = r.iter_lines()
            for line in lines:
                if line.startswith("data: "):
                    pieces.append(json.loads(line[len("data: "):]))
                    break
            s.proc.send_signal(signal.SIGTERM)
            done = False
            for line in lines:
                if line == "data: [DONE]":
                    done = True
                elif line.startswith("data: "):
                    pieces.append(json.loads(line[len("data: "):]))
        assert done, "the stream in flight at SIGTERM did not end with [DONE]"
        text = "".join(c["text"] for p in pieces for c in p["choices"])
        assert text == kiln_cli.greedy(PROMPTS[0], CANCEL_MAX_TOKENS)
        s.wait_exit_zero()
    finally:
        s.kill()
