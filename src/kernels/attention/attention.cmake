# Paged attention kernels (part of kiln_kernels, included from src/kernels/CMakeLists.txt so the
# per-ISA source properties apply in kiln_kernels' directory): ISA-free API and merging, the
# scalar twin, and one translation unit per ISA compiled with that ISA's flags only.
set(KILN_ATTENTION_DIR ${CMAKE_CURRENT_LIST_DIR})
kiln_isa_sources(ISA avx2 FILES ${KILN_ATTENTION_DIR}/attention_avx2.cpp ${KILN_ATTENTION_DIR}/attention_rows_avx2.cpp)
kiln_isa_sources(ISA avx512 FILES ${KILN_ATTENTION_DIR}/attention_avx512.cpp)
set_property(SOURCE ${KILN_ATTENTION_DIR}/attention_avx512.cpp APPEND PROPERTY COMPILE_OPTIONS -Wno-maybe-uninitialized)
target_sources(kiln_kernels PRIVATE
  ${KILN_ATTENTION_DIR}/paged_attention.cpp
  ${KILN_ATTENTION_DIR}/attention_reference.cpp
  ${KILN_ATTENTION_DIR}/attention_avx2.cpp
  ${KILN_ATTENTION_DIR}/attention_rows_avx2.cpp
  ${KILN_ATTENTION_DIR}/attention_avx512.cpp
)
