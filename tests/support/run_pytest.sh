#!/usr/bin/env bash
# Runs one pytest suite of the tree (the black-box tests of `kiln serve` with the official OpenAI
# Python client, or the Python package's tests) in a venv of its own, so that the system Python
# is never touched.
#   run_pytest.sh SOURCE_DIR BINARY_DIR TEST_DIR
# $KILN_TEST_PYTHON, when set, is the interpreter to use as is (it must already have the
# packages of tests/requirements.txt). Otherwise BINARY_DIR/test-venv is made once and reused
# while requirements.txt is unchanged. Exit code 77 (ctest's skip) when PyPI cannot give the
# packages (offline): a missing registry, not a kiln bug. A missing python3-venv is a failure: it is
# one of tools/debian-packages.txt.
# The tests get the kiln binary ($KILN_BINARY), the source tree ($KILN_SOURCE_DIR) and the
# Python package built in BINARY_DIR/python on their path.
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 SOURCE_DIR BINARY_DIR TEST_DIR" >&2
  exit 2
fi
SOURCE_DIR="$(cd "$1" && pwd)"
BINARY_DIR="$(cd "$2" && pwd)"
TEST_DIR="$(cd "$3" && pwd)"
REQUIREMENTS="$SOURCE_DIR/tests/requirements.txt"
if [ ! -x "$BINARY_DIR/kiln" ]; then
  echo "no kiln binary at $BINARY_DIR/kiln: build it first" >&2
  exit 1
fi

skip() {
  echo "SKIPPED: pytest suite $TEST_DIR: $*" >&2
  exit 77
}

if [ -n "${KILN_TEST_PYTHON:-}" ]; then
  PYTHON="$KILN_TEST_PYTHON"
else
  VENV="$BINARY_DIR/test-venv"
  STAMP="$VENV/requirements.installed"
  # ctest starts the pytest suites side by side: one makes the venv while the others wait for it.
  exec 9> "$VENV.lock"
  flock 9
  if [ ! -x "$VENV/bin/python" ] || ! cmp -s "$REQUIREMENTS" "$STAMP"; then
    rm -rf "$VENV"
    if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
      echo "python3 -m venv failed: tools/install_dependencies.sh installs python3-venv" >&2
      exit 1
    fi
    if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQUIREMENTS"; then
      rm -rf "$VENV"
      skip "pip could not install $REQUIREMENTS (offline?)"
    fi
    cp "$REQUIREMENTS" "$STAMP"
  fi
  exec 9>&-
  PYTHON="$VENV/bin/python"
fi

# No .pytest_cache or __pycache__ in the source tree.
export PYTHONDONTWRITEBYTECODE=1
export KILN_BINARY="$BINARY_DIR/kiln"
export KILN_SOURCE_DIR="$SOURCE_DIR"
export PYTHONPATH="$BINARY_DIR/python${PYTHONPATH:+:$PYTHONPATH}"
exec "$PYTHON" -m pytest -q -p no:cacheprovider "$TEST_DIR"
