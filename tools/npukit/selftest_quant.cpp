// Built-in quantized cases: every quantized operator under every profile that
// has it. Every expected value is worked out by hand in the comment beside it.
#include <cmath>
#include <functional>

#include "npukit/compat/mico_qnn.h"
#include "npukit/npukit.hpp"
#include "npukit/ops/quantized.hpp"
#include "selftest.hpp"

namespace npukit::cli {

namespace {

template <class T>
Tensor codes(const Shape& s, const std::vector<int>& v) {
  return Tensor::from<T>(s, std::vector<T>(v.begin(), v.end()));
}

template <class T>
std::string compare_codes(const Tensor& got, const std::vector<int>& want) {
  const std::vector<T> g = got.to_vector<T>();
  if (g.size() != want.size()) return "wrong size";
  for (size_t i = 0; i < g.size(); ++i)
    if (static_cast<int>(g[i]) != want[i])
      return "element " + std::to_string(i) + " is " + std::to_string(static_cast<int>(g[i])) +
             ", expected " + std::to_string(want[i]);
  return "";
}

QLinearAvgPoolParams avg(Profile prof, int64_t k, int64_t pad, bool cip, float xs, int xz, float ys,
                         int yz) {
  QLinearAvgPoolParams p;
  p.window.kernel_h = p.window.kernel_w = k;
  p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = pad;
  p.count_include_pad = cip;
  p.x_scale = xs;
  p.y_scale = ys;
  p.x_zero_point = xz;
  p.y_zero_point = yz;
  apply_profile(p, prof);
  return p;
}

template <class T>
std::string avg_case(const Tensor& x, const QLinearAvgPoolParams& p, const std::vector<int>& want,
                     bool global = false) {
  Tensor y(x.dtype(), global ? Shape{x.shape()[0], x.shape()[1], 1, 1}
                             : qlinear_average_pool_output_shape(x.shape(), p));
  if (global)
    qlinear_global_average_pool(x, y, p);
  else
    qlinear_average_pool(x, y, p);
  return compare_codes<T>(y, want);
}

void add(std::vector<SelftestCase>& out, const char* op, const char* prof, const char* what,
         std::function<std::string()> run) {
  out.push_back({op, prof, what, std::move(run)});
}

void add_quantize(std::vector<SelftestCase>& out) {
  for (Profile prof : {Profile::onnxruntime, Profile::pytorch}) {
    // x / 0.5: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2 (ties to even), -0.5 -> 0, +-2000 saturate.
    add(out, "quantize_linear", profile_name(prof), "ties to even, saturation", [prof] {
      QuantizeParams p;
      p.q.scale = {0.5f};
      apply_profile(p, prof);
      const Tensor x = Tensor::from<float>({6}, {0.25f, 0.75f, 1.25f, -0.25f, 1000.f, -1000.f});
      Tensor y(DType::s8, {6});
      quantize_linear(x, y, p);
      return compare_codes<int8_t>(y, {0, 2, 2, 0, 127, -128});
    });
  }
  // (x - 10) * 0.5: 0 -> -5, 10 -> 0, 255 -> 122.5.
  add(out, "dequantize_linear", "-", "(x - zp) * scale", [] {
    QuantParams q;
    q.scale = {0.5f};
    q.zero_point = {10};
    Tensor y(DType::f32, {3});
    dequantize_linear(codes<uint8_t>({3}, {0, 10, 255}), y, q);
    const std::vector<float> g = y.to_vector<float>();
    return g == std::vector<float>{-5.0f, 0.0f, 122.5f} ? "" : "wrong values";
  });
}

void add_avg_pool(std::vector<SelftestCase>& out) {
  const Tensor u1234 = codes<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor s1234 = codes<int8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor sneg = codes<int8_t>({1, 1, 2, 2}, {-1, -2, -3, -4});
  // ORT float path: x_scale 0.5, k 2x1, pad_left 1, count_include_pad 1 on
  // [2 2 1; 8 12 4]: columns (pad) 0, (1+4)/2 = 2.5 -> 2, (1+6)/2 = 3.5 -> 4, 1.25 -> 1.
  add(out, "qlinear_average_pool", "onnxruntime", "float path, ties to even", [] {
    QLinearAvgPoolParams p = avg(Profile::onnxruntime, 1, 0, true, 0.5f, 0, 1.0f, 0);
    p.window.kernel_h = 2;
    p.window.pad_left = 1;
    return avg_case<uint8_t>(codes<uint8_t>({1, 1, 2, 3}, {2, 2, 1, 8, 12, 4}), p, {0, 2, 4, 1});
  });
  // Whole image: acc = 10 - 4*1 = 6, 6/4 = 1.5 -> 2, + y_zp 10 = 12.
  add(out, "qlinear_average_pool", "onnxruntime", "whole image: integer path", [u1234] {
    return avg_case<uint8_t>(u1234, avg(Profile::onnxruntime, 2, 0, false, 1, 1, 1, 10), {12});
  });
  // GHP, N = 4, M1 = 1/4, X_z 10: acc = 10 - 40 = -30, -7.5: RTL -7, golden -8; + Y_z 100.
  add(out, "qlinear_average_pool", "ghp_rtl", "negative tie rounds up (-7.5 -> -7)", [u1234] {
    return avg_case<uint8_t>(u1234, avg(Profile::ghp_rtl, 2, 0, true, 1, 10, 1, 100), {93});
  });
  add(out, "qlinear_average_pool", "ghp_golden", "negative tie away (-7.5 -> -8)", [u1234] {
    return avg_case<uint8_t>(u1234, avg(Profile::ghp_golden, 2, 0, true, 1, 10, 1, 100), {92});
  });
  // k 1, M1 = 64, x 255: golden saturates to 255; the RTL's 10-bit register
  // holds 32640 mod 1024 = 896 = -128 -> r = -64 -> 0.
  const Tensor u255 = codes<uint8_t>({1, 1, 1, 1}, {255});
  add(out, "qlinear_average_pool", "ghp_rtl", "10-bit shift register wraps", [u255] {
    return avg_case<uint8_t>(u255, avg(Profile::ghp_rtl, 1, 0, true, 1, 0, 1.0f / 64, 0), {0});
  });
  add(out, "qlinear_average_pool", "ghp_golden", "saturates", [u255] {
    return avg_case<uint8_t>(u255, avg(Profile::ghp_golden, 1, 0, true, 1, 0, 1.0f / 64, 0), {255});
  });
  // TFLite: 10/4 = 2.5 -> 3, -2.5 -> -3 (away from zero).
  add(out, "qlinear_average_pool", "tflite", "ties away from zero (2.5 -> 3)", [s1234] {
    return avg_case<int8_t>(s1234, avg(Profile::tflite, 2, 0, false, 1, 0, 1, 0), {3});
  });
  add(out, "qlinear_average_pool", "tflite", "ties away from zero (-2.5 -> -3)", [sneg] {
    return avg_case<int8_t>(sneg, avg(Profile::tflite, 2, 0, false, 1, 0, 1, 0), {-3});
  });
  // MiCo: C division, 10/4 = 2, -10/4 = -2; k 1 pad 1 on one pixel: empty windows give 0.
  add(out, "qlinear_average_pool", "mico", "C division truncates (-2.5 -> -2)",
      [sneg] { return avg_case<int8_t>(sneg, avg(Profile::mico, 2, 0, false, 1, 0, 1, 0), {-2}); });
  add(out, "qlinear_average_pool", "mico", "window without input element gives 0", [] {
    return avg_case<int8_t>(codes<int8_t>({1, 1, 1, 1}, {9}),
                            avg(Profile::mico, 1, 1, false, 1, 0, 1, 0),
                            {0, 0, 0, 0, 9, 0, 0, 0, 0});
  });
  // Global: ORT as above (12); GHP M1 = 1/4: 2.5 -> 3; TFLite 3; MiCo 2.
  add(out, "qlinear_global_average_pool", "onnxruntime", "integer path", [u1234] {
    return avg_case<uint8_t>(u1234, avg(Profile::onnxruntime, 1, 0, false, 1, 1, 1, 10), {12},
                             true);
  });
  add(out, "qlinear_global_average_pool", "ghp_rtl", "M1 = 1/4, 2.5 -> 3", [u1234] {
    return avg_case<uint8_t>(u1234, avg(Profile::ghp_rtl, 1, 0, true, 1, 0, 1, 0), {3}, true);
  });
  add(out, "qlinear_global_average_pool", "ghp_golden", "M1 = 1/4, 2.5 -> 3", [u1234] {
    return avg_case<uint8_t>(u1234, avg(Profile::ghp_golden, 1, 0, true, 1, 0, 1, 0), {3}, true);
  });
  add(out, "qlinear_global_average_pool", "tflite", "2.5 -> 3", [s1234] {
    return avg_case<int8_t>(s1234, avg(Profile::tflite, 1, 0, false, 1, 0, 1, 0), {3}, true);
  });
  add(out, "qlinear_global_average_pool", "mico", "2.5 -> 2", [s1234] {
    return avg_case<int8_t>(s1234, avg(Profile::mico, 1, 0, false, 1, 0, 1, 0), {2}, true);
  });
}

void add_linear(std::vector<SelftestCase>& out) {
  for (Profile prof : {Profile::onnxruntime, Profile::pytorch}) {
    // x [10 20; 30 40] zp 10, w [1 2; 3 4]: acc 0 + 20 + 60 + 120 = 200, + bias 5;
    // M = 0.5*0.25/1: 25.625 -> 26, + 3 = 29.
    add(out, "qlinear_conv", profile_name(prof), "int32 acc + bias, float multiplier", [prof] {
      QLinearConvParams p;
      p.window.kernel_h = p.window.kernel_w = 2;
      p.x_scale = 0.5f;
      p.x_zero_point = 10;
      p.w.scale = {0.25f};
      p.y_zero_point = 3;
      p.has_bias = true;
      apply_profile(p, prof);
      Tensor y(DType::u8, {1, 1, 1, 1});
      qlinear_conv(codes<uint8_t>({1, 1, 2, 2}, {10, 20, 30, 40}),
                   codes<int8_t>({1, 1, 2, 2}, {1, 2, 3, 4}), Tensor::from<int32_t>({1}, {5}), y,
                   p);
      return compare_codes<uint8_t>(y, {29});
    });
    // a [1 2], b [3; 4] scale 0.5: acc 11 * 0.5 = 5.5 -> 6 (to even).
    add(out, "qlinear_matmul", profile_name(prof), "5.5 -> 6 (to even)", [prof] {
      QLinearMatMulParams p;
      p.b.scale = {0.5f};
      apply_profile(p, prof);
      Tensor y(DType::u8, {1, 1});
      qlinear_matmul(codes<uint8_t>({1, 2}, {1, 2}), codes<uint8_t>({2, 1}, {3, 4}), y, p);
      return compare_codes<uint8_t>(y, {6});
    });
    // a = 3 (zp 1, 0.5) -> 1, b = 4 (0.25) -> 1; c scale 0.8f, zp 2: 2/0.8f = 2.49999996 -> 2 + 2
    // (pytorch); ORT rounds 0.625*3 + (0.3125*4 + 1.375) = 4.5 -> 4: both 4.
    add(out, "qlinear_add", profile_name(prof), "rescale and add", [prof] {
      QLinearAddParams p;
      p.a_scale = 0.5f;
      p.a_zero_point = 1;
      p.b_scale = 0.25f;
      p.c_scale = 0.8f;
      p.c_zero_point = 2;
      apply_profile(p, prof);
      Tensor c(DType::u8, {2});
      qlinear_add(codes<uint8_t>({2}, {3, 5}), codes<uint8_t>({1}, {4}), c, p);
      return compare_codes<uint8_t>(c, {4, 6});
    });
  }
  // (x - 10)(w): 0*1 + 10*2 + 20*3 + 30*4 = 200.
  add(out, "conv_integer", "-", "int32 sum of (x - x_zp)(w - w_zp)", [] {
    ConvIntegerParams p;
    p.window.kernel_h = p.window.kernel_w = 2;
    p.x_zero_point = 10;
    Tensor y(DType::s32, {1, 1, 1, 1});
    conv_integer(codes<uint8_t>({1, 1, 2, 2}, {10, 20, 30, 40}),
                 codes<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4}), y, p);
    return y.data<int32_t>()[0] == 200
               ? ""
               : "expected 200, got " + std::to_string(y.data<int32_t>()[0]);
  });
  // (1-1)*3 + (2-1)*4 = 4.
  add(out, "matmul_integer", "-", "int32 (a - a_zp) @ b", [] {
    MatMulIntegerParams p;
    p.a_zero_point = 1;
    Tensor y(DType::s32, {1, 1});
    matmul_integer(codes<uint8_t>({1, 2}, {1, 2}), codes<uint8_t>({2, 1}, {3, 4}), y, p);
    return y.data<int32_t>()[0] == 4 ? "" : "expected 4";
  });
}

void add_max_pool(std::vector<SelftestCase>& out) {
  // s8 [-5 3; 2 -1], k 2 s 2 pad 1: each window holds one element plus padding,
  // which never wins: -5, 3, 2, -1.
  for (Profile prof : {Profile::onnxruntime, Profile::pytorch}) {
    add(out, "max_pool.s8", profile_name(prof), "padding never wins", [prof] {
      Pool2dParams p;
      p.mode = PoolMode::max;
      p.window.kernel_h = p.window.kernel_w = 2;
      p.window.stride_h = p.window.stride_w = 2;
      p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 1;
      apply_profile(p, prof);
      Tensor y(DType::s8, {1, 1, 2, 2});
      pool2d(codes<int8_t>({1, 1, 2, 2}, {-5, 3, 2, -1}), y, p);
      return compare_codes<int8_t>(y, {-5, 3, 2, -1});
    });
  }
  // MiCo C API, 1x1 image -100, k 1 pad 1: 0 around (empty windows), -100 in the centre;
  // average of [-1 -2; -3 -4] with k 2: -10/4 = -2 (truncation).
  add(out, "MiCo_Q8_MaxPool2D", "mico", "empty window gives 0", [] {
    int8_t x[1] = {-100}, y[9];
    Tensor4D_Q8 tx{{1, 1, 1, 1}, x, 0.5f, 8}, ty{{1, 1, 3, 3}, y, 0.0f, 8};
    MiCo_Q8_MaxPool2D(&ty, &tx, 1, 1, 1);
    for (int i = 0; i < 9; ++i)
      if (y[i] != (i == 4 ? -100 : 0)) return std::string("element ") + std::to_string(i);
    return std::string(ty.scale == 0.5f ? "" : "scale not preserved");
  });
  add(out, "MiCo_Q8_AvgPool2D", "mico", "C division truncates", [] {
    int8_t x[4] = {-1, -2, -3, -4}, y[1];
    Tensor4D_Q8 tx{{1, 1, 2, 2}, x, 0.5f, 8}, ty{{1, 1, 1, 1}, y, 0.0f, 8};
    MiCo_Q8_AvgPool2D(&ty, &tx, 2, 2, 0);
    return std::string(y[0] == -2 && ty.scale == 0.5f ? "" : "expected -2 and scale 0.5");
  });
}

}  // namespace

std::vector<SelftestCase> quant_selftest_cases() {
  std::vector<SelftestCase> out;
  add_quantize(out);
  add_avg_pool(out);
  add_linear(out);
  add_max_pool(out);
  return out;
}

}  // namespace npukit::cli
