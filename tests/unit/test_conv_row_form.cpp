// The row form of the fp32 NCHW convolution driver (ConvTile::row_vectors:
// vectors of one output row each, where the output width is a multiple of
// the kernel's lanes and the q layout has padding columns, as mobilenet_v2's
// stem 3x3/2 on 224x224): f32-conv-nchw-avx512 against the reference kernels
// bit for bit (a NaN equals any NaN), seeded random geometry around output
// widths 16 .. 112 (strides, pads, dilation, groups, batch > 1, NHWC-strided
// input), special values, the sequential and both mlas_nchwc accumulations
// (result_add, residual_first, bias, fused clip), 1 to 3 threads. A mismatch
// prints the seed and the case.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string_view>

#include "npukit/npukit.hpp"
#include "ops/cpu/conv_nchw.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_conv_row_form {
namespace {

constexpr const char* kVariant = "f32-conv-nchw-avx512";

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
  if (mlas_nchwc_block(p.params.accumulation))
    ref::conv2d_f32_mlas(p.x, p.w, p.bias, p.y, p.params);
  else
    ref::conv2d_f32(p.x, p.w, p.bias, p.y, p.params);
  ref::clip_f32(p.y, p.y, p.params.clip);
}

std::string text(const cpu::ConvProblem& p, int threads, bool nhwc) {
  std::ostringstream s;
  const Conv2dParams& c = p.params;
  const Window2d& w = c.window;
  s << "x " << shape_text(p.x.shape()) << (nhwc ? " (NHWC x)" : "") << " w "
    << shape_text(p.w.shape()) << " y " << shape_text(p.y.shape()) << " groups " << c.groups
    << " stride " << w.stride_h << "x" << w.stride_w << " dilation " << w.dilation_h << "x"
    << w.dilation_w << " pads " << w.pad_top << "," << w.pad_bottom << "," << w.pad_left << ","
    << w.pad_right << " bias " << c.has_bias << " result_add " << c.result_add << " residual_first "
    << c.residual_first << " accumulation " << fp32_accumulation_name(c.accumulation) << " "
    << test::clip_text(c.clip) << " threads " << threads;
  return s.str();
}

// Random geometry whose output width is a multiple of 16 and whose q layout
// has padding columns (stride 2, or a kernel wider than 1 with pads), so
// that the driver takes the row form.
Conv2dParams draw_params(std::mt19937& rng, int iter) {
  Conv2dParams p;
  apply_profile(p, Profile::onnxruntime);
  const Fp32Accumulation accumulations[] = {
      Fp32Accumulation::mlas_nchwc16, Fp32Accumulation::mlas_nchwc8, Fp32Accumulation::sequential};
  p.accumulation = accumulations[iter % 3];
  Window2d& w = p.window;
  w.kernel_h = 1 + rng() % 3;
  w.kernel_w = 1 + rng() % 3;
  w.stride_h = 1 + rng() % 2;
  w.stride_w = 1 + rng() % 2;
  w.dilation_h = 1 + rng() % 2;
  w.dilation_w = 1 + rng() % 2;
  w.pad_top = rng() % 3;
  w.pad_bottom = rng() % 3;
  w.pad_left = rng() % 3;
  w.pad_right = rng() % 3;
  p.groups = 1 + rng() % 2;
  p.has_bias = rng() % 2;
  p.result_add = rng() % 2;
  p.residual_first = p.accumulation != Fp32Accumulation::sequential && p.result_add && rng() % 2;
  p.clip = test::fused_clip_case(static_cast<uint32_t>(iter));
  return p;
}

TEST(ConvRowForm, EqualsReferenceBitForBit) {
  const auto* v = variant();
  ASSERT_NE(v, nullptr) << kVariant << " is not in conv2d's list";
  if (!cpu::conv_nchw_kernels().runnable(*v))
    GTEST_SKIP() << kVariant << " may not run here (AVX-512 only; see NPUKIT_MAX_ISA and "
                 << "NPUKIT_IMPL)";
  test::SettingsRestore restore;
  const unsigned seed = 20261327;
  std::mt19937 rng(seed);
  int64_t row_form_runs = 0, outputs = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const Conv2dParams p = draw_params(rng, iter);
    const Window2d& win = p.window;
    const int64_t OW = 16 * (1 + int64_t(rng() % 4)) + (iter % 9 == 0 ? 64 : 0);  // up to 112
    const int64_t dk_w = (win.kernel_w - 1) * win.dilation_w + 1;
    const int64_t W = (OW - 1) * win.stride_w + dk_w - win.pad_left - win.pad_right +
                      int64_t(rng() % win.stride_w);
    const int64_t H = 1 + int64_t(rng() % 9);
    const bool nhwc = iter % 5 == 3;
    const int64_t IC = p.groups * (p.accumulation == Fp32Accumulation::sequential
                                       ? 1 + int64_t(rng() % 5)
                                       : (iter % 4 == 0 ? 16 : 1 + int64_t(rng() % 5)));
    const int64_t OC = p.groups * (1 + int64_t(rng() % 14));
    const Shape xs{1 + int64_t(rng() % 2), IC, H, W};
    const Shape ws{OC, IC / p.groups, win.kernel_h, win.kernel_w};
    Shape ys;
    try {
      ys = conv2d_output_shape(xs, ws, p);
    } catch (const Error&) {
      continue;  // a window taller than the padded image
    }
    ASSERT_EQ(ys[3], OW) << "seed " << seed << " iter " << iter;
    const int rare = iter % 3 == 0 ? 0 : 30;
    Tensor xstore(DType::f32, nhwc ? Shape{xs[0], xs[2], xs[3], xs[1]} : xs);
    const TensorView x = nhwc ? TensorView(xstore.view().raw(), DType::f32, xs,
                                           {xs[1] * xs[2] * xs[3], 1, xs[3] * xs[1], xs[1]})
                              : xstore.view();
    Tensor wt(DType::f32, ws), b(DType::f32, {OC}), y0(DType::f32, ys);
    for (Tensor* t : {&xstore, &wt, &b, &y0})
      for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, rare);
    Tensor want = y0;
    cpu::ConvProblem prob{x, wt, b, want, p};
    reference(prob);
    if (v->declines(prob) != nullptr) continue;  // non-finite weights with padding
    const bool row_form = cpu::conv_nchw_row_vectors(prob, 16) == OW / 16;
    for (int threads = 1; threads <= 3; ++threads) {
      set_num_threads(threads);
      Tensor got = y0;
      prob.y = got;
      v->run(prob);
      int64_t bad = 0, first = 0;
      const float* g = got.data<float>();
      const float* wv = want.data<float>();
      for (int64_t i = 0; i < got.numel(); ++i)
        if (!test::same_bits_or_both_nan(g[i], wv[i]) && bad++ == 0) first = i;
      ASSERT_EQ(bad, 0) << "seed " << seed << " iter " << iter << " " << text(prob, threads, nhwc)
                        << " row form " << row_form << "; first mismatch at element " << first
                        << ": " << g[first] << " vs " << wv[first];
      outputs += got.numel();
      row_form_runs += row_form;
    }
  }
  std::printf("row form: seed %u, %lld outputs compared, %lld runs in the row form\n", seed,
              static_cast<long long>(outputs), static_cast<long long>(row_form_runs));
  EXPECT_GT(row_form_runs, 350) << "the driver hardly took the row form";
}

// Where the driver takes the row form: output widths that are multiples of
// the lanes with padding columns in the q layout; not dense layouts nor
// other widths, nor kernels without the form (lanes 0).
TEST(ConvRowForm, TakenWhereTheOutputWidthIsAMultipleOfTheLanes) {
  Conv2dParams p;
  p.window.kernel_h = p.window.kernel_w = 3;
  p.window.stride_h = p.window.stride_w = 2;
  p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 1;
  Tensor x(DType::f32, {1, 3, 224, 224}), w(DType::f32, {32, 3, 3, 3}), b(DType::f32, {32});
  Tensor y(DType::f32, conv2d_output_shape(x.shape(), w.shape(), p));
  ASSERT_EQ(y.shape()[3], 112);
  const cpu::ConvProblem stem{x, w, b, y, p};
  EXPECT_EQ(cpu::conv_nchw_row_vectors(stem, 16), 7);  // mobilenet_v2's stem: q rows of 113
  EXPECT_EQ(cpu::conv_nchw_row_vectors(stem, 0), 0);
  EXPECT_EQ(cpu::conv_nchw_row_vectors(stem, 32), 0);  // 112 is not a multiple of 32
  Conv2dParams one = {};
  one.window.kernel_h = one.window.kernel_w = 1;
  Tensor w1(DType::f32, {32, 3, 1, 1}), y1(DType::f32, {1, 32, 224, 224});
  const cpu::ConvProblem dense{x, w1, b, y1, one};
  EXPECT_EQ(cpu::conv_nchw_row_vectors(dense, 16), 0);  // q layout = output layout
}

}  // namespace
}  // namespace test_conv_row_form
}  // namespace npukit
