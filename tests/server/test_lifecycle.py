"""`kiln serve`'s lifecycle: a client that disconnects (streaming or not) cancels its generation
and frees its KV blocks, and SIGTERM lets a running stream finish before the process exits 0.
"""

import contextlib
import json
import signal

import httpx
import pytest

from conftest import MODEL_NAME, start_server
from serve_helpers import (
    COMP, PROMPTS, greedy_completion, idle, metric, wait_for_metrics)


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
