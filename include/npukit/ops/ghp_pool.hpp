// The GHP-FPGA accelerator's pool and add engines on whole uint8 tensors
// (seed 000), on top of the post-processing unit of quant/ghp.hpp.
//
// The ONNX operator QLinearAveragePool under ghp_rtl / ghp_golden is
// qlinear_average_pool of ops/quantized.hpp (apply_profile fills the GHP
// arithmetic). What is here is what an instruction drives directly: the pool
// engine with its raw fields (an average pool is the engine with the fields
// of avg_pool_engine_params), max pooling, and the PPU's two-input add.
#pragma once

#include <cstdint>

#include "npukit/profile.hpp"
#include "npukit/quant/ghp.hpp"
#include "npukit/tensor.hpp"
#include "npukit/window.hpp"

namespace npukit::ghp {

// x: u8 (N, C, H, W) -> (N, C, OH, OW) for the engine's window (dilation 1, no
// zero insertion); errors name `function`.
Shape pool_output_shape(const Shape& x, const Window2d& window, const char* function);

// The pool engine as an instruction drives it: window sum (or max) where taps
// outside the input read `pad_value`, the sum kept in `sum_bits` unsigned bits
// (0 = exact), plus `offset` (the instruction's {obj2, obj1} = -N*X_z), then the PPU.
struct PoolEngineParams {
  bool max = false;
  Window2d window;
  int pad_value = 0;
  int64_t offset = 0;
  int sum_bits = kPoolSumBits;
  PostProc post;
};
void ghp_pool_engine_u8(const TensorView& x, const TensorView& y, const PoolEngineParams& p);

// The fields the accelerator's compiler gives an AVGP instruction for a
// QLinearAveragePool with count_include_pad = 1: pads read X_z, offset -N*X_z,
// M = x_scale / (N*y_scale) decomposed in double, the window sum in 14 bits
// under ghp_rtl (exact under ghp_golden), the profile's rounding.
PoolEngineParams avg_pool_engine_params(Profile profile, const Window2d& window, double x_scale,
                                        int x_zp, double y_scale, int y_zp);

// Max pooling on the same PPU: max over the window (padding reads 0, the
// hardware's zero point for MaxPool) then m1 = 1024, n1 = 10, Y_z = 0.
void ghp_max_pool_u8(const TensorView& x, const TensorView& y, const Window2d& window,
                     PostRounding rounding = PostRounding::rtl_wrap10_half_up);

// QLinearAdd on the PPU's second mode: C_q = 2^-n (m1 (A_q - A_z) + m2 (B_q - B_z)) + C_z,
// with the same rounding as above. a, b, c: u8 tensors of one shape.
struct AddParams {
  int64_t m1 = 0, m2 = 0;
  int n = 1;
  int a_zp = 0, b_zp = 0, c_zp = 0;
  PostRounding rounding = PostRounding::rtl_wrap10_half_up;
};
// m1 = A_S / C_S and m2 = B_S / C_S share one exponent n (the compiler doubles
// both until the larger is >= 2^26); the rounding from `profile` (ghp_rtl or ghp_golden).
AddParams add_params(Profile profile, double a_scale, int a_zp, double b_scale, int b_zp,
                     double c_scale, int c_zp);
uint8_t add_requantize(int a, int b, const AddParams& p);
void ghp_add_u8(const TensorView& a, const TensorView& b, const TensorView& c, const AddParams& p);

}  // namespace npukit::ghp
