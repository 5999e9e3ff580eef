"""Fixtures for the tests of the deployments in deploy/ that run on this machine (Ray Serve)."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class KilnCli:
    """`kiln run`, the oracle for the text a deployment answers with."""

    def __init__(self, binary: str):
        self.binary = binary

    def greedy(self, prompt: str, n: int) -> str:
        env = dict(os.environ, KILN_LOG_LEVEL="error")
        done = subprocess.run([self.binary, "run", "--prompt", prompt, "-n", str(n), "--temperature", "0",
                               "--ignore-eos"], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.endswith("\n")
        return done.stdout[:-1]


@pytest.fixture(scope="session")
def kiln_cli() -> KilnCli:
    binary = os.environ.get("KILN_BINARY", "")
    if not binary or not os.access(binary, os.X_OK):
        pytest.fail("KILN_BINARY must name the kiln binary: it is the oracle")
    return KilnCli(binary)
