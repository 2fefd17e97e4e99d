#!/bin/sh
# The rule classes end to end (docs/npu-simulator.md, "Rule classes"):
# okk_vendor_limits goes beyond limits Sophgo's C-model accepts. By default it
# runs to the end, every case passing, and each warning is printed once per
# kernel, function and parameter; with NPUKIT_OKK_STRICT=1 the first one stops
# it with exit status 255 and the rule on stderr.
set -u
prog="$1"
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"; exit 1; }

"$prog" >"$out" 2>"$err"
rc=$?
[ $rc -eq 0 ] || fail "lenient run exited $rc"
grep -q "11 passed, 0 failed" "$out" || fail "not every case passed"
grep -q "npukit NPU rule violated" "$err" && fail "an error was reported"
# Each (kernel, function, parameter) warning exactly once, although wide_pool
# runs avg twice and the copies run twice.
for w in \
  "kernel 'wide_pool': okk_bdc_avg_pool2d: parameter 'input_shape->c' = 8192" \
  "kernel 'wide_pool': okk_bdc_max_pool2d: parameter 'input_shape->c' = 8192" \
  "kernel 'wide_copy': okk_gdma_32bit_cpy_S2L: parameter 'shape->c' = 131072" \
  "kernel 'wide_copy': okk_gdma_32bit_cpy_L2S: parameter 'shape->c' = 131072" \
  "kernel 'wide_matmul': okk_gdma_32bit_matrix_S2L: parameter 'cols_per_channel' = 128" \
  "kernel 'wide_matmul': okk_gdma_32bit_matrix_L2S: parameter 'cols_per_channel' = 64" \
  "kernel 'wide_matmul': okk_bdc_matmul: parameter 'left_cols_per_channel' = 128" \
  "kernel 'wide_matmul': okk_bdc_matmul: parameter 'right_cols_per_channel' = 64" \
  "kernel 'partial_tiles': okk_bdc_max_pool2d: parameter 'input_addr'" \
  "kernel 'past_allocation': okk_gdma_32bit_cpy_S2L: parameter 'src_addr'" \
  "kernel 'past_allocation': okk_gdma_32bit_cpy_L2S: parameter 'dst_addr'"; do
  n=$(grep -cF "npukit NPU rule warning: $w" "$err")
  [ "$n" -eq 1 ] || fail "warning printed $n times, not once: $w"
done
n=$(grep -c "npukit NPU rule warning: kernel 'wide_pool': okk_bdc_avg_pool2d" "$err")
[ "$n" -eq 1 ] || fail "avg pool warned $n times"

NPUKIT_OKK_STRICT=1 "$prog" >"$out" 2>"$err"
rc=$?
[ $rc -eq 255 ] || fail "strict run exited $rc, not 255"
grep -qF "npukit NPU rule violated: kernel 'wide_pool': okk_bdc_avg_pool2d: parameter 'input_shape->c' = 8192 is not allowed (allowed: [1, 4095])" "$err" ||
  fail "strict run: no violation message"
echo "okk_vendor_limits: lenient run passes with one warning per rule, strict run stops (255)"
