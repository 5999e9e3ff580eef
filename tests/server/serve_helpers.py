"""What the black-box tests of `kiln serve` share: the OpenAI response shapes as JSON schemas
(an oracle independent of the server's code), the prompts, and helpers to read SSE streams,
errors and Prometheus metrics.
"""

from __future__ import annotations

import json
import os
import re
import time

import httpx
import jsonschema
import openai
import pytest

if not os.environ.get("KILN_BINARY"):
    pytest.skip("KILN_BINARY is not set: it must name the kiln binary whose `serve` these tests start",
                allow_module_level=True)

from conftest import MODEL_NAME  # noqa: E402

CONTEXT = 512
CHAT = "/v1/chat/completions"
COMP = "/v1/completions"
PROMPTS = ["Q: What does mmap do?\nA:", "Hello world", "The quick brown fox", "int main(void) {\n"]

# --- Schemas of the OpenAI shapes the contract promises -------------------------------------

USAGE_SCHEMA = {
    "type": "object",
    "required": ["prompt_tokens", "completion_tokens", "total_tokens"],
    "properties": {k: {"type": "integer", "minimum": 0}
                   for k in ("prompt_tokens", "completion_tokens", "total_tokens")},
}
FINISH_SCHEMA = {"enum": ["stop", "length"]}

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
                           "finish_reason": FINISH_SCHEMA},
        }},
        "usage": USAGE_SCHEMA,
    },
}

def chat_schema(model: str, message: dict, finish: dict) -> dict:
    """A whole chat completion of `model` whose choices hold `message` and end with `finish`."""
    return {
        "type": "object",
        "required": ["id", "object", "created", "model", "choices", "usage"],
        "properties": {
            "id": {"type": "string", "pattern": "^chatcmpl-."},
            "object": {"const": "chat.completion"},
            "created": {"type": "integer"},
            "model": {"const": model},
            "choices": {"type": "array", "minItems": 1, "items": {
                "type": "object",
                "required": ["index", "message", "finish_reason"],
                "properties": {"index": {"type": "integer", "minimum": 0}, "message": message,
                               "finish_reason": finish},
            }},
            "usage": USAGE_SCHEMA,
        },
    }


CHAT_SCHEMA = chat_schema(MODEL_NAME, {"type": "object", "required": ["role", "content"],
                                       "properties": {"role": {"const": "assistant"}, "content": {"type": "string"}}},
                          FINISH_SCHEMA)


def chunk_schema(id_prefix: str, object_name: str, choice_field: str, choice_schema: dict,
                 model: str = MODEL_NAME, finish_reasons: tuple = ("stop", "length")) -> dict:
    """A streamed chunk: the shape chat and completions share, with their own choice field."""
    return {
        "type": "object",
        "required": ["id", "object", "created", "model", "choices"],
        "properties": {
            "id": {"type": "string", "pattern": f"^{id_prefix}-."},
            "object": {"const": object_name},
            "model": {"const": model},
            "choices": {"type": "array", "items": {
                "type": "object", "required": ["index", choice_field],
                "properties": {"index": {"type": "integer"}, choice_field: choice_schema,
                               "finish_reason": {"enum": [*finish_reasons, None]}},
            }},
        },
    }


CHAT_CHUNK_SCHEMA = chunk_schema("chatcmpl", "chat.completion.chunk", "delta", {"type": "object"})
COMPLETION_CHUNK_SCHEMA = chunk_schema("cmpl", "text_completion", "text", {"type": "string"})

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
