# Fails when a file of the library includes a header of a room above its own
# (docs/architecture.md, "The rooms"). Run at build time by the npukit_layers
# target (every library room depends on it), so an upward #include fails the
# build on every compiler and in every job, not only in a lint step.
#
#   cmake -DROOT=<source dir> -DSTAMP=<file to touch on success> -P NpukitCheckLayers.cmake
#
# Rooms by rank: core 0 < quant 1 < ops 2 < faces 3 (npu, isa, onnx, compat).
# A file may include its own room and any room of a lower rank; the faces do
# not include each other. The umbrella header (npukit.hpp) includes every room.
cmake_minimum_required(VERSION 3.25)

# Room of a path relative to ROOT ("" when the file is not part of a room).
function(npukit_room path out)
  set(room "")
  if(path MATCHES "^include/npukit/npukit\\.hpp$")
    set(room umbrella)
  elseif(path MATCHES "^include/npukit/compat/mico_")
    set(room compat)
  elseif(path MATCHES "^include/npukit/compat/")
    set(room npu)  # okk.h, bm_atomic.h, bmlib_runtime.h: the simulator's C faces
  elseif(path MATCHES "^include/npukit/([a-z]+)/")
    set(room ${CMAKE_MATCH_1})
  elseif(path MATCHES "^include/npukit/[^/]+$")
    set(room core)
  elseif(path MATCHES "^src/([a-z]+)/")
    set(room ${CMAKE_MATCH_1})
  endif()
  set(${out} ${room} PARENT_SCOPE)
endfunction()

function(npukit_rank room out)
  if(room STREQUAL "core")
    set(r 0)
  elseif(room STREQUAL "quant")
    set(r 1)
  elseif(room STREQUAL "ops")
    set(r 2)
  elseif(room MATCHES "^(npu|isa|onnx|compat)$")
    set(r 3)
  else()
    set(r 9)
  endif()
  set(${out} ${r} PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE files RELATIVE "${ROOT}" "${ROOT}/include/npukit/*.hpp" "${ROOT}/include/npukit/*.h"
     "${ROOT}/src/*.cpp" "${ROOT}/src/*.hpp" "${ROOT}/src/*.h" "${ROOT}/src/*.c" "${ROOT}/src/*.inc")
set(problems "")
foreach(f ${files})
  npukit_room("${f}" room)
  if(room STREQUAL "" OR room STREQUAL "umbrella")
    continue()
  endif()
  npukit_rank(${room} rank)
  get_filename_component(dir "${f}" DIRECTORY)
  file(STRINGS "${ROOT}/${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line ${lines})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" inc "${line}")
    # Resolve as the compiler does: next to the file, then include/, then src/.
    if(EXISTS "${ROOT}/${dir}/${inc}")
      file(RELATIVE_PATH target "${ROOT}" "${ROOT}/${dir}/${inc}")
    elseif(EXISTS "${ROOT}/include/${inc}")
      set(target "include/${inc}")
    elseif(EXISTS "${ROOT}/src/${inc}")
      set(target "src/${inc}")
    else()
      continue()  # generated (version.hpp) or a system header in quotes
    endif()
    npukit_room("${target}" to)
    if(to STREQUAL "" OR to STREQUAL room)
      continue()
    endif()
    npukit_rank(${to} to_rank)
    if(to_rank GREATER_EQUAL rank)
      string(APPEND problems "  ${f} (${room}) includes ${inc} (${to})\n")
    endif()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "npukit: #include against the layering (core < quant < ops < npu/isa/onnx/compat; "
                      "docs/architecture.md):\n${problems}")
endif()
file(TOUCH "${STAMP}")
