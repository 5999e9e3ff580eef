"""Structured output through the official OpenAI client: response_format json_schema /
json_object and vLLM's guided_regex / guided_choice / guided_grammar. The oracles are PyPI's
`jsonschema` (every output of a seeded property run over random schemas validates), Python's
`re.fullmatch` and `json.loads`; a bad constraint is a 400 that names the problem.
"""

import json
import random
import re

import jsonschema
import pytest

from conftest import MODEL_NAME
from serve_helpers import CHAT, COMP, assert_error, read_sse, user

MAX_TOKENS = 440  # the test server's context is 512 tokens


def random_schema(rng: random.Random, depth: int = 0) -> dict:
    """A schema of the kinds kiln supports, bounded so that a tiny model's random text ends."""
    kinds = ["string", "integer", "number", "boolean", "null", "enum", "pattern", "integer_range", "number_range"]
    if depth < 2:
        kinds += ["object", "object", "array", "anyOf"]
    kind = rng.choice(kinds)
    if kind == "string":
        return {"type": "string", "maxLength": rng.randint(0, 6), "minLength": 0}
    if kind == "enum":
        return {"enum": rng.sample(["a", "b c", 1, 2.5, None, True, {"k": [1]}], rng.randint(1, 4))}
    if kind == "pattern":
        return {"type": "string", "pattern": rng.choice([r"^[a-z]{1,4}$", r"^\d{2}-\d{2}$", r"^(yes|no)$"])}
    if kind in ("integer_range", "number_range"):
        # One or both sides, inclusive or not; fractional bounds for both types.
        low = rng.choice([rng.randint(-50, 50), round(rng.uniform(-50, 50), 2)])
        bounds = {rng.choice(["minimum", "exclusiveMinimum"]): low,
                  rng.choice(["maximum", "exclusiveMaximum"]): low + rng.choice([1.5, 7, 1000])}
        if rng.random() < 0.3:
            bounds.popitem()
        return {"type": kind.removesuffix("_range"), **bounds}
    if kind == "object":
        names = rng.sample(["id", "name", "tags", "score", "ok", "child"], rng.randint(1, 3))
        properties = {n: random_schema(rng, depth + 1) for n in names}
        required = [n for n in names if rng.random() < 0.6]
        return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    if kind == "array":
        return {"type": "array", "items": random_schema(rng, depth + 1), "minItems": rng.randint(0, 1),
                "maxItems": rng.randint(1, 3)}
    if kind == "anyOf":
        return {"anyOf": [random_schema(rng, depth + 1) for _ in range(2)]}
    return {"type": kind}


def schema_format(schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}


@pytest.mark.parametrize("seed", range(12))
def test_random_schemas_give_valid_json(client, seed):
    rng = random.Random(seed)
    schema = random_schema(rng)
    r = client.chat.completions.create(model=MODEL_NAME, messages=user("Answer in JSON."), max_tokens=MAX_TOKENS,
                                       temperature=1.0, seed=seed, response_format=schema_format(schema))
    choice = r.choices[0]
    assert choice.finish_reason == "stop", f"schema {json.dumps(schema)} gave {choice.message.content[:300]!r}"
    jsonschema.validate(json.loads(choice.message.content), schema)


def test_json_object_outputs_parse(client):
    # Any object's keys are free strings, which the tiny model may run past max_tokens: every
    # output that ends must be an object, and most must end.
    finished = 0
    for seed in range(6):
        r = client.completions.create(model=MODEL_NAME, prompt="JSON:", max_tokens=MAX_TOKENS, temperature=1.0,
                                      seed=seed, extra_body={"response_format": {"type": "json_object"}})
        if r.choices[0].finish_reason == "stop":
            finished += 1
            assert isinstance(json.loads(r.choices[0].text), dict), r.choices[0].text
    assert finished >= 3


def test_streamed_output_follows_the_schema(http):
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer"}},
              "required": ["ok", "n"]}
    with http.stream("POST", CHAT, json={"model": MODEL_NAME, "messages": user("JSON please"), "stream": True,
                                         "max_tokens": MAX_TOKENS, "temperature": 1.0, "seed": 3,
                                         "response_format": schema_format(schema)}) as r:
        chunks = read_sse(r)
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    jsonschema.validate(json.loads(text), schema)


@pytest.mark.parametrize("pattern", [r"\d{3}-[A-Z]{2}", r"(cat|dog)s?( [0-9]{1,4})?", r"[^\n]{1,5}!"])
def test_guided_regex_full_matches(client, pattern):
    for seed in range(3):
        r = client.completions.create(model=MODEL_NAME, prompt="Say:", max_tokens=64, temperature=1.0, seed=seed,
                                      extra_body={"guided_regex": pattern})
        assert r.choices[0].finish_reason == "stop"
        assert re.fullmatch(pattern, r.choices[0].text), r.choices[0].text


def test_guided_choice_and_grammar(client):
    choices = ["positive", "negative", "neutral"]
    for seed in range(4):
        r = client.completions.create(model=MODEL_NAME, prompt="Sentiment:", max_tokens=16, temperature=1.0,
                                      seed=seed, extra_body={"guided_choice": choices})
        assert r.choices[0].text in choices
    grammar = 'root ::= "(" num ("+" num)* ")"\nnum ::= [1-9] [0-9]?\n'
    r = client.completions.create(model=MODEL_NAME, prompt="Sum:", max_tokens=64, temperature=1.0, seed=1,
                                  extra_body={"guided_grammar": grammar})
    assert re.fullmatch(r"\([1-9][0-9]?(\+[1-9][0-9]?)*\)", r.choices[0].text), r.choices[0].text


@pytest.mark.parametrize("body, names", [
    ({"response_format": schema_format({"type": "integer", "multipleOf": 2})}, "multipleOf"),
    ({"response_format": schema_format({"not": {}})}, "not"),
    ({"response_format": {"type": "xml"}}, "response_format.type"),
    ({"guided_regex": "(a"}, "regex"),
    ({"guided_grammar": "root ::= missing"}, "missing"),
    ({"guided_grammar": 'root ::= "a" item ' + "+" * 14 + "\nitem ::= [a-z]\n"}, "too ambiguous"),
    ({"guided_regex": "a", "guided_choice": ["a"]}, "guided_choice"),
])
def test_bad_constraints_are_400s_naming_the_problem(http, body, names):
    r = http.post(COMP, json={"model": MODEL_NAME, "prompt": "x", "max_tokens": 4, **body})
    assert_error(r, 400, names)
