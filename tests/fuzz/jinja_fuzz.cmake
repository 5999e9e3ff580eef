# The chat-template engine's fuzz target (included from tests/fuzz/CMakeLists.txt, which sets
# KILN_FUZZ_FLAGS and checks for clang).
target_compile_options(kiln_jinja PRIVATE ${KILN_FUZZ_FLAGS})
add_executable(jinja_fuzz jinja_fuzz.cpp)
target_compile_options(jinja_fuzz PRIVATE -fsanitize=fuzzer,address,undefined)
target_link_options(jinja_fuzz PRIVATE -fsanitize=fuzzer,address,undefined)
target_link_libraries(jinja_fuzz PRIVATE kiln_jinja)
