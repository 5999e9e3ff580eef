#!/usr/bin/env bash
# Builds the tests of kiln's concurrent components with ThreadSanitizer in their own build tree
# and runs them; any report fails the run (halt_on_error). -O1 with line tables, as TSan's
# documentation advises, compiles in less than half the time of -O2 -g.
#   run_tsan.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
targets=(genai_continuous_batching_test server_test)
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DKILN_SANITIZE_THREAD=ON -DKILN_BUILD_BENCH=OFF \
  -DKILN_BUILD_PYTHON=OFF > "$build.configure.log"
cmake --build "$build" --target "${targets[@]}"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 history_size=4 suppressions=$src/tests/sanitizers/tsan.supp"
export KILN_LOG_LEVEL=error
# Each binary's tests in two shards side by side (GoogleTest's sharding): the engine's tests keep
# one core busy for most of their 80 s.
failed=0
for target in "${targets[@]}"; do
  echo "== $target under ThreadSanitizer"
  binary=$(find "$build/tests" -name "$target" -type f -perm -u+x | head -n 1)
  pids=()
  for shard in 0 1; do
    GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$shard "$binary" > "$build/$target.shard$shard.log" 2>&1 &
    pids+=($!)
  done
  for shard in 0 1; do
    wait "${pids[$shard]}" || { echo "== $target, shard $shard of 2: failed"; failed=1; }
    cat "$build/$target.shard$shard.log"
  done
done
exit "$failed"
