"""`kiln serve`'s generation through the official OpenAI client and raw HTTP: greedy text
against `kiln run` (already tested), streaming against non-streaming, stop strings, sampling
parameters, chat, and continuous batching leaving greedy output unchanged.
"""

import threading
from concurrent.futures import ThreadPoolExecutor

import jsonschema
import openai
import pytest

from conftest import MODEL_NAME
from serve_helpers import (
    CHAT_CHUNK_SCHEMA, CHAT_SCHEMA, COMPLETION_CHUNK_SCHEMA, COMPLETION_SCHEMA, PROMPTS,
    USAGE_SCHEMA, greedy_completion, read_sse, user)


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
    jsonschema.validate(last["usage"], USAGE_SCHEMA)
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
