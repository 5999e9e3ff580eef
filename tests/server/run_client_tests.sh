#!/usr/bin/env bash
# Runs the black-box tests of `kiln serve` (tests/server/*.py) with the official OpenAI Python
# client, in a venv of their own so that the system Python is never touched.
#   run_client_tests.sh SOURCE_DIR BINARY_DIR
# $KILN_TEST_PYTHON, when set, is the interpreter to use as is (it must already have the
# packages of requirements.txt). Otherwise BINARY_DIR/server-test-venv is made once and reused
# while requirements.txt is unchanged. Exit code 77 (ctest's skip) when the venv or the packages
# cannot be had, e.g. without python3-venv or offline: that is a missing tool, not a server bug.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 SOURCE_DIR BINARY_DIR" >&2
  exit 2
fi
SOURCE_DIR="$(cd "$1" && pwd)"
BINARY_DIR="$(cd "$2" && pwd)"
REQUIREMENTS="$SOURCE_DIR/tests/server/requirements.txt"
if [ ! -x "$BINARY_DIR/kiln" ]; then
  echo "no kiln binary at $BINARY_DIR/kiln: build it first" >&2
  exit 1
fi

skip() {
  echo "SKIPPED: kiln serve client tests: $*" >&2
  exit 77
}

if [ -n "${KILN_TEST_PYTHON:-}" ]; then
  PYTHON="$KILN_TEST_PYTHON"
else
  VENV="$BINARY_DIR/server-test-venv"
  STAMP="$VENV/requirements.installed"
  if [ ! -x "$VENV/bin/python" ] || ! cmp -s "$REQUIREMENTS" "$STAMP"; then
    rm -rf "$VENV"
    python3 -m venv "$VENV" >/dev/null 2>&1 || skip "python3 -m venv failed (is python3-venv installed?)"
    if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQUIREMENTS"; then
      rm -rf "$VENV"
      skip "pip could not install $REQUIREMENTS (offline?)"
    fi
    cp "$REQUIREMENTS" "$STAMP"
  fi
  PYTHON="$VENV/bin/python"
fi

# No .pytest_cache or __pycache__ in the source tree.
export PYTHONDONTWRITEBYTECODE=1
export KILN_BINARY="$BINARY_DIR/kiln"
export KILN_SOURCE_DIR="$SOURCE_DIR"
exec "$PYTHON" -m pytest -q -p no:cacheprovider "$SOURCE_DIR/tests/server"
