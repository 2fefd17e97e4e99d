#include "npukit/ops/bm_pool_quantized.hpp"

#include "npukit/error.hpp"

namespace npukit {

Shape bm_pool_quantized_output_shape(const Shape& x, const BmPoolQuantParams& p) {
  constexpr const char* fn = "npukit::bm_pool_quantized";
  check(x.size() == 4, fn, "x", "shape " + shape_text(x), "a 4-D (N, C, H, W) tensor");
  check_range(fn, "x.N", x[0], 1, INT32_MAX);
  check_range(fn, "x.C", x[1], 1, INT32_MAX);
  check_range(fn, "rshift", p.rshift, 0, 31);
  check(!p.window.ceil_mode, fn, "ceil_mode", "true", "false (the unit has no ceil mode)");
  const int64_t oh = axis_output_size(axis_h(p.window, x[2]), fn, 'h');
  const int64_t ow = axis_output_size(axis_w(p.window, x[3]), fn, 'w');
  return {x[0], x[1], oh, ow};
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
