# Per-translation-unit ISA flags. Kernels for one ISA level live in their own .cpp files and are
# compiled with that level's flags only; everything else stays baseline x86-64.
#
#   kiln_isa_sources(ISA avx2|avx512|amx FILES a.cpp b.cpp)
set(KILN_ISA_FLAGS_avx2   "-mavx2;-mfma;-mf16c;-mbmi2")
set(KILN_ISA_FLAGS_avx512 "-mavx2;-mfma;-mf16c;-mbmi2;-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni;-mavx512bf16")
set(KILN_ISA_FLAGS_amx    "${KILN_ISA_FLAGS_avx512};-mamx-tile;-mamx-int8;-mamx-bf16")

function(kiln_isa_sources)
  cmake_parse_arguments(ARG "" "ISA" "FILES" ${ARGN})
  if(NOT DEFINED KILN_ISA_FLAGS_${ARG_ISA})
    message(FATAL_ERROR "kiln_isa_sources: unknown ISA '${ARG_ISA}' (accepted: avx2, avx512, amx)")
  endif()
  # No precompiled header: it was built without these flags, and an ISA file keeps std:: templates
  # out (CONTRIBUTING.md, "Add a kernel", says why).
  set_source_files_properties(${ARG_FILES} PROPERTIES COMPILE_OPTIONS "${KILN_ISA_FLAGS_${ARG_ISA}}"
                                                      SKIP_PRECOMPILE_HEADERS ON)
endfunction()
