"""GenerationConfig and SchedulerConfig as openvino_genai users set them, and the Tokenizer
against `kiln tokenize` / `kiln template`."""

from __future__ import annotations

import copy
import json

import pytest

import kiln
from conftest import MODEL_DIR, PROMPT, cli_tokenize, kiln_cli


def test_every_field_is_an_attribute_and_keywords_set_them():
    config = kiln.GenerationConfig(max_new_tokens=7, do_sample=True, top_k=5, stop_strings=["\n\n"])
    assert (config.max_new_tokens, config.do_sample, config.top_k) == (7, True, 5)
    assert config.stop_strings == {"\n\n"}
    config.eos_token_ids = [1, 2]
    config.stop_token_ids = {3}
    config.logit_bias = {5: -100.0}
    assert config.eos_token_ids == {1, 2} and config.stop_token_ids == {3} and config.logit_bias == {5: -100.0}
    config.eos_token_id = 9
    assert config.eos_token_ids == {9} and config.eos_token_id == 9
    assert kiln.GenerationConfig().max_new_tokens is None
    with pytest.raises(TypeError, match="no field 'diversity_penalty'"):
        kiln.GenerationConfig(diversity_penalty=1.0)
    with pytest.raises(AttributeError):
        config.not_a_field = 1


def test_update_generation_config_validates():
    config = kiln.GenerationConfig()
    config.update_generation_config(num_beams=4, num_return_sequences=2, early_stopping=True)
    assert config.is_beam_search() and config.early_stopping == kiln.StopCriteria.EARLY
    config.early_stopping = "never"
    assert config.stop_criteria == kiln.StopCriteria.NEVER
    with pytest.raises(RuntimeError, match="num_return_sequences"):
        config.update_generation_config(num_return_sequences=8)
    copied = copy.deepcopy(config)
    copied.num_beams = 1
    assert config.num_beams == 4


def test_predicates():
    assert kiln.GenerationConfig().is_greedy_decoding()
    assert kiln.GenerationConfig(do_sample=True).is_multinomial()
    assert kiln.GenerationConfig(num_assistant_tokens=3).is_speculative_decoding()
    assert kiln.GenerationConfig(max_ngram_size=3).is_prompt_lookup()


def test_structured_output_config():
    config = kiln.GenerationConfig(max_new_tokens=8)
    config.structured_output_config = kiln.StructuredOutputConfig(choice=["yes", "no"])
    config.validate()
    with pytest.raises(RuntimeError):
        kiln.StructuredOutputConfig(regex="a+", choice=["a"]).validate()


def test_structured_output_is_followed(pipe):
    config = kiln.GenerationConfig(max_new_tokens=8, apply_chat_template=False)
    config.structured_output_config = kiln.StructuredOutputConfig(choice=["yes", "no"])
    assert pipe.generate(PROMPT, config).texts[0] in ("yes", "no")


def test_scheduler_config():
    scheduler = kiln.SchedulerConfig(max_num_seqs=3, enable_prefix_caching=False)
    scheduler.cache_size = 2
    assert (scheduler.max_num_seqs, scheduler.enable_prefix_caching, scheduler.cache_size) == (3, False, 2)
    with pytest.raises(TypeError, match="no field"):
        kiln.SchedulerConfig(use_cache_eviction=True)


def test_encode_matches_kiln_tokenize(tokenizer):
    for text in (PROMPT, "héllo wörld ✓", ""):
        assert tokenizer.encode(text).input_ids.data == [cli_tokenize(text)]
        assert tokenizer.encode(text, add_special_tokens=False).input_ids.data == [cli_tokenize(text, special=False)]


def test_batch_encode_pads_and_masks(tokenizer):
    texts = ["a b c d e f", "a"]
    right = tokenizer.encode(texts)
    left = tokenizer.encode(texts, padding_side="left")
    rows = [cli_tokenize(t) for t in texts]
    width = max(map(len, rows))
    assert right.input_ids.shape == left.input_ids.shape == (2, width)
    pad = tokenizer.get_pad_token_id() if tokenizer.get_pad_token_id() >= 0 else tokenizer.get_eos_token_id()
    assert right.input_ids.data[1] == rows[1] + [pad] * (width - len(rows[1]))
    assert left.input_ids.data[1] == [pad] * (width - len(rows[1])) + rows[1]
    assert right.attention_mask.data[1] == [1] * len(rows[1]) + [0] * (width - len(rows[1]))
    truncated = tokenizer.encode(texts, max_length=3, pad_to_max_length=True)
    assert truncated.input_ids.data == [rows[0][:3], rows[1] + [pad] * (3 - len(rows[1]))]
    with pytest.raises(ValueError, match="padding_side"):
        tokenizer.encode(texts, padding_side="middle")


def test_decode(tokenizer):
    ids = cli_tokenize(PROMPT)
    assert tokenizer.decode(ids) == PROMPT
    assert tokenizer.decode(ids, skip_special_tokens=False).endswith(PROMPT)
    assert tokenizer.decode([ids, ids[:3]]) == [PROMPT, tokenizer.decode(ids[:3])]
    assert tokenizer.decode(tokenizer.encode([PROMPT, PROMPT]).input_ids) == [PROMPT, PROMPT]


def test_apply_chat_template_matches_kiln_template(tokenizer, tmp_path):
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What does mmap do?"}]
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(messages))
    expected = kiln_cli("template", "--model", str(MODEL_DIR), "--messages", str(path), "--add-generation-prompt")
    rendered = tokenizer.apply_chat_template(kiln.ChatHistory(messages), add_generation_prompt=True)
    assert rendered == expected
    assert tokenizer.apply_chat_template(messages, add_generation_prompt=True) == rendered


def test_chat_history():
    history = kiln.ChatHistory()
    history.append({"role": "user", "content": "hi"})
    history.extend([{"role": "assistant", "content": "hello"}])
    assert len(history) == 2 and history[-1] == {"role": "assistant", "content": "hello"}
    assert history.pop() == {"role": "assistant", "content": "hello"}
    assert history.get_messages() == [{"role": "user", "content": "hi"}]
    with pytest.raises(ValueError, match="tool_calls"):
        history.append({"role": "assistant", "content": "", "tool_calls": []})
    with pytest.raises(ValueError, match="role"):
        history.append({"content": "x"})
    history.clear()
    with pytest.raises(IndexError):
        history.pop()


def test_tokenizer_from_a_directory(tokenizer):
    direct = kiln.Tokenizer(MODEL_DIR)
    assert direct.fingerprint() == tokenizer.fingerprint()
    assert direct.get_vocab_size() == len(direct.get_vocab())
    assert direct.get_eos_token_id() >= 0 and direct.get_bos_token() != ""
    with pytest.raises(RuntimeError, match="no_such_dir"):
        kiln.Tokenizer(MODEL_DIR / "no_such_dir")
