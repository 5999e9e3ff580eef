"""`kiln serve --tool-call-parser hermes`: OpenAI tool calling through the official client and raw HTTP.

The oracle is the model: tests/data/checkpoints/tool_call_tiny writes one fixed script whatever
the prompt (a bigram table; see its README), greedy or sampled. After a chat prompt, which ends in
"<|im_start|>assistant\\n", that is a line of content and two Hermes <tool_call> blocks, the first
with braces and a literal "</tool_call>" inside a JSON string; after a prefill ending in a space it
is the rest of the script from the first call's arguments. `kiln run` (already tested) confirms the
script first. So every answer's content, tool calls and finish reason are known exactly for each
tool_choice; streamed answers, accumulated by hand from the raw SSE and by the openai library's own
accumulator (`client.chat.completions.stream`), must equal the non-streamed ones (ids aside). How
the server renders a conversation holding tool calls and tool results is checked against Python
Jinja2 rendering the fixture's chat template as transformers' apply_chat_template does.
"""

import copy
import json

import jinja2
import jsonschema
import openai
import pytest
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

from conftest import MODEL_NAME, TOOL_MODEL_DIR, TOOL_MODEL_NAME
from serve_helpers import CHAT, assert_error, chat_schema, chunk_schema, read_sse, user

# --- The script --------------------------------------------------------------------------------

P0 = "Let me look that up.\n"
P1 = '<tool_call>\n{"name": "get_weather", "arguments": '
P2 = '{"city": "Paris", "note": "braces {} and a literal </tool_call> inside"}}'
P3 = '\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
SCRIPT = P0 + P1 + P2 + P3
WEATHER_ARGS = {"city": "Paris", "note": "braces {} and a literal </tool_call> inside"}

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather",
        "description": "The current weather in a city, in °C.",
        "parameters": {"type": "object",
                       "properties": {"city": {"type": "string", "description": "The city's name"},
                                      "note": {"type": "string"}},
                       "required": ["city"]},
    }},
    {"type": "function", "function": {
        "name": "get_time",
        "description": "The local time.",
        "parameters": {"type": "object", "properties": {}},
    }},
]
QUESTION = user("What is the weather in Paris, and what time is it?")

# What each way of asking must answer: (content, [(tool name, arguments as JSON)], finish_reason).
# Named: the server prefills '<tool_call>\n{"name": "get_time", "arguments": ' and the model would go
# on from that space with P2, the weather call's arguments; the call's grammar holds it to get_time's
# parameters (none), so the arguments are {}. OpenAI ends a forced named call with "stop".
BOTH_CALLS = (P0, [("get_weather", WEATHER_ARGS), ("get_time", {})], "tool_calls")
CASES = {
    "default": ({"tools": TOOLS}, BOTH_CALLS),
    "auto": ({"tools": TOOLS, "tool_choice": "auto"}, BOTH_CALLS),
    "auto_parallel_true": ({"tools": TOOLS, "tool_choice": "auto", "parallel_tool_calls": True}, BOTH_CALLS),
    "none": ({"tools": TOOLS, "tool_choice": "none"}, (SCRIPT, [], "stop")),
    "no_tools": ({}, (SCRIPT, [], "stop")),
    "named": ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "get_time"}}},
              ("", [("get_time", {})], "stop")),
    "not_parallel": ({"tools": TOOLS, "parallel_tool_calls": False},
                     (P0, [("get_weather", WEATHER_ARGS)], "tool_calls")),
}

FINISH = {"enum": ["stop", "length", "tool_calls"]}
TOOL_CALL_SCHEMA = {
    "type": "object",
    "required": ["id", "type", "function"],
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "type": {"const": "function"},
        "function": {"type": "object", "required": ["name", "arguments"],
                     "properties": {"name": {"type": "string", "minLength": 1},
                                    "arguments": {"type": "string"}}},
    },
}
TOOL_CHAT_SCHEMA = chat_schema(TOOL_MODEL_NAME, {"type": "object", "required": ["role", "content"], "properties": {
    "role": {"const": "assistant"},
    "content": {"type": ["string", "null"]},
    "tool_calls": {"type": "array", "items": TOOL_CALL_SCHEMA},
}}, FINISH)
TOOL_CALL_DELTA_SCHEMA = {
    "type": "object",
    "required": ["index"],
    "properties": {
        "index": {"type": "integer", "minimum": 0},
        "id": {"type": ["string", "null"]},
        "type": {"enum": ["function", None]},
        "function": {"type": "object", "properties": {"name": {"type": ["string", "null"]},
                                                      "arguments": {"type": ["string", "null"]}}},
    },
}
TOOL_CHUNK_SCHEMA = chunk_schema("chatcmpl", "chat.completion.chunk", "delta", {"type": "object", "properties": {
    "content": {"type": ["string", "null"]},
    "tool_calls": {"type": "array", "items": TOOL_CALL_DELTA_SCHEMA},
}}, model=TOOL_MODEL_NAME, finish_reasons=("stop", "length", "tool_calls"))


# --- Helpers -----------------------------------------------------------------------------------

def request(case: str, **extra) -> dict:
    """The chat request body of a case (the keyword arguments of `chat.completions.create`)."""
    fields, _ = CASES[case]
    return {"model": TOOL_MODEL_NAME, "messages": QUESTION, "max_tokens": 64, **fields, **extra}


def answer(content, calls, finish) -> tuple:
    """An answer in comparable form: calls as (name, arguments string), content None as ""."""
    return content or "", [(name, args) for name, args in calls], finish


def from_message(choice) -> tuple:
    """The comparable answer of a client `Choice` (non-streamed, or the accumulator's final one)."""
    calls = [(tc.function.name, tc.function.arguments) for tc in choice.message.tool_calls or []]
    return answer(choice.message.content, calls, choice.finish_reason)


def assert_expected(got: tuple, case: str) -> None:
    """`got` (comparable form) is what `case` must answer; arguments are compared as JSON."""
    content, calls, finish = got
    want_content, want_calls, want_finish = CASES[case][1]
    assert content == want_content
    assert [name for name, _ in calls] == [name for name, _ in want_calls], calls
    for (name, args), (_, want_args) in zip(calls, want_calls):
        try:
            parsed = json.loads(args)
        except ValueError:
            pytest.fail(f"the arguments of {name} are not JSON: {args!r}")
        assert parsed == want_args, f"{name}: {args!r}"
    assert finish == want_finish


def create(client: openai.OpenAI, case: str, **extra):
    r = client.chat.completions.create(**request(case, **extra))
    assert len(r.choices) == 1
    return r


def check_ids(tool_calls) -> None:
    ids = [tc.id for tc in tool_calls or []]
    assert all(isinstance(i, str) and i for i in ids), ids
    assert len(set(ids)) == len(ids), f"tool call ids must be distinct: {ids}"


def stream_by_hand(http, body: dict) -> dict:
    """Streams a chat request over raw HTTP and accumulates choice 0 by hand, checking each delta:
    one role, content only before the first tool call, per call an `index`, a first delta with id,
    type "function" and the name, later deltas that only append arguments, calls in index order."""
    req = {**body, "stream": True, "stream_options": {"include_usage": True}}
    with http.stream("POST", CHAT, json=req) as r:
        chunks = read_sse(r)
    roles, content, calls, finishes, usage = [], [], [], [], None
    for c in chunks:
        jsonschema.validate(c, TOOL_CHUNK_SCHEMA)
        assert c["id"] == chunks[0]["id"]
        if not c["choices"]:
            assert usage is None and c.get("usage"), "one usage chunk, after every choice chunk"
            usage = c["usage"]
            continue
        for ch in c["choices"]:
            assert ch["index"] == 0
            d = ch["delta"]
            if d.get("role") is not None:
                roles.append(d["role"])
            if d.get("content"):
                assert not calls, f"content after a tool call began: {d['content']!r}"
                content.append(d["content"])
            for tc in d.get("tool_calls") or []:
                i, fn = tc["index"], tc.get("function") or {}
                if i == len(calls):
                    assert tc.get("id") and tc.get("type") == "function" and fn.get("name"), \
                        f"the first delta of tool call {i} needs its id, type and name: {tc}"
                    calls.append({"id": tc["id"], "name": fn["name"], "arguments": fn.get("arguments") or ""})
                else:
                    assert i == len(calls) - 1, f"tool call {i} after call {len(calls) - 1} began: {tc}"
                    assert not tc.get("id") and not fn.get("name"), \
                        f"a later delta of tool call {i} repeats its id or name: {tc}"
                    calls[i]["arguments"] += fn.get("arguments") or ""
            if ch.get("finish_reason"):
                finishes.append(ch["finish_reason"])
    assert roles == ["assistant"], f"the role comes once, in the first delta: {roles}"
    assert len(finishes) == 1, f"one finish_reason per choice: {finishes}"
    assert usage is not None
    return {"answer": answer("".join(content), [(c["name"], c["arguments"]) for c in calls], finishes[0]),
            "ids": [c["id"] for c in calls], "usage": usage}


# --- The fixture model ---------------------------------------------------------------------------

def test_fixture_model_writes_the_script(kiln_cli):
    model = ("--model", str(TOOL_MODEL_DIR))
    assert kiln_cli.generate("hi\n", 64, *model, "--temperature", "0") == SCRIPT
    assert kiln_cli.generate("hi\n", 64, *model, "--temperature", "1", "--seed", "3") == SCRIPT
    assert kiln_cli.generate(QUESTION[0]["content"], 64, *model, "--apply-chat-template", "true") == SCRIPT
    assert kiln_cli.generate('{"name": "get_time", "arguments": ', 64, *model) == P2 + P3


# --- Each tool_choice: non-streamed, streamed by hand, streamed through the openai accumulator -------

@pytest.mark.parametrize("case", list(CASES))
def test_answer(tool_client, case):
    r = create(tool_client, case)
    choice = r.choices[0]
    assert_expected(from_message(choice), case)
    assert choice.message.role == "assistant"
    check_ids(choice.message.tool_calls)
    assert all(tc.type == "function" for tc in choice.message.tool_calls or [])
    if not CASES[case][1][1]:
        assert not choice.message.tool_calls, "no tool call is expected, so tool_calls must be null or empty"


@pytest.mark.parametrize("case", list(CASES))
def test_stream_by_hand_matches_non_stream(tool_client, tool_http, case):
    whole = create(tool_client, case)
    got = stream_by_hand(tool_http, request(case))
    assert got["answer"] == from_message(whole.choices[0])
    assert_expected(got["answer"], case)
    assert len(set(got["ids"])) == len(got["ids"])
    assert got["usage"]["completion_tokens"] == whole.usage.completion_tokens
    assert got["usage"]["prompt_tokens"] == whole.usage.prompt_tokens


@pytest.mark.parametrize("case", list(CASES))
def test_stream_with_openai_accumulator_matches_non_stream(tool_client, case):
    whole = create(tool_client, case)
    with tool_client.chat.completions.stream(**request(case)) as stream:
        events = list(stream)
    final = stream.get_final_completion()
    assert len(final.choices) == 1
    assert from_message(final.choices[0]) == from_message(whole.choices[0])
    assert_expected(from_message(final.choices[0]), case)
    check_ids(final.choices[0].message.tool_calls)
    # The accumulator's events: one "done" per call, in order, with the whole arguments.
    done = [(e.name, e.arguments) for e in events if e.type == "tool_calls.function.arguments.done"]
    assert done == from_message(whole.choices[0])[1]
    content_done = [e.content for e in events if e.type == "content.done"]
    assert content_done == ([CASES[case][1][0]] if CASES[case][1][0] else [])


def test_continue_final_message_continues_the_answer(tool_client):
    # The rendering stops inside the assistant's message, after its trailing space, and the model
    # goes on from a space with P2 P3 (vLLM's extra fields, sent as the openai client sends them).
    messages = [*QUESTION, {"role": "assistant", "content": "The answer is "}]
    r = tool_client.chat.completions.create(model=TOOL_MODEL_NAME, messages=messages, max_tokens=16,
                                            extra_body={"continue_final_message": True,
                                                        "add_generation_prompt": False})
    assert r.choices[0].message.content == P2 + P3
    assert r.choices[0].finish_reason == "stop"


def test_sampled_answers_are_the_script(tool_client):
    # Sampling at temperature 1 gives the greedy text; each of n choices is parsed on its own.
    r = tool_client.chat.completions.create(**request("auto"), temperature=1.0, seed=3, n=2)
    assert sorted(c.index for c in r.choices) == [0, 1]
    for c in r.choices:
        assert_expected(from_message(c), "auto")
        check_ids(c.message.tool_calls)


def test_required_forces_a_call(tool_client):
    # The server starts the answer with '<tool_call>\n{"name": "'; the call's grammar lets the model
    # name either tool and holds the arguments to that tool's parameters (PyPI jsonschema checks).
    r = tool_client.chat.completions.create(**request("auto", tool_choice="required"))
    calls = r.choices[0].message.tool_calls
    assert calls, "tool_choice 'required' must answer with a tool call"
    check_ids(calls)
    parameters = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    for call in calls:
        jsonschema.validate(json.loads(call.function.arguments), parameters[call.function.name])
    assert r.choices[0].message.content is None
    assert r.choices[0].finish_reason == "tool_calls"


def test_a_forced_call_follows_its_parameters(tool_client):
    # Named get_weather: the fixture's own arguments fit get_weather's parameters and are kept; the
    # oracle is PyPI jsonschema on the tool's parameters.
    r = tool_client.chat.completions.create(**request("auto", tool_choice={"type": "function",
                                                                           "function": {"name": "get_weather"}}))
    (call,) = r.choices[0].message.tool_calls
    assert call.function.name == "get_weather"
    arguments = json.loads(call.function.arguments)
    jsonschema.validate(arguments, TOOLS[0]["function"]["parameters"])
    assert arguments == WEATHER_ARGS


def tool(name: str, parameters: dict) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def test_auto_calls_follow_their_parameters(tool_client):
    # tool_choice auto: the text is free, but "<tool_call>" in it opens a call the grammar holds to
    # the tools. Here the script's city, "Paris", is no integer, so the model must write another
    # value; PyPI jsonschema is the oracle on the arguments.
    tools = [tool("get_weather", {"type": "object", "properties": {"city": {"type": "integer"}}, "required": ["city"]}),
             TOOLS[1]]
    r = tool_client.chat.completions.create(**request("auto", tools=tools))
    calls = r.choices[0].message.tool_calls
    assert calls and r.choices[0].finish_reason == "tool_calls"
    assert r.choices[0].message.content == P0
    parameters = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    for call in calls:
        jsonschema.validate(json.loads(call.function.arguments), parameters[call.function.name])


def test_auto_calls_name_only_the_tools_offered(tool_client):
    # Offered get_time alone, the script's call to get_weather becomes one to get_time.
    r = tool_client.chat.completions.create(**request("auto", tools=[TOOLS[1]]))
    calls = r.choices[0].message.tool_calls
    assert calls and [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [("get_time", {})] * len(calls)


def test_auto_calls_are_left_free_when_a_schema_is_beyond_the_grammar(tool_client):
    # multipleOf is a keyword kiln's grammar refuses: the request is served as other servers serve
    # it, with the calls unenforced (the script as it is), instead of failing.
    weather = tool("get_weather", {"type": "object", "properties": {"city": {"type": "number", "multipleOf": 2}}})
    r = tool_client.chat.completions.create(**request("auto", tools=[weather, TOOLS[1]]))
    assert_expected(from_message(r.choices[0]), "auto")


def test_a_forced_call_with_response_format_is_a_400(tool_http):
    body = request("auto", tool_choice="required")
    body["response_format"] = {"type": "json_object"}
    assert_error(tool_http.post(CHAT, json=body), 400, "tool_choice")


def test_response_shape(tool_http):
    r = tool_http.post(CHAT, json=request("auto"))
    assert r.status_code == 200, r.text
    body = r.json()
    jsonschema.validate(body, TOOL_CHAT_SCHEMA)
    message = body["choices"][0]["message"]
    assert [tc["function"]["name"] for tc in message["tool_calls"]] == ["get_weather", "get_time"]
    assert body["choices"][0]["finish_reason"] == "tool_calls"


# --- A conversation that continues after the tool results -------------------------------------------

def follow_up(first, content) -> list[dict]:
    """The question, the assistant's tool calls as a client sends them back (arguments as JSON
    strings), and one tool result per call."""
    calls = [{"id": tc.id, "type": "function",
              "function": {"name": tc.function.name, "arguments": tc.function.arguments}}
             for tc in first.choices[0].message.tool_calls]
    results = {"get_weather": '{"temperature_c": 18, "sky": "clear"}', "get_time": "13:05"}
    return [*QUESTION, {"role": "assistant", "content": content, "tool_calls": calls},
            *[{"role": "tool", "tool_call_id": c["id"], "content": results[c["function"]["name"]]} for c in calls]]


def render_like_transformers(messages: list[dict], tools: list[dict]) -> str:
    """The fixture's chat template rendered as transformers' apply_chat_template does: a sandboxed
    Jinja2 environment with trim_blocks, lstrip_blocks and loopcontrols, tojson as json.dumps without
    ASCII escaping, tool call arguments given as objects, and the generation prompt added."""
    config = json.loads((TOOL_MODEL_DIR / "tokenizer_config.json").read_text(encoding="utf-8"))
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    messages = copy.deepcopy(messages)
    for m in messages:
        for tc in m.get("tool_calls") or []:
            tc["function"]["arguments"] = json.loads(tc["function"]["arguments"])
    special = {k: config[k] for k in ("bos_token", "eos_token") if config.get(k)}
    return env.from_string(config["chat_template"]).render(messages=messages, tools=tools,
                                                          add_generation_prompt=True, **special)


@pytest.mark.parametrize("content", [None, P0], ids=["content_null", "with_content"])
def test_follow_up_turn_is_accepted_and_rendered_like_transformers(tool_client, tool_http, content):
    first = create(tool_client, "auto")
    messages = follow_up(first, content)
    # The model writes its script after any chat prompt, so the second answer is parsed the same way.
    r = tool_client.chat.completions.create(model=TOOL_MODEL_NAME, messages=messages, tools=TOOLS, max_tokens=64)
    assert_expected(from_message(r.choices[0]), "auto")
    # How the server renders that conversation, read back through /tokenize and /detokenize.
    t = tool_http.post("/tokenize", json={"model": TOOL_MODEL_NAME, "messages": messages, "tools": TOOLS})
    assert t.status_code == 200, t.text
    d = tool_http.post("/detokenize", json={"model": TOOL_MODEL_NAME, "tokens": t.json()["tokens"]})
    assert d.status_code == 200, d.text
    want = render_like_transformers(messages, TOOLS)
    assert "<tool_response>\n13:05\n</tool_response>" in want and "get_weather" in want  # the oracle's own sanity
    assert d.json()["prompt"] == want
    assert t.json()["count"] == r.usage.prompt_tokens


# --- Errors ------------------------------------------------------------------------------------------

def test_named_tool_not_in_tools_is_rejected(tool_client):
    with pytest.raises(openai.BadRequestError) as e:
        tool_client.chat.completions.create(**request("auto", tool_choice={"type": "function",
                                                                           "function": {"name": "get_date"}}))
    assert e.value.status_code == 400


def test_tool_without_a_name_is_rejected(tool_http):
    tools = [{"type": "function", "function": {"description": "no name", "parameters": {"type": "object"}}}]
    r = tool_http.post(CHAT, json={"model": TOOL_MODEL_NAME, "messages": QUESTION, "tools": tools})
    assert_error(r, 400, names="tools[0]")


def test_tools_need_a_tool_call_parser(server):
    with server.client() as c:
        with pytest.raises(openai.BadRequestError) as e:
            c.chat.completions.create(model=MODEL_NAME, messages=QUESTION, tools=TOOLS, max_tokens=4)
    assert e.value.status_code == 400
    assert "--tool-call-parser" in e.value.body["message"], e.value.body


def test_tool_message_needs_tool_call_id(tool_client, tool_http):
    messages = follow_up(create(tool_client, "auto"), None)
    del messages[-1]["tool_call_id"]
    r = tool_http.post(CHAT, json={"model": TOOL_MODEL_NAME, "messages": messages, "tools": TOOLS})
    assert_error(r, 400, names="tool_call_id")
