"""`kiln serve`'s API surface: command line, API key, model listing, every error the contract
promises (status, OpenAI error body, the field named), the tokenizer routes against `kiln
tokenize` / `detokenize` / `template`, and the Prometheus metrics.
"""

import math
import re
import subprocess
import time

import httpx
import jsonschema
import openai
import pytest

from conftest import MODEL_NAME, SMALL_MAX_BODY_BYTES, SMALL_MAX_TOKENS_LIMIT, child_env, kiln_binary
from serve_helpers import (
    CHAT, COMP, CONTEXT, MODELS_SCHEMA, PROMPTS, TOKENIZE_SCHEMA, assert_error, get_metrics,
    greedy_completion, idle, metric, user, wait_for_metrics)


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



# --- Errors -----------------------------------------------------------------------------------



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
])
def test_unsupported_field_is_400_naming_it(http, field, value):
    assert_error(http.post(CHAT, json=chat_body(**{field: value})), 400, names=field)


def test_unsupported_field_through_the_client(client):
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=MODEL_NAME, messages=user("Hi"), max_tokens=2,
                                       response_format={"type": "xml"})
    assert "response_format.type" in str(e.value)


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
                                             ("/tokenize", {"prompt": "x", "tools": [{}]}, "tools"),
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
    # The gauges are read while a stream is open mid-way: 8 sequences of up to 400 tokens are far
    # from done at their first chunk (about a second of decoding left in a release build, minutes
    # under ASan), and hanging up then cancels the rest, so the test costs little in either.
    with server.client() as c:
        stream = c.completions.create(model=MODEL_NAME, prompt=PROMPTS[0], max_tokens=400, n=8, temperature=1.0,
                                      seed=3, stream=True, extra_body={"ignore_eos": True})
        with stream:
            next(iter(stream))
            m = get_metrics(server)
    assert metric(m, "kiln:num_requests_running") >= 1, "num_requests_running did not show the request"
    assert 0 < metric(m, "kiln:kv_cache_usage_perc") <= 1, "kv_cache_usage_perc did not rise above 0"
    wait_for_metrics(server, idle, what="idle after the request")
