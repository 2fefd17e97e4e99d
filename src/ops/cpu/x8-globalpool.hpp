// s8/u8 global pools: the max (pool2d with a whole-plane window) and the
// integer plane sums behind QLinearGlobalAveragePool under every profile.
//
// Integer max and integer sums are exact in any order, so the kernels stream
// a block of planes at a time: NCHW planes (H*W contiguous codes each) a few
// per register, reduced by a transpose tree; NHWC with channels in lanes.
// Codes are biased into unsigned order (s8: x ^ 0x80, i.e. x + 128) so that
// zero-filled lanes are neutral for both max and sums; the drivers unbias.
// The average's last step is the reference's formula per output: ONNX
// Runtime's integer path (int_sum_float) in vector form, any other arithmetic
// through qavg_finalize_scalar.
#pragma once

#include <cstdint>

#include "ops/cpu/pool2d_plan.hpp"
#include "ops/cpu/qavgpool.hpp"

namespace npukit::cpu {

// Channels of one image handled per kernel call, at most (the drivers' stack
// buffers): inputs too small to split over threads take blocks this large,
// larger inputs kGlobalSplitBlock, so that a few hundred channels still split.
constexpr int64_t kGlobalBlock = 1024;
constexpr int64_t kGlobalSplitBlock = 256;

// One image's channels [c0, c0 + count) (count <= kGlobalBlock).
// nchw: plane k starts at x + k*sC and holds HW contiguous codes;
// nhwc: channel k of position (h, w) is at x + h*sH + w*sW + k.
// x_end: end of the tensor's data (reads past a plane stay below it or are masked).
struct X8GlobalBlock {
  const uint8_t* x = nullptr;
  const uint8_t* x_end = nullptr;
  int64_t count = 0, H = 0, W = 0, sC = 0, sH = 0, sW = 0;
  bool nhwc = false;
  bool is_signed = false;
};

// ONNX Runtime's whole-image integer requantization, int_sum_float:
// out = clamp(round_half_even(float(sum - x_zp*N) * m), lo - y_zp, hi - y_zp) + y_zp.
struct X8IntSumFloat {
  int32_t bias_total = 0;       // subtracted from a biased sum: (s8 ? 128 : 0)*N + x_zp*N
  float m = 0, lo = 0, hi = 0;  // lo, hi: clamp bounds minus y_zp
  int32_t y_zp = 0;
  bool is_signed = false;  // s8 codes
  // |float(sum - bias_total) * m| < 2^30 for every possible sum: the clamp may
  // then follow the rounding as the saturation of integer packs (lo and hi are
  // integers, rounding is monotone: the same codes), no float min/max.
  bool saturating_packs = false;
};

// Per-ISA kernels. max: the code of each channel's maximum. sums: biased
// sum per channel (s8: the codes' sum + 128*H*W). finalize: count codes.
void x8_global_max_portable(const X8GlobalBlock& b, uint8_t* out);
void x8_global_sums_portable(const X8GlobalBlock& b, int32_t* sums);
void x8_global_int_sum_float_portable(const int32_t* sums, int64_t count, const X8IntSumFloat& q,
                                      uint8_t* out);
#if defined(__x86_64__)
void x8_global_max_avx2(const X8GlobalBlock& b, uint8_t* out);
void x8_global_sums_avx2(const X8GlobalBlock& b, int32_t* sums);
void x8_global_int_sum_float_avx2(const int32_t* sums, int64_t count, const X8IntSumFloat& q,
                                  uint8_t* out);
void x8_global_max_avx512(const X8GlobalBlock& b, uint8_t* out);
void x8_global_sums_avx512(const X8GlobalBlock& b, int32_t* sums);
void x8_global_int_sum_float_avx512(const int32_t* sums, int64_t count, const X8IntSumFloat& q,
                                    uint8_t* out);
#endif

// pool2d entries: s8/u8 max over the whole plane.
const char* x8_global_max_declines(const Pool2dProblem& pr);
void max_pool2d_x8_global_portable(const Pool2dProblem& pr);
#if defined(__x86_64__)
void max_pool2d_x8_global_avx2(const Pool2dProblem& pr);
void max_pool2d_x8_global_avx512(const Pool2dProblem& pr);
#endif

// QLinearAveragePool whose window is the whole plane (no padding, one output
// per plane): QLinearGlobalAveragePool under every profile.
struct QGlobalAvgProblem {
  BorrowedView x, y;
  const QLinearAvgPoolParams* params = nullptr;
};

// Whether a validated qlinear_average_pool call is a global pool (then the
// "qlinear_global_average_pool" list runs it).
bool qavg_is_global(const TensorView& x, const TensorView& y, const QLinearAvgPoolParams& p);

const char* x8_global_avg_declines(const QGlobalAvgProblem& pr);
void x8_global_avg_portable(const QGlobalAvgProblem& pr);
#if defined(__x86_64__)
void x8_global_avg_avx2(const QGlobalAvgProblem& pr);
void x8_global_avg_avx512(const QGlobalAvgProblem& pr);
#endif

const KernelList<QGlobalAvgProblem>& qlinear_global_average_pool_kernels();

}  // namespace npukit::cpu
