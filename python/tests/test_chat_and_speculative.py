"""Chat sessions and speculative decoding through the Python API, against `kiln chat` and
`kiln run --draft`."""

from __future__ import annotations

import kiln
from conftest import DRAFT_DIR, MODEL_DIR, PROMPT, greedy, kiln_cli

TURNS = ["What does mmap do?", "And munmap?"]


def test_a_chat_keeps_its_history_and_answers_as_kiln_chat(pipe):
    pipe.start_chat("You are terse.")
    answers = [pipe.generate(turn, max_new_tokens=24).texts[0] for turn in TURNS]
    history = pipe.get_chat_history().get_messages()
    pipe.finish_chat()
    assert [m["role"] for m in history] == ["system", "user", "assistant", "user", "assistant"]
    assert [history[2]["content"], history[4]["content"]] == answers
    assert not pipe.in_chat() and len(pipe.get_chat_history()) == 0
    printed = kiln_cli("chat", "--model", str(MODEL_DIR), "--system", "You are terse.", "-n", "24",
                       stdin="\n".join(TURNS) + "\n")
    assert printed == "".join(answer + "\n" for answer in answers)


def test_a_later_turn_reuses_the_earlier_turns_cache(pipe):
    pipe.start_chat()
    pipe.generate(TURNS[0], max_new_tokens=24)
    second = pipe.generate(TURNS[1], max_new_tokens=24)
    pipe.finish_chat()
    metrics = second.perf_metrics
    assert metrics.get_num_prefilled_tokens() < metrics.get_num_input_tokens()


def test_greedy_speculative_decoding_equals_the_main_model_alone(pipe):
    draft = kiln.draft_model(DRAFT_DIR, "CPU")
    assert draft.models_path == DRAFT_DIR and draft.device == "CPU"
    speculative = kiln.LLMPipeline(MODEL_DIR, "CPU", draft_model=draft, adaptive_speculation=False)
    config = greedy(48, num_assistant_tokens=4)
    result = speculative.generate(PROMPT, config)
    assert result.texts == pipe.generate(PROMPT, greedy(48)).texts
    assert result.texts == [kiln_cli("run", "--model", str(MODEL_DIR), "--draft", str(DRAFT_DIR), "-p", PROMPT,
                                     "-n", "48", "--num-assistant-tokens", "4")[:-1]]
    assert result.perf_metrics.raw_metrics.num_proposed_tokens > 0
    assert 0 < result.perf_metrics.get_acceptance_rate().mean <= 1


def test_prompt_lookup_decoding_equals_plain_greedy(pipe):
    config = greedy(48, max_ngram_size=3, num_assistant_tokens=4)
    assert pipe.generate(PROMPT, config).texts == pipe.generate(PROMPT, greedy(48)).texts
