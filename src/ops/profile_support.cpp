#include "npukit/ops/profile_support.hpp"

#include <map>

#include "npukit/error.hpp"

namespace npukit {

namespace {

struct FamilyName {
  OpFamily family;
  const char* name;
};

constexpr FamilyName kFamilies[] = {
    {OpFamily::elementwise, "elementwise"},
    {OpFamily::pool2d, "pool2d"},
    {OpFamily::conv2d, "conv2d"},
    {OpFamily::depthwise2d, "depthwise2d"},
    {OpFamily::matmul, "matmul"},
    {OpFamily::fp32_series, "fp32_series"},
    {OpFamily::quantize_linear, "quantize_linear"},
    {OpFamily::qlinear_average_pool, "qlinear_average_pool"},
    {OpFamily::qlinear_conv, "qlinear_conv"},
    {OpFamily::qlinear_matmul, "qlinear_matmul"},
    {OpFamily::matmul_integer, "matmul_integer"},
    {OpFamily::qlinear_add, "qlinear_add"},
    {OpFamily::bm_pool_quantized, "bm_pool_quantized"},
    {OpFamily::mico_pool, "mico_pool"},
    {OpFamily::mrt_conv, "mrt_conv"},
    {OpFamily::float_math, "float_math"},
    {OpFamily::reduce, "reduce"},
    {OpFamily::layer_norm, "layer_norm"},
    {OpFamily::conv_transpose, "conv_transpose"},
    {OpFamily::resize, "resize"},
    {OpFamily::data_movement, "data_movement"},
    {OpFamily::qlinear_mul, "qlinear_mul"},
    {OpFamily::qlinear_lookup, "qlinear_lookup"},
    {OpFamily::qgemm, "qgemm"},
    {OpFamily::binary, "binary"},
    {OpFamily::clip, "clip"},
    {OpFamily::batch_norm, "batch_norm"},
    {OpFamily::softmax, "softmax"},
    {OpFamily::dequantize_linear, "dequantize_linear"},
    {OpFamily::gemm, "gemm"},
};

using P = Profile;
using F = OpFamily;

// Reasons shared by many rows.
constexpr const char* kGhpQuantizedOnly =
    "the GHP-FPGA accelerator computes uint8 codes only; its operators are "
    "qlinear_average_pool, MaxPool on codes and the ADD/CONV/FC instructions (npukit isa)";
constexpr const char* kCvmIntegerOnly =
    "MRT/CVM is integer-only; its operators are the mrt_conv chain and the cvm_* requantization";
constexpr const char* kTfliteAvgPoolOnly =
    "npukit reproduces TFLite/CMSIS-NN's int8 average pool only";
constexpr const char* kMicoPoolsOnly = "npukit reproduces MiCo-Lib's int8 pools only";
constexpr const char* kBm1684NoOnnxQuant =
    "the BM1684 quantizes with its own fixed-point rules (bm_pool_quantized, okk fixed-point "
    "functions), not with ONNX's scale/zero-point operators";

// The rows, built by family group; yes/no record one (family, base profile) pair.
struct Rows {
  std::map<std::pair<F, P>, ProfileSupport> map;
  void yes(F f, P p, std::string semantics, std::string checked) {
    map[{f, p}] = {f, p, true, std::move(semantics), std::move(checked)};
  }
  void no(F f, P p, std::string why) { map[{f, p}] = {f, p, false, std::move(why), ""}; }
};

// ONNX Runtime's integer GEMM as the rows of its three families describe it.
constexpr const char* kOrtGemm =
    "int32 accumulation; u8 x s8 follows the host's MLAS kernel (int16-saturated pairs without "
    "VNNI, exact with VNNI; onnxruntime_avx2 / onnxruntime_vnni force either); float "
    "requantization, ties to even";

// fp32 operators: ONNX Runtime, PyTorch and the BM1684's C-model.
void fp32_rows(Rows& r) {
  for (F f : {F::elementwise, F::pool2d, F::conv2d, F::depthwise2d, F::matmul}) {
    r.no(f, P::ghp_rtl, kGhpQuantizedOnly);
    r.no(f, P::ghp_golden, kGhpQuantizedOnly);
    r.no(f, P::cvm, kCvmIntegerOnly);
    r.no(f, P::tflite, kTfliteAvgPoolOnly);
    r.no(f, P::mico, kMicoPoolsOnly);
  }
  r.yes(F::elementwise, P::onnxruntime, "IEEE fp32; relu propagates NaN", "ONNX node tests");
  r.yes(F::elementwise, P::pytorch, "IEEE fp32; relu propagates NaN", "PyTorch 1.13");
  r.yes(F::elementwise, P::bm1684, "relu gives +0 for NaN and -0; scale adds +0; FTZ/DAZ",
        "the vendor's C-model (probed), hand cases");
  r.yes(F::pool2d, P::onnxruntime,
        "ONNX Runtime's window geometry (SAME pads from the undilated kernel, truncated count) and "
        "its two fp32 loops: MLAS (three summation orders chosen by the geometry, kernel-area "
        "divisor) and its own loop (opset >= 19, dilated max, ceil_mode with count_include_pad: "
        "divisor clipped to the padded extent); NaN rules per loop; pads >= kernel rejected",
        "ONNX Runtime 1.30 (3,008 fp32 configurations per seed, NaN payloads included; s8/u8 "
        "max pool 1,208 configurations), ONNX node tests");
  r.yes(F::pool2d, P::pytorch,
        "count_include_pad divides by the window clipped to input + padding; max propagates NaN",
        "PyTorch 1.13 (3,400 configurations)");
  r.yes(F::pool2d, P::bm1684,
        "kernel-area divisor (count_include_pad must be 1), taps multiplied by 1/(kh*kw) into two "
        "interleaved accumulators, max pads with -FLT_MAX and keeps strictly greater taps, FTZ/DAZ",
        "the vendor's C-model (probed bit for bit)");
  for (F f : {F::conv2d, F::depthwise2d, F::matmul}) {
    r.yes(f, P::onnxruntime, "fp32 products summed in order, no FMA", "ONNX node tests");
    r.yes(f, P::pytorch, "fp32 products summed in order, no FMA",
          "PyTorch 1.13 (2,100 conv configurations)");
    r.yes(f, P::bm1684,
          f == F::conv2d ? "four interleaved accumulators over channel pairs (2IC), no FMA, FTZ/DAZ"
                         : "two interleaved accumulators by step parity, no FMA, FTZ/DAZ",
          "the vendor's C-model (probed bit for bit)");
  }
}

// OKKernel's series functions exist only on the BM1684.
void series_rows(Rows& r) {
  for (P p : {P::onnxruntime, P::pytorch, P::ghp_rtl, P::ghp_golden, P::cvm, P::tflite, P::mico})
    r.no(F::fp32_series, p,
         "exp/sigmoid/tanh by lookup table and Taylor series are OKKernel's functions; other "
         "systems use their own libm");
  r.yes(F::fp32_series, P::bm1684,
        "e^floor(x) from a table times a Taylor series of the fraction, FTZ/DAZ",
        "hand cases from the documented algorithm (the C-model not measured)");
}

// ONNX's quantized operators: ONNX Runtime and PyTorch.
void onnx_quant_rows(Rows& r) {
  for (F f : {F::quantize_linear, F::qlinear_conv, F::qlinear_matmul, F::matmul_integer,
              F::qlinear_add}) {
    r.no(f, P::ghp_rtl, kGhpQuantizedOnly);
    r.no(f, P::ghp_golden, kGhpQuantizedOnly);
    r.no(f, P::bm1684, kBm1684NoOnnxQuant);
    r.no(f, P::cvm, kCvmIntegerOnly);
    r.no(f, P::tflite, kTfliteAvgPoolOnly);
    r.no(f, P::mico, kMicoPoolsOnly);
  }
  r.yes(F::quantize_linear, P::onnxruntime, "x / scale in fp32, ties to even, + zero point",
        "ONNX Runtime 1.30 (900 configurations)");
  r.yes(F::quantize_linear, P::pytorch,
        "x * (1/scale) with the reciprocal rounded to fp32 first (quantize_per_tensor)",
        "PyTorch 1.13 (600 configurations)");
  r.yes(F::qlinear_conv, P::onnxruntime, kOrtGemm,
        "ONNX Runtime 1.30 (700 configurations, full-range weights), the bundled int8 model");
  r.yes(F::qlinear_matmul, P::onnxruntime, kOrtGemm, "ONNX Runtime 1.30 (500 configurations)");
  r.yes(F::matmul_integer, P::onnxruntime, kOrtGemm, "ONNX Runtime 1.30 (250 configurations)");
  for (F f : {F::qlinear_conv, F::qlinear_matmul, F::matmul_integer})
    r.yes(f, P::pytorch, "exact int32 accumulation, float requantization, ties to even",
          "not yet against PyTorch itself: hand cases and the reference's exact int32 sums");
  r.yes(F::qlinear_add, P::onnxruntime, "both inputs dequantized in fp32, summed, requantized",
        "ONNX Runtime 1.30 (300 configurations)");
  r.yes(F::qlinear_add, P::pytorch, "both inputs dequantized in fp32, summed, requantized",
        "not yet against PyTorch itself: the formula checked under onnxruntime");
}

// Quantized average pooling: every profile that has one.
void qavg_pool_rows(Rows& r) {
  r.yes(F::qlinear_average_pool, P::onnxruntime,
        "fp32 mean of dequantized taps (kernel area or valid taps), ties to even; integer path "
        "for whole-image kernels and the global pool",
        "ONNX Runtime 1.30 (1,646 configurations incl. a geometry sweep)");
  r.yes(F::qlinear_average_pool, P::pytorch,
        "int32 sum minus zero points, requantized with x_scale/y_scale/divisor (clipped window), "
        "NCHW and channels-last rounding of the zero point",
        "PyTorch 1.13 (610 configurations)");
  r.yes(F::qlinear_average_pool, P::ghp_rtl,
        "14-bit window sum, m1 multiply, 10-bit wrapping shift register, round half up, clamps "
        "(count_include_pad must be 1)",
        "the accelerator's public test vectors, byte for byte");
  r.yes(F::qlinear_average_pool, P::ghp_golden,
        "exact sum, sign(p)*round(|p|/2^n1) (ties away from zero), 9-bit saturation "
        "(count_include_pad must be 1)",
        "the accelerator's Python golden model (hand cases)");
  r.no(F::qlinear_average_pool, P::bm1684,
       "the BM1684's int8 average pool is bm_pool_quantized (rshift, no scales)");
  r.no(F::qlinear_average_pool, P::cvm, "MRT rewrites average pooling as mrt_conv (depthwise)");
  r.yes(F::qlinear_average_pool, P::tflite,
        "integer mean over valid taps, ties away from zero; input and output share scale and zero "
        "point",
        "hand cases from TFLite/CMSIS-NN's reference kernel");
  r.yes(F::qlinear_average_pool, P::mico,
        "int32 sum / valid taps with C division (toward zero); zero points must be 0",
        "hand cases, MiCo's C example compiled as C");
}

// Faces with one fixed profile.
void fixed_face_rows(Rows& r) {
  for (P p : all_profiles()) {
    if (semantics_base(p) != p) continue;
    if (p != P::bm1684)
      r.no(F::bm_pool_quantized, p, "the BM168x atomic pooling API is the BM1684's own");
    if (p != P::mico) r.no(F::mico_pool, p, "MiCo_Q8_AvgPool2D/MaxPool2D are MiCo-Lib's own");
    if (p != P::cvm)
      r.no(F::mrt_conv, p, "the MRT integer-only convolution chain is MRT/CVM's own");
  }
  r.yes(F::bm_pool_quantized, P::bm1684,
        "int32 sum, (acc + 2^(r-1)) >> r, saturation by output sign, optional relu, 4N layout",
        "hand cases and a numpy model");
  r.yes(F::mico_pool, P::mico, "int32 sum / valid taps (C division); max pads with -128",
        "hand cases, MiCo's C example compiled as C");
  r.yes(F::mrt_conv, P::cvm,
        "zero-point expansion, layer- or channel-wise weights, cvm_float + cvm_right_shift",
        "the exact expansion identity and a double-precision oracle");
}

// The runner's float operators beyond the fp32 core: measured against ONNX
// Runtime only. Under PyTorch they would need its own vectorized libm and
// reduction orders, which npukit does not reproduce; the BM1684 runs float
// math as OKKernel's series (fp32_series), not as ONNX operators; the GHP,
// CVM, TFLite and MiCo profiles name integer systems.
void runner_float_rows(Rows& r) {
  for (F f : {F::float_math, F::reduce, F::layer_norm, F::conv_transpose, F::resize}) {
    r.no(f, P::pytorch,
         "not reproduced for PyTorch (its vectorized libm and reduction orders differ in the last "
         "bit); npukit's float operators beyond conv/pool/gemm follow ONNX Runtime only");
    r.no(f, P::ghp_rtl, kGhpQuantizedOnly);
    r.no(f, P::ghp_golden, kGhpQuantizedOnly);
    r.no(f, P::bm1684,
         "the BM1684 computes float math with OKKernel's own functions (fp32_series, okk), not as "
         "ONNX operators");
    r.no(f, P::cvm, kCvmIntegerOnly);
    r.no(f, P::tflite, kTfliteAvgPoolOnly);
    r.no(f, P::mico, kMicoPoolsOnly);
  }
  r.yes(F::float_math, P::onnxruntime,
        "ONNX Runtime 1.30's CPU kernels' arithmetic and NaN rules (docs/semantics.md, \"ONNX "
        "float operators\")",
        "ONNX Runtime 1.30 (tests/python/test_ort_ops_math.py), ONNX node tests");
  r.yes(F::reduce, P::onnxruntime, "ONNX Runtime 1.30's summation order and NaN rules",
        "ONNX Runtime 1.30 (tests/python/test_ort_ops_math.py), ONNX node tests");
  r.yes(F::layer_norm, P::onnxruntime, "ONNX Runtime 1.30's CPU kernel arithmetic",
        "ONNX Runtime 1.30 (tests/python/test_ort_ops_math.py)");
  r.yes(F::conv_transpose, P::onnxruntime, "ONNX Runtime 1.30's summation order, no FMA",
        "ONNX Runtime 1.30 (tests/python/test_ort_ops_deconv_resize.py)");
  r.yes(F::resize, P::onnxruntime,
        "ONNX Runtime's coordinate transforms and interpolation weights in fp32",
        "ONNX Runtime 1.30 (tests/python/test_ort_ops_deconv_resize.py)");
}

// Data movement has no arithmetic to choose: every system gives the same bits.
void data_movement_rows(Rows& r) {
  for (P p : all_profiles())
    if (semantics_base(p) == p)
      r.yes(
          F::data_movement, p,
          "copies, index arithmetic, casts and comparisons: no rounding, the same on every system",
          "ONNX Runtime 1.30 (tests/python/test_ort_ops_tensor.py), ONNX node tests");
}

// ONNX Runtime's com.microsoft quantized operators.
void contrib_quant_rows(Rows& r) {
  for (F f : {F::qlinear_mul, F::qlinear_lookup, F::qgemm}) {
    r.no(f, P::pytorch, "an ONNX Runtime (com.microsoft) operator: PyTorch has no counterpart");
    r.no(f, P::ghp_rtl, kGhpQuantizedOnly);
    r.no(f, P::ghp_golden, kGhpQuantizedOnly);
    r.no(f, P::bm1684, kBm1684NoOnnxQuant);
    r.no(f, P::cvm, kCvmIntegerOnly);
    r.no(f, P::tflite, kTfliteAvgPoolOnly);
    r.no(f, P::mico, kMicoPoolsOnly);
  }
  r.yes(F::qlinear_mul, P::onnxruntime,
        "ONNX Runtime's fp32 product of dequantized codes, requantized",
        "ONNX Runtime 1.30 (tests/python/test_qdq_fusion_ort.py)");
  r.yes(F::qlinear_lookup, P::onnxruntime,
        "a 256-entry table built with ONNX Runtime's fp32 arithmetic, one lookup per code",
        "ONNX Runtime 1.30 (tests/python/test_qdq_fusion_ort.py)");
  r.yes(F::qgemm, P::onnxruntime, kOrtGemm,
        "ONNX Runtime 1.30 (tests/python/test_qdq_fusion_ort.py)");
}

// The runner's fp32 operators whose result is one IEEE operation per element
// (Add, Mul: one rounding; Clip: none; DequantizeLinear: (q - zp) exact, one
// product): ONNX Runtime and PyTorch give the same bits; BatchNormalization and
// Softmax round several times and PyTorch's order differs from ONNX Runtime's.
void runner_fp32_rows(Rows& r) {
  for (F f : {F::binary, F::clip, F::batch_norm, F::softmax, F::dequantize_linear}) {
    r.no(f, P::ghp_rtl, kGhpQuantizedOnly);
    r.no(f, P::ghp_golden, kGhpQuantizedOnly);
    r.no(f, P::cvm, kCvmIntegerOnly);
    r.no(f, P::tflite, kTfliteAvgPoolOnly);
    r.no(f, P::mico, kMicoPoolsOnly);
  }
  for (F f : {F::binary, F::clip, F::batch_norm, F::softmax})
    r.no(
        f, P::bm1684,
        "npukit runs this ONNX operator with IEEE arithmetic; the BM1684's FTZ/DAZ float units are "
        "reproduced by the okk/bm_atomic faces, not by the runner");
  r.no(F::dequantize_linear, P::bm1684, kBm1684NoOnnxQuant);
  constexpr const char* kOrtPyTorchChecked =
      "ONNX Runtime 1.30 (tests/python/test_ort_ops_math.py) and PyTorch 1.13 "
      "(tests/python/test_profile_pairs.py), bit for bit with NaN/inf/-0/denormals";
  for (P p : {P::onnxruntime, P::pytorch}) {
    r.yes(F::binary, p, "one IEEE fp32 rounding per element, numpy broadcasting, NaN propagates",
          kOrtPyTorchChecked);
    r.yes(F::clip, p,
          "min(max(x, min), max) taken literally: NaN stays NaN, min > max gives max, no rounding",
          kOrtPyTorchChecked);
    r.yes(F::dequantize_linear, p,
          "(q - zero point) exact, times the fp32 scale: one rounding (PyTorch's dequantize gives "
          "the same bits)",
          p == P::onnxruntime
              ? "ONNX Runtime 1.30 (tests/python/test_ort_quant.py), ONNX node tests"
              : "PyTorch 1.13 (tests/python/test_profile_pairs.py, u8 and s8, 50 "
                "scales and zero points)");
  }
  r.yes(F::batch_norm, P::onnxruntime,
        "ONNX Runtime's per-channel fold: s = (1/sqrt(var + eps)) * scale, b = bias - mean * s, "
        "y = x * s + b, each step rounded, no FMA",
        "ONNX Runtime 1.30 (tests/python/test_ort_ops_math.py, bit for bit)");
  r.no(F::batch_norm, P::pytorch,
       "not reproduced for PyTorch: its batch_norm rounds in another order (measured: last-bit "
       "differences on ~5% of outputs); npukit follows ONNX Runtime");
  r.yes(F::softmax, P::onnxruntime,
        "MLAS's MlasComputeSoftmax step by step: the maximum in its lane order, its exp "
        "polynomial with FMAs, its summation order (AVX512F or FMA3 kernel, as the host), then "
        "e * (1 / sum); NaN sign and payload not modelled",
        "ONNX Runtime 1.30 bit for bit on AVX512F hosts (tests/python/test_ort_ops_math.py); "
        "the FMA3 kernel is read from ORT's source and checked within 16 ulp");
  r.no(F::softmax, P::pytorch,
       "not reproduced for PyTorch: its vectorized exp and sum order differ in the last bit "
       "(measured on ~70% of outputs); npukit follows ONNX Runtime");
}

// The runner's Gemm / MatMul: sequential sums only (no MatmulParams), so the
// BM1684's interleaved matmul stays with the C faces (family matmul).
void runner_gemm_rows(Rows& r) {
  r.no(F::gemm, P::ghp_rtl, kGhpQuantizedOnly);
  r.no(F::gemm, P::ghp_golden, kGhpQuantizedOnly);
  r.no(F::gemm, P::cvm, kCvmIntegerOnly);
  r.no(F::gemm, P::tflite, kTfliteAvgPoolOnly);
  r.no(F::gemm, P::mico, kMicoPoolsOnly);
  r.no(F::gemm, P::bm1684,
       "the runner's Gemm/MatMul sum products in order; the BM1684's interleaved accumulators are "
       "the okk/bm_atomic matmul's (family matmul)");
  r.yes(F::gemm, P::onnxruntime, "fp32 products summed in order, no FMA; alpha/beta as ONNX",
        "ONNX node tests");
  r.yes(F::gemm, P::pytorch, "fp32 products summed in order, no FMA",
        "not yet against PyTorch's matmul itself: the conv rows' sequential order");
}

std::vector<ProfileSupport> build_table() {
  Rows r;
  fp32_rows(r);
  series_rows(r);
  onnx_quant_rows(r);
  qavg_pool_rows(r);
  fixed_face_rows(r);
  runner_float_rows(r);
  data_movement_rows(r);
  contrib_quant_rows(r);
  runner_fp32_rows(r);
  runner_gemm_rows(r);
  const auto& rows = r.map;
  std::vector<ProfileSupport> table;
  for (const FamilyName& f : kFamilies)
    for (P p : all_profiles()) {
      if (semantics_base(p) != p) continue;
      const auto it = rows.find({f.family, p});
      if (it == rows.end())
        fail("npukit::profile_table", "row", std::string(f.name) + " x " + profile_name(p),
             "a row for every family and base profile (src/ops/profile_support.cpp)");
      table.push_back(it->second);
    }
  return table;
}

}  // namespace

const char* op_family_name(OpFamily f) {
  for (const FamilyName& n : kFamilies)
    if (n.family == f) return n.name;
  return "invalid";
}

OpFamily op_family_from_name(const std::string& name) {
  std::string all;
  for (const FamilyName& n : kFamilies) {
    if (name == n.name) return n.family;
    all += (all.empty() ? "" : ", ") + std::string(n.name);
  }
  fail("npukit::op_family_from_name", "name", name, all);
}

const std::vector<OpFamily>& all_op_families() {
  static const std::vector<OpFamily> all = [] {
    std::vector<OpFamily> v;
    for (const FamilyName& n : kFamilies) v.push_back(n.family);
    return v;
  }();
  return all;
}

const std::vector<ProfileSupport>& profile_table() {
  static const std::vector<ProfileSupport> table = build_table();
  return table;
}

const ProfileSupport& profile_support(OpFamily family, Profile profile) {
  const Profile base = semantics_base(profile);
  for (const ProfileSupport& row : profile_table())
    if (row.family == family && row.profile == base) return row;
  fail("npukit::profile_support", "family", op_family_name(family), "a family of OpFamily");
}

bool supports(OpFamily family, Profile profile) {
  return profile_support(family, profile).supported;
}

void expect_supported(OpFamily family, Profile profile, const char* function) {
  const ProfileSupport& row = profile_support(family, profile);
  if (row.supported) return;
  std::string covering;
  for (Profile p : all_profiles())
    if (supports(family, p))
      covering += (covering.empty() ? "" : ", ") + std::string(profile_name(p));
  fail(function, "profile", profile_name(profile),
       covering + " for " + op_family_name(family) + " (" + profile_name(profile) + ": " +
           row.semantics + ")");
}

std::string profile_table_markdown() {
  std::string md = "| family |";
  std::string rule = "|---|";
  for (Profile p : all_profiles()) {
    if (semantics_base(p) != p) continue;
    md += std::string(" ") + profile_name(p) + " |";
    rule += ":-:|";
  }
  md += "\n" + rule + "\n";
  for (OpFamily f : all_op_families()) {
    md += std::string("| ") + op_family_name(f) + " |";
    for (Profile p : all_profiles())
      if (semantics_base(p) == p) md += supports(f, p) ? " yes |" : " — |";
    md += "\n";
  }
  return md;
}

}  // namespace npukit
