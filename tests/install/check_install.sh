#!/usr/bin/env bash
# `cmake --install` into a fresh prefix, then build the consumer against it twice (through
# find_package(kiln) and through pkg-config) and check that both run, agree with the installed
# `kiln run` on the same greedy continuation, and catch the kiln::Error a missing model throws.
# libkiln must export the public API and nothing of the layers behind it.
#   check_install.sh BUILD_DIR WORK_DIR
set -euo pipefail
build=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
prompt=$'Q: What does mmap do?\nA:'

fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/kiln include/kiln/llm_pipeline.hpp include/kiln/error.hpp share/kiln/models/kiln-tiny/config.json; do
  [[ -e $prefix/$f ]] || fail "cmake --install did not install $f"
done
library=$(find "$prefix" -name 'libkiln.so.*.*' -type f | head -n1)
[[ -n $library ]] || fail "no libkiln.so in $prefix"
libdir=$(dirname "$library")

# Exported: kiln's public names (namespace kiln, types spelt in CamelCase) and the standard
# library's instantiations; never a layer's namespace (kiln::genai::, kiln::tok::, ...).
exported=$(nm -D --defined-only -C "$library")
leaks=$(grep -E ' kiln::[a-z_]+::' <<<"$exported" || true)
[[ -z $leaks ]] || fail "libkiln exports internal symbols:"$'\n'"$(head -n 20 <<<"$leaks")"
grep -q 'kiln::LLMPipeline::generate' <<<"$exported" || fail "libkiln does not export kiln::LLMPipeline::generate"
echo "libkiln exports $(grep -c ' kiln::' <<<"$exported") kiln symbols"

# The installed binary finds the installed model without being told where it is.
KILN_MODEL= "$prefix/bin/kiln" run -p "$prompt" -n 24 --temperature 0 >"$work/expected.txt" 2>/dev/null ||
  fail "the installed kiln run failed"
[[ $(wc -c <"$work/expected.txt") -gt 1 ]] || fail "the installed kiln run printed nothing"
model=$prefix/share/kiln/models/kiln-tiny

check_consumer() {
  local consumer=$1 how=$2
  local out=$work/$(basename "$consumer").txt
  "$consumer" "$model" "$prompt" >"$out" || fail "$how: the consumer failed"
  cmp -s "$out" "$work/expected.txt" ||
    fail "$how: the consumer printed"$'\n'"$(cat "$out")"$'\n'"where kiln run printed"$'\n'"$(cat "$work/expected.txt")"
  local status=0 err
  err=$("$consumer" "$work/no-such-model" "$prompt" 2>&1 >/dev/null) || status=$?
  [[ $status == 2 && $err == *"kiln::Error"*"no-such-model"* ]] ||
    fail "$how: a missing model gave status $status and '$err', not kiln::Error naming it"
  echo "$how: ok"
}

cmake -S "$here/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$work/cmake-configure.log" || fail "find_package(kiln) failed: $(cat "$work/cmake-configure.log")"
cmake --build "$work/cmake-build" >"$work/cmake-build.log" || fail "building with kiln::kiln failed: $(cat "$work/cmake-build.log")"
check_consumer "$work/cmake-build/consumer" "find_package(kiln)"

flags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs kiln) || fail "pkg-config does not find kiln"
# shellcheck disable=SC2086  # the flags are words
c++ -std=c++20 -O2 "$here/consumer/main.cpp" -o "$work/pkg-config-consumer" $flags -Wl,-rpath,"$libdir" ||
  fail "building with pkg-config's flags ($flags) failed"
check_consumer "$work/pkg-config-consumer" "pkg-config kiln"
