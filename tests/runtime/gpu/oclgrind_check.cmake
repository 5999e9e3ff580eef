# Runs the GPU kernel tests under Oclgrind, which simulates an OpenCL device and reports every
# out-of-bounds access, data race between work-items and invalid API call. Passes when every test
# passed and Oclgrind reported nothing. (Oclgrind 21.10 may abort in its own teardown after the
# tests finish, so the verdict is read from the test report and the log, not the exit status.
# Its --uninitialized plugin cannot read the LLVM that Debian builds kernels with, so it is off.)
#   cmake -DOCLGRIND=path -DTEST_BINARY=path -DWORK_DIR=dir -P oclgrind_check.cmake
if(NOT OCLGRIND)
  message("oclgrind is not installed: the kernels were not checked for races and out-of-bounds accesses")
  return()
endif()
set(log ${WORK_DIR}/oclgrind.log)
set(report ${WORK_DIR}/oclgrind_report.json)
file(REMOVE ${log} ${report})
execute_process(COMMAND ${OCLGRIND} --data-races --check-api --log ${log} ${TEST_BINARY} --gtest_output=json:${report}
                OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT EXISTS ${report})
  message(FATAL_ERROR "the kernel tests wrote no report under Oclgrind:\n${output}")
endif()
file(READ ${report} json)
string(JSON tests GET ${json} tests)
string(JSON failures GET ${json} failures)
if(tests EQUAL 0 OR NOT failures EQUAL 0)
  message(FATAL_ERROR "${failures} of ${tests} kernel tests failed under Oclgrind:\n${output}")
endif()
file(READ ${log} reports)
if(NOT reports STREQUAL "")
  message(FATAL_ERROR "Oclgrind reported errors in the kernels:\n${reports}")
endif()
message("${tests} kernel tests passed under Oclgrind with no races, out-of-bounds accesses or API errors")
