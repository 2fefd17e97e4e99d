// Fast QLinearAveragePool: the per-call plan shared by every variant, the
// kernel list and the exact scalar tail.
//
// Every variant computes per output the same three things the reference
// computes tap by tap: the integer sum of the codes on the input, the fp32 sum
// of x_scale*(x - x_zp) over those taps in row-major order (float_mean only),
// and the tap counts (valid, clipped). Integer sums are exact in any order;
// the fp32 sum keeps the reference's order per output and is vectorized across
// outputs (NCHW: along a row; NHWC: across channels). The final step is either
// the scalar formula of the reference (qavg_finalize_scalar, any rounding) or
// a vector form of it that is exact for round-half-to-even.
#pragma once

#include <cstdint>
#include <vector>

#include "npukit/ops/bm_pool_quantized.hpp"
#include "npukit/ops/quantized.hpp"
#include "npukit/quant/ghp.hpp"
#include "ops/kernel_list.hpp"

namespace npukit::cpu {

// One spatial axis: for output o the valid taps are k in [k0, k0 + valid) and
// read input position start + o*stride + k (checked when the plan is built).
struct QAvgAxis {
  int64_t out = 0, kernel = 0, stride = 1, start = 0;
  std::vector<int32_t> first;    // input position of the first valid tap
  std::vector<int32_t> valid;    // taps on the input (a contiguous run)
  std::vector<int32_t> clipped;  // taps on the input or its padding (not past it)
  bool any_empty = false;        // some window has no tap on the input
};

struct QAvgPlan {
  DType dtype = DType::u8;
  QAvgArith arith = QAvgArith::float_mean;  // after ORT's whole-image switch
  AvgDivisor divisor = AvgDivisor::valid_count;
  Rounding rounding = Rounding::half_to_even;
  int64_t N = 0, C = 0, H = 0, W = 0, taps = 0;
  QAvgAxis h, w;
  int32_t lo = 0, hi = 0, x_zp = 0, y_zp = 0;
  float x_scale = 1, y_scale = 1;
  float int_sum_multiplier = 0;  // int_sum_float: x_scale / (y_scale * taps)
  // float_mean whose fp32 sums are exact (exact_float_sum, see make_qavg_plan):
  // the reference's fsum is float(sum_m * (sum - valid * x_zp)) * sum_pow2, so
  // the kernels form integer sums only.
  bool exact_float_sum = false;
  int32_t sum_m = 0;
  float sum_pow2 = 0;
  // float_mean with inexact fp32 sums (calibrated scales), checked
  // (qavgpool-fmean-check.cpp): from the integer sum D of an output, v' =
  // fl(fl(D * fmean_check_multiplier(div)) + y_zp) gives the reference's code
  // rint(v') when |v' - rint(v')| < fmean_check_below; other outputs redo the
  // reference's chain (qavg_fmean_redo). fmean_check_error: the bound E.
  bool fmean_checked = false;
  float fmean_check_below = 0;
  double fmean_check_error = 0;
  float scale_ratio = 0;  // int_sum_requant: x_scale / y_scale
  // int_sum_requant: [d] = scale_ratio / d for every divisor d <= taps, [0] = 0
  // (empty windows give y_zp); empty when the window is too large to tabulate.
  std::vector<float> multiplier_by_divisor;
  bool zp_inside = false;  // int_sum_requant: round(v + y_zp)
  ghp::PostProc post;      // int_sum_ghp
  int64_t sum_mask = -1;   // int_sum_ghp: window-sum register (-1: exact)
  // int_sum_ghp: the output code of every window sum s = sum + (taps - valid)
  // * x_zp (masked), s in [0, size), when the call has enough outputs to pay
  // for it (the PPU's 64-bit arithmetic per output otherwise).
  std::vector<uint8_t> ghp_table;
  // bm_pool_quantized (avg): (sum + 2^(r-1)) >> r, saturate, optional ReLU,
  // instead of `arith` (the kernels then only form integer sums).
  bool bm_shift = false;
  int bm_rshift = 0;
  bool bm_relu = false;
  // The vector tail applies: round half to even under the default fp
  // environment (the magic-number rounding relies on round-to-nearest).
  bool vector_tail = false;
  // nullptr, or why no fast kernel may run (the reference handles it: values
  // that would overflow fp32 or make the reference throw, odd geometry).
  const char* unsupported = nullptr;
};

// Builds the plan of a validated call (ghp::check_post_proc may throw, as the
// reference does).
QAvgPlan make_qavg_plan(const TensorView& x, const TensorView& y, const QLinearAvgPoolParams& p);

// Plan of a validated bm_pool_quantized call; mode max, zero insertion and
// dilation make it unsupported (the reference runs them).
QAvgPlan make_bm_pool_plan(const TensorView& x, const TensorView& y, const BmPoolQuantParams& p);

// x_scale == y_scale == 2^j under ONNX Runtime's float path: the reference's
// float chain is round half to even of (t + y_zp*d) / d with t = sum - x_zp *
// valid (final16 in x8-qavgpool-u16-avx512.cpp), an integer final step.
bool qavg_int_float_mean(const QAvgPlan& P);
// ONNX Runtime's float path on calibrated scales with the checked tail
// (fmean_checked; qavgpool-fmean-check.cpp).
bool qavg_checked_float(const QAvgPlan& P);

// The reference's final step for one output, given its sums and tap counts.
int32_t qavg_finalize_scalar(const QAvgPlan& P, int64_t sum, float fsum, int64_t valid,
                             int64_t clipped);

// Sets fmean_checked / fmean_check_below when the checked float tail applies
// (make_qavg_plan calls it).
void fmean_check_plan(QAvgPlan& P);
// fl(x_scale / (div * y_scale)), the kernels' multiplier for divisor div.
float fmean_check_multiplier(const QAvgPlan& P, int64_t div);
// The reference's code of output (oh, ow) of one plane (element (h, w) at
// plane[h*sH + w*sW]), by the reference's fp32 chain.
template <class T>
int32_t qavg_fmean_redo(const QAvgPlan& P, const T* plane, int64_t sH, int64_t sW, int64_t oh,
                        int64_t ow);

struct QAvgPoolProblem {
  TensorView x, y;
  const QLinearAvgPoolParams* params = nullptr;
  QAvgPlan plan;
};

// Variants (src/ops/cpu/x8-qavgpool-*.cpp). nchw: unit stride along W;
// nhwc: unit stride along C; any batch, u8 and s8.
void x8_qavgpool_nchw_portable(const QAvgPoolProblem& p);
void x8_qavgpool_nhwc_portable(const QAvgPoolProblem& p);
#if defined(__x86_64__)
void x8_qavgpool_nchw_avx2(const QAvgPoolProblem& p);
void x8_qavgpool_nhwc_avx2(const QAvgPoolProblem& p);
void x8_qavgpool_nchw_avx512(const QAvgPoolProblem& p);
void x8_qavgpool_nhwc_avx512(const QAvgPoolProblem& p);
// ONNX Runtime's float path (float_mean, round half to even) on NCHW: the
// reference's fp32 operations per output, one output per lane
// (x8-qavgpool-fmean-nchw.inc).
void x8_qavgpool_fmean_nchw_avx2(const QAvgPoolProblem& p);
void x8_qavgpool_fmean_nchw_avx512(const QAvgPoolProblem& p);
// 16-bit window sums and the final step in registers
// (x8-qavgpool-u16-avx512.cpp); qavg_u16_declines says when they apply.
void x8_qavgpool_u16_nchw_avx512(const QAvgPoolProblem& p);
void x8_qavgpool_u16_nhwc_avx512(const QAvgPoolProblem& p);
// Rows of at most 16 columns, stride_w 1, integer final steps
// (x8-qavgpool-rows16-nchw.inc; rows16_build in qavgpool-rows16.hpp says when).
void x8_qavgpool_rows16_nchw_avx512(const QAvgPoolProblem& p);
void x8_qavgpool_rows16_nchw_avx2(const QAvgPoolProblem& p);
// k3s1p1 over dense NCHW tensors as one flat stream, the rows16 final step
// (x8-qavgpool-flat3x3-nchw-avx512.cpp; flat3x3_build says when).
void x8_qavgpool_flat3x3_nchw_avx512(const QAvgPoolProblem& p);
// The same stream on AVX2 hosts, even W (x8-qavgpool-flat3x3-nchw-avx2.cpp).
void x8_qavgpool_flat3x3_nchw_avx2(const QAvgPoolProblem& p);
// x8-qavgpool-u16-avx2.cpp (AVX2 hosts; NCHW through a zero-bordered row copy).
void x8_qavgpool_u16_nchw_avx2(const QAvgPoolProblem& p);
void x8_qavgpool_u16_nhwc_avx2(const QAvgPoolProblem& p);
// ONNX Runtime's float path on NHWC, one channel per lane
// (x8-qavgpool-fmean-nhwc-{avx512,avx2}.cpp).
void x8_qavgpool_fmean_nhwc_avx512(const QAvgPoolProblem& p);
void x8_qavgpool_fmean_nhwc_avx2(const QAvgPoolProblem& p);
#endif
// The u16 kernels' integer final step (qavgpool-idiv.cpp): magic16 gives
// (m, sh) with floor(n / d) == (n*m >> 16) >> sh for n in [0, n_max];
// idiv_uniform the constants of a row class whose lanes share divisor d and
// the even offset multiple k (ok false: keep the general final step).
bool magic16(int32_t d, int64_t n_max, uint16_t& m16, uint16_t& sh16);
struct IdivUniform {  // scalars: std::vector does not keep vector registers aligned
  bool ok = false, odd = false, pow2 = false;
  int16_t m = 0, k = 0, sh = 0;
};
IdivUniform idiv_uniform(int32_t d, int32_t k, int32_t nh_max);
// nullptr when the u16 kernels take p (nhwc: the NHWC ones), else why not.
const char* qavg_u16_declines(const QAvgPoolProblem& p, bool nhwc);

struct BmPoolProblem {
  QAvgPoolProblem q;  // q.params unused
  const BmPoolQuantParams* params = nullptr;
};
// The family list "bm_pool_quantized" (the same kernels with the shift tail).
const KernelList<BmPoolProblem>& bm_pool_quantized_kernels();

// The family list "qlinear_average_pool" (qlinear_average_pool and
// qlinear_global_average_pool).
const KernelList<QAvgPoolProblem>& qlinear_average_pool_kernels();

}  // namespace npukit::cpu
