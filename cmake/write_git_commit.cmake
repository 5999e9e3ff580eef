# Run as a script at every build (cmake -DSOURCE_DIR=... -DOUTPUT=... -P write_git_commit.cmake):
# writes OUTPUT, a header defining KILN_GIT_COMMIT from `git rev-parse`, only when the commit
# changed. So `kiln --version` and export manifests name the commit that was built, not the one
# CMake last configured at, and an unchanged commit rebuilds nothing.
execute_process(COMMAND git rev-parse --short=12 HEAD
                WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
if(NOT commit)
  set(commit "unknown")
endif()
set(text "// Written at build time by cmake/write_git_commit.cmake.\n#pragma once\n#define KILN_GIT_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
