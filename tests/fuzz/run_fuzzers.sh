#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in their own build tree and runs each for a bounded
# time.
#   run_fuzzers.sh SOURCE_DIR BUILD_DIR SECONDS_PER_TARGET
set -euo pipefail
src=$1 build=$2 seconds=$3
cxx=$(command -v clang++-14 || command -v clang++ || true)
cc=$(command -v clang-14 || command -v clang || true)
if [ -z "$cxx" ] || [ -z "$cc" ]; then
  echo "clang is not installed (tools/install_dependencies.sh installs clang-14 and libclang-rt-14-dev)" >&2
  exit 1
fi
# -O1 with line tables, as the sanitizer trees: it compiles faster than -O2 -g and keeps file:line
# in the reports. Without precompiled headers: the instrumented and plain libraries' flags differ.
CC=$cc CXX=$cxx cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DKILN_BUILD_FUZZERS=ON -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_BENCH=OFF -DKILN_BUILD_PYTHON=OFF \
  -DKILN_PRECOMPILED_HEADERS=OFF > "$build.configure.log"
# UBSan only prints a report unless told to stop: a smoke run must fail on undefined behaviour.
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1"
targets=(tokenizer_fuzz jinja_fuzz gguf_fuzz openvino_fuzz grammar_fuzz server_fuzz model_files_fuzz)
cmake --build "$build" --target "${targets[@]}"
# One target's run; its output goes to BUILD/TARGET.log.
fuzz_one() {
  local target=$1
  local corpus="$build/corpus-$target"
  mkdir -p "$corpus"
  local dict=()
  [ -f "$src/tests/fuzz/${target%_fuzz}.dict" ] && dict=(-dict="$src/tests/fuzz/${target%_fuzz}.dict")
  local seeds=()  # committed inputs the target starts from (read-only), and a length limit for them
  [ "$target" = gguf_fuzz ] && seeds=("$src/tests/data/gguf" -max_len=32768)
  [ "$target" = grammar_fuzz ] && seeds=("$src/tests/data/grammar/fuzz_seeds" -max_len=4096)
  [ "$target" = server_fuzz ] && seeds=("$src/tests/data/server/fuzz_seeds" -max_len=4096)
  # A selector byte, then one file of a model directory (the largest seed is 41 KB).
  [ "$target" = model_files_fuzz ] && seeds=("$src/tests/data/fuzz/model_files" -max_len=65536)
  if [ "$target" = openvino_fuzz ]; then  # the fixtures' graphs, without their weights
    mkdir -p "$build/seeds-openvino"
    for xml in "$src"/tests/data/openvino/models/*/openvino_model.xml; do
      cp "$xml" "$build/seeds-openvino/$(basename "$(dirname "$xml")").xml"
    done
    seeds=("$build/seeds-openvino" -max_len=400000)
  fi
  "$build/tests/fuzz/$target" "$corpus" "${seeds[@]}" "${dict[@]}" -max_total_time="$seconds" -rss_limit_mb=4096 \
    -error_exitcode=1 -print_final_stats=1 > "$build/$target.log" 2>&1
}

# Two targets at a time (a libFuzzer process uses one core); each one's end is printed as it ends.
declare -A running=()  # pid -> target
failed=()
reap() {
  local pid rc=0
  wait -n -p pid || rc=$?
  echo "== ${running[$pid]}: ${seconds}s, exit $rc"
  tail -n 15 "$build/${running[$pid]}.log"
  [ "$rc" -eq 0 ] || failed+=("${running[$pid]}")
  unset "running[$pid]"
}
for target in "${targets[@]}"; do
  [ "${#running[@]}" -lt 2 ] || reap
  fuzz_one "$target" &
  running[$!]=$target
done
while [ "${#running[@]}" -gt 0 ]; do reap; done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
