#include "npukit/ops/pool2d.hpp"

#include <string>
#include <tuple>
#include <utility>

#include "core/window_output.hpp"
#include "cpu/f32-globalpool.hpp"
#include "cpu/f32-pool2d-s2.hpp"
#include "cpu/pool2d_plan.hpp"
#include "cpu/x8-globalpool.hpp"
#include "cpu/x8-maxpool2d-nhwc.hpp"
#include "cpu/x8-maxpool2d-rows.hpp"
#include "cpu/x8-maxpool2d-s2.hpp"
#include "cpu/x8-maxpool2d-same.hpp"
#include "npukit/cpu_features.hpp"
#include "npukit/error.hpp"

namespace npukit {

namespace {

using cpu::Pool2dProblem;

// ONNX Runtime's own loops (docs/semantics.md, "fp32 pooling under
// onnxruntime") have orders, NaN rules and window crops no fast kernel
// reproduces yet: those problems run on the reference.
const char* declines_onnxruntime_loops(const Pool2dProblem& pr) {
  const PoolLoop loop = effective_pool_loop(pr.p, pr.x.dim(1));
  if (loop == PoolLoop::mlas) return "ONNX Runtime's MLAS loop (PoolLoop::mlas)";
  if (loop == PoolLoop::mlas_nchwc) return "ONNX Runtime's NCHWc loop (PoolLoop::mlas_nchwc)";
  if (pr.p.nan == MaxNaN::first_tap) return "MaxNaN::first_tap";
  if (pr.p.end_pad_crops) return "end_pad_crops";
  return nullptr;
}
// The MLAS orders run fast on rows with contiguous columns (NCHW); the whole
// image needs a contiguous plane.
const char* declines_mlas(const Pool2dProblem& pr) {
  if (pr.p.mode == PoolMode::sum) return "sum pooling under PoolLoop::mlas";
  const MlasPoolOrder order = mlas_pool_order(pr.p.window, pr.x.dim(2), pr.x.dim(3));
  if (order == MlasPoolOrder::row_major) return nullptr;
  if (pr.x.stride(3) != 1 || pr.y.stride(3) != 1)
    return "PoolLoop::mlas on rows with strided columns (NHWC)";
  if (order == MlasPoolOrder::whole_image && pr.x.stride(2) != pr.x.dim(3))
    return "PoolLoop::mlas whole image on a plane with gaps";
  return nullptr;
}

const char* declines_f32(const Pool2dProblem& pr) {
  if (pr.x.dtype() != DType::f32) return "not f32";
  // MLAS's NCHWc order is the taps order with its own max step and divisor
  // (pool2d_core.inc, Acc::max_nchwc / zero_div_nan).
  const PoolLoop loop = effective_pool_loop(pr.p, pr.x.dim(1));
  if (loop == PoolLoop::mlas_nchwc) return nullptr;
  if (loop == PoolLoop::mlas) return declines_mlas(pr);
  return declines_onnxruntime_loops(pr);
}
// The portable kernel's plain-C++ lanes did not keep MLAS's orders exact
// under GCC -O3 (max steps came out with swapped operands, some averages 1 ulp
// off): MLAS's loops run on the x86 SIMD kernels or on the reference.
const char* declines_f32_portable(const Pool2dProblem& pr) {
  if (const char* why = declines_f32(pr)) return why;
  if (effective_pool_loop(pr.p, pr.x.dim(1)) != PoolLoop::taps)
    return "MLAS's loops (exact on the x86 SIMD kernels only)";
  return nullptr;
}
const char* declines_f32_simd(const Pool2dProblem& pr, int64_t lanes) {
  if (const char* why = declines_f32(pr)) return why;
  return cpu::pool2d_declines_gather(pr, lanes);
}
// Integer max takes every loop: it selects one of the taps, so the loop order,
// the NaN rule and the average-only window crop do not change the result
// (ref::max_pool2d_int reads neither loop, nan nor end_pad_crops).
const char* declines_x8(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::f32) return "not s8/u8";
  return nullptr;
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
          // First: their test is a few comparisons, and global pools are small calls.
          {"x8-globalmax-avx512", Isa::avx512, "s8/u8 max over whole planes, NCHW or NHWC",
           cpu::x8_global_max_declines, cpu::max_pool2d_x8_global_avx512},
          {"x8-globalmax-avx2", Isa::avx2, "s8/u8 max over whole planes, NCHW or NHWC",
           cpu::x8_global_max_declines, cpu::max_pool2d_x8_global_avx2},
          {"x8-globalmax-portable", Isa::portable, "s8/u8 max over whole planes, NCHW or NHWC",
           cpu::x8_global_max_declines, cpu::max_pool2d_x8_global_portable},
          {"f32-globalpool-avg-odd-nchw-avx512", Isa::avx512,
           "f32 avg/sum over gap-free planes of 9, 25, 49, 81, 121, 169 or 225 floats (NCHW), "
           "sequential sums",
           cpu::f32_global_avg_odd_declines, cpu::avg_pool2d_f32_global_odd_avx512},
          {"f32-globalpool-avg-nchw-avx2", Isa::avx2,
           "f32 avg/sum over whole contiguous planes (NCHW), sequential sums",
           cpu::f32_global_avg_declines, cpu::avg_pool2d_f32_global_avx2},
          {"f32-globalpool-avg-nchw-portable", Isa::portable,
           "f32 avg/sum over whole contiguous planes (NCHW), sequential sums",
           cpu::f32_global_avg_declines, cpu::avg_pool2d_f32_global_portable},
          {"f32-globalpool-max-nchw-avx512", Isa::avx512,
           "f32 max over whole contiguous planes (NCHW)", cpu::f32_global_max_declines,
           cpu::max_pool2d_f32_global_avx512},
          {"f32-globalpool-max-nchw-avx2", Isa::avx2, "f32 max over whole contiguous planes (NCHW)",
           cpu::f32_global_max_declines, cpu::max_pool2d_f32_global_avx2},
          {"f32-globalpool-max-nchw-portable", Isa::portable,
           "f32 max over whole contiguous planes (NCHW)", cpu::f32_global_max_declines,
           cpu::max_pool2d_f32_global_portable},
          {"f32-pool2d-stride2-nchw-avx512", Isa::avx512,
           "f32 avg/max, NCHW, 3x3 windows at stride 2, >= 16 all-input outputs per row",
           cpu::f32_s2_avx512_declines, cpu::pool2d_f32_s2_avx512},
          // (Ahead of the 16-lane general kernel: it takes the 2x2 windows on AVX-512 hosts too.)
          {"f32-pool2d-stride2-nchw-avx2", Isa::avx2,
           "f32 avg/max, NCHW, 2x2 or 3x3 windows at stride 2, >= 8 all-input outputs per row",
           [](const Pool2dProblem& pr) { return cpu::f32_s2_declines(pr, 8); },
           cpu::pool2d_f32_s2_avx2},
          // The general kernels' 3x3 stride-1 sweep, listed on its own so that
          // tests and `npukit info --kernels` see when it runs (same entry point).
          {"f32-pool2d-sweep3x3-nchw-avx512", Isa::avx512,
           "f32 avg/max/sum, NCHW, 3x3 windows at stride 1, output rows as long as input rows",
           [](const Pool2dProblem& pr) {
             if (const char* why = declines_f32_simd(pr, 16)) return why;
             return cpu::f32_sweep_declines_avx512(pr);
           },
           cpu::pool2d_f32_avx512},
          {"f32-pool2d-avx512", Isa::avx512, "f32 avg/max/sum, any layout and semantics",
           [](const Pool2dProblem& pr) { return declines_f32_simd(pr, 16); },
           cpu::pool2d_f32_avx512},
          {"x8-maxpool2d-same-avx512", Isa::avx512,
           "s8/u8 max, stride 1, output size = input size, NCHW planes up to 16 KB",
           [](const Pool2dProblem& pr) { return cpu::x8_same_declines(pr, 64); },
           cpu::max_pool2d_x8_same_avx512},
          {"x8-maxpool2d-nhwc-avx512", Isa::avx512,
           "s8/u8 max, unit-stride channels (NHWC), at least 8 channels",
           [](const Pool2dProblem& pr) { return cpu::x8_nhwc_declines(pr, 8); },
           cpu::max_pool2d_x8_nhwc_avx512},
          {"x8-maxpool2d-s2-avx512vbmi", Isa::avx512,
           "s8/u8 max, NCHW rows, stride_w = 2, taps 2j-1..2j+1, AVX-512 VBMI",
           cpu::x8_s2_vbmi_declines, cpu::max_pool2d_x8_s2_avx512vbmi},
          {"x8-maxpool2d-s2-avx512", Isa::avx512, "s8/u8 max, NCHW rows, stride_w = 2",
           cpu::x8_s2_declines, cpu::max_pool2d_x8_s2_avx512},
          {"x8-maxpool2d-rows-avx512", Isa::avx512, "s8/u8 max, NCHW rows, stride_w <= 2",
           cpu::x8_rows_declines, cpu::max_pool2d_x8_rows_avx512},
          {"x8-maxpool2d-avx512", Isa::avx512, "s8/u8 max, any layout and semantics",
           [](const Pool2dProblem& pr) { return declines_x8_simd(pr, 64); },
           cpu::max_pool2d_x8_avx512},
          {"f32-pool2d-sweep3x3-nchw-avx2", Isa::avx2,
           "f32 avg/max/sum, NCHW, 3x3 windows at stride 1, output rows as long as input rows",
           [](const Pool2dProblem& pr) {
             if (const char* why = declines_f32_simd(pr, 8)) return why;
             return cpu::f32_sweep_declines_avx2(pr);
           },
           cpu::pool2d_f32_avx2},
          {"f32-pool2d-avx2", Isa::avx2, "f32 avg/max/sum, any layout and semantics",
           [](const Pool2dProblem& pr) { return declines_f32_simd(pr, 8); }, cpu::pool2d_f32_avx2},
          {"x8-maxpool2d-same-avx2", Isa::avx2,
           "s8/u8 max, stride 1, output size = input size, NCHW planes up to 16 KB",
           [](const Pool2dProblem& pr) { return cpu::x8_same_declines(pr, 32); },
           cpu::max_pool2d_x8_same_avx2},
          {"x8-maxpool2d-nhwc-avx2", Isa::avx2,
           "s8/u8 max, unit-stride channels (NHWC), at least 16 channels",
           [](const Pool2dProblem& pr) { return cpu::x8_nhwc_declines(pr, 16); },
           cpu::max_pool2d_x8_nhwc_avx2},
          {"x8-maxpool2d-s2-cols-avx2", Isa::avx2,
           "s8/u8 max, NCHW rows, stride_w = 2, taps 2j-1..2j+1, column maxima first",
           cpu::x8_s2_cols_declines, cpu::max_pool2d_x8_s2_cols_avx2},
          {"x8-maxpool2d-s2-avx2", Isa::avx2, "s8/u8 max, NCHW rows, stride_w = 2",
           cpu::x8_s2_declines, cpu::max_pool2d_x8_s2_avx2},
          {"x8-maxpool2d-rows-avx2", Isa::avx2, "s8/u8 max, NCHW rows, stride_w <= 2",
           cpu::x8_rows_declines, cpu::max_pool2d_x8_rows_avx2},
          {"x8-maxpool2d-avx2", Isa::avx2, "s8/u8 max, any layout and semantics",
           [](const Pool2dProblem& pr) { return declines_x8_simd(pr, 32); },
           cpu::max_pool2d_x8_avx2},
          {"f32-pool2d-portable", Isa::portable, "f32 avg/max/sum, any layout and semantics",
           declines_f32_portable, cpu::pool2d_f32_portable},
          {"x8-maxpool2d-same-portable", Isa::portable,
           "s8/u8 max, stride 1, output size = input size, NCHW planes up to 16 KB",
           [](const Pool2dProblem& pr) { return cpu::x8_same_declines(pr, 16); },
           cpu::max_pool2d_x8_same_portable},
          {"x8-maxpool2d-rows-portable", Isa::portable, "s8/u8 max, NCHW rows, stride_w <= 2",
           cpu::x8_rows_declines, cpu::max_pool2d_x8_rows_portable},
          {"x8-maxpool2d-portable", Isa::portable, "s8/u8 max, any layout and semantics",
           declines_x8, cpu::max_pool2d_x8_portable},
          {"pool2d-reference", Isa::portable, "always (the specification)", nullptr, run_reference,
           true},
      }};
  return list;
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

const char* max_nan_name(MaxNaN n) {
  switch (n) {
    case MaxNaN::propagate:
      return "propagate";
    case MaxNaN::ignore:
      return "ignore";
    case MaxNaN::first_tap:
      return "first_tap";
  }
  return "invalid";
}

const char* pool_loop_name(PoolLoop l) {
  switch (l) {
    case PoolLoop::taps:
      return "taps";
    case PoolLoop::mlas:
      return "mlas";
    case PoolLoop::mlas_nchwc:
      return "mlas_nchwc";
  }
  return "invalid";
}

PoolLoop effective_pool_loop(const Pool2dParams& p, int64_t channels) {
  return p.nchwc_block > 0 && channels % p.nchwc_block == 0 ? PoolLoop::mlas_nchwc : p.loop;
}

int64_t onnxruntime_nchwc_block() {
#if defined(__x86_64__)
  static const int64_t block = host_cpu_features().avx512f ? 16 : 8;
  return block;
#else
  return 0;
#endif
}

PoolGeometry pool_geometry_for(Profile profile) {
  return semantics_base(profile) == Profile::onnxruntime ? PoolGeometry::onnxruntime
                                                         : PoolGeometry::onnx;
}

namespace {

// ONNX Runtime 1.30's CPU pooling (docs/semantics.md): MLAS for MaxPool
// without dilation, for AveragePool before opset 19 except ceil_mode with
// count_include_pad, and for the global pools; its own loops otherwise. Its
// graph optimizer (level "all", the default) first rewrites MaxPool before
// opset 22 and AveragePool before opset 19 to MLAS's NCHWc kernel when the
// channels fill its blocks (nchwc_transformer.cc).
void apply_onnxruntime(Pool2dParams& p) {
  constexpr const char* fn = "npukit::apply_profile";
  const Window2d& w = p.window;
  const bool count_include_pad = p.count_include_pad;
  int64_t opset = p.opset;
  const bool dilated = w.dilation_h != 1 || w.dilation_w != 1;
  check_range(fn, "opset", opset, 0, 1000);
  // ONNX Runtime's PoolAttributes: "Pad should be smaller than kernel" (a kernel < 1 is
  // reported by the window's own checks).
  const std::tuple<const char*, int64_t, int64_t> pads[] = {
      {"pad_top", w.pad_top, w.kernel_h},
      {"pad_bottom", w.pad_bottom, w.kernel_h},
      {"pad_left", w.pad_left, w.kernel_w},
      {"pad_right", w.pad_right, w.kernel_w}};
  for (const auto& [name, pad, kernel] : pads)
    check(kernel < 1 || pad < kernel, fn, name, std::to_string(pad),  // kernel < 1: named later
          "less than the kernel (" + std::to_string(kernel) +
              ") for onnxruntime (ONNX Runtime: 'Pad should be smaller than kernel')");
  if (opset == 0) opset = dilated ? 19 : 18;
  bool mlas = !dilated;
  if (p.mode == PoolMode::avg) mlas = opset < 19 && !(w.ceil_mode && count_include_pad);
  p.loop = mlas ? PoolLoop::mlas : PoolLoop::taps;
  // MLAS divides by the kernel area; the AveragePool loop by the taps that
  // fall on the input or its padding (a ceil_mode window is cut at the end pad).
  p.divisor = !count_include_pad ? AvgDivisor::valid_count
              : mlas             ? AvgDivisor::kernel_area
                                 : AvgDivisor::clipped_window;
  p.end_pad_crops = !mlas && p.mode == PoolMode::avg;
  p.pad_value = PadValue::neg_flt_max;
  p.nan = MaxNaN::first_tap;
  p.accumulation = Fp32Accumulation::sequential;
  p.flush_denormals = false;
  // Measured against ONNX Runtime 1.30 (tests/python/test_ort_fp32_pool.py):
  // every opset is rewritten, except averages with ceil_mode and
  // count_include_pad, which keep ONNX Runtime's own loop.
  const bool nchwc_op = !(p.mode == PoolMode::avg && w.ceil_mode && count_include_pad);
  p.nchwc_block = nchwc_op ? onnxruntime_nchwc_block() : 0;
}

}  // namespace

void apply_global_profile(Pool2dParams& p, Profile profile) {
  p.count_include_pad = true;
  apply_profile(p, profile);
}

void apply_profile(Pool2dParams& p, Profile profile) {
  const bool count_include_pad = p.count_include_pad;
  p.loop = PoolLoop::taps;
  p.end_pad_crops = false;
  p.nchwc_block = 0;
  switch (semantics_base(profile)) {
    case Profile::pytorch:
      p.divisor = count_include_pad ? AvgDivisor::clipped_window : AvgDivisor::valid_count;
      p.pad_value = PadValue::neg_inf;
      p.nan = MaxNaN::propagate;
      p.accumulation = Fp32Accumulation::sequential;
      p.flush_denormals = false;
      return;
    case Profile::onnxruntime:
      apply_onnxruntime(p);
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

namespace {

// MLAS pooling has no dilation or zero insertion, and ONNX Runtime rejects
// its negative pads (SAME pads with stride > kernel).
void check_mlas_window(const Window2d& w, const char* fn) {
  check_range(fn, "dilation_h", w.dilation_h, 1, 1);
  check_range(fn, "dilation_w", w.dilation_w, 1, 1);
  check_range(fn, "ins_h", w.ins_h, 0, 0);
  check_range(fn, "ins_w", w.ins_w, 0, 0);
  const char* why =
      "0 or more for ONNX Runtime's MLAS pooling (it fails with 'padding values must be "
      "non-negative'; SAME pads turn negative when stride > kernel)";
  const std::pair<const char*, int64_t> pads[] = {{"pad_top", w.pad_top},
                                                  {"pad_bottom", w.pad_bottom},
                                                  {"pad_left", w.pad_left},
                                                  {"pad_right", w.pad_right}};
  for (const auto& [name, v] : pads) check(v >= 0, fn, name, std::to_string(v), why);
}

// MLAS's NCHWc kernel takes dilation but no zero insertion. (Negative SAME
// pads only shorten the output there: its taps read the input wherever they land.)
void check_nchwc_window(const Window2d& w, const char* fn) {
  check_range(fn, "ins_h", w.ins_h, 0, 0);
  check_range(fn, "ins_w", w.ins_w, 0, 0);
}

// The MLAS loops' own window limits (pool2d_output_shape checks them first).
void check_pool_loop_window(const Pool2dParams& p, PoolLoop loop) {
  if (loop == PoolLoop::mlas) {
    check_mlas_window(p.window, "npukit::pool2d");
    // MLAS divides by the kernel area or by the input taps; it has no
    // divisor that counts padding but not the ceil_mode overhang.
    check(p.mode != PoolMode::avg || p.divisor != AvgDivisor::clipped_window, "npukit::pool2d",
          "divisor", avg_divisor_name(p.divisor),
          "kernel_area or valid_count for PoolLoop::mlas (ONNX Runtime's MLAS pooling)");
  }
  if (loop == PoolLoop::mlas_nchwc) check_nchwc_window(p.window, "npukit::pool2d");
}

}  // namespace

Shape pool2d_output_shape(const Shape& x, const Pool2dParams& p) {
  check_pool_loop_window(p, x.size() == 4 ? effective_pool_loop(p, x[1]) : p.loop);
  return window_output_shape(x, p.window, "npukit::pool2d");
}

void pool2d(const TensorView& x, const TensorView& y, const Pool2dParams& p) {
  constexpr const char* fn = "npukit::pool2d";
  x.expect_rank(4, fn, "x");
  check_pool_loop_window(p, effective_pool_loop(p, x.dim(1)));
  expect_window_output(x, y, p.window, fn);  // pool2d_output_shape's checks, allocation-free
  // fail, not check: check's string arguments would be built on every call.
  if (x.dtype() != y.dtype()) fail(fn, "y.dtype", dtype_name(y.dtype()), dtype_name(x.dtype()));
  if (x.dtype() != DType::f32 && p.mode != PoolMode::max)  // message built only on failure
    fail(fn, "x.dtype", dtype_name(x.dtype()),
         std::string("f32 for ") + pool_mode_name(p.mode) +
             " pooling (quantized averages: qlinear_average_pool in npukit/ops/quantized.hpp)");
  if (x.dtype() != DType::f32 && x.dtype() != DType::s8 && x.dtype() != DType::u8)
    fail(fn, "x.dtype", dtype_name(x.dtype()), "f32, s8 or u8");
  pool2d_kernels().run(Pool2dProblem{x, y, p});
}

Pool2dParams global_pool2d_params(const Shape& x, PoolMode mode) {
  if (x.size() != 4)  // message built only on failure
    fail("npukit::global_pool2d", "x", "shape " + shape_text(x), "a 4-D (N, C, H, W) tensor");
  Pool2dParams p;
  p.mode = mode;
  p.window.kernel_h = x[2];
  p.window.kernel_w = x[3];
  return p;
}

void global_pool2d(const TensorView& x, const TensorView& y, PoolMode mode) {
  if (mode == PoolMode::sum) fail("npukit::global_pool2d", "mode", "sum", "avg or max");
  pool2d(x, y, global_pool2d_params(x.shape(), mode));
}

}  // namespace npukit
