# Object files that one build tree compiles and another links instead of compiling the same
# sources again: the ASan tree links the default tree's test objects (plain C++ in both trees),
# and the wheel test's tree links the default tree's library objects (the same flags in both).
#
#   kiln_list_objects(TARGET target KIND test|layer)
#       writes BINARY_DIR/reusable_objects/KIND/TARGET.txt, the target's object files
#   kiln_reused_objects(OUT var FROM tree TARGET target KIND test|layer)
#       sets var to the object files that another, built tree listed for its target of that name
#   kiln_check_library_flags()
#       in a default tree, records how a library file compiles here (compiler, build type, flags,
#       the directory's compile options: call it where the library's options are all set); with
#       KILN_LIBRARY_OBJECTS_FROM, fails unless that tree recorded the same

function(kiln_list_objects)
  cmake_parse_arguments(ARG "" "TARGET;KIND" "" ${ARGN})
  file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/reusable_objects/${ARG_KIND}/${ARG_TARGET}.txt
       CONTENT "$<TARGET_OBJECTS:${ARG_TARGET}>")
endfunction()

function(kiln_reused_objects)
  cmake_parse_arguments(ARG "" "OUT;FROM;TARGET;KIND" "" ${ARGN})
  kiln_read_from_built_tree(objects ${ARG_FROM} reusable_objects/${ARG_KIND}/${ARG_TARGET}.txt)
  list(FILTER objects INCLUDE REGEX "\\.o$")  # not the precompiled header the list names too
  # Built by the other tree: this one links them and relinks when they change.
  set_source_files_properties(${objects} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  set(${ARG_OUT} ${objects} PARENT_SCOPE)
endfunction()

function(kiln_check_library_flags)
  string(TOUPPER "${CMAKE_BUILD_TYPE}" config)
  get_directory_property(options COMPILE_OPTIONS)
  set(ours "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}; build type ${CMAKE_BUILD_TYPE}; \
flags ${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${config}}; options ${options}; \
position-independent ${CMAKE_POSITION_INDEPENDENT_CODE}")
  set(record reusable_objects/layer/flags.txt)
  if(NOT KILN_LIBRARY_OBJECTS_FROM)
    file(WRITE ${PROJECT_BINARY_DIR}/${record} "${ours}")
    return()
  endif()
  kiln_read_from_built_tree(theirs ${KILN_LIBRARY_OBJECTS_FROM} ${record})
  if(NOT theirs STREQUAL ours)
    message(FATAL_ERROR "KILN_LIBRARY_OBJECTS_FROM: ${KILN_LIBRARY_OBJECTS_FROM} compiles the library with "
                        "\"${theirs}\", this tree with \"${ours}\"")
  endif()
endfunction()

# A file that another tree wrote; this tree configures again when it changes.
function(kiln_read_from_built_tree var tree file)
  if(NOT EXISTS ${tree}/${file})
    message(FATAL_ERROR "${tree}/${file} does not exist: ${tree} must be a configured and built default tree "
                        "of this source tree")
  endif()
  file(READ ${tree}/${file} content)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${tree}/${file})
  set(${var} "${content}" PARENT_SCOPE)
endfunction()
