# Precompiled headers: the standard and third-party headers that most files include, parsed once
# per build tree instead of once per file (nlohmann/json, fmt, spdlog and GoogleTest are much of
# many files' compile time).
#
#   kiln_precompile_headers(TARGET target SET library|test)
#       the first target of a set builds the set's header; the others reuse it, which needs the
#       same compile flags: every library layer shares one, every test another.
#
# NOTE: not the binary's CLI11: its validators are objects at namespace scope, so every file that
# includes it compiles their code; a file of src/cli/ without CLI11 took 7.7 s with it in a
# precompiled header instead of 1.1 s, and the files with it gain nothing.
#
# Off in the ThreadSanitizer and fuzz trees (their flags differ between targets), which also keeps
# one build that proves each file includes what it uses.
option(KILN_PRECOMPILED_HEADERS "Precompile the standard and third-party headers most files include" ON)

set(KILN_PCH_HEADERS_library
  <algorithm> <cstdint> <cstring> <filesystem> <functional> <map> <memory> <optional> <span> <string>
  <string_view> <unordered_map> <utility> <vector> <fmt/format.h> <spdlog/spdlog.h> <nlohmann/json.hpp>)
set(KILN_PCH_HEADERS_test ${KILN_PCH_HEADERS_library} <cmath> <random> <gtest/gtest.h>)

function(kiln_precompile_headers)
  cmake_parse_arguments(ARG "" "TARGET;SET" "" ${ARGN})
  if(NOT KILN_PRECOMPILED_HEADERS)
    return()
  endif()
  get_property(owner GLOBAL PROPERTY KILN_PCH_OWNER_${ARG_SET})
  if(owner)
    target_precompile_headers(${ARG_TARGET} REUSE_FROM ${owner})
  else()
    target_precompile_headers(${ARG_TARGET} PRIVATE ${KILN_PCH_HEADERS_${ARG_SET}})
    set_property(GLOBAL PROPERTY KILN_PCH_OWNER_${ARG_SET} ${ARG_TARGET})
  endif()
endfunction()
