// f32-conv-1x1-dense-{avx512,avx2} (src/ops/cpu/f32-conv-1x1-dense*.cpp)
// against the reference conv2d, bit for bit (a NaN equals any NaN): under
// ONNX Runtime's FMA chains (mlas_nchwc16 and 8: input channels below the
// block, 128-channel batches and their rests), residual_first, and the
// sequential order; mobilenet_v2's pointwise layers on 28x28 to 112x112
// planes and random ones (1..300 input channels, 1..40 output channels so
// that every remainder of a 12- or 6-channel block occurs, planes from 257
// positions, batch > 1, input and output planes with gaps between them),
// bias, result_add, fused clips, NaN / inf / -0 / denormals, 1, 2 and 3
// threads; then conv2d itself at every ISA cap and with Impl::reference.
// A mismatch prints the seed and the case.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "npukit/npukit.hpp"
#include "ops/cpu/conv_1x1_dense.hpp"
#include "test_util.hpp"
#include "variant_test_util.hpp"

namespace npukit {
namespace test_conv_1x1_dense {
namespace {

using A = Fp32Accumulation;

constexpr float kSpecials[] = {test::kNaN, test::kInf, -test::kInf, 0.0f,     -0.0f,    1e-40f,
                               -3e-39f,    1e30f,      -1e30f,      0x1p-80f, -0x1p-75f};

float value(std::mt19937& rng, int rare) {
  return test::uniform_or_special(rng, rare, kSpecials);
}

// A pointwise problem; x and y may have `gap` floats between planes.
struct Case {
  Conv2dParams p;
  Tensor xstore, w, b, y0, want;
  Shape xs, ys;
  int64_t x_gap = 0, y_gap = 0;
  std::string text;
};

TensorView gapped(Tensor& t, const Shape& s, int64_t gap) {
  const int64_t plane = s[2] * s[3] + gap;
  return TensorView(t.view().raw(), DType::f32, s, {s[1] * plane, plane, s[3], 1});
}

Case make_case(std::mt19937& rng, int iter, bool mobilenet) {
  Case c;
  Conv2dParams& p = c.p;
  const A orders[] = {A::mlas_nchwc16, A::mlas_nchwc8, A::sequential};
  p.accumulation = orders[iter % 3];
  p.window.kernel_h = p.window.kernel_w = 1;
  // mobilenet_v2's pointwise layers on planes above 256 positions.
  static const int64_t net[][3] = {{32, 16, 112}, {16, 96, 112}, {96, 24, 56},  {24, 144, 56},
                                   {144, 24, 56}, {144, 32, 28}, {32, 192, 28}, {192, 32, 28}};
  int64_t IC, OC, H, W, N = 1;
  if (mobilenet) {
    const auto& s = net[iter % 8];
    IC = s[0];
    OC = s[1];
    H = W = s[2];
  } else {
    IC = rng() % 3 == 0 ? 129 + rng() % 172 : 1 + rng() % 48;
    OC = 1 + rng() % 40;
    H = 15 + rng() % 10;
    W = 18 + rng() % 12;
    N = 1 + rng() % 2;
    c.x_gap = iter % 4 == 1 ? 1 + rng() % 5 : 0;
    c.y_gap = iter % 5 == 2 ? 1 + rng() % 5 : 0;
  }
  p.has_bias = rng() % 4 != 0;
  p.result_add = rng() % 3 == 0;
  p.residual_first = p.result_add && p.accumulation != A::sequential && rng() % 2;
  p.clip = test::fused_clip_case(static_cast<uint32_t>(iter) + (mobilenet ? 700u : 300u));
  c.xs = {N, IC, H, W};
  const Shape ws{OC, IC, 1, 1};
  c.ys = conv2d_output_shape(c.xs, ws, p);
  const int rare = iter % 3 == 1 ? 0 : 60;
  c.xstore = Tensor(DType::f32, {N, IC, H * W + c.x_gap});
  c.w = Tensor(DType::f32, ws);
  c.b = Tensor(DType::f32, {OC});
  c.y0 = Tensor(DType::f32, {N, OC, H * W + c.y_gap});
  for (Tensor* t : {&c.xstore, &c.w, &c.b, &c.y0})
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, rare);
  c.want = c.y0;
  const TensorView want = gapped(c.want, c.ys, c.y_gap);
  const TensorView x = gapped(c.xstore, c.xs, c.x_gap);
  if (p.accumulation == A::sequential)
    ref::conv2d_f32(x, c.w, c.b, want, p);
  else
    ref::conv2d_f32_mlas(x, c.w, c.b, want, p);
  if (!clip_is_identity(p.clip)) ref::clip_f32(want, want, p.clip);
  std::ostringstream s;
  s << "x " << N << "x" << IC << "x" << H << "x" << W << " OC " << OC << " gaps " << c.x_gap << "/"
    << c.y_gap << " " << fp32_accumulation_name(p.accumulation) << " bias " << p.has_bias
    << " result_add " << p.result_add << " residual_first " << p.residual_first << " "
    << test::clip_text(p.clip);
  c.text = s.str();
  return c;
}

// Differing floats (the gaps between planes included: they must stay).
int64_t mismatches(const Tensor& got, const Tensor& want, int64_t& first) {
  int64_t bad = 0;
  for (int64_t i = 0; i < got.numel(); ++i)
    if (!test::same_bits_or_both_nan(got.data<float>()[i], want.data<float>()[i]) && bad++ == 0)
      first = i;
  return bad;
}

void variants_equal_reference(unsigned seed, int iterations, bool mobilenet) {
  test::SettingsRestore restore;
  std::mt19937 rng(seed);
  const auto& list = cpu::conv_nchw_kernels();
  variant_test::Runs runs;
  // The settings each iteration returns to (NPUKIT_IMPL / NPUKIT_MAX_ISA decide
  // which variants run, in every iteration alike).
  const Impl impl0 = impl();
  const Isa isa0 = max_isa();
  for (int iter = 0; iter < iterations; ++iter) {
    Case c = make_case(rng, iter, mobilenet);
    const TensorView x = gapped(c.xstore, c.xs, c.x_gap);
    Tensor got;
    const auto make = [&] {
      got = c.y0;
      return cpu::ConvProblem{x, c.w, c.b, gapped(got, c.ys, c.y_gap), c.p};
    };
    const auto compare = [&](const cpu::ConvProblem&) {
      return variant_test::float_difference(got, c.want);  // (the gaps between planes too)
    };
    const std::string context =
        "seed " + std::to_string(seed) + " iter " + std::to_string(iter) + " " + c.text;
    // Three passes with 1, 2, 3 threads rotating over the variants: every
    // variant runs the case at each count.
    for (int threads = 1; threads <= 3; ++threads)
      ASSERT_TRUE(variant_test::run_every_variant(list, make, compare, context, runs,
                                                  {"1x1-dense", threads}));
    // The public entry (the family's choice) at each ISA cap and forced to the reference.
    for (int cap = 0; cap < 4; ++cap) {
      const Isa isa = cap == 0 ? Isa::portable : cap == 1 ? Isa::avx2 : Isa::avx512;
      if (cap < 3 && isa > host_isa()) continue;
      set_impl(cap == 3 ? Impl::reference : Impl::fast);
      set_max_isa(cap == 3 ? host_isa() : isa);
      set_num_threads(1 + iter % 3);
      Tensor entry = c.y0;
      conv2d(x, c.w, c.b, gapped(entry, c.ys, c.y_gap), c.p);
      int64_t first = 0;
      ASSERT_EQ(mismatches(entry, c.want, first), 0)
          << "seed " << seed << " iter " << iter << " conv2d at cap " << cap << " " << c.text
          << "; first mismatch at element " << first;
    }
    set_impl(impl0);
    set_max_isa(isa0);
  }
  std::printf("f32-conv-1x1-dense: seed %u, %d cases\n", seed, iterations);
  variant_test::print_runs("f32-conv-1x1-dense", runs);
  variant_test::expect_each_ran_exactly(list, runs, 3 * iterations,
                                        variant_test::name_has("1x1-dense"));
}

TEST(Conv1x1Dense, RandomPointwiseEqualsReferenceBitForBit) {
  variants_equal_reference(20261127, 60, false);
}

TEST(Conv1x1Dense, MobilenetLayersEqualReferenceBitForBit) {
  variants_equal_reference(20261128, 8, true);
}

// What the kernels leave to others, each with its reason.
TEST(Conv1x1Dense, DeclinesWhatItCannotTake) {
  Conv2dParams p;
  p.accumulation = A::mlas_nchwc16;
  p.window.kernel_h = p.window.kernel_w = 1;
  Tensor x(DType::f32, {1, 8, 20, 20}), w(DType::f32, {4, 8, 1, 1}), b(DType::f32, {4});
  Tensor y(DType::f32, {1, 4, 20, 20});
  EXPECT_EQ(cpu::conv_1x1_dense_declines({x, w, b, y, p}), nullptr);
  Tensor small(DType::f32, {1, 8, 16, 16}), ysmall(DType::f32, {1, 4, 16, 16});
  EXPECT_STREQ(cpu::conv_1x1_dense_declines({small, w, b, ysmall, p}),
               "an output plane of at most 256 positions (f32-conv-1x1 takes it)");
  Conv2dParams padded = p;
  padded.window.pad_top = 1;
  Tensor ypad(DType::f32, {1, 4, 21, 20});
  EXPECT_STREQ(cpu::conv_1x1_dense_declines({x, w, b, ypad, padded}), "padding");
  Conv2dParams inter = p;
  inter.accumulation = A::interleaved;
  EXPECT_STREQ(cpu::conv_1x1_dense_declines({x, w, b, y, inter}), "the interleaved accumulation");
  // In place: y is x's own memory.
  Tensor xy(DType::f32, {1, 8, 20, 20});
  const TensorView y_in_x(xy.view().raw(), DType::f32, {1, 4, 20, 20}, {3200, 400, 20, 1});
  EXPECT_STREQ(cpu::conv_1x1_dense_declines({xy, w, b, y_in_x, p}), "input and output overlap");
  // NHWC-strided input.
  const TensorView nhwc(x.view().raw(), DType::f32, {1, 8, 20, 20}, {3200, 1, 160, 8});
  EXPECT_STREQ(cpu::conv_1x1_dense_declines({nhwc, w, b, y, p}),
               "input or output planes not dense");
}

}  // namespace
}  // namespace test_conv_1x1_dense
}  // namespace npukit
