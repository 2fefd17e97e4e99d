#include "npukit/ops/bm_pool_quantized.hpp"

#include <algorithm>
#include <limits>

#include "npukit/error.hpp"
#include "npukit/kernels.hpp"
#include "npukit/ops/quantized.hpp"
#include "ops/cpu/pool2d_plan.hpp"
#include "ops/cpu/qavgpool.hpp"

namespace npukit {

namespace cpu {

namespace {

const char* bm_declines_nchw(const BmPoolProblem& p) {
  if (p.q.plan.unsupported) return p.q.plan.unsupported;
  return p.q.x.stride(3) == 1 ? nullptr : "x is not unit-stride along W (not NCHW-like)";
}

const char* bm_declines_nhwc(const BmPoolProblem& p) {
  if (p.q.plan.unsupported) return p.q.plan.unsupported;
  return p.q.x.stride(1) == 1 ? nullptr : "x is not unit-stride along C (not NHWC-like)";
}

const char* bm_declines_u16_nchw(const BmPoolProblem& p) {
  return qavg_u16_declines(p.q, false);
}
const char* bm_declines_u16_nhwc(const BmPoolProblem& p) {
  return qavg_u16_declines(p.q, true);
}

const char* bm_declines_max(const BmPoolProblem& p) {
  return p.params->mode == QuantPoolMode::max ? nullptr : "not max";
}

// The unit's max: the window max of ref::max_pool2d_int with the type's
// lowest value as padding and inserted zeros as elements (the same taps),
// then the shift, saturation and ReLU of the reference per output.
template <class T>
void bm_max_finish(const TensorView& y, const BmPoolQuantParams& p) {
  const bool shift = p.max_rshift && p.rshift > 0;
  if (!shift && !p.relu) return;
  constexpr int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  for (int64_t n = 0; n < y.dim(0); ++n)
    for (int64_t c = 0; c < y.dim(1); ++c)
      for (int64_t h = 0; h < y.dim(2); ++h)
        for (int64_t w = 0; w < y.dim(3); ++w) {
          int64_t v = y.at<T>(n, c, h, w);
          if (shift) v = (v + (int64_t{1} << (p.rshift - 1))) >> p.rshift;
          v = std::clamp(v, lo, hi);
          if (p.relu) v = std::max<int64_t>(v, 0);
          y.at<T>(n, c, h, w) = static_cast<T>(v);
        }
}

void bm_max_through_pool2d(const BmPoolProblem& p) {
  Pool2dParams q;
  q.mode = PoolMode::max;
  q.window = p.params->window;
  q.pad_value = PadValue::neg_inf;  // integers: the type's lowest value
  pool2d_kernels().run(Pool2dProblem{p.q.x, p.q.y, q});
  if (p.q.x.dtype() == DType::s8) return bm_max_finish<int8_t>(p.q.y, *p.params);
  bm_max_finish<uint8_t>(p.q.y, *p.params);
}

void bm_reference(const BmPoolProblem& p) {
  if (p.q.x.dtype() == DType::s8) return ref::bm_pool_quantized<int8_t>(p.q.x, p.q.y, *p.params);
  ref::bm_pool_quantized<uint8_t>(p.q.x, p.q.y, *p.params);
}

}  // namespace

// The qlinear_average_pool kernels: they form the same integer window sums
// (padding counts 0) and the plan's shift tail finishes them.
const KernelList<BmPoolProblem>& bm_pool_quantized_kernels() {
  static const KernelList<BmPoolProblem> list{
      "bm_pool_quantized",
      {
#if defined(__x86_64__)
          {"x8-bmpool-avg-u16-nchw-avx512", Isa::avx512,
           "avg, no zero insertion or dilation, <= 257 taps, stride_w <= 2, NCHW",
           bm_declines_u16_nchw, [](const BmPoolProblem& p) { x8_qavgpool_u16_nchw_avx512(p.q); }},
          {"x8-bmpool-avg-u16-nhwc-avx512", Isa::avx512,
           "avg, no zero insertion or dilation, <= 257 taps, NHWC", bm_declines_u16_nhwc,
           [](const BmPoolProblem& p) { x8_qavgpool_u16_nhwc_avx512(p.q); }},
          {"x8-bmpool-avg-nchw-avx512", Isa::avx512, "avg, no zero insertion or dilation, NCHW",
           bm_declines_nchw, [](const BmPoolProblem& p) { x8_qavgpool_nchw_avx512(p.q); }},
          {"x8-bmpool-avg-nhwc-avx512", Isa::avx512, "avg, no zero insertion or dilation, NHWC",
           bm_declines_nhwc, [](const BmPoolProblem& p) { x8_qavgpool_nhwc_avx512(p.q); }},
          {"x8-bmpool-avg-u16-nchw-avx2", Isa::avx2,
           "avg, no zero insertion or dilation, <= 257 taps, stride_w <= 2, NCHW",
           bm_declines_u16_nchw, [](const BmPoolProblem& p) { x8_qavgpool_u16_nchw_avx2(p.q); }},
          {"x8-bmpool-avg-u16-nhwc-avx2", Isa::avx2,
           "avg, no zero insertion or dilation, <= 257 taps, NHWC", bm_declines_u16_nhwc,
           [](const BmPoolProblem& p) { x8_qavgpool_u16_nhwc_avx2(p.q); }},
          {"x8-bmpool-avg-nchw-avx2", Isa::avx2, "avg, no zero insertion or dilation, NCHW",
           bm_declines_nchw, [](const BmPoolProblem& p) { x8_qavgpool_nchw_avx2(p.q); }},
          {"x8-bmpool-avg-nhwc-avx2", Isa::avx2, "avg, no zero insertion or dilation, NHWC",
           bm_declines_nhwc, [](const BmPoolProblem& p) { x8_qavgpool_nhwc_avx2(p.q); }},
#endif
          {"x8-bmpool-avg-nchw-portable", Isa::portable, "avg, no zero insertion or dilation, NCHW",
           bm_declines_nchw, [](const BmPoolProblem& p) { x8_qavgpool_nchw_portable(p.q); }},
          {"x8-bmpool-avg-nhwc-portable", Isa::portable, "avg, no zero insertion or dilation, NHWC",
           bm_declines_nhwc, [](const BmPoolProblem& p) { x8_qavgpool_nhwc_portable(p.q); }},
          {"x8-bmpool-max-pool2d", Isa::portable,
           "max: the pool2d family's s8/u8 max kernels, then the shift", bm_declines_max,
           bm_max_through_pool2d},
          {"x8-bmpool-reference", Isa::portable, "always", nullptr, bm_reference, true},
      }};
  return list;
}

}  // namespace cpu

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
  if (x.dtype() != DType::s8 && x.dtype() != DType::u8)
    fail(fn, "x.dtype", dtype_name(x.dtype()), "s8 (input_sign) or u8");
  if (impl() == Impl::reference) {
    if (x.dtype() == DType::s8) return ref::bm_pool_quantized<int8_t>(x, y, p);
    return ref::bm_pool_quantized<uint8_t>(x, y, p);
  }
  const cpu::BmPoolProblem problem{{x, y, nullptr, cpu::make_bm_pool_plan(x, y, p)}, &p};
  cpu::bm_pool_quantized_kernels().run(problem);
}

}  // namespace npukit
