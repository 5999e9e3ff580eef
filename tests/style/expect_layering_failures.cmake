# The layering check must fail on tests/style/layering_fixture, naming each broken rule: a
# layer including a layer it does not list, a public header including a third-party header,
# and a stale copy of the graph in the docs.
#   cmake -DCHECK=check_layering.cmake -DFIXTURE=layering_fixture -P expect_layering_failures.cmake
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${FIXTURE} -P ${CHECK}
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(result EQUAL 0)
  message(FATAL_ERROR "the layering check passed a tree that breaks its rules:\n${out}${err}")
endif()
foreach(expected
    "src/low/low.hpp: includes \"high/high.hpp\" (layer high), which low does not list"
    "include/kiln/low_api.hpp: includes <nlohmann/json.hpp>"
    "docs/ARCHITECTURE.md: its copy of the graph differs")
  string(FIND "${err}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the layering check did not report: ${expected}\nIt printed:\n${err}")
  endif()
endforeach()
string(FIND "${err}" "src/high/high.hpp" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "the layering check reported an allowed include of src/high/high.hpp:\n${err}")
endif()
message(STATUS "the layering check reports each broken rule")
