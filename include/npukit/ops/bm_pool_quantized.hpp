// BM168x int8 pooling (seed 002, bm_atomic_{avg,max}_pool_quantized): the
// integer arithmetic of the atomic pooling unit as an operator of the core.
#pragma once

#include <cstdint>

#include "npukit/tensor.hpp"
#include "npukit/window.hpp"

namespace npukit {

enum class QuantPoolMode : uint8_t { avg, max };

struct BmPoolQuantParams {
  QuantPoolMode mode = QuantPoolMode::avg;
  Window2d window;  // kernel, stride, dilation, ins_h/ins_w, pads (ceil_mode unused)
  // The int32 result (avg: the window sum, padding and inserted zeros count 0;
  // max: the window maximum) is shifted right with round-half-up,
  // (acc + 2^(r-1)) >> r (arithmetic), then saturated to the input's type
  // (docs/semantics.md, "Rounding and requantization"). For avg the division by the window size is
  // folded into rshift by the compiler.
  int rshift = 0;
  // Seed 002 documents rshift_bit as the shift of the unit's int32 result for
  // both pools, with no exception for max: true applies it to max results
  // too (the bm_atomic face); false makes max ignore it.
  bool max_rshift = true;
  bool relu = false;  // if_relu: negative results become 0 after saturation
};

// x and y are s8 (input_sign) or u8, (N, C, H, W) -> (N, C, OH, OW). Max pads
// with -128 (s8) or 0 (u8); inserted zeros are elements of value 0.
Shape bm_pool_quantized_output_shape(const Shape& x, const BmPoolQuantParams& p);
void bm_pool_quantized(const TensorView& x, const TensorView& y, const BmPoolQuantParams& p);

namespace ref {
template <class T>
void bm_pool_quantized(const TensorView& x, const TensorView& y, const BmPoolQuantParams& p);
}  // namespace ref

}  // namespace npukit
