# Warnings and floating-point rules for npukit's own targets.
# -ffp-contract=off: a fused multiply-add would change results, and exact
# semantics forbid that (every product is rounded before it is added).
function(npukit_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  target_compile_options(${target} PUBLIC -ffp-contract=off)
endfunction()
