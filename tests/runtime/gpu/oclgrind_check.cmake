# Runs GPU tests under Oclgrind, which simulates an OpenCL device and reports every out-of-bounds
# access, data race between work-items and invalid API call. Passes when every test passed and
# Oclgrind reported nothing. (Oclgrind 21.10 may abort in its own teardown after the
# tests finish, so the verdict is read from the test report and the log, not the exit status.
# Its --uninitialized plugin cannot read the LLVM that Debian builds kernels with, so it is off.)
#   cmake -DOCLGRIND=path -DTEST_BINARY=path -DWORK_DIR=dir [-DGTEST_FILTER=pattern] -P oclgrind_check.cmake
if(NOT OCLGRIND)
  message(FATAL_ERROR "oclgrind is not installed (tools/install_dependencies.sh installs it): the kernels were not "
                      "checked for races and out-of-bounds accesses")
endif()
get_filename_component(name ${TEST_BINARY} NAME)
set(log ${WORK_DIR}/${name}.oclgrind.log)
set(report ${WORK_DIR}/${name}.oclgrind.json)
set(filter)
if(GTEST_FILTER)
  set(filter --gtest_filter=${GTEST_FILTER})
endif()
file(REMOVE ${log} ${report})
execute_process(COMMAND ${OCLGRIND} --data-races --check-api --log ${log} ${TEST_BINARY} ${filter}
                        --gtest_output=json:${report}
                OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT EXISTS ${report})
  message(FATAL_ERROR "${name} wrote no report under Oclgrind:\n${output}")
endif()
file(READ ${report} json)
string(JSON tests GET ${json} tests)
string(JSON failures GET ${json} failures)
if(tests EQUAL 0 OR NOT failures EQUAL 0)
  message(FATAL_ERROR "${failures} of ${tests} tests of ${name} failed under Oclgrind:\n${output}")
endif()
file(READ ${log} reports)
if(NOT reports STREQUAL "")
  message(FATAL_ERROR "Oclgrind reported errors running ${name}:\n${reports}")
endif()
message("${tests} tests of ${name} passed under Oclgrind with no races, out-of-bounds accesses or API errors")
