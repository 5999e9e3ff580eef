# Compiles a data file into a library as a function returning its bytes.
#
#   kiln_embed_file(INPUT data/file OUTPUT gen.cpp FUNCTION name HEADER "x/y.hpp" NAMESPACE ns)
#       writes OUTPUT, defining `std::string_view ns::name()` (declared in HEADER); CMake
#       reconfigures when INPUT changes.
set(KILN_EMBED_TEMPLATE ${CMAKE_CURRENT_LIST_DIR}/embedded_file.cpp.in)

function(kiln_embed_file)
  cmake_parse_arguments(ARG "" "INPUT;OUTPUT;FUNCTION;HEADER;NAMESPACE" "" ${ARGN})
  get_filename_component(input ${ARG_INPUT} ABSOLUTE)
  file(READ ${input} hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," KILN_EMBED_BYTES "${hex}")
  file(RELATIVE_PATH KILN_EMBED_INPUT ${PROJECT_SOURCE_DIR} ${input})
  set(KILN_EMBED_FUNCTION ${ARG_FUNCTION})
  set(KILN_EMBED_HEADER ${ARG_HEADER})
  set(KILN_EMBED_NAMESPACE ${ARG_NAMESPACE})
  configure_file(${KILN_EMBED_TEMPLATE} ${ARG_OUTPUT} @ONLY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${input})
endfunction()
