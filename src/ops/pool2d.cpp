#include "npukit/ops/pool2d.hpp"

#include "cpu/pool2d_plan.hpp"
#include "npukit/error.hpp"

namespace npukit {

namespace {

using cpu::Pool2dProblem;

const char* declines_f32(const Pool2dProblem& pr) {
  return pr.x.dtype() != DType::f32 ? "not f32" : nullptr;
}
const char* declines_f32_simd(const Pool2dProblem& pr, int64_t lanes) {
  if (const char* why = declines_f32(pr)) return why;
  return cpu::pool2d_declines_gather(pr, lanes);
}
const char* declines_x8(const Pool2dProblem& pr) {
  return pr.x.dtype() == DType::f32 ? "not s8/u8" : nullptr;
}
const char* declines_x8_simd(const Pool2dProblem& pr, int64_t lanes) {
  if (const char* why = declines_x8(pr)) return why;
  return cpu::pool2d_declines_gather(pr, lanes);
}

void run_reference(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::f32) return ref::pool2d_f32(pr.x, pr.y, pr.p);
  if (pr.x.dtype() == DType::s8) return ref::max_pool2d_int<int8_t>(pr.x, pr.y, pr.p);
  ref::max_pool2d_int<uint8_t>(pr.x, pr.y, pr.p);
}

}  // namespace

const KernelList<Pool2dProblem>& pool2d_kernels() {
  static const KernelList<Pool2dProblem> list{
      "pool2d",
      {
          {"f32-pool2d-avx512", Isa::avx512, "f32 avg/max/sum, any layout and semantics",
           [](const Pool2dProblem& pr) { return declines_f32_simd(pr, 16); },
           cpu::pool2d_f32_avx512},
          {"x8-maxpool2d-avx512", Isa::avx512, "s8/u8 max, any layout and semantics",
           [](const Pool2dProblem& pr) { return declines_x8_simd(pr, 64); },
           cpu::max_pool2d_x8_avx512},
          {"f32-pool2d-avx2", Isa::avx2, "f32 avg/max/sum, any layout and semantics",
           [](const Pool2dProblem& pr) { return declines_f32_simd(pr, 8); }, cpu::pool2d_f32_avx2},
          {"x8-maxpool2d-avx2", Isa::avx2, "s8/u8 max, any layout and semantics",
           [](const Pool2dProblem& pr) { return declines_x8_simd(pr, 32); },
           cpu::max_pool2d_x8_avx2},
          {"f32-pool2d-portable", Isa::portable, "f32 avg/max/sum, any layout and semantics",
           declines_f32, cpu::pool2d_f32_portable},
          {"x8-maxpool2d-portable", Isa::portable, "s8/u8 max, any layout and semantics",
           declines_x8, cpu::max_pool2d_x8_portable},
          {"pool2d-reference", Isa::portable, "always (the specification)", nullptr, run_reference,
           true},
      }};
  return list;
}

const char* fp32_accumulation_name(Fp32Accumulation a) {
  switch (a) {
    case Fp32Accumulation::sequential:
      return "sequential";
    case Fp32Accumulation::interleaved:
      return "interleaved";
  }
  return "invalid";
}

const char* pool_mode_name(PoolMode m) {
  switch (m) {
    case PoolMode::avg:
      return "avg";
    case PoolMode::max:
      return "max";
    case PoolMode::sum:
      return "sum";
  }
  return "invalid";
}

const char* avg_divisor_name(AvgDivisor d) {
  switch (d) {
    case AvgDivisor::kernel_area:
      return "kernel_area";
    case AvgDivisor::valid_count:
      return "valid_count";
    case AvgDivisor::clipped_window:
      return "clipped_window";
  }
  return "invalid";
}

const char* pad_value_name(PadValue v) {
  switch (v) {
    case PadValue::neg_inf:
      return "neg_inf";
    case PadValue::neg_flt_max:
      return "neg_flt_max";
    case PadValue::zero:
      return "zero";
  }
  return "invalid";
}

PoolGeometry pool_geometry_for(Profile profile) {
  return semantics_base(profile) == Profile::onnxruntime ? PoolGeometry::onnxruntime
                                                         : PoolGeometry::onnx;
}

void apply_profile(Pool2dParams& p, Profile profile, bool count_include_pad) {
  switch (semantics_base(profile)) {
    case Profile::pytorch:
      p.divisor = count_include_pad ? AvgDivisor::clipped_window : AvgDivisor::valid_count;
      p.pad_value = PadValue::neg_inf;
      p.nan = MaxNaN::propagate;
      p.accumulation = Fp32Accumulation::sequential;
      p.flush_denormals = false;
      return;
    case Profile::onnxruntime:
      // ORT's CPU MaxPool starts from lowest() and keeps a tap only if strictly greater.
      p.divisor = count_include_pad ? AvgDivisor::kernel_area : AvgDivisor::valid_count;
      p.pad_value = PadValue::neg_flt_max;
      p.nan = MaxNaN::ignore;
      p.accumulation = Fp32Accumulation::sequential;
      p.flush_denormals = false;
      return;
    case Profile::bm1684:
      check(count_include_pad, "npukit::apply_profile", "count_include_pad", "false",
            "true for bm1684 (its average always divides by kernel_h*kernel_w)");
      p.divisor = AvgDivisor::kernel_area;
      p.pad_value = PadValue::neg_flt_max;
      p.nan = MaxNaN::ignore;
      p.accumulation = Fp32Accumulation::interleaved;
      p.flush_denormals = true;
      return;
    default:
      fail("npukit::apply_profile", "profile", profile_name(profile),
           "onnxruntime, pytorch or bm1684 for fp32 pooling");
  }
}

Shape pool2d_output_shape(const Shape& x, const Pool2dParams& p) {
  return window_output_shape(x, p.window, "npukit::pool2d");
}

void pool2d(const TensorView& x, const TensorView& y, const Pool2dParams& p) {
  constexpr const char* fn = "npukit::pool2d";
  x.expect_rank(4, fn, "x");
  y.expect_shape(pool2d_output_shape(x.shape(), p), fn, "y");
  check(x.dtype() == y.dtype(), fn, "y.dtype", dtype_name(y.dtype()), dtype_name(x.dtype()));
  if (x.dtype() != DType::f32)
    check(p.mode == PoolMode::max, fn, "x.dtype", dtype_name(x.dtype()),
          std::string("f32 for ") + pool_mode_name(p.mode) +
              " pooling (quantized averages are in npukit/quant)");
  check(x.dtype() == DType::f32 || x.dtype() == DType::s8 || x.dtype() == DType::u8, fn, "x.dtype",
        dtype_name(x.dtype()), "f32, s8 or u8");
  pool2d_kernels().run(Pool2dProblem{x, y, p});
}

Pool2dParams global_pool2d_params(const Shape& x, PoolMode mode) {
  check(x.size() == 4, "npukit::global_pool2d", "x", "shape " + shape_text(x),
        "a 4-D (N, C, H, W) tensor");
  Pool2dParams p;
  p.mode = mode;
  p.window.kernel_h = x[2];
  p.window.kernel_w = x[3];
  return p;
}

void global_pool2d(const TensorView& x, const TensorView& y, PoolMode mode) {
  check(mode != PoolMode::sum, "npukit::global_pool2d", "mode", "sum", "avg or max");
  pool2d(x, y, global_pool2d_params(x.shape(), mode));
}

}  // namespace npukit
