#include "npukit/ops/conv2d.hpp"

#include "npukit/cpu_features.hpp"
#include "npukit/error.hpp"
#include "ops/conv2d_call.hpp"
#include "ops/cpu/conv_interleaved.hpp"
#include "ops/cpu/conv_nchw.hpp"
#include "ops/cpu/dwconv.hpp"
#include "ops/cpu/finite.hpp"
#include "ops/fp32_product_profile.hpp"

namespace npukit {

namespace {

void check_bias(const TensorView& bias, int64_t oc, bool has_bias, const char* fn) {
  if (!has_bias) return;
  bias.expect_dtype(DType::f32, fn, "bias.dtype");
  const bool ok = (bias.rank() == 1 && bias.dim(0) == oc) ||
                  (bias.rank() == 4 && bias.shape() == Shape{1, oc, 1, 1});
  if (!ok)  // the message is built only on failure: this runs on every convolution
    fail(fn, "bias", "shape " + shape_text(bias.shape()),
         "shape [" + std::to_string(oc) + "] or [1, " + std::to_string(oc) + ", 1, 1]");
}

// The shared checks of conv2d and depthwise2d; errors name `fn`, the entry the caller used.
// The checks build their message strings only on failure: this runs on every
// convolution of a model (1-2% of an int8 network's time when they did not).
Shape conv_output_shape(const Shape& x, const Shape& w, const Conv2dParams& p, const char* fn) {
  if (x.size() != 4) fail(fn, "x", "shape " + shape_text(x), "a 4-D (N, C, H, W) tensor");
  if (w.size() != 4) fail(fn, "w", "shape " + shape_text(w), "a 4-D (OC, C/groups, KH, KW) tensor");
  check_range(fn, "x.N", x[0], 1, INT32_MAX);
  check_range(fn, "x.C", x[1], 1, INT32_MAX);
  check_range(fn, "w.OC", w[0], 1, INT32_MAX);
  check_range(fn, "groups", p.groups, 1, x[1]);
  if (x[1] % p.groups != 0)
    fail(fn, "groups", std::to_string(p.groups),
         "a divisor of the input channels " + std::to_string(x[1]));
  if (w[0] % p.groups != 0)
    fail(fn, "groups", std::to_string(p.groups),
         "a divisor of the output channels " + std::to_string(w[0]));
  if (w[1] != x[1] / p.groups)
    fail(fn, "w", "shape " + shape_text(w),
         "w.shape[1] = C/groups = " + std::to_string(x[1] / p.groups));
  if (w[2] != p.window.kernel_h)
    fail(fn, "kernel_h", std::to_string(p.window.kernel_h), "w.shape[2] = " + std::to_string(w[2]));
  if (w[3] != p.window.kernel_w)
    fail(fn, "kernel_w", std::to_string(p.window.kernel_w), "w.shape[3] = " + std::to_string(w[3]));
  if (p.window.ceil_mode) fail(fn, "ceil_mode", "true", "false for convolution");
  const int64_t oh = axis_output_size(axis_h(p.window, x[2]), fn, 'h');
  const int64_t ow = axis_output_size(axis_w(p.window, x[3]), fn, 'w');
  return {x[0], w[0], oh, ow};
}

}  // namespace

Shape conv2d_output_shape(const Shape& x, const Shape& w, const Conv2dParams& p) {
  return conv_output_shape(x, w, p, "npukit::conv2d");
}

void conv2d(const TensorView& x, const TensorView& w, const TensorView& bias, const TensorView& y,
            const Conv2dParams& p) {
  conv2d(x, w, bias, y, p, nullptr);
}

namespace {

// Whether conv2d hands a convolution of these weights to the depthwise family
// (one input channel per group, w.dim(1) = 1: groups = C; residual_first
// goes to the conv2d family).
bool takes_depthwise(int64_t icg, const Conv2dParams& p) {
  return p.accumulation != Fp32Accumulation::interleaved && icg == 1 && !p.residual_first;
}

}  // namespace

std::shared_ptr<const cpu::ConvPackedWeights> conv2d_pack_weights(const TensorView& w,
                                                                  const Conv2dParams& p,
                                                                  int64_t y_h, int64_t y_w) {
  w.expect_dtype(DType::f32, "npukit::conv2d_pack_weights", "w.dtype");
  check(w.rank() == 4, "npukit::conv2d_pack_weights", "w", "shape " + shape_text(w.shape()),
        "a 4-D (OC, C/groups, KH, KW) tensor");
  check(p.groups >= 1 && w.dim(0) % p.groups == 0, "npukit::conv2d_pack_weights", "groups",
        std::to_string(p.groups), "a divisor of the output channels " + std::to_string(w.dim(0)));
  const int64_t block = cpu::conv_ocl_block(w.shape(), p, y_h, y_w);
  if (block != 0) return cpu::pack_conv_weights(w, p.groups, block, p.accumulation);
  if (!takes_depthwise(w.dim(1), p)) return nullptr;
  // Depthwise: nothing to pack, but whether every weight is finite is found
  // here, once, instead of on every call (the scan reads the weights cold).
  auto pw = std::make_shared<cpu::ConvPackedWeights>();
  pw->oc = w.dim(0);
  pw->icg = w.dim(1);
  pw->kh = w.dim(2);
  pw->kw = w.dim(3);
  pw->groups = p.groups;
  pw->source = w.raw();
  pw->finite = cpu::all_finite_f32(w);
  if (w.dim(0) == p.groups) {  // multiplier 1: the channels-last walk's taps
    pw->dw_pitch = (w.dim(0) + 15) / 16 * 16;
    pw->dw_taps.resize(static_cast<size_t>(w.dim(2) * w.dim(3) * pw->dw_pitch));
    cpu::pack_dwconv_taps(w, pw->dw_pitch, pw->dw_taps.data());
  }
  return pw;
}

namespace {

// Whether `pw` describes this very tensor w and found it all finite.
bool known_finite(const cpu::ConvPackedWeights* pw, const TensorView& w) {
  return pw != nullptr && pw->finite && pw->source == w.raw() && w.is_contiguous() &&
         pw->oc == w.dim(0) && pw->icg == w.dim(1) && pw->kh == w.dim(2) && pw->kw == w.dim(3);
}

}  // namespace

namespace {

// conv2d's checks of one call (the runner's Conv2dCall makes them once per views).
void check_conv2d_call(const TensorView& x, const TensorView& w, const TensorView& bias,
                       const TensorView& y, const Conv2dParams& p) {
  constexpr const char* fn = "npukit::conv2d";
  x.expect_dtype(DType::f32, fn, "x.dtype");
  w.expect_dtype(DType::f32, fn, "w.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  y.expect_shape(conv2d_output_shape(x.shape(), w.shape(), p), fn, "y");
  check_bias(bias, w.dim(0), p.has_bias, fn);
  const bool interleaved = p.accumulation == Fp32Accumulation::interleaved;
  if (interleaved)
    check(p.groups == 1, fn, "groups", std::to_string(p.groups),
          "1 with the interleaved accumulation (use depthwise2d for groups = C)");
  else if (p.flush_denormals)
    fail(fn, "flush_denormals", "true",
         std::string("false with the ") + fp32_accumulation_name(p.accumulation) + " accumulation");
  if (p.residual_first) {
    check(mlas_nchwc_block(p.accumulation) != 0, fn, "residual_first", "true",
          std::string("false with the ") + fp32_accumulation_name(p.accumulation) +
              " accumulation (it orders MLAS's chains: mlas_nchwc16 or mlas_nchwc8)");
  }
}

// The variant `choice` holds for this family, or the list's choice (then kept in `choice`).
template <class Problem>
const KernelVariant<Problem>& chosen(const KernelList<Problem>& list, const Problem& problem,
                                     const KernelVariant<Problem>** choice) {
  if (choice == nullptr) return list.choose(problem);
  if (*choice == nullptr) *choice = &list.choose(problem);
  return **choice;
}

}  // namespace

void conv2d(const TensorView& x, const TensorView& w, const TensorView& bias, const TensorView& y,
            const Conv2dParams& p, const cpu::ConvPackedWeights* packed) {
  check_conv2d_call(x, w, bias, y, p);
  detail::conv2d_checked(x, w, bias, y, p, packed, nullptr);
}

void detail::check_conv2d(const TensorView& x, const TensorView& w, const TensorView& bias,
                          const TensorView& y, const Conv2dParams& p) {
  check_conv2d_call(x, w, bias, y, p);
}

void detail::conv2d_checked(const TensorView& x, const TensorView& w, const TensorView& bias,
                            const TensorView& y, const Conv2dParams& p,
                            const cpu::ConvPackedWeights* packed, Conv2dChoice* choice) {
  const bool interleaved = p.accumulation == Fp32Accumulation::interleaved;
  if (!interleaved && p.groups == x.dim(1) && !p.residual_first) {
    // Depthwise (one input channel per group): the depthwise family (which
    // has no residual_first: those go to the conv2d family).
    cpu::DwconvProblem d{x,
                         w,
                         bias,
                         y,
                         p.window,
                         w.dim(0) / p.groups,
                         p.has_bias,
                         p.result_add,
                         p.accumulation,
                         p.flush_denormals,
                         p.clip};
    // Once (at planning, or here), not in each variant's decline check.
    d.w_known_finite = known_finite(packed, w) || cpu::all_finite_f32(w);
    if (known_finite(packed, w) && !packed->dw_taps.empty()) {
      d.w_taps = packed->dw_taps.data();
      d.taps_pitch = packed->dw_pitch;
    }
    return chosen(cpu::dwconv_kernels(), d, choice ? &choice->depthwise : nullptr).run(d);
  }
  if (packed != nullptr && packed->block == 0) packed = nullptr;  // a depthwise record: no packing
  const cpu::ConvProblem c{x, w, bias, y, p, packed};
  const KernelList<cpu::ConvProblem>& list =
      interleaved ? cpu::conv_interleaved_kernels() : cpu::conv_nchw_kernels();
  chosen(list, c, choice ? &choice->dense : nullptr).run(c);
}

namespace {

// ONNX Runtime's convolution sums as MLAS does on its host: NCHWc blocks of
// 16 channels where AVX-512F runs, 8 with AVX2 (measured bit for bit against
// ORT 1.30 at 16: scripts/fp32_conv_order_vs_ort.py). onnxruntime is this
// host's ORT, onnxruntime_avx2 an AVX2 host's. Without AVX2, MLAS has no FMA
// kernels and the sequential order stays (not measured).
Fp32Accumulation onnxruntime_conv_accumulation(Profile profile) {
  if (profile == Profile::onnxruntime_avx2) return Fp32Accumulation::mlas_nchwc8;
  const CpuFeatures f = host_cpu_features();
  if (f.avx512f) return Fp32Accumulation::mlas_nchwc16;
  return f.avx2 ? Fp32Accumulation::mlas_nchwc8 : Fp32Accumulation::sequential;
}

template <class Params>
void apply_conv_profile(Params& p, Profile profile) {
  detail::apply_fp32_product_profile(p, profile,
                                     "onnxruntime, pytorch or bm1684 for fp32 convolution");
  if (semantics_base(profile) == Profile::onnxruntime)
    p.accumulation = onnxruntime_conv_accumulation(profile);
}

}  // namespace

void apply_profile(Conv2dParams& p, Profile profile) {
  apply_conv_profile(p, profile);
}
void apply_profile(Depthwise2dParams& p, Profile profile) {
  apply_conv_profile(p, profile);
}

Shape depthwise2d_output_shape(const Shape& x, const Shape& w, const Depthwise2dParams& p) {
  constexpr const char* fn = "npukit::depthwise2d";
  check(x.size() == 4, fn, "x", "shape " + shape_text(x), "a 4-D (N, C, H, W) tensor");
  check_range(fn, "multiplier", p.multiplier, 1, INT32_MAX);
  check(
      w.size() == 4 && w[1] == 1 && w[0] == x[1] * p.multiplier, fn, "w", "shape " + shape_text(w),
      "shape [C*multiplier, 1, KH, KW] = [" + std::to_string(x[1] * p.multiplier) + ", 1, KH, KW]");
  Conv2dParams c{p.window, x[1], p.has_bias, p.result_add};
  return conv_output_shape(x, w, c, fn);
}

void depthwise2d(const TensorView& x, const TensorView& w, const TensorView& bias,
                 const TensorView& y, const Depthwise2dParams& p) {
  constexpr const char* fn = "npukit::depthwise2d";
  x.expect_dtype(DType::f32, fn, "x.dtype");
  w.expect_dtype(DType::f32, fn, "w.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  y.expect_shape(depthwise2d_output_shape(x.shape(), w.shape(), p), fn, "y");
  check_bias(bias, w.dim(0), p.has_bias, fn);
  if (p.accumulation != Fp32Accumulation::interleaved && p.flush_denormals)
    fail(fn, "flush_denormals", "true",
         std::string("false with the ") + fp32_accumulation_name(p.accumulation) + " accumulation");
  cpu::DwconvProblem d{x,
                       w,
                       bias,
                       y,
                       p.window,
                       p.multiplier,
                       p.has_bias,
                       p.result_add,
                       p.accumulation,
                       p.flush_denormals,
                       p.clip};
  if (p.accumulation != Fp32Accumulation::interleaved)  // (which adds 0 * w as the kernels do)
    d.w_known_finite = cpu::all_finite_f32(w);          // once, not in each variant's check
  cpu::dwconv_kernels().run(d);
}

}  // namespace npukit
