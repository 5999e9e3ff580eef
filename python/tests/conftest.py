"""Fixtures for the tests of the Python package `kiln`.

The package is imported from the build tree (tests/support/run_pytest.sh puts BINARY_DIR/python on
the path). The oracle for what the Python API returns is the C++ API as the `kiln` binary runs it
(`kiln run`, `kiln chat`, `kiln tokenize`, `kiln template`), on the embedded model and its draft.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

import kiln

SOURCE_DIR = pathlib.Path(os.environ.get("KILN_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
MODEL_DIR = SOURCE_DIR / "models" / "kiln-tiny"
DRAFT_DIR = SOURCE_DIR / "models" / "kiln-tiny-draft"
PROMPT = "Q: What does mmap do?\nA:"
CLI_TIMEOUT_S = 120


def kiln_binary() -> str:
    binary = os.environ.get("KILN_BINARY", "")
    if not binary or not os.access(binary, os.X_OK):
        pytest.fail("KILN_BINARY must name the kiln binary: it is the oracle for the Python API")
    return binary


def kiln_cli(*args: str, stdin: str | None = None) -> str:
    """Runs `kiln ARGS` and returns its standard output (the generated text, or JSON)."""
    env = dict(os.environ, KILN_LOG_LEVEL="error")
    done = subprocess.run(
        [kiln_binary(), *args], input=stdin, capture_output=True, text=True, env=env, timeout=CLI_TIMEOUT_S
    )
    assert done.returncode == 0, f"kiln {' '.join(args)} failed: {done.stderr}"
    return done.stdout


def cli_tokenize(text: str, special: bool = True) -> list[int]:
    args = ["tokenize", "--model", str(MODEL_DIR)] + ([] if special else ["--no-special"]) + [text]
    return json.loads(kiln_cli(*args))


def run_python(code: str, timeout: float = CLI_TIMEOUT_S) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter with the same kiln on its path."""
    env = dict(os.environ, KILN_LOG_LEVEL="error", PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout)


@pytest.fixture(scope="session")
def pipe() -> kiln.LLMPipeline:
    return kiln.LLMPipeline(MODEL_DIR, "CPU")


@pytest.fixture(scope="session")
def tokenizer(pipe: kiln.LLMPipeline) -> kiln.Tokenizer:
    return pipe.get_tokenizer()


def greedy(max_new_tokens: int, **fields) -> kiln.GenerationConfig:
    """A raw-text greedy config, as `kiln run` generates by default."""
    return kiln.GenerationConfig(max_new_tokens=max_new_tokens, apply_chat_template=False, **fields)
