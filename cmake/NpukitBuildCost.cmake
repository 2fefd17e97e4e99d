# Compile-time savings that change no code npukit ships: CI builds everything
# twice from scratch (docs/ci.md has the measured costs).

# Standard headers that most library files include, parsed once per room into
# a precompiled header instead of once per file (~0.3-0.5 s of CPU a file
# under g++ -O3 and clang's sanitizers). Every library file includes its
# standard headers before any ISA pragma (ops/cpu/isa-*-begin.inc), so the
# kernels' code does not change: g++'s disassembly of 257 of the 266 library
# objects was identical, the other 9 (none a kernel) differ only in which
# std::string helpers of their error messages are emitted. Not under a compiler
# launcher: ccache caches no precompiled header without extra settings, and
# there each file's object is cached anyway. Files with flags of their own
# (`own_flags`: in the fuzz build, the coverage-instrumented files of a room
# that also holds uninstrumented kernels) cannot share the header.
set(NPUKIT_ROOM_PCH_HEADERS algorithm cmath cstddef cstdint cstdlib cstring functional limits
    map memory stdexcept string type_traits utility vector)
function(npukit_room_pch target sources own_flags)
  if(CMAKE_CXX_COMPILER_LAUNCHER OR NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    return()
  endif()
  set(shared ${sources})
  if(own_flags)
    list(REMOVE_ITEM shared ${own_flags})
    set_source_files_properties(${own_flags} TARGET_DIRECTORY ${target}
                                PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endif()
  if(NOT shared)
    return()
  endif()
  foreach(h ${NPUKIT_ROOM_PCH_HEADERS})
    target_precompile_headers(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:<${h}>>")
  endforeach()
endfunction()

# The CLI only drives the library (the cli tests run it on small inputs): it
# is compiled at -O0 in the sanitizer build, where clang with ASan + UBSan
# spent 22 s of CPU on its CLI11 unity file at -O1 and 8 s at -O0. The
# library keeps the build's -O1, and the sanitizers check both alike.
function(npukit_driver_code target)
  if(NPUKIT_SANITIZE)
    target_compile_options(${target} PRIVATE -O0)
  endif()
endfunction()

# The portable pool2d kernels (every template of ops/cpu/pool2d_core.inc over
# plain lane loops, the fallback below AVX2) at -O2 instead of Release's -O3:
# g++ spent 104 s of CPU on this one file at -O3 (a fifth of the library),
# 43 s at -O2. The AVX2 and AVX-512 copies keep -O3. With flags of its own,
# the file goes without the room's precompiled header (built at -O3).
function(npukit_lighter_portable_pools target)
  set(f ${PROJECT_SOURCE_DIR}/src/ops/cpu/f32-x8-pool2d-portable.cpp)
  set_property(SOURCE ${f} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS
               $<$<CONFIG:Release>:-O2>)
  set_property(SOURCE ${f} TARGET_DIRECTORY ${target} PROPERTY SKIP_PRECOMPILE_HEADERS ON)
endfunction()

# The heaviest ISA kernel bodies of the sanitizer build (unrolled, inlined
# vector code) have AddressSanitizer call its check functions (__asan_loadN,
# ...) instead of inlining a shadow check and a cold report call at every
# access: the same accesses are checked with the same reports, in far less
# code to optimize and emit (clang 14, ASan + UBSan -O1,
# f32-dwconv-nchw-avx512.cpp: 87 -> 38 CPU s, object 12.2 -> 6.2 MB). Named
# files, each checked with the sanitized tests of its kernels: the flag
# changes code generation (under it clang swapped the operands of a plain
# scalar `+` in f32-x8-pool2d-avx512.cpp, and another NaN payload came out
# until every NaN-relevant pool add and multiply was pinned in inline asm).
set(NPUKIT_OUTLINED_ASAN_KERNELS
    f32-conv-1x1-avx2 f32-conv-1x1-avx512 f32-conv-ocl-avx2 f32-conv-ocl-avx512
    f32-dwconv-nchw-avx2 f32-dwconv-nchw-avx512 f32-pool2d-s2-avx2 f32-pool2d-s2-avx512
    f32-x8-pool2d-avx2 f32-x8-pool2d-avx512
    # session 16, the next heaviest of a cold run: 120 -> 65 CPU s (docs/ci.md)
    f32-globalpool-avx2 f32-globalpool-avx512 f32-dwconv-nchwc-avx2 f32-dwconv-nchwc-avx512
    f32-conv-nchw-avx512 f32-conv-1x1-dense-avx512 x8-qavgpool-k2s2-nchw-avx512vbmi
    x8-maxpool2d-s2-avx512vbmi x8-qavgpool-u16-avx512)
function(npukit_outlined_asan_checks target)
  if(NOT NPUKIT_SANITIZE)
    return()
  endif()
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    set(flag -mllvm -asan-instrumentation-with-call-threshold=0)
  else()
    set(flag --param=asan-instrumentation-with-call-threshold=0)
  endif()
  foreach(name ${NPUKIT_OUTLINED_ASAN_KERNELS})
    set(f ${PROJECT_SOURCE_DIR}/src/ops/cpu/${name}.cpp)
    if(NOT EXISTS ${f})  # a renamed kernel file must not drop out silently
      message(FATAL_ERROR "NPUKIT_OUTLINED_ASAN_KERNELS: no ${f}")
    endif()
    set_property(SOURCE ${f} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS ${flag})
  endforeach()
endfunction()
