"""LLMPipeline.generate gives what the C++ API gives (`kiln run`) for every input form: a prompt,
several prompts, a ChatHistory, token ids; beam search and n > 1 return what kiln run prints."""

from __future__ import annotations

import re

import pytest

import kiln
from conftest import MODEL_DIR, PROMPT, greedy, kiln_cli

OTHER_PROMPT = "Q: What does fork do?\nA:"


def cli_text(prompt: str, *flags: str) -> str:
    """`kiln run`'s text for one sequence (it prints the text and a newline)."""
    out = kiln_cli("run", "--model", str(MODEL_DIR), "-p", prompt, *flags)
    assert out.endswith("\n")
    return out[:-1]


def test_a_prompt_gives_kiln_runs_text(pipe):
    result = pipe.generate(PROMPT, greedy(40))
    assert result.texts == [cli_text(PROMPT, "-n", "40")]
    assert str(result) == result.texts[0]
    assert len(result.tokens[0]) == result.perf_metrics.get_num_generated_tokens()


def test_keyword_arguments_set_config_fields(pipe):
    by_kwargs = pipe.generate(PROMPT, max_new_tokens=12, apply_chat_template=False)
    assert by_kwargs.texts == pipe.generate(PROMPT, greedy(12)).texts
    with pytest.raises(TypeError, match="no_such_field"):
        pipe.generate(PROMPT, no_such_field=1)


def test_the_chat_template_applies_by_default_as_in_openvino_genai(pipe):
    assert pipe.generate(PROMPT, max_new_tokens=20).texts == [
        cli_text(PROMPT, "-n", "20", "--apply-chat-template", "true")
    ]


def test_several_prompts_generate_together_and_equal_each_alone(pipe):
    result = pipe.generate([PROMPT, OTHER_PROMPT], greedy(24))
    assert result.texts == [cli_text(PROMPT, "-n", "24"), cli_text(OTHER_PROMPT, "-n", "24")]
    assert len(result.scores) == 2


def test_beam_search_returns_kiln_runs_beams_and_scores(pipe):
    config = greedy(16, num_beams=4, num_return_sequences=3)
    result = pipe.generate(PROMPT, config)
    out = kiln_cli("run", "--model", str(MODEL_DIR), "-p", PROMPT, "-n", "16", "--num-beams", "4",
                   "--num-return-sequences", "3")
    beams = re.findall(r"=== \d+ \(score (-?[0-9.]+)\) ===\n(.*?)\n(?==== |\Z)", out, re.S)
    assert [text for _, text in beams] == result.texts
    assert [float(score) for score, _ in beams] == pytest.approx(result.scores, abs=5e-5)
    # openvino_genai's str(): "score: text" lines.
    assert str(result).splitlines()[0] == f"{result.scores[0]:.6f}: {result.texts[0]}".splitlines()[0]


def test_a_chat_history_is_answered_with_the_template(pipe, tokenizer):
    history = kiln.ChatHistory([{"role": "user", "content": "What does mmap do?"}])
    answer = pipe.generate(history, max_new_tokens=20)
    assert answer.texts == [cli_text("What does mmap do?", "-n", "20", "--apply-chat-template", "true")]
    assert not pipe.in_chat()


def test_token_ids_give_encoded_results(pipe, tokenizer):
    short = "Q: ls?\nA:"
    inputs = tokenizer.encode([PROMPT, short])
    assert 0 in inputs.attention_mask.data[1]  # padded: the mask keeps the padding out
    encoded = pipe.generate(inputs, greedy(10))
    assert isinstance(encoded, kiln.EncodedResults)
    decoded = pipe.generate([PROMPT, short], greedy(10))
    assert encoded.tokens == decoded.tokens
    # The second call finds the first one's prompts in the prefix cache, whose keys and values were
    # computed in other step shapes: the same tokens, log-probabilities equal to float rounding.
    assert encoded.scores == pytest.approx(decoded.scores, rel=1e-4)


def test_perf_metrics_add_up_over_calls(pipe):
    pipe.reset_perf_metrics()
    first = pipe.generate(PROMPT, greedy(8))
    second = pipe.generate(PROMPT, greedy(8))
    total = pipe.get_perf_metrics()
    assert total.num_calls() == 2
    assert total.get_num_generated_tokens() == 16
    assert total.get_load_time() > 0
    summed = first.perf_metrics + second.perf_metrics
    assert summed.get_num_generated_tokens() == 16
    assert summed.get_ttft().mean > 0 and summed.get_tpot().mean > 0 and summed.get_throughput().mean > 0
    mean, std = summed.get_ttft()
    assert (mean, std) == (summed.get_ttft().mean, summed.get_ttft().std)


def test_bad_input_raises_kilns_message_as_runtime_error(pipe):
    with pytest.raises(RuntimeError, match="top_p"):
        pipe.generate(PROMPT, greedy(8, do_sample=True, top_p=2.0))
    with pytest.raises(kiln.Error, match="context"):
        pipe.generate("word " * 5000, greedy(8))
    with pytest.raises(RuntimeError, match="no_such_model"):
        kiln.LLMPipeline(MODEL_DIR.parent / "no_such_model", "CPU")
    with pytest.raises(RuntimeError, match="NOT_A_PROPERTY"):
        kiln.LLMPipeline(MODEL_DIR, "CPU", NOT_A_PROPERTY="1")
    with pytest.raises(TypeError):
        pipe.generate(42)
    with pytest.raises(ValueError, match=r"input_ids\[0\]\[1\] is 4294967296"):
        pipe.generate(kiln.TokenizedInputs([[1, 2**32]], [[1, 1]]))
    with pytest.raises(RuntimeError, match="99999"):
        pipe.generate(kiln.TokenizedInputs([[1, 99999]], [[1, 1]]), greedy(4))
    # The pipeline still works after every refusal.
    assert pipe.generate(PROMPT, greedy(8)).texts == [cli_text(PROMPT, "-n", "8")]


def test_device_properties_pass_through(pipe):
    u8 = kiln.LLMPipeline(MODEL_DIR, "CPU", KV_CACHE_PRECISION="u8", INFERENCE_NUM_THREADS=1)
    assert u8.generate(PROMPT, greedy(16)).texts == [
        cli_text(PROMPT, "-n", "16", "--property", "KV_CACHE_PRECISION=u8", "--property", "INFERENCE_NUM_THREADS=1")
    ]
    config_dict = kiln.LLMPipeline(MODEL_DIR, "CPU", {"KV_CACHE_PRECISION": "u8"})
    assert config_dict.generate(PROMPT, greedy(16)).texts == u8.generate(PROMPT, greedy(16)).texts
