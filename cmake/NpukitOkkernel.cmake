# Building OKKernel programs (a device .c file + a host .cpp file, Sophgo's
# contest layout) against npukit's simulated BM1684:
#
#   npukit_add_okkernel(<target> DEVICE kernel.c [...] HOST host.cpp [...])
#
# makes an executable whose device files compile as C and whose host files
# compile as C++, both with npukit's drop-in okk.h / bm_atomic.h /
# bmlib_runtime.h on the include path, linked with npukit. The same flags come
# from `pkg-config --cflags --libs npukit-okk`.
function(npukit_add_okkernel target)
  cmake_parse_arguments(ARG "" "" "DEVICE;HOST" ${ARGN})
  if(NOT ARG_DEVICE OR NOT ARG_HOST)
    message(FATAL_ERROR "npukit_add_okkernel(${target}): give DEVICE and HOST sources")
  endif()
  set_source_files_properties(${ARG_DEVICE} PROPERTIES LANGUAGE C)
  add_executable(${target} ${ARG_DEVICE} ${ARG_HOST})
  if(TARGET npukit::okk)
    target_link_libraries(${target} PRIVATE npukit::okk)
  else()
    target_link_libraries(${target} PRIVATE npukit_okk)
  endif()
endfunction()
