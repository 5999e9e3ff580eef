"""Fixtures for the black-box tests of `kiln serve`.

The server is started once per session as a real process on a free port (--port 0; the port is
read back from its "listening on" line) and shut down with SIGTERM at the end, where a non-zero
exit or a hang past 30 s fails the run: graceful drain is part of the contract. A second server
with small limits exists for the tests of --max-body-bytes and --max-tokens-limit, so that the
main one keeps its defaults; a third serves tests/data/checkpoints/tool_call_tiny, a model that
writes a fixed tool-call script, with --tool-call-parser hermes for the tool-calling tests. `kiln
run`, `kiln tokenize`, `kiln detokenize` and `kiln template`, which have their own tests, are the
oracles for greedy text and tokenization.
"""

from __future__ import annotations

import functools
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time

import httpx
import openai
import pytest

API_KEY = "test-key"
MODEL_NAME = "kiln-tiny"
TOOL_MODEL_NAME = "kiln-tools"
TOOL_MODEL_DIR = pathlib.Path(__file__).resolve().parent.parent / "data" / "checkpoints" / "tool_call_tiny"
STARTUP_TIMEOUT_S = 120.0
SHUTDOWN_TIMEOUT_S = 30.0

_LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)")


def kiln_binary() -> str:
    binary = os.environ.get("KILN_BINARY", "")
    if not binary:
        pytest.skip("KILN_BINARY is not set: it must name the kiln binary to test `kiln serve`")
    if not os.access(binary, os.X_OK):
        pytest.fail(f"KILN_BINARY={binary} is not an executable file")
    return binary


def child_env() -> dict:
    env = dict(os.environ)
    # Without --model the server and the CLI oracles must both use the embedded model.
    env.pop("KILN_MODEL", None)
    # The startup line is read from the log, so a quiet level inherited from ctest must not hide it.
    env["KILN_LOG_LEVEL"] = "info"
    return env


class KilnServer:
    """One `kiln serve` process; its stdout and stderr are drained by threads into `log`."""

    def __init__(self, binary: str, extra_args: list[str], model_name: str = MODEL_NAME, own_args: bool = False):
        # own_args: extra_args are the whole of `kiln serve`'s arguments (they must say --port 0).
        self.args = [binary, "serve", *extra_args] if own_args else [
            binary, "serve", "--host", "127.0.0.1", "--port", "0", "--api-key", API_KEY,
            "--served-model-name", model_name, *extra_args]
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self._port_found = threading.Event()
        self.port: int | None = None
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=child_env())
        self._threads = [threading.Thread(target=self._drain, args=(self.proc.stderr, True), daemon=True),
                         threading.Thread(target=self._drain, args=(self.proc.stdout, False), daemon=True)]
        for t in self._threads:
            t.start()

    def _drain(self, pipe, look_for_port: bool) -> None:
        for raw in iter(pipe.readline, b""):
            line = raw.decode("utf-8", errors="replace")
            with self._lock:
                self._lines.append(line)
            if look_for_port and self.port is None:
                m = _LISTENING.search(line)
                if m:
                    self.port = int(m.group(1))
                    self._port_found.set()
        pipe.close()

    def log(self) -> str:
        with self._lock:
            return "".join(self._lines)

    def log_tail(self, chars: int = 6000) -> str:
        return self.log()[-chars:]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not self._port_found.wait(0.1):
            if self.proc.poll() is not None:
                pytest.fail(f"kiln serve exited with {self.proc.returncode} before listening; "
                            f"output:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.kill()
                pytest.fail(f"no 'listening on http://127.0.0.1:PORT' line within {STARTUP_TIMEOUT_S:.0f} s; "
                            f"output so far:\n{self.log_tail()}")
        # /health answers 503 while the model loads, 200 once requests can be served.
        last = "no answer"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"kiln serve exited with {self.proc.returncode} while loading; "
                            f"output:\n{self.log_tail()}")
            try:
                r = httpx.get(self.url + "/health", timeout=5)
                if r.status_code == 200:
                    return
                last = f"{r.status_code} {r.text[:200]}"
                if r.status_code != 503:
                    break
            except httpx.TransportError as e:
                last = repr(e)
            time.sleep(0.1)
        self.kill()
        pytest.fail(f"GET /health never answered 200 (last: {last}); output:\n{self.log_tail()}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop_gracefully(self) -> None:
        if self.proc.poll() is not None:
            pytest.fail(f"kiln serve died during the tests with exit code {self.proc.returncode}; "
                        f"output:\n{self.log_tail()}")
        self.proc.send_signal(signal.SIGTERM)
        self.wait_exit_zero()

    def wait_exit_zero(self) -> None:
        """After SIGTERM: the process must exit 0 within SHUTDOWN_TIMEOUT_S."""
        try:
            code = self.proc.wait(timeout=SHUTDOWN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"kiln serve did not exit within {SHUTDOWN_TIMEOUT_S:.0f} s of SIGTERM; "
                        f"output:\n{self.log_tail()}")
        for t in self._threads:
            t.join(timeout=5)
        assert code == 0, f"kiln serve exited with {code} after SIGTERM; output:\n{self.log_tail()}"

    # Clients. Retries are off so that a failing request fails once, visibly, and fast.
    def client(self, api_key: str = API_KEY, timeout: float = 60.0) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.url + "/v1", api_key=api_key, max_retries=0, timeout=timeout)

    def http(self, timeout: float = 60.0, auth: bool = True) -> httpx.Client:
        headers = {"Authorization": f"Bearer {API_KEY}"} if auth else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, name: str, output, timeout: float = 60) -> None:
    """Waits until GET url/health answers 200 (a router in front of ready replicas); fails with the
    process's output (`output()`) when it exits or the time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{name} exited with {proc.returncode}: {output()}")
        try:
            if httpx.get(url + "/health", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            proc.terminate()
            proc.wait(timeout=30)
            pytest.fail(f"{name} did not answer /health through to a replica within {timeout:.0f} s: {output()}")
        time.sleep(0.1)


def start_server(extra_args: list[str], model_name: str = MODEL_NAME) -> KilnServer:
    server = KilnServer(kiln_binary(), extra_args, model_name)
    try:
        server.wait_ready()
    except BaseException:
        server.kill()
        raise
    return server


@pytest.fixture(scope="session")
def server():
    """The server with default limits, used by almost every test."""
    s = start_server([])
    yield s
    s.stop_gracefully()


SMALL_MAX_BODY_BYTES = 4096
SMALL_MAX_TOKENS_LIMIT = 16


@pytest.fixture(scope="session")
def limited_server():
    """A server with a small body limit and a small max_tokens limit."""
    s = start_server(["--max-body-bytes", str(SMALL_MAX_BODY_BYTES),
                "--max-tokens-limit", str(SMALL_MAX_TOKENS_LIMIT)])
    yield s
    s.stop_gracefully()


@pytest.fixture(scope="session")
def tool_server():
    """The tool-call fixture model, served as TOOL_MODEL_NAME with the Hermes tool-call parser."""
    s = start_server(["--model", str(TOOL_MODEL_DIR), "--tool-call-parser", "hermes"], TOOL_MODEL_NAME)
    yield s
    s.stop_gracefully()


class KilnCli:
    """The already-tested CLI subcommands, used as oracles; results are cached per argument list."""

    def __init__(self, binary: str):
        self.binary = binary

    @functools.lru_cache(maxsize=None)
    def _run(self, args: tuple, stdin: bytes | None = None) -> bytes:
        p = subprocess.run([self.binary, *args], input=stdin, capture_output=True, env=child_env(), timeout=120)
        if p.returncode != 0:
            raise AssertionError(f"kiln {' '.join(args)} failed with {p.returncode}:\n"
                                 f"{p.stderr.decode(errors='replace')}")
        return p.stdout

    @functools.lru_cache(maxsize=None)
    def _run_both(self, args: tuple) -> tuple[bytes, bytes]:
        p = subprocess.run([self.binary, *args], capture_output=True, env=child_env(), timeout=120)
        if p.returncode != 0:
            raise AssertionError(f"kiln {' '.join(args)} failed with {p.returncode}:\n"
                                 f"{p.stderr.decode(errors='replace')}")
        return p.stdout, p.stderr

    def generate(self, prompt: str, n: int, *flags: str) -> str:
        """The text of `kiln run`, which prints the generated text and then one newline."""
        text = self._run(("run", "--prompt", prompt, "-n", str(n), *flags)).decode("utf-8")
        assert text.endswith("\n"), f"kiln run output does not end with its newline: {text!r}"
        return text[:-1]

    def greedy(self, prompt: str, n: int, *flags: str) -> str:
        """The text `kiln run` generates greedily, past EOS."""
        return self.generate(prompt, n, "--temperature", "0", "--ignore-eos", *flags)

    def greedy_logprobs(self, prompt: str, n: int, k: int, *flags: str) -> list[tuple[float, int, list[float]]]:
        """Per generated token: (logprob, token id, the top-k logprobs), from `kiln run --logprobs`."""
        _, err = self._run_both(("run", "--prompt", prompt, "-n", str(n), "--temperature", "0", "--ignore-eos",
                                 "--logprobs", str(k), *flags))
        rows = []
        for line in err.decode("utf-8", errors="replace").splitlines():
            m = re.match(r"^\s*(-?\d+\.\d+)\s+(\d+)\s", line)
            if not m:
                continue
            tops = [float(x) for x in re.findall(r"\|\s+\d+\s+(-?\d+\.\d+)", line)]
            rows.append((float(m.group(1)), int(m.group(2)), tops))
        return rows

    def tokenize(self, text: str, special: bool = True) -> list[int]:
        args = ("tokenize",) + (() if special else ("--no-special",)) + ("-",)
        return json.loads(self._run(args, text.encode("utf-8")))

    def detokenize(self, ids: list[int]) -> str:
        out = self._run(("detokenize", *map(str, ids))).decode("utf-8")
        assert out.endswith("\n")
        return out[:-1]

    def template(self, messages: list[dict], add_generation_prompt: bool = True) -> str:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(messages, f)
            path = f.name
        try:
            args = ["template", "--messages", path] + (["--add-generation-prompt"] if add_generation_prompt else [])
            p = subprocess.run([self.binary, *args], capture_output=True, env=child_env(), timeout=60)
            assert p.returncode == 0, p.stderr.decode(errors="replace")
            return p.stdout.decode("utf-8")
        finally:
            os.unlink(path)


@pytest.fixture(scope="session")
def kiln_cli():
    return KilnCli(kiln_binary())


# The default server's clients, shared by a test module.
@pytest.fixture(scope="module")
def client(server):
    c = server.client()
    yield c
    c.close()


@pytest.fixture(scope="module")
def http(server):
    with server.http() as c:
        yield c


# The tool server's clients, shared by a test module.
@pytest.fixture(scope="module")
def tool_client(tool_server):
    c = tool_server.client()
    yield c
    c.close()


@pytest.fixture(scope="module")
def tool_http(tool_server):
    with tool_server.http() as c:
        yield c
