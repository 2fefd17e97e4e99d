// f32-conv-1x1-{avx512,avx2} (src/ops/cpu/f32-conv-1x1-*.cpp) against the
// reference conv2d, bit for bit (a NaN equals any NaN): mobilenet-shaped
// pointwise layers and random ones (channel counts 1..40 and 64..200, planes
// 1x1 .. 16x16, stride 1 and 2, pads, batch > 1, NHWC-strided input, output
// planes with padded rows so that a tile's outputs are not consecutive),
// bias, result_add, fused clips, NaN / inf / -0 / denormals, 1, 2 and 3
// threads; then conv2d itself at every ISA cap and Impl::reference on the
// same shapes. A mismatch prints the seed and the case.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "npukit/npukit.hpp"
#include "ops/cpu/conv_1x1.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_conv_1x1 {
namespace {

constexpr float kSpecials[] = {test::kNaN, test::kInf, -test::kInf, 0.0f,  -0.0f,
                               1e-40f,     -3e-39f,    1e30f,       -1e30f};

float value(std::mt19937& rng, int rare) {
  return test::uniform_or_special(rng, rare, kSpecials);
}

// One pointwise problem: its tensors and the reference's answer.
struct Case {
  Conv2dParams p;
  Tensor xstore, w, b, y0, want;
  TensorView x, y_of_want;
  Shape ys;
  bool nhwc = false;
  int64_t y_pad = 0;  // extra floats per output row
  std::string text;
};

// An output tensor whose rows are y_pad floats longer than OW, viewed as ys.
TensorView padded_view(Tensor& t, const Shape& ys, int64_t y_pad) {
  const int64_t row = ys[3] + y_pad;
  return TensorView(t.view().raw(), DType::f32, ys, {ys[1] * ys[2] * row, ys[2] * row, row, 1});
}

Case make_case(std::mt19937& rng, int iter, bool mobilenet) {
  Case c;
  Conv2dParams& p = c.p;
  apply_profile(p, Profile::pytorch);  // the sequential order (onnxruntime: mlas_nchwc, not theirs)
  Window2d& win = p.window;
  win.kernel_h = win.kernel_w = 1;
  static const int64_t net[][3] = {{64, 384, 14},  {384, 64, 14}, {96, 576, 14}, {576, 96, 14},
                                   {576, 160, 7},  {160, 960, 7}, {960, 160, 7}, {960, 320, 7},
                                   {320, 1280, 7}, {192, 64, 14}, {384, 96, 14}, {144, 32, 16},
                                   {64, 40, 9},    {100, 17, 11}};
  int64_t IC, OC, H, W, N = 1;
  if (mobilenet) {
    const auto& s = net[iter % 14];
    IC = s[0];
    OC = s[1];
    H = W = s[2];
  } else {
    IC = rng() % 2 ? 1 + rng() % 40 : 64 + rng() % 137;
    OC = 1 + rng() % (rng() % 3 == 0 ? 200 : 40);
    H = 1 + rng() % 16;
    W = iter % 7 == 0 ? 1 : 1 + rng() % 16;
    N = 1 + rng() % 3;
    win.stride_h = 1 + rng() % 2;
    win.stride_w = 1 + rng() % 2;
    if (rng() % 4 == 0) win.pad_top = win.pad_left = 1;
    if (rng() % 4 == 0) win.pad_bottom = win.pad_right = 1;
    c.nhwc = iter % 5 == 3;
    c.y_pad = iter % 4 == 2 ? 1 + rng() % 3 : 0;
  }
  p.has_bias = rng() % 4 != 0;
  p.result_add = rng() % 3 == 0;
  p.clip = test::fused_clip_case(static_cast<uint32_t>(iter) + (mobilenet ? 500u : 0u));
  const Shape xs{N, IC, H, W}, ws{OC, IC, 1, 1};
  c.ys = conv2d_output_shape(xs, ws, p);
  const int rare = iter % 3 == 0 ? 0 : 40;
  c.xstore = Tensor(DType::f32, c.nhwc ? Shape{N, H, W, IC} : xs);
  c.x = c.nhwc ? TensorView(c.xstore.view().raw(), DType::f32, xs, {H * W * IC, 1, W * IC, IC})
               : c.xstore.view();
  c.w = Tensor(DType::f32, ws);
  c.b = Tensor(DType::f32, {OC});
  const Shape ystore{c.ys[0], c.ys[1], c.ys[2], c.ys[3] + c.y_pad};
  c.y0 = Tensor(DType::f32, ystore);
  for (Tensor* t : {&c.xstore, &c.b, &c.y0})
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, rare);
  // Non-finite weights only without padding (with it, the kernels' 0 * w
  // would differ from the reference's skipped tap: they decline or recheck).
  const bool padded = win.pad_top || win.pad_bottom || win.pad_left || win.pad_right;
  for (int64_t i = 0; i < c.w.numel(); ++i) c.w.data<float>()[i] = value(rng, padded ? 0 : rare);
  c.want = c.y0;
  const TensorView want = padded_view(c.want, c.ys, c.y_pad);
  ref::conv2d_f32(c.x, c.w, c.b, want, p);
  if (!clip_is_identity(p.clip)) ref::clip_f32(want, want, p.clip);
  std::ostringstream s;
  s << "x " << N << "x" << IC << "x" << H << "x" << W << (c.nhwc ? " (NHWC)" : "") << " OC " << OC
    << " stride " << win.stride_h << "x" << win.stride_w << " pads " << win.pad_top << ","
    << win.pad_bottom << "," << win.pad_left << "," << win.pad_right << " y_pad " << c.y_pad
    << " bias " << p.has_bias << " result_add " << p.result_add << " " << test::clip_text(p.clip);
  c.text = s.str();
  return c;
}

// Number of differing floats (the padding columns included: they must stay).
int64_t mismatches(const Tensor& got, const Tensor& want, int64_t& first) {
  int64_t bad = 0;
  for (int64_t i = 0; i < got.numel(); ++i)
    if (!test::same_bits_or_both_nan(got.data<float>()[i], want.data<float>()[i]) && bad++ == 0)
      first = i;
  return bad;
}

void kernel_equals_reference(unsigned seed, int iterations, bool mobilenet, Isa isa) {
  if (host_isa() < isa) GTEST_SKIP() << "host without " << isa_name(isa);
  const cpu::OclKernel& kernel = isa == Isa::avx512 ? cpu::kConv1x1Avx512 : cpu::kConv1x1Avx2;
  test::SettingsRestore restore;
  std::mt19937 rng(seed);
  int64_t runs = 0, declined = 0;
  for (int iter = 0; iter < iterations; ++iter) {
    Case c = make_case(rng, iter, mobilenet);
    for (int threads = 1; threads <= 3; ++threads) {
      set_num_threads(threads);
      Tensor got = c.y0;
      cpu::ConvProblem prob{c.x, c.w, c.b, padded_view(got, c.ys, c.y_pad), c.p};
      if (cpu::conv_ocl_declines_exactness(prob) != nullptr) {
        ++declined;
        break;
      }
      cpu::run_conv_ocl_exact(prob, kernel);
      int64_t first = 0;
      ASSERT_EQ(mismatches(got, c.want, first), 0)
          << "seed " << seed << " iter " << iter << " " << isa_name(isa) << " threads " << threads
          << " " << c.text << "; first mismatch at element " << first << ": "
          << got.data<float>()[first] << " vs " << c.want.data<float>()[first];
      ++runs;
    }
  }
  std::printf("f32-conv-1x1-%s: seed %u, %lld runs, %lld cases declined\n", isa_name(isa), seed,
              static_cast<long long>(runs), static_cast<long long>(declined));
  EXPECT_GT(runs, iterations * 2);
}

TEST(Conv1x1, RandomPointwiseEqualsReferenceAvx512) {
  kernel_equals_reference(20261130, 240, false, Isa::avx512);
}
TEST(Conv1x1, RandomPointwiseEqualsReferenceAvx2) {
  kernel_equals_reference(20261130, 240, false, Isa::avx2);
}

TEST(Conv1x1, MobilenetLayersEqualReferenceAvx512) {
  kernel_equals_reference(20261131, 28, true, Isa::avx512);
}
TEST(Conv1x1, MobilenetLayersEqualReferenceAvx2) {
  kernel_equals_reference(20261131, 28, true, Isa::avx2);
}

// conv2d itself on the same shapes at every cap the host runs, and with the
// reference kernels forced: the list picks f32-conv-1x1-avx512 where it
// applies, other variants elsewhere, all with the reference's bits.
TEST(Conv1x1, Conv2dAtEveryIsaCapEqualsReference) {
  test::SettingsRestore restore;
  const unsigned seed = 20261132;
  std::mt19937 rng(seed);
  for (int iter = 0; iter < 28; ++iter) {
    Case c = make_case(rng, iter, iter % 2 == 0);
    for (Isa cap : {Isa::avx512, Isa::avx2, Isa::portable}) {
      if (cap > host_isa()) continue;
      for (Impl impl : {Impl::fast, Impl::reference}) {
        if (impl == Impl::reference && cap != host_isa()) continue;
        set_max_isa(cap);
        set_impl(impl);
        set_num_threads(1 + iter % 3);
        Tensor got = c.y0;
        conv2d(c.x, c.w, c.b, padded_view(got, c.ys, c.y_pad), c.p);
        int64_t first = 0;
        ASSERT_EQ(mismatches(got, c.want, first), 0)
            << "seed " << seed << " iter " << iter << " cap " << isa_name(cap) << " impl "
            << (impl == Impl::fast ? "fast" : "reference") << " " << c.text
            << "; first mismatch at element " << first;
      }
    }
  }
}

}  // namespace
}  // namespace test_conv_1x1
}  // namespace npukit
