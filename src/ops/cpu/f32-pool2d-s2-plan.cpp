// What the stride-2 fp32 kernel accepts and its per-call plan (f32-pool2d-s2.hpp).
#include <cfloat>
#include <limits>
#include <memory>

#include "f32-pool2d-s2.hpp"
#include "last_plan.hpp"

namespace npukit::cpu {

namespace {

const char* declines_semantics(const Pool2dParams& p, int64_t channels) {
  if (p.mode == PoolMode::sum) return "sum pooling";
  const PoolLoop loop = effective_pool_loop(p, channels);
  if (loop == PoolLoop::mlas) return "ONNX Runtime's MLAS loop (PoolLoop::mlas)";
  if (loop == PoolLoop::mlas_nchwc) return nullptr;
  if (p.flush_denormals) return "flush_denormals";
  if (p.end_pad_crops) return "end_pad_crops";
  if (p.mode == PoolMode::max && p.nan == MaxNaN::first_tap) return "MaxNaN::first_tap";
  if (p.mode == PoolMode::avg && p.accumulation != Fp32Accumulation::sequential)
    return "interleaved accumulation";
  return nullptr;
}

const char* declines_window(const Window2d& w) {
  if (w.kernel_h != w.kernel_w || (w.kernel_h != 2 && w.kernel_h != 3))
    return "window not 2x2 or 3x3";
  if (w.stride_h != 2 || w.stride_w != 2) return "stride not 2x2";
  if (w.dilation_h != 1 || w.dilation_w != 1) return "dilated window";
  if (w.ins_h != 0 || w.ins_w != 0) return "zero insertion";
  return nullptr;
}

// Output c0 = lo - 1 joins the vector columns when its tap 0 is padding and
// its other taps are the input columns just left of output lo's.
bool lead_output(const AxisTaps& t, const AxisInterior& in) {
  if (in.lo < 1 || t.kind_at(in.lo - 1, 0) != Tap::padding) return false;
  for (int64_t k = 1; k < t.kernel; ++k)
    if (t.kind_at(in.lo - 1, k) != Tap::input || t.index_at(in.lo - 1, k) != in.first - 2 + k)
      return false;
  return true;
}

bool strided_interior(const AxisInterior& in) {
  return in.size() > 0 && in.tap_step == 1 && (in.size() == 1 || in.out_step == 2);
}

}  // namespace

const char* f32_s2_declines(const Pool2dProblem& pr, int64_t lanes) {
  if (pr.x.dtype() != DType::f32) return "not f32";
  if (const char* why = declines_semantics(pr.p, pr.x.dim(1))) return why;
  if (const char* why = declines_window(pr.p.window)) return why;
  if (pr.x.stride(3) != 1 || pr.y.stride(3) != 1) return "columns not contiguous (not NCHW)";
  const std::shared_ptr<const Pool2dPlan> held = shared_pool2d_plan(pr);
  const Pool2dPlan& plan = *held;
  const AxisInterior& in = plan.w_interior;
  if (!strided_interior(in)) return "no run of all-input windows along a row";
  if (in.size() + (lead_output(plan.w, in) ? 1 : 0) < lanes)
    return "fewer all-input outputs per row than one vector";
  return nullptr;
}

const char* f32_s2_avx512_declines(const Pool2dProblem& pr) {
  if (pr.p.window.kernel_h == 2 && pr.p.window.kernel_w == 2)
    return "2x2 windows (the 8-lane kernel is faster on them)";
  return f32_s2_declines(pr, 16);
}

int64_t f32_s2_prefetch_ahead(const Pool2dProblem& pr) {
  const int64_t bytes = (pr.x.numel() + pr.y.numel()) * static_cast<int64_t>(sizeof(float));
  return bytes >= kS2StreamBytes ? kS2PrefetchAhead : 0;
}

S2Plan make_s2_plan(const Pool2dProblem& pr) {
  const Pool2dParams& p = pr.p;
  const std::shared_ptr<const Pool2dPlan> held = shared_pool2d_plan(pr);
  const Pool2dPlan& plan = *held;
  S2Plan s;
  s.K = p.window.kernel_h;
  s.OH = pr.y.dim(2);
  s.OW = pr.y.dim(3);
  s.h = plan.h;
  s.w = plan.w;
  AvgDivisor divisor = p.divisor;
  constexpr float inf = std::numeric_limits<float>::infinity();
  if (effective_pool_loop(p, pr.x.dim(1)) == PoolLoop::mlas_nchwc) {
    s.acc = p.mode == PoolMode::max ? S2Acc::max_nchwc : S2Acc::sum;
    s.start = p.mode == PoolMode::max ? -FLT_MAX : 0.0f;
    s.zero_div_nan = true;
    if (divisor != AvgDivisor::valid_count) divisor = AvgDivisor::kernel_area;
  } else {
    s.acc = p.mode == PoolMode::max ? S2Acc::max : S2Acc::sum;
    s.propagate = p.nan == MaxNaN::propagate;
    s.pad = p.pad_value == PadValue::neg_inf ? -inf
            : p.pad_value == PadValue::zero  ? 0.0f
                                             : -FLT_MAX;
    s.start = p.mode != PoolMode::max                ? 0.0f
              : p.pad_value == PadValue::neg_flt_max ? -FLT_MAX
                                                     : -inf;
  }
  s.div_kind = divisor;
  s.prefetch_ahead = f32_s2_prefetch_ahead(pr);
  const AxisInterior &in = plan.w_interior, &hin = plan.h_interior;
  s.lead = lead_output(plan.w, in);
  s.c0 = in.lo - (s.lead ? 1 : 0);
  s.c1 = in.hi;
  s.first_col = in.first - (s.lead ? 2 : 0);
  for (int64_t ow = 0; ow < s.OW; ++ow)
    if (ow < s.c0 || ow >= s.c1) s.border_ow.push_back(ow);
  if (strided_interior(hin)) {
    s.ia = hin.lo;
    s.ib = hin.hi;
    s.first_row = hin.first;
  }
  const bool max = p.mode == PoolMode::max;
  for (int64_t oh = 0; oh < s.OH; ++oh) {
    int64_t valid = 0, clipped = 0;
    for (int64_t kh = 0; kh < s.K; ++kh) {
      const Tap t = plan.h.kind_at(oh, kh);
      s.row_kind.push_back(t);
      s.row_index.push_back(t == Tap::input ? plan.h.index_at(oh, kh) : 0);
      valid += t == Tap::input;
      clipped += t != Tap::outside;
    }
    // Vector lanes: every column tap is input; the lead's tap 0 is padding.
    s.div.push_back(max ? 0 : avg_divisor(divisor, s.K * s.K, valid * s.K, clipped * s.K));
    s.lead_div.push_back(max ? 0
                             : avg_divisor(divisor, s.K * s.K, valid * (s.K - 1), clipped * s.K));
  }
  return s;
}

namespace {

// Everything make_s2_plan reads from a problem.
struct S2Key {
  Pool2dGeometry geometry;
  PoolMode mode = PoolMode::avg;
  PoolLoop loop = PoolLoop::taps;  // effective_pool_loop
  MaxNaN nan = MaxNaN::propagate;
  PadValue pad_value = PadValue::neg_inf;
  AvgDivisor divisor = AvgDivisor::kernel_area;
  bool operator==(const S2Key& o) const {
    return geometry == o.geometry && mode == o.mode && loop == o.loop && nan == o.nan &&
           pad_value == o.pad_value && divisor == o.divisor;
  }
};

}  // namespace

std::shared_ptr<const S2Plan> shared_s2_plan(const Pool2dProblem& pr) {
  thread_local LastPlan<S2Key, S2Plan> kept;
  const Pool2dParams& p = pr.p;
  const S2Key key{Pool2dGeometry::of(pr),
                  p.mode,
                  effective_pool_loop(p, pr.x.dim(1)),
                  p.nan,
                  p.pad_value,
                  p.divisor};
  return kept.get(key, [&] { return make_s2_plan(pr); });
}

}  // namespace npukit::cpu
