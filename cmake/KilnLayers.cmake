# The layers of src/layers.txt as CMake targets.
#
#   kiln_layer_library(NAME name SOURCES ... [PUBLIC_LIBS ...] [PRIVATE_LIBS ...])
#       the static library kiln_<name>, linked to kiln_<dep> for every layer the file lists (made
#       of KILN_LIBRARY_OBJECTS_FROM's objects where that is set: cmake/KilnReusedObjects.cmake)
#   kiln_use_layer(TARGET target LAYER name)
#       an existing target (the kiln executable) gets a layer's include root and links
#
# Each layer's include root is a folder of the build tree holding one link to the layer's own
# source folder (build/layer_include/<layer>/<folder> -> src/<folder>), so `#include
# "genai/engine.hpp"` resolves only where kiln_genai is linked. (src/ itself is on no target's
# include path: nothing stops a wrong include like a missing path does.)
set(KILN_LAYERS_FILE ${PROJECT_SOURCE_DIR}/src/layers.txt)
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${KILN_LAYERS_FILE})

include(KilnLayersFile)
kiln_read_layers(${KILN_LAYERS_FILE})
if(KILN_LAYER_FILE_PROBLEMS)
  string(REPLACE ";" "\n  " text "${KILN_LAYER_FILE_PROBLEMS}")
  message(FATAL_ERROR "${text}")
endif()

function(kiln_use_layer)
  cmake_parse_arguments(ARG "" "TARGET;LAYER" "" ${ARGN})
  if(NOT DEFINED KILN_LAYER_FOLDER_${ARG_LAYER})
    message(FATAL_ERROR "kiln_use_layer: '${ARG_LAYER}' is not a layer of src/layers.txt")
  endif()
  set(folder ${KILN_LAYER_FOLDER_${ARG_LAYER}})
  set(root ${PROJECT_BINARY_DIR}/layer_include/${ARG_LAYER})
  get_filename_component(parent ${root}/${folder} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${folder} ${root}/${folder} SYMBOLIC)
  get_target_property(type ${ARG_TARGET} TYPE)
  set(scope PUBLIC)
  if(type STREQUAL "EXECUTABLE")
    set(scope PRIVATE)
  endif()
  target_include_directories(${ARG_TARGET} ${scope} $<BUILD_INTERFACE:${root}>)
  foreach(dep IN LISTS KILN_LAYER_DEPS_${ARG_LAYER})
    target_link_libraries(${ARG_TARGET} ${scope} kiln_${dep})
  endforeach()
endfunction()

function(kiln_layer_library)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;PUBLIC_LIBS;PRIVATE_LIBS" ${ARGN})
  if(KILN_LIBRARY_OBJECTS_FROM)
    kiln_reused_objects(OUT objects FROM ${KILN_LIBRARY_OBJECTS_FROM} TARGET kiln_${ARG_NAME} KIND layer)
    add_library(kiln_${ARG_NAME} STATIC ${objects})
    set_target_properties(kiln_${ARG_NAME} PROPERTIES LINKER_LANGUAGE CXX)  # no source to tell
  else()
    add_library(kiln_${ARG_NAME} STATIC ${ARG_SOURCES})
    kiln_precompile_headers(TARGET kiln_${ARG_NAME} SET library)
    kiln_list_objects(TARGET kiln_${ARG_NAME} KIND layer)
  endif()
  kiln_use_layer(TARGET kiln_${ARG_NAME} LAYER ${ARG_NAME})
  target_link_libraries(kiln_${ARG_NAME} PUBLIC ${ARG_PUBLIC_LIBS} PRIVATE ${ARG_PRIVATE_LIBS})
endfunction()
