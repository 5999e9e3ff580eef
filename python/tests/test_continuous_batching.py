"""ContinuousBatchingPipeline from Python: many threads adding requests to one pipeline, handles
read as output arrives, stop and cancel, metrics, and bad requests that hurt no other."""

from __future__ import annotations

import concurrent.futures
import threading

import pytest

import kiln
from conftest import MODEL_DIR, PROMPT, greedy

PROMPTS = [f"Q: What does {name} do?\nA:" for name in ("mmap", "fork", "read", "write", "open", "close", "pipe", "dup")]


@pytest.fixture(scope="module")
def cb():
    return kiln.ContinuousBatchingPipeline(MODEL_DIR, kiln.SchedulerConfig(max_num_seqs=8), "CPU")


@pytest.fixture(scope="module")
def alone(pipe):
    """Each prompt's greedy answer generated on its own by LLMPipeline."""
    return {p: pipe.generate(p, greedy(40)).texts[0] for p in PROMPTS}


def test_many_python_threads_share_one_pipeline(cb, alone):
    ids = iter(range(1000, 2000))
    lock = threading.Lock()

    def one(prompt):
        with lock:
            request_id = next(ids)
        handle = cb.add_request(request_id, prompt, greedy(40))
        text = ""
        while True:
            outputs = handle.read()
            if not outputs:
                break
            text += outputs[0].text
        assert handle.get_status() == kiln.GenerationStatus.FINISHED
        return prompt, text

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(one, PROMPTS * 3))
    for prompt, text in results:
        assert text == alone[prompt]
    metrics = cb.get_metrics()
    assert metrics.num_steps > 0 and metrics.requests == 0
    assert metrics.num_generated_tokens >= sum(len(text) > 0 for _, text in results)


def test_generate_returns_results_in_order(cb, alone):
    results = cb.generate(PROMPTS, [greedy(40)] * len(PROMPTS))
    assert [r.texts[0] for r in results] == [alone[p] for p in PROMPTS]
    assert all(r.status == kiln.GenerationStatus.FINISHED for r in results)
    assert results[0].m_generation_ids == results[0].get_generation_ids() == results[0].texts
    one_config = cb.generate(PROMPTS[:2], greedy(40))
    assert [r.texts[0] for r in one_config] == [alone[p] for p in PROMPTS[:2]]


def test_token_ids_and_chat_histories_are_prompts_too(cb, tokenizer, alone):
    ids = tokenizer.encode(PROMPTS[0]).input_ids.data[0]
    handle = cb.add_request(1, ids, greedy(40))
    assert handle.read_all()[0].text == alone[PROMPTS[0]]
    history = kiln.ChatHistory([{"role": "user", "content": "What does mmap do?"}])
    by_history = cb.add_request(2, history, kiln.GenerationConfig(max_new_tokens=16)).read_all()[0].generated_ids
    by_text = cb.add_request(3, "What does mmap do?", kiln.GenerationConfig(max_new_tokens=16)).read_all()
    assert by_history == by_text[0].generated_ids


def test_stop_keeps_what_was_generated_and_cancel_ends_the_request(cb):
    long = greedy(2000, ignore_eos=True)
    stopped = cb.add_request(10, PROMPT, long)
    assert stopped.read()  # something arrived
    stopped.stop()
    outputs = stopped.read_all()
    assert stopped.get_status() == kiln.GenerationStatus.STOP
    assert 0 < len(outputs[0].generated_ids) < 2000
    cancelled = cb.add_request(11, PROMPT, long)
    cancelled.cancel()
    cancelled.read_all()
    assert cancelled.get_status() == kiln.GenerationStatus.CANCEL


def test_a_bad_request_fails_alone(cb, alone):
    running = cb.add_request(20, PROMPTS[1], greedy(40))
    with pytest.raises(RuntimeError, match="top_k"):
        cb.add_request(21, PROMPT, greedy(8, do_sample=True, top_k=-1))
    with pytest.raises(RuntimeError, match="context"):
        cb.add_request(22, "word " * 5000, greedy(8))
    with pytest.raises(RuntimeError, match="20"):
        cb.add_request(20, PROMPT, greedy(8))  # that id is in flight
    assert running.read_all()[0].text == alone[PROMPTS[1]]


def test_step_and_has_non_finished_requests_drive_a_loop_as_in_openvino_genai(cb, alone):
    handle = cb.add_request(30, PROMPTS[2], greedy(40))
    while cb.has_non_finished_requests():
        cb.step()
    assert handle.get_status() == kiln.GenerationStatus.FINISHED
    assert handle.read_all()[0].text == alone[PROMPTS[2]]
    assert handle.get_perf_metrics().get_num_generated_tokens() == len(handle.read_all()[0].generated_ids)
