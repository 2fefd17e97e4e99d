# Warnings and floating-point rules for npukit's own targets.
# -ffp-contract=off: a fused multiply-add would change results, and exact
# semantics forbid that (every product is rounded before it is added).
# NPUKIT_WERROR (on in scripts/test.sh, so in CI) turns warnings into errors.
option(NPUKIT_WERROR "Treat compiler warnings in npukit's own code as errors" OFF)
function(npukit_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(NPUKIT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  target_compile_options(${target} PUBLIC -ffp-contract=off)
endfunction()
