# Element-wise kernels (part of kiln_kernels, included from src/kernels/CMakeLists.txt): RMSNorm
# (+ fused residual add), SwiGLU, RoPE, add; the scalar level adapts kernels/reference/elementwise;
# one translation unit per ISA.
set(KILN_ELEMENTWISE_DIR ${CMAKE_CURRENT_LIST_DIR})
kiln_isa_sources(ISA avx2 FILES ${KILN_ELEMENTWISE_DIR}/elementwise_avx2.cpp)
kiln_isa_sources(ISA avx512 FILES ${KILN_ELEMENTWISE_DIR}/elementwise_avx512.cpp)
set_property(SOURCE ${KILN_ELEMENTWISE_DIR}/elementwise_avx512.cpp APPEND PROPERTY COMPILE_OPTIONS -Wno-maybe-uninitialized)
target_sources(kiln_kernels PRIVATE
  ${KILN_ELEMENTWISE_DIR}/elementwise_kernels.cpp
  ${KILN_ELEMENTWISE_DIR}/elementwise_avx2.cpp
  ${KILN_ELEMENTWISE_DIR}/elementwise_avx512.cpp
)
