#include "npukit/ops/bm_pool_quantized.hpp"

#include "npukit/error.hpp"
#include "npukit/ops/quantized.hpp"

namespace npukit {

Shape bm_pool_quantized_output_shape(const Shape& x, const BmPoolQuantParams& p) {
  constexpr const char* fn = "npukit::bm_pool_quantized";
  check_range(fn, "rshift", p.rshift, 0, 31);
  check(!p.window.ceil_mode, fn, "ceil_mode", "true", "false (the unit has no ceil mode)");
  check(!p.window.truncated_count, fn, "truncated_count", "true",
        "false (the unit counts windows by the ONNX formula)");
  // The unit sums in int32: 255 * taps must fit (quantized.hpp, kMaxInt32Taps).
  check_range(fn, "kernel_h*kernel_w", p.window.kernel_h * p.window.kernel_w, 1, kMaxInt32Taps);
  return window_output_shape(x, p.window, fn);
}

void bm_pool_quantized(const TensorView& x, const TensorView& y, const BmPoolQuantParams& p) {
  constexpr const char* fn = "npukit::bm_pool_quantized";
  x.expect_rank(4, fn, "x");
  y.expect_shape(bm_pool_quantized_output_shape(x.shape(), p), fn, "y");
  check(x.dtype() == y.dtype(), fn, "y.dtype", dtype_name(y.dtype()), dtype_name(x.dtype()));
  if (x.dtype() == DType::s8) return ref::bm_pool_quantized<int8_t>(x, y, p);
  if (x.dtype() == DType::u8) return ref::bm_pool_quantized<uint8_t>(x, y, p);
  fail(fn, "x.dtype", dtype_name(x.dtype()), "s8 (input_sign) or u8");
}

}  // namespace npukit
