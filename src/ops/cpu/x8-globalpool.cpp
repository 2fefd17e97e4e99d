// Drivers of the s8/u8 global pools (x8-globalpool.hpp): when they apply, the
// split into per-image channel blocks, the final step of the average, and the
// portable kernels.
#include "x8-globalpool.hpp"

#include <algorithm>
#include <cmath>

#include "npukit/parallel.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::cpu {

namespace {

// The window is the whole plane, unpadded, without zero insertion: each
// output reads exactly the H*W codes of its plane.
bool whole_plane(const Window2d& w, int64_t H, int64_t W) {
  return w.kernel_h == H && w.kernel_w == W && w.pad_top == 0 && w.pad_bottom == 0 &&
         w.pad_left == 0 && w.pad_right == 0 && w.ins_h == 0 && w.ins_w == 0 &&
         (w.dilation_h == 1 || H == 1) && (w.dilation_w == 1 || W == 1);
}

// nullptr when x's planes are contiguous rows (NCHW-like) or its channels are
// unit-stride (NHWC-like).
const char* declines_layout(const TensorView& x) {
  const bool nchw = x.stride(3) == 1 && x.stride(2) == x.dim(3);
  const bool nhwc = x.stride(1) == 1;
  return nchw || nhwc ? nullptr : "x has neither contiguous planes nor unit-stride channels";
}

using MaxFn = void (*)(const X8GlobalBlock&, uint8_t*);
using SumsFn = void (*)(const X8GlobalBlock&, int32_t*);
using IsfFn = void (*)(const int32_t*, int64_t, const X8IntSumFloat&, uint8_t*);

// About 128 KB of input per thread before a second thread is woken.
constexpr int64_t kThreadBytes = int64_t{1} << 17;

// Calls body(block, n, c0) for every image n and channel block [c0, c0 +
// block.count), on threads only when there is enough data to pay for them.
// An input that stays on one thread takes the largest blocks (fewer kernel
// calls: 8 -> 2 per 1x2048x7x7, ~2% of the call).
template <class Body>
void for_blocks(const TensorView& x, const Body& body) {
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  // N * C*H*W < 2 * kThreadBytes, without forming the product (which could overflow).
  const bool too_small_to_split = N <= (2 * kThreadBytes - 1) / (C * H * W);
  const int64_t channels = too_small_to_split ? kGlobalBlock : kGlobalSplitBlock;
  const int64_t per_image = (C + channels - 1) / channels;
  const bool nhwc = !(x.stride(3) == 1 && x.stride(2) == W);
  const auto* base = static_cast<const uint8_t*>(x.raw());
  int64_t span = 1;  // bytes from the first element to past the last
  for (int d = 0; d < 4; ++d) span += (x.dim(d) - 1) * x.stride(d);
  const uint8_t* end = base + span;
  const int64_t grain = std::max<int64_t>(1, kThreadBytes / (channels * H * W));
  const auto blocks = [&](int64_t begin, int64_t stop) {
    for (int64_t t = begin; t < stop; ++t) {
      const int64_t n = t / per_image, c0 = (t % per_image) * channels;
      X8GlobalBlock b;
      b.x = base + n * x.stride(0) + c0 * x.stride(1);
      b.x_end = end;
      b.count = std::min(channels, C - c0);
      b.H = H;
      b.W = W;
      b.sC = x.stride(1);
      b.sH = x.stride(2);
      b.sW = x.stride(3);
      b.nhwc = nhwc;
      b.is_signed = x.dtype() == DType::s8;
      body(b, n, c0);
    }
  };
  // One range: no std::function (whose copy of this lambda would be a heap
  // allocation per call, ~5% of a 7x7 global max).
  if (num_threads() <= 1 || N * per_image < 2 * grain)
    blocks(0, N * per_image);
  else
    parallel_ranges(N * per_image, grain, blocks);
}

// Where the codes of y's channels [c0, c0 + count) of image n go: straight
// into y when its channels are unit-stride (the kernels store exactly count
// bytes), else into `scratch`, which put_codes then scatters.
uint8_t* codes_at(const TensorView& y, int64_t n, int64_t c0, uint8_t* scratch) {
  auto* dst = static_cast<uint8_t*>(y.raw()) + n * y.stride(0) + c0 * y.stride(1);
  return y.stride(1) == 1 ? dst : scratch;
}

void put_codes(const TensorView& y, int64_t n, int64_t c0, int64_t count, const uint8_t* codes) {
  if (y.stride(1) == 1) return;  // written in place by codes_at's pointer
  auto* dst = static_cast<uint8_t*>(y.raw()) + n * y.stride(0) + c0 * y.stride(1);
  for (int64_t k = 0; k < count; ++k) dst[k * y.stride(1)] = codes[k];
}

void run_max(const Pool2dProblem& pr, MaxFn max) {
  for_blocks(pr.x, [&](const X8GlobalBlock& b, int64_t n, int64_t c0) {
    uint8_t scratch[kGlobalBlock];
    uint8_t* out = codes_at(pr.y, n, c0, scratch);
    max(b, out);
    put_codes(pr.y, n, c0, b.count, out);
  });
}

void run_avg(const QGlobalAvgProblem& pr, SumsFn sums, IsfFn isf) {
  const QLinearAvgPoolParams& p = *pr.params;
  const TensorView &x = pr.x, &y = pr.y;
  const int64_t taps = x.dim(2) * x.dim(3);
  const bool is_signed = x.dtype() == DType::s8;
  const detail::CodeRange r = detail::code_range(x.dtype());
  if (p.whole_image_int_path) {  // ONNX Runtime: int_sum_float
    X8IntSumFloat q;
    q.bias_total = static_cast<int32_t>((is_signed ? 128 : 0) * taps + p.x_zero_point * taps);
    q.m = p.x_scale / (p.y_scale * static_cast<float>(taps));
    q.lo = static_cast<float>(r.lo - p.y_zero_point);
    q.hi = static_cast<float>(r.hi - p.y_zero_point);
    q.y_zp = p.y_zero_point;
    q.is_signed = is_signed;
    const double reach = std::max(std::abs(static_cast<double>(q.bias_total)),
                                  std::abs(255.0 * static_cast<double>(taps) - q.bias_total));
    q.saturating_packs = std::abs(static_cast<double>(q.m)) * reach < 0x1p30;
    for_blocks(x, [&](const X8GlobalBlock& b, int64_t n, int64_t c0) {
      int32_t s[kGlobalBlock];
      uint8_t scratch[kGlobalBlock];
      uint8_t* out = codes_at(y, n, c0, scratch);
      sums(b, s);
      isf(s, b.count, q, out);
      put_codes(y, n, c0, b.count, out);
    });
    return;
  }
  // Every other arithmetic: the reference's final step per output, from the
  // plan of the same call (its one window is the whole plane, all taps valid).
  const QAvgPlan plan = make_qavg_plan(x, y, p);
  if (plan.unsupported) return ref::qlinear_average_pool(x, y, p);  // e.g. sums that overflow
  const int32_t bias = is_signed ? 128 * static_cast<int32_t>(taps) : 0;
  for_blocks(x, [&](const X8GlobalBlock& b, int64_t n, int64_t c0) {
    int32_t s[kGlobalBlock];
    uint8_t scratch[kGlobalBlock];
    uint8_t* out = codes_at(y, n, c0, scratch);
    sums(b, s);
    for (int64_t k = 0; k < b.count; ++k)
      out[k] = static_cast<uint8_t>(qavg_finalize_scalar(plan, s[k] - bias, 0.0f, taps, taps));
    put_codes(y, n, c0, b.count, out);
  });
}

}  // namespace

// ---- when they apply ---------------------------------------------------------

const char* x8_global_max_declines(const Pool2dProblem& pr) {
  if (pr.x.dtype() != DType::s8 && pr.x.dtype() != DType::u8) return "not s8/u8";
  if (pr.p.mode != PoolMode::max) return "not max pooling";
  if (pr.y.dim(2) != 1 || pr.y.dim(3) != 1 || !whole_plane(pr.p.window, pr.x.dim(2), pr.x.dim(3)))
    return "the window is not exactly the whole plane";
  return declines_layout(pr.x);
}

bool qavg_is_global(const TensorView& x, const TensorView& y, const QLinearAvgPoolParams& p) {
  return y.dim(2) == 1 && y.dim(3) == 1 && whole_plane(p.window, x.dim(2), x.dim(3));
}

const char* x8_global_avg_declines(const QGlobalAvgProblem& pr) {
  const QLinearAvgPoolParams& p = *pr.params;
  if (!qavg_is_global(pr.x, pr.y, p)) return "the window is not exactly the whole plane";
  if (const char* why = declines_layout(pr.x)) return why;
  if (p.whole_image_int_path) {
    const float m = p.x_scale / (p.y_scale * static_cast<float>(pr.x.dim(2) * pr.x.dim(3)));
    return std::isfinite(m) ? nullptr : "the fp32 multiplier is not finite";
  }
  // The fp32 sum of float_mean keeps the reference's tap order (the window
  // kernels of qlinear_average_pool take it).
  if (p.arith == QAvgArith::float_mean) return "float_mean (fp32 sums in tap order)";
  return nullptr;
}

// ---- portable kernels --------------------------------------------------------

void x8_global_max_portable(const X8GlobalBlock& b, uint8_t* out) {
  const uint8_t bias = b.is_signed ? 0x80 : 0;
  for (int64_t k = 0; k < b.count; ++k) out[k] = 0;
  for (int64_t h = 0; h < b.H; ++h)
    for (int64_t w = 0; w < b.W; ++w)
      for (int64_t k = 0; k < b.count; ++k) {
        const uint8_t v = b.nhwc ? b.x[h * b.sH + w * b.sW + k] : b.x[k * b.sC + h * b.W + w];
        out[k] = std::max<uint8_t>(out[k], static_cast<uint8_t>(v ^ bias));
      }
  for (int64_t k = 0; k < b.count; ++k) out[k] ^= bias;
}

void x8_global_sums_portable(const X8GlobalBlock& b, int32_t* sums) {
  const uint8_t bias = b.is_signed ? 0x80 : 0;
  for (int64_t k = 0; k < b.count; ++k) sums[k] = 0;
  for (int64_t h = 0; h < b.H; ++h)
    for (int64_t w = 0; w < b.W; ++w)
      for (int64_t k = 0; k < b.count; ++k) {
        const uint8_t v = b.nhwc ? b.x[h * b.sH + w * b.sW + k] : b.x[k * b.sC + h * b.W + w];
        sums[k] += v ^ bias;
      }
}

void x8_global_int_sum_float_portable(const int32_t* sums, int64_t count, const X8IntSumFloat& q,
                                      uint8_t* out) {
  for (int64_t k = 0; k < count; ++k) {
    const float v = static_cast<float>(sums[k] - q.bias_total) * q.m;
    const float c = v < q.lo ? q.lo : v > q.hi ? q.hi : v;
    out[k] = static_cast<uint8_t>(round_to_int(c, Rounding::half_to_even) + q.y_zp);
  }
}

// ---- entry points ------------------------------------------------------------

void max_pool2d_x8_global_portable(const Pool2dProblem& pr) {
  run_max(pr, x8_global_max_portable);
}
void x8_global_avg_portable(const QGlobalAvgProblem& pr) {
  run_avg(pr, x8_global_sums_portable, x8_global_int_sum_float_portable);
}
#if defined(__x86_64__)
void max_pool2d_x8_global_avx2(const Pool2dProblem& pr) {
  run_max(pr, x8_global_max_avx2);
}
void max_pool2d_x8_global_avx512(const Pool2dProblem& pr) {
  run_max(pr, x8_global_max_avx512);
}
void x8_global_avg_avx2(const QGlobalAvgProblem& pr) {
  run_avg(pr, x8_global_sums_avx2, x8_global_int_sum_float_avx2);
}
void x8_global_avg_avx512(const QGlobalAvgProblem& pr) {
  run_avg(pr, x8_global_sums_avx512, x8_global_int_sum_float_avx512);
}
#endif

// ---- the list ----------------------------------------------------------------

namespace {
void run_reference(const QGlobalAvgProblem& pr) {
  ref::qlinear_average_pool(pr.x, pr.y, *pr.params);
}
}  // namespace

const KernelList<QGlobalAvgProblem>& qlinear_global_average_pool_kernels() {
  static const KernelList<QGlobalAvgProblem> list{
      "qlinear_global_average_pool",
      {
#if defined(__x86_64__)
          {"x8-globalavg-avx512", Isa::avx512,
           "whole-plane window, every profile but float_mean, NCHW or NHWC", x8_global_avg_declines,
           x8_global_avg_avx512},
          {"x8-globalavg-avx2", Isa::avx2,
           "whole-plane window, every profile but float_mean, NCHW or NHWC", x8_global_avg_declines,
           x8_global_avg_avx2},
#endif
          {"x8-globalavg-portable", Isa::portable,
           "whole-plane window, every profile but float_mean, NCHW or NHWC", x8_global_avg_declines,
           x8_global_avg_portable},
          {"x8-globalavg-reference", Isa::portable, "always", nullptr, run_reference, true},
      }};
  return list;
}

}  // namespace npukit::cpu
