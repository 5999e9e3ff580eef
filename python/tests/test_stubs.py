"""The type stubs (kiln/__init__.pyi) describe the module as it is, checked by mypy's stubtest,
and type-check the seed documents' code."""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys

import kiln

HERE = pathlib.Path(__file__).resolve().parent
STUB = pathlib.Path(kiln.__file__).with_name("__init__.pyi")


def mypy(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), MYPY_CACHE_DIR=os.devnull)
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, env=env, timeout=300)


def test_stubtest_finds_the_stubs_true_to_the_module():
    done = mypy("mypy.stubtest", "kiln", "--allowlist", str(HERE / "stubtest_allowlist.txt"))
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_stub_names_every_public_name_and_nothing_else():
    # stubtest's allowlist spares the classes' metaclass; this is what it would otherwise check.
    tree = ast.parse(STUB.read_text())
    stubbed = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            stubbed.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            stubbed.add(node.target.id)
    public = {name for name in stubbed if not name.startswith("_")} | {"__version__"}
    assert public == set(kiln.__all__)


def test_the_seed_documents_code_type_checks(tmp_path):
    for snippet in (HERE / "seed_snippets").glob("*.py"):
        code = snippet.read_text().replace("import openvino_genai as ov_genai", "import kiln as ov_genai")
        (tmp_path / snippet.name).write_text(code)
    done = mypy("mypy", "--strict", "--no-incremental", "--allow-untyped-defs", "--allow-untyped-calls", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
