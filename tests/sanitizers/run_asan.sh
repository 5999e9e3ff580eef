#!/usr/bin/env bash
# Builds kiln with AddressSanitizer + UndefinedBehaviorSanitizer (its own code; the test code is
# left plain, src/CMakeLists.txt says why) in its own build tree, and links the tests there from
# the default tree's test objects (KILN_TEST_OBJECTS_FROM: plain in both trees, so compiled once).
# Then runs the suite there: every functional test not labelled slow (the extended suites, this
# one among them, have their own trees; Oclgrind's interpreted device code would take minutes
# more, and the GPU host code runs under ASan in the PoCL tests). Any report fails its test
# (halt_on_error). The Python package is left out: an ASan-built extension cannot load into a
# Python that is not built with ASan. -O1 with line tables compiles in less than half the time of
# -O2 -g and keeps file:line in the reports.
#   run_asan.sh SOURCE_DIR BUILD_DIR DEFAULT_BUILD_DIR   (the last one built: its test objects)
set -euo pipefail
src=$1 build=$2 plain=$3
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DKILN_SANITIZE=ON -DKILN_BUILD_BENCH=OFF -DKILN_BUILD_PYTHON=OFF \
  -DKILN_TEST_OBJECTS_FROM="$plain" > "$build.configure.log"
cmake --build "$build"
# No detect_stack_use_after_return: its fake stacks defeat the chat templates' recursion guard, which
# measures the real stack. handle_sigbus=0: kiln's own handler names a mapped file that shrank
# (MappedFileDeathTest), and ASan's would take its place.
export ASAN_OPTIONS="halt_on_error=1 detect_leaks=1 strict_string_checks=1 handle_sigbus=0"
export LSAN_OPTIONS="suppressions=$src/tests/sanitizers/lsan.supp print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1"
# schemathesis against the instrumented server: fewer examples, and a minute for an answer that
# takes ten seconds or more under ASan (a long prompt on a busy machine), instead of its 10 s.
export KILN_SCHEMATHESIS_EXAMPLES=30 KILN_SCHEMATHESIS_REQUEST_TIMEOUT=60
# Left out:
# - install_and_consume builds a consumer without the sanitizer's flags against the instrumented
#   library, which cannot link: not a finding;
# - format, layering, layering_rejects_broken_rules and two_commands read files and run no kiln
#   code: the functional suite runs them;
# - SpeculativeSampling.EmbeddedPairWithDraftSamplesAsWithout: 3,400 sampled generations for a
#   chi-square test (22 s in the functional suite, 5 minutes here), through the same speculative
#   sampling code as SpeculativeSampling.EngineWithDraftSamplesTheMainModelsJointDistribution,
#   which runs here.
report="$build/asan-report.xml"
if ctest --test-dir "$build" --output-on-failure -j2 -LE 'slow|extended' --output-junit "$report" \
  -E '^(install_and_consume|format|layering|layering_rejects_broken_rules|two_commands|SpeculativeSampling\.EmbeddedPairWithDraftSamplesAsWithout)$'; then
  exit 0
fi
# LeakSanitizer's own tracer sometimes crashes as a passing test exits (lsan_tracer_crashes.py says
# more): such a test runs once more; any other failure fails the suite here.
again=$(python3 "$src/tests/sanitizers/lsan_tracer_crashes.py" "$report")
[ -n "$again" ] || exit 1  # ctest failed without a failed test (its own error)
echo "== LeakSanitizer's tracer crashed at the exit of a passing test; running it again: $again"
ctest --test-dir "$build" --output-on-failure -R "$again"
