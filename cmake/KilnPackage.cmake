# libkiln, the shared library of the public API (include/kiln/), and what `cmake --install`
# puts where: the kiln binary, libkiln with its headers, a CMake package (find_package(kiln)
# gives kiln::kiln) and a pkg-config file, and the embedded model the binary defaults to.
include(CMakePackageConfigHelpers)

# The layers the api lines of src/layers.txt name, whole, so that every KILN_API symbol is in
# the library; what they depend on comes in as they need it. Everything else stays hidden.

# (CMake wants a source of the target's own; the objects are all the layers'.)
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/package/libkiln.cpp CONTENT "// libkiln is made of the api layers' objects.\n")
add_library(kiln_shared SHARED ${PROJECT_BINARY_DIR}/package/libkiln.cpp)
add_library(kiln::kiln ALIAS kiln_shared)
set_target_properties(kiln_shared PROPERTIES
  OUTPUT_NAME kiln
  EXPORT_NAME kiln
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
# NOTE: the archives are named once, whole, among the link options; linked again below as
# libraries they give their dependencies and the relink, and add no member twice (every symbol
# is defined already). $<LINK_LIBRARY:WHOLE_ARCHIVE> would wrap each of CMake's repetitions of
# an archive in the link line, which defines its members twice.
set(kiln_api_archives)
foreach(layer IN LISTS KILN_API_LAYERS)
  list(APPEND kiln_api_archives $<TARGET_FILE:kiln_${layer}>)
  target_link_libraries(kiln_shared PRIVATE kiln_${layer})
endforeach()
target_link_options(kiln_shared PRIVATE LINKER:--whole-archive ${kiln_api_archives} LINKER:--no-whole-archive)
# A symbol that no layer defines is a link error here, not in a user's program.
target_link_options(kiln_shared PRIVATE LINKER:--no-undefined)
target_include_directories(kiln_shared INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(kiln_shared INTERFACE cxx_std_20)

install(TARGETS kiln RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS kiln_shared EXPORT kilnTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/models/kiln-tiny DESTINATION ${CMAKE_INSTALL_DATADIR}/kiln/models)

set(kiln_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${kiln_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kilnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/kilnConfig.cmake INSTALL_DESTINATION ${kiln_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/kilnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/kilnConfig.cmake ${PROJECT_BINARY_DIR}/package/kilnConfigVersion.cmake
  DESTINATION ${kiln_cmake_dir})

# The .pc file finds the prefix from its own place, so an installed tree can move.
file(RELATIVE_PATH kiln_pc_to_prefix /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/kiln.pc.in ${PROJECT_BINARY_DIR}/package/kiln.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/kiln.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
