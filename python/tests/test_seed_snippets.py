"""Every Python snippet of the documents kiln was started from (copied verbatim into
seed_snippets/) runs on kiln with only the import, the model paths and the device changed, and
prints what the C++ API prints for the same request (`kiln run` / `kiln chat`)."""

from __future__ import annotations

import pathlib

from conftest import DRAFT_DIR, MODEL_DIR, kiln_cli, run_python

SNIPPETS = pathlib.Path(__file__).resolve().parent / "seed_snippets"


def adapted(name: str, replacements: dict[str, str]) -> str:
    """The snippet with each replacement made; each must occur, so nothing else is touched."""
    code = (SNIPPETS / name).read_text()
    replacements = {"import openvino_genai as ov_genai": "import kiln as ov_genai", **replacements}
    for old, new in replacements.items():
        assert old in code, f"{name}: '{old}' is not in the snippet"
        code = code.replace(old, new)
    return code


def run_snippet(code: str) -> str:
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_chat_with_a_streamer_prints_what_kiln_chat_prints():
    code = adapted(
        "stack_chat.py",
        {'LLMPipeline("llama31-8b-int4-ov", "GPU")': f'LLMPipeline("{MODEL_DIR}", "CPU")'},
    )
    printed = run_snippet(code)
    # The snippet's config keeps the model's do_sample=False, so temperature and top_p do not
    # apply: both turns are greedy, as `kiln chat` with the model's defaults.
    turns = "Summarise what a stateful OpenVINO model is.\nNow in one sentence.\n"
    answers = kiln_cli("chat", "--model", str(MODEL_DIR), "-n", "256", stdin=turns)
    # `kiln chat` ends each answer with a newline; the snippet's streamer prints them back to back.
    assert any(printed[:k] + "\n" + printed[k:] + "\n" == answers for k in range(len(printed) + 1)), (
        printed,
        answers,
    )


def test_speculative_decoding_prints_the_main_models_greedy_answer():
    code = adapted(
        "stack_speculative.py",
        {
            'draft_model("llama32-1b-int4-ov", "CPU")': f'draft_model("{DRAFT_DIR}", "CPU")',
            'LLMPipeline("llama31-8b-int4-ov", "GPU",': f'LLMPipeline("{MODEL_DIR}", "CPU",',
        },
    )
    printed = run_snippet(code)
    # Greedy speculative decoding gives the main model's own answer, chat template applied.
    alone = kiln_cli(
        "run", "--model", str(MODEL_DIR), "-n", "200", "--apply-chat-template", "true",
        "-p", "Explain paged attention briefly.",
    )
    assert printed == alone
    assert printed.strip()


def test_sampled_generation_prints_what_kiln_run_samples_with_the_same_seed():
    code = adapted(
        "model_card_generate.py",
        {'model_path = "./Llama-3.2-1B-Computer-Engineering-OpenVINO-INT4"': f'model_path = "{MODEL_DIR}"'},
    )
    printed = run_snippet(code)
    sampled = kiln_cli(
        "run", "--model", str(MODEL_DIR), "-n", "200", "--do-sample", "--temperature", "0.7", "--top-p", "0.9",
        "--repetition-penalty", "1.1", "--seed", "0", "-p", "Q: Explain the purpose of CPU cache memory.\nA:",
    )
    assert printed == sampled
