// f32-conv-nchw-s2-avx512 (3x3 stride-2 convolutions of few input channels
// read in place, mobilenet_v2's stem) against ref::conv2d_f32_mlas bit for
// bit (a NaN equals any NaN): seeded random geometry (odd and even input
// sizes from 1, output widths around the 16 lanes, pads 0-2 on each side,
// 1-15 input and 1-20 output channels around the 12-channel blocks, batch 2,
// input and output rows inside wider rows), special values, both mlas_nchwc
// accumulations, bias, result_add, residual_first, fused clips, 1 to 3
// threads. A mismatch prints the seed and the case.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <sstream>
#include <string_view>

#include "npukit/npukit.hpp"
#include "ops/cpu/conv_nchw.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_conv_nchw_s2 {
namespace {

constexpr const char* kVariant = "f32-conv-nchw-s2-avx512";

constexpr float kSpecials[] = {test::kNaN, test::kInf, -test::kInf, 0.0f,      -0.0f,   1e-40f,
                               -3e-39f,    1e30f,      -1e30f,      0x1p-126f, -FLT_MIN};

float value(std::mt19937& rng, int rare) {
  return test::uniform_or_special(rng, rare, kSpecials);
}

const KernelVariant<cpu::ConvProblem>* variant() {
  for (const auto& v : cpu::conv_nchw_kernels().variants)
    if (std::string_view(v.name) == kVariant) return &v;
  return nullptr;
}

void reference(const cpu::ConvProblem& p) {
  ref::conv2d_f32_mlas(p.x, p.w, p.bias, p.y, p.params);
  ref::clip_f32(p.y, p.y, p.params.clip);
}

std::string text(const cpu::ConvProblem& p, int threads) {
  std::ostringstream s;
  const Conv2dParams& c = p.params;
  const Window2d& w = c.window;
  s << "x " << shape_text(p.x.shape()) << " (row pitch " << p.x.stride(2) << ") w "
    << shape_text(p.w.shape()) << " y " << shape_text(p.y.shape()) << " (row pitch "
    << p.y.stride(2) << ") pads " << w.pad_top << "," << w.pad_bottom << "," << w.pad_left << ","
    << w.pad_right << " bias " << c.has_bias << " result_add " << c.result_add << " residual_first "
    << c.residual_first << " accumulation " << fp32_accumulation_name(c.accumulation) << " "
    << test::clip_text(c.clip) << " threads " << threads;
  return s.str();
}

Conv2dParams draw_params(std::mt19937& rng, int iter) {
  Conv2dParams p;
  apply_profile(p, Profile::onnxruntime);
  p.accumulation = iter % 2 ? Fp32Accumulation::mlas_nchwc8 : Fp32Accumulation::mlas_nchwc16;
  Window2d& w = p.window;
  w.kernel_h = w.kernel_w = 3;
  w.stride_h = w.stride_w = 2;
  w.pad_top = rng() % 3;
  w.pad_bottom = rng() % 3;
  w.pad_left = rng() % 3;
  w.pad_right = rng() % 3;
  p.has_bias = rng() % 2;
  p.result_add = rng() % 2;
  p.residual_first = p.result_add && rng() % 2;
  p.clip = test::fused_clip_case(static_cast<uint32_t>(iter));
  return p;
}

// A (d0, d1, d2, d3) view whose rows lie `extra` floats apart inside a
// wider tensor (extra 0: the tensor itself).
TensorView rows_inside(Tensor& t, const Shape& s, int64_t extra) {
  const int64_t pitch = s[3] + extra;
  return TensorView(t.view().raw(), DType::f32, s, {s[1] * s[2] * pitch, s[2] * pitch, pitch, 1});
}

TEST(ConvNchwS2, EqualsReferenceBitForBit) {
  const auto* v = variant();
  ASSERT_NE(v, nullptr) << kVariant << " is not in conv2d's list";
  if (!cpu::conv_nchw_kernels().runnable(*v))
    GTEST_SKIP() << kVariant << " may not run here (AVX-512 only; see NPUKIT_MAX_ISA and "
                 << "NPUKIT_IMPL)";
  test::SettingsRestore restore;
  const unsigned seed = 20261501;
  std::mt19937 rng(seed);
  int64_t runs = 0, outputs = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const Conv2dParams p = draw_params(rng, iter);
    const int64_t block = mlas_nchwc_block(p.accumulation);
    const int64_t IC = iter % 7 == 0 ? block - 1 : 1 + int64_t(rng() % (block - 1));
    const int64_t OC = iter % 5 == 0 ? 12 * (1 + int64_t(rng() % 3)) : 1 + int64_t(rng() % 20);
    // Input widths 1 .. 80 (output widths around one to two vectors and
    // beyond), some with the stem's 224; heights 1 .. 12.
    const int64_t W = iter % 23 == 0 ? 224 : 1 + int64_t(rng() % 80);
    const int64_t H = 1 + int64_t(rng() % 12);
    const Shape xs{1 + int64_t(rng() % 2), IC, H, W};
    const Shape ws{OC, IC, 3, 3};
    Shape ys;
    try {
      ys = conv2d_output_shape(xs, ws, p);
    } catch (const Error&) {
      continue;  // a window taller or wider than the padded image
    }
    const int64_t x_extra = iter % 4 == 1 ? 1 + int64_t(rng() % 20) : 0;
    const int64_t y_extra = iter % 6 == 2 ? 1 + int64_t(rng() % 20) : 0;
    const int rare = iter % 3 == 0 ? 0 : 30;
    Tensor xstore(DType::f32, {xs[0], xs[1], xs[2], xs[3] + x_extra});
    Tensor wt(DType::f32, ws), b(DType::f32, {OC});
    Tensor y0(DType::f32, {ys[0], ys[1], ys[2], ys[3] + y_extra});
    for (Tensor* t : {&xstore, &wt, &b, &y0})
      for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, rare);
    const TensorView x = rows_inside(xstore, xs, x_extra);
    Tensor want = y0;
    cpu::ConvProblem prob{x, wt, b, rows_inside(want, ys, y_extra), p};
    reference(prob);
    if (const char* why = v->declines(prob)) {
      // Only non-finite weights with padding (checked ahead when the output
      // is not smaller than the weights) may turn the kernel down.
      ASSERT_NE(std::string_view(why).find("non-finite"), std::string_view::npos)
          << "seed " << seed << " iter " << iter << " " << text(prob, 1) << ": " << why;
      continue;
    }
    for (int threads = 1; threads <= 3; ++threads) {
      set_num_threads(threads);
      Tensor got = y0;
      prob.y = rows_inside(got, ys, y_extra);
      v->run(prob);
      int64_t bad = 0, first = 0;
      const float* g = got.data<float>();
      const float* wv = want.data<float>();
      for (int64_t i = 0; i < got.numel(); ++i)
        if (!test::same_bits_or_both_nan(g[i], wv[i]) && bad++ == 0) first = i;
      ASSERT_EQ(bad, 0) << "seed " << seed << " iter " << iter << " " << text(prob, threads)
                        << "; first mismatch at element " << first
                        << " of the stored tensor: " << g[first] << " vs " << wv[first];
      outputs += got.numel();
      ++runs;
    }
  }
  std::printf("%s: seed %u, %lld runs, %lld outputs compared\n", kVariant, seed,
              static_cast<long long>(runs), static_cast<long long>(outputs));
  EXPECT_GT(runs, 500) << "the kernel hardly ran";  // 591 with this seed
}

// What the kernel leaves to f32-conv-nchw: other kernels, strides, channel
// counts and accumulations, and outputs that overlap the input it reads in
// place; mobilenet_v2's stem it takes.
TEST(ConvNchwS2, TakesTheStemAndDeclinesTheRest) {
  const auto* v = variant();
  ASSERT_NE(v, nullptr);
  Conv2dParams p;
  apply_profile(p, Profile::onnxruntime);
  p.accumulation = Fp32Accumulation::mlas_nchwc16;
  p.window.kernel_h = p.window.kernel_w = 3;
  p.window.stride_h = p.window.stride_w = 2;
  p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 1;
  Tensor x(DType::f32, {1, 3, 224, 224}), w(DType::f32, {32, 3, 3, 3}), b(DType::f32, {32});
  Tensor y(DType::f32, conv2d_output_shape(x.shape(), w.shape(), p));
  EXPECT_EQ(v->declines(cpu::ConvProblem{x, w, b, y, p}), nullptr);

  Conv2dParams seq = p;
  seq.accumulation = Fp32Accumulation::sequential;
  EXPECT_NE(v->declines(cpu::ConvProblem{x, w, b, y, seq}), nullptr);
  Conv2dParams s1 = p;
  s1.window.stride_h = s1.window.stride_w = 1;
  Tensor y1(DType::f32, conv2d_output_shape(x.shape(), w.shape(), s1));
  EXPECT_NE(v->declines(cpu::ConvProblem{x, w, b, y1, s1}), nullptr);
  Tensor x16(DType::f32, {1, 16, 224, 224}), w16(DType::f32, {32, 16, 3, 3});
  EXPECT_NE(v->declines(cpu::ConvProblem{x16, w16, b, y, p}), nullptr);  // 16 = the block
  Tensor w5(DType::f32, {32, 3, 5, 5});
  Conv2dParams k5 = p;
  k5.window.kernel_h = k5.window.kernel_w = 5;
  Tensor y5(DType::f32, conv2d_output_shape(x.shape(), w5.shape(), k5));
  EXPECT_NE(v->declines(cpu::ConvProblem{x, w5, b, y5, k5}), nullptr);
  // y in x's memory (its first planes): the kernel would read what it wrote.
  Tensor big(DType::f32, {1, 3, 224, 224});
  const TensorView y_in_x(big.view().raw(), DType::f32, {1, 3, 112, 112},
                          {3 * 112 * 112, 112 * 112, 112, 1});
  Tensor w3(DType::f32, {3, 3, 3, 3}), b3(DType::f32, {3});
  EXPECT_NE(v->declines(cpu::ConvProblem{big, w3, b3, y_in_x, p}), nullptr);
}

}  // namespace
}  // namespace test_conv_nchw_s2
}  // namespace npukit
