// f32-dwconv-nchwc-{avx512,avx2} (src/ops/cpu/f32-dwconv-nchwc*) against the
// reference depthwise convolution, bit for bit (a NaN equals any NaN):
// mobilenet_v2's depthwise layers (3x3, stride 1 and 2, planes 7x7 to 56x56)
// with channel counts that fill whole groups of 8 and 16 lanes and ones that
// leave a partial last group, and seeded random geometry (kernels 1..5,
// strides 1..3, dilation 1..2, pads up to windows entirely in padding, planes
// 1..20 wide and high, batch > 1, gaps between planes), NCHW planes and
// channels-last views (gaps between positions) for x and y, ONNX Runtime's FMA
// chains and the sequential order, bias, result_add, fused clips, special
// values, 1, 2 and 3 threads. A mismatch prints the seed and the case.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "npukit/npukit.hpp"
#include "ops/cpu/conv_nchw.hpp"
#include "ops/cpu/dwconv.hpp"
#include "test_util.hpp"
#include "variant_test_util.hpp"

namespace npukit {
namespace test_dwconv_nchwc {
namespace {

using A = Fp32Accumulation;

constexpr float kSpecials[] = {test::kNaN, test::kInf, -test::kInf, 0.0f,     -0.0f,    1e-40f,
                               -3e-39f,    1e30f,      -1e30f,      0x1p-80f, -0x1p-75f};

float value(std::mt19937& rng, int rare) {
  return test::uniform_or_special(rng, rare, kSpecials);
}

// (N, C, H, W) with `gap` floats after every plane, or channels-last (the
// runner's NHWC activations) with `gap` floats after every position's channels.
TensorView gapped(Tensor& t, const Shape& s, int64_t gap, bool channels_last) {
  if (channels_last) {
    const int64_t at = s[1] + gap;
    return TensorView(t.view().raw(), DType::f32, s, {s[2] * s[3] * at, 1, s[3] * at, at});
  }
  const int64_t plane = s[2] * s[3] + gap;
  return TensorView(t.view().raw(), DType::f32, s, {s[1] * plane, plane, s[3], 1});
}
Tensor storage(const Shape& s, int64_t gap, bool channels_last) {
  if (channels_last) return Tensor(DType::f32, {s[0], s[2] * s[3], s[1] + gap});
  return Tensor(DType::f32, {s[0], s[1], s[2] * s[3] + gap});
}

struct Case {
  cpu::DwconvProblem p;
  Tensor xstore, w, b, y0, want;
  Shape ys;
  int64_t y_gap = 0;
  bool y_cl = false;
  std::string text;
};

// What a case draws: random geometry and layouts in turn; mobilenet_v2's
// layers; random geometry with channels-last x and y (the row walk's
// layout); 3x3 stride-2 windows from NCHW planes to channels-last y (the
// stride-2 walk's layout, DwS2Nhwc), outputs up to 18 wide.
enum class Draw { random, mobilenet, channels_last, s2_nhwc };

// False when the drawn kernel does not fit the drawn input.
bool make_case(std::mt19937& rng, int iter, Draw draw, Case& c) {
  const bool mobilenet = draw == Draw::mobilenet, channels_last = draw == Draw::channels_last;
  cpu::DwconvProblem& p = c.p;
  const A orders[] = {A::mlas_nchwc16, A::mlas_nchwc8, A::sequential};
  p.accumulation = orders[iter % 3];
  Window2d& w = p.window;
  int64_t C, H, W, N = 1, x_gap = 0;
  if (mobilenet) {  // (C, H, stride) of mobilenet_v2's depthwise layers, channel counts varied
    static const int64_t net[][3] = {{144, 56, 1}, {144, 56, 2}, {192, 28, 1}, {192, 28, 2},
                                     {384, 14, 1}, {576, 14, 1}, {576, 14, 2}, {960, 7, 1}};
    const auto& s = net[iter % 8];
    C = iter % 2 ? s[0] : s[0] / 4 + 5;
    H = W = s[1];
    w.kernel_h = w.kernel_w = 3;
    w.stride_h = w.stride_w = s[2];
    w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = 1;
  } else if (draw == Draw::s2_nhwc) {
    C = iter % 7 == 0 ? 192 : 1 + rng() % 40;
    H = 1 + rng() % 31;
    W = 1 + rng() % 31;
    N = 1 + rng() % 2;
    w.kernel_h = w.kernel_w = 3;
    w.stride_h = w.stride_w = 2;
    w.pad_top = rng() % 4 == 0 ? rng() % 5 : rng() % 2;
    w.pad_bottom = rng() % 3;
    w.pad_left = rng() % 4 == 0 ? rng() % 5 : rng() % 2;
    w.pad_right = rng() % 3;
    x_gap = iter % 4 == 1 ? 1 + rng() % 5 : 0;
    c.y_gap = iter % 5 == 2 ? 1 + rng() % 5 : 0;
  } else {
    C = 1 + rng() % 40;
    H = 1 + rng() % 20;
    W = 1 + rng() % 20;
    N = 1 + rng() % 2;
    w.kernel_h = 1 + rng() % 5;
    w.kernel_w = 1 + rng() % 5;
    w.stride_h = 1 + rng() % 3;
    w.stride_w = 1 + rng() % 3;
    w.dilation_h = 1 + rng() % 2;
    w.dilation_w = 1 + rng() % 2;
    w.pad_top = rng() % 4 == 0 ? rng() % 6 : rng() % 2;
    w.pad_bottom = rng() % 3;
    w.pad_left = rng() % 4 == 0 ? rng() % 6 : rng() % 2;
    w.pad_right = rng() % 3;
    x_gap = iter % 4 == 1 ? 1 + rng() % 5 : 0;
    c.y_gap = iter % 5 == 2 ? 1 + rng() % 5 : 0;
    if (channels_last && iter % 5 == 4) {
      // Rows of 21+ outputs over 136..409 channels: the row walk's passes
      // of 128 channels, a last pass of whole vectors and a masked tail
      // (derived from the draws above, so the other cases stay as drawn).
      C = 129 + 7 * C;
      W += 28;
      w.stride_w = 1;
    }
  }
  // Layouts: planes / planes, channels-last / channels-last (the runner's
  // case), and either one alone, in turn.
  const int layout = channels_last           ? 1
                     : draw == Draw::s2_nhwc ? 3
                     : mobilenet             ? iter / 8 % 4
                                             : iter % 4;
  const bool x_cl = layout == 1 || layout == 2, y_cl = layout == 1 || layout == 3;
  c.y_cl = y_cl;
  p.has_bias = rng() % 4 != 0;
  p.result_add = rng() % 3 == 0;
  p.clip = test::fused_clip_case(static_cast<uint32_t>(iter) + (mobilenet ? 900u : 400u));
  const Shape xs{N, C, H, W}, ws{C, 1, w.kernel_h, w.kernel_w};
  Depthwise2dParams dp;
  dp.window = w;
  try {
    c.ys = depthwise2d_output_shape(xs, ws, dp);
  } catch (const Error&) {
    return false;
  }
  const int rare = iter % 3 == 1 ? 0 : 40;
  c.xstore = storage(xs, x_gap, x_cl);
  c.w = Tensor(DType::f32, ws);
  c.b = Tensor(DType::f32, {C});
  c.y0 = storage(c.ys, c.y_gap, y_cl);
  // Non-finite weights only without padding (the fast kernels decline them with it).
  const bool padded = w.pad_top || w.pad_bottom || w.pad_left || w.pad_right;
  for (Tensor* t : {&c.xstore, &c.b, &c.y0})
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, rare);
  for (int64_t i = 0; i < c.w.numel(); ++i) c.w.data<float>()[i] = value(rng, padded ? 0 : rare);
  p.x = gapped(c.xstore, xs, x_gap, x_cl);
  p.w = c.w;
  p.bias = c.b;
  c.want = c.y0;
  p.y = gapped(c.want, c.ys, c.y_gap, y_cl);
  const Conv2dParams cp{w, C, p.has_bias, p.result_add, p.accumulation, false};
  if (p.accumulation == A::sequential)
    ref::conv2d_f32(p.x, p.w, p.bias, p.y, cp);
  else
    ref::conv2d_f32_mlas(p.x, p.w, p.bias, p.y, cp);
  ref::clip_f32(p.y, p.y, p.clip);
  std::ostringstream s;
  s << "x " << shape_text(xs) << (x_cl ? " x channels-last" : "")
    << (y_cl ? " y channels-last" : "") << " gaps " << x_gap << "/" << c.y_gap << " k "
    << w.kernel_h << "x" << w.kernel_w << " stride " << w.stride_h << "x" << w.stride_w
    << " dilation " << w.dilation_h << "x" << w.dilation_w << " pads " << w.pad_top << ","
    << w.pad_bottom << "," << w.pad_left << "," << w.pad_right << " "
    << fp32_accumulation_name(p.accumulation) << " bias " << p.has_bias << " result_add "
    << p.result_add << " " << test::clip_text(p.clip);
  c.text = s.str();
  return true;
}

// Returns how many cases had the stride-2 walk's geometry (dwconv_s2_nhwc;
// f32-dwconv-nchwc-avx512 takes it there).
int variants_equal_reference(unsigned seed, int iterations, Draw draw) {
  test::SettingsRestore restore;
  std::mt19937 rng(seed);
  const auto& list = cpu::dwconv_kernels();
  variant_test::Runs runs;
  int cases = 0, s2_cases = 0;
  for (int iter = 0; iter < iterations; ++iter) {
    Case c;
    if (!make_case(rng, iter, draw, c)) continue;
    ++cases;
    // Channels-last x and y, apart: the row walk, not the group walk.
    if (draw == Draw::channels_last) {
      EXPECT_TRUE(cpu::dwconv_nhwc_rows(c.p)) << c.text;
    }
    if (cpu::dwconv_s2_nhwc(c.p)) ++s2_cases;
    Tensor got;
    const auto make = [&] {
      got = c.y0;
      cpu::DwconvProblem q = c.p;
      q.y = gapped(got, c.ys, c.y_gap, c.y_cl);
      return q;
    };
    const auto compare = [&](const cpu::DwconvProblem&) {
      return variant_test::float_difference(got, c.want);
    };
    const std::string context =
        "seed " + std::to_string(seed) + " iter " + std::to_string(iter) + " " + c.text;
    // Three passes with 1, 2, 3 threads rotating over the variants: every
    // variant runs the case at each count.
    for (int threads = 1; threads <= 3; ++threads) {
      if (!variant_test::run_every_variant(list, make, compare, context, runs, {"nchwc", threads}))
        return s2_cases;  // the failure names the kernel and the case
    }
  }
  std::printf("f32-dwconv-nchwc: seed %u, %d cases\n", seed, cases);
  EXPECT_GT(cases, iterations / 2);
  variant_test::print_runs("f32-dwconv-nchwc", runs);
  // The AVX-512 kernel leaves larger planes and in-place 3x3 stride 1 to the
  // plane kernels (Declines); nothing else may be declined, and every case
  // either runs at all three thread counts or is left at all three.
  for (const auto& [why, n] : runs.declined)
    EXPECT_NE(why.find("(the plane kernels"), std::string::npos) << why;
  for (const auto& v : list.variants) {
    if (std::string(v.name).find("nchwc") == std::string::npos || !list.runnable(v)) continue;
    int64_t left = 0;
    for (const auto& [why, n] : runs.declined)
      if (why.rfind(std::string(v.name) + ": ", 0) == 0) left += n;
    EXPECT_EQ(runs.of(v.name) + left, 3 * cases) << v.name << " did not run every case";
    EXPECT_GE(runs.of(v.name), 3 * cases / 4) << v.name;  // at least a quarter of the cases
  }
  return s2_cases;
}

bool any_nchwc_kernel_runs() {
  for (const auto& v : cpu::dwconv_kernels().variants)
    if (std::string(v.name).find("nchwc") != std::string::npos && cpu::dwconv_kernels().runnable(v))
      return true;
  return false;
}

constexpr const char* kNoKernel =
    "no f32-dwconv-nchwc kernel may run here (AVX2 and AVX-512 only; see NPUKIT_MAX_ISA and "
    "NPUKIT_IMPL)";

TEST(DwconvNchwc, RandomGeometryEqualsReferenceBitForBit) {
  if (!any_nchwc_kernel_runs()) GTEST_SKIP() << kNoKernel;
  variants_equal_reference(20261129, 150, Draw::random);
}

TEST(DwconvNchwc, MobilenetLayersEqualReferenceBitForBit) {
  if (!any_nchwc_kernel_runs()) GTEST_SKIP() << kNoKernel;
  variants_equal_reference(20261130, 32, Draw::mobilenet);
}

// The channels-last row walk (f32-dwconv-nhwc-body.inc) on every case:
// blocks of positions inside the input and at its edges (windows partly or
// wholly in padding, dilation, strides 1..3), channel counts 1..40 (whole
// blocks of vectors, single vectors, a masked tail) and, on rows of 21+
// outputs, 136..409 (passes of 128 channels), gaps after each position's
// channels in x and y.
TEST(DwconvNchwc, ChannelsLastRowWalkEqualsReferenceBitForBit) {
  if (!any_nchwc_kernel_runs()) GTEST_SKIP() << kNoKernel;
  variants_equal_reference(20261401, 200, Draw::channels_last);
}

// The stride-2 walk from NCHW planes to channels-last y
// (f32-dwconv-s2-nhwc-avx512.cpp, inside f32-dwconv-nchwc-avx512): inputs 1..31
// wide and high (output rows of 1..15 positions take it, wider ones the group
// walk), pads 0..4 (windows partly or wholly in padding), channel counts
// 1..40 and 192 (a masked last group), batch 2, gaps after each input plane
// and each output position's channels, both accumulations, bias,
// result_add, clips, special values, 1..3 threads.
TEST(DwconvNchwc, StrideTwoPlanesToChannelsLastEqualReferenceBitForBit) {
  if (!any_nchwc_kernel_runs()) GTEST_SKIP() << kNoKernel;
  const int s2 = variants_equal_reference(20261601, 240, Draw::s2_nhwc);
  std::printf("the stride-2 walk's geometry: %d cases\n", s2);
  EXPECT_GE(s2, 150) << "the stride-2 walk's geometry was drawn too rarely";
}

// The public conv2d with a planned record (conv2d_pack_weights): the row
// walk reads the record's taps; a record of other weights is not used.
TEST(DwconvNchwc, ChannelsLastRowWalkReadsPlannedTaps) {
  test::SettingsRestore restore;
  std::mt19937 rng(20261402);
  int64_t cases = 0;
  for (const int64_t C : {5, 16, 37, 384})
    for (const int64_t stride : {1, 2})
      for (const A order : {A::mlas_nchwc16, A::sequential}) {
        Window2d win;
        win.kernel_h = win.kernel_w = 3;
        win.stride_h = win.stride_w = stride;
        win.pad_top = win.pad_bottom = win.pad_left = win.pad_right = 1;
        const int64_t H = 9, OH = (H + 2 - 3) / stride + 1;
        Tensor xs(DType::f32, {1, H * H, C}), w(DType::f32, {C, 1, 3, 3}), b(DType::f32, {C});
        Tensor other(DType::f32, {C, 1, 3, 3});
        for (Tensor* t : {&xs, &w, &b, &other})
          for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, 30);
        for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = value(rng, 0);  // finite
        const TensorView x(xs.view().raw(), DType::f32, {1, C, H, H}, {H * H * C, 1, H * C, C});
        Conv2dParams p{win, C, true, false, order, false};
        p.clip = ClipParams{0.0f, 6.0f};
        Tensor want_s(DType::f32, {1, OH * OH, C}), got_s(DType::f32, {1, OH * OH, C});
        const Shape ys{1, C, OH, OH};
        const Shape yst{OH * OH * C, 1, OH * C, C};
        const TensorView want(want_s.view().raw(), DType::f32, ys, yst);
        const TensorView got(got_s.view().raw(), DType::f32, ys, yst);
        if (order == A::sequential)
          ref::conv2d_f32(x, w, b, want, p);
        else
          ref::conv2d_f32_mlas(x, w, b, want, p);
        ref::clip_f32(want, want, p.clip);
        const auto packed = conv2d_pack_weights(w, p, OH, OH);
        ASSERT_NE(packed, nullptr);
        EXPECT_EQ(packed->dw_pitch, (C + 15) / 16 * 16);
        EXPECT_EQ(static_cast<int64_t>(packed->dw_taps.size()), 9 * packed->dw_pitch);
        const std::string what = "C " + std::to_string(C) + " stride " + std::to_string(stride) +
                                 " " + fp32_accumulation_name(order);
        conv2d(x, w, b, got, p, packed.get());
        EXPECT_EQ(variant_test::float_difference(got_s, want_s), "") << what;
        // Another tensor's record: conv2d packs w itself.
        const auto stale = conv2d_pack_weights(other, p, OH, OH);
        for (int64_t i = 0; i < got_s.numel(); ++i) got_s.data<float>()[i] = 0.0f;
        conv2d(x, w, b, got, p, stale.get());
        EXPECT_EQ(variant_test::float_difference(got_s, want_s), "") << what << " (stale record)";
        ++cases;
      }
  EXPECT_EQ(cases, 16);
}

TEST(DwconvNchwc, ChannelsLastRowWalkOnlyWhereXAndYAreApart) {
  Tensor store(DType::f32, {1, 64, 8});
  const Shape s{1, 8, 8, 8};
  const TensorView cl(store.view().raw(), DType::f32, s, {512, 1, 64, 8});
  Tensor w(DType::f32, {8, 1, 1, 1}), other(DType::f32, {1, 64, 8});
  Window2d win;
  const TensorView y_apart(other.view().raw(), DType::f32, s, {512, 1, 64, 8});
  EXPECT_TRUE(cpu::dwconv_nhwc_rows(cpu::DwconvProblem{cl, w, TensorView(), y_apart, win}));
  // The same memory (an in-place call): the group walk, which copies each group's input first.
  EXPECT_FALSE(cpu::dwconv_nhwc_rows(cpu::DwconvProblem{cl, w, TensorView(), cl, win}));
  // y in NCHW planes: the group walk.
  Tensor planes(DType::f32, s);
  EXPECT_FALSE(cpu::dwconv_nhwc_rows(cpu::DwconvProblem{cl, w, TensorView(), planes, win}));
}

// What the kernels leave to the plane kernels, each with its reason.
TEST(DwconvNchwc, Declines) {
  test::SettingsRestore restore;
  Tensor x(DType::f32, {1, 4, 8, 8}), w(DType::f32, {4, 1, 3, 3}), y(DType::f32, {1, 4, 6, 6});
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = 0.5f;
  Window2d win;
  win.kernel_h = win.kernel_w = 3;
  cpu::DwconvProblem p{x, w, TensorView(), y, win};
  EXPECT_EQ(cpu::dwconv_nchwc_declines(p), nullptr);
  cpu::DwconvProblem q = p;
  q.accumulation = A::interleaved;
  EXPECT_STREQ(cpu::dwconv_nchwc_declines(q), "the interleaved accumulation");
  q = p;
  q.window.ins_h = 1;
  Tensor yi(DType::f32, {1, 4, 13, 6});
  q.y = yi;
  EXPECT_STREQ(cpu::dwconv_nchwc_declines(q), "inserted zeros");
  Tensor big(DType::f32, {1, 4, 57, 56}), ybig(DType::f32, {1, 4, 55, 54});
  q = p;
  q.x = big;
  q.y = ybig;
  EXPECT_STREQ(cpu::dwconv_nchwc_declines(q),
               "an input plane over 56x56 positions (the plane kernels are faster)");
  EXPECT_STREQ(cpu::dwconv_nchwc_avx2_declines(q),
               "an input plane over 56x56 positions (the plane kernels are faster)");
  Tensor x56(DType::f32, {1, 4, 56, 56}), y27(DType::f32, {1, 4, 27, 27});
  q = p;
  q.x = x56;
  q.y = y27;
  q.window.stride_h = q.window.stride_w = 2;
  EXPECT_STREQ(cpu::dwconv_nchwc_declines(q),
               "an input plane over 28x28 positions (the plane kernels are faster)");
  set_max_isa(Isa::avx2);
  EXPECT_EQ(cpu::dwconv_nchwc_avx2_declines(q), nullptr);
  set_max_isa(Isa::avx512_vnni);
  // 3x3 at stride 1 on rows of 12+ outputs: the plane kernels read x in place.
  Tensor x14(DType::f32, {1, 4, 14, 14}), y14(DType::f32, {1, 4, 12, 12});
  q = p;
  q.x = x14;
  q.y = y14;
  EXPECT_STREQ(
      cpu::dwconv_nchwc_declines(q),
      "a 3x3 stride-1 window on rows of 12+ outputs (the plane kernels read x in place: faster)");
  set_max_isa(Isa::avx2);  // as on an AVX2 host: faster than the AVX2 plane kernel
  EXPECT_EQ(cpu::dwconv_nchwc_avx2_declines(q), nullptr);
  set_max_isa(Isa::avx512_vnni);  // AVX-512 hosts: the AVX-512 rule (left to that plane kernel)
  if (kernel_allowed(Isa::avx512, false)) {
    EXPECT_NE(cpu::dwconv_nchwc_avx2_declines(q), nullptr);
  }
  Tensor y11(DType::f32, {1, 4, 12, 11});  // rows of 11 outputs: left to these kernels
  q.x = TensorView(x14.view().raw(), DType::f32, {1, 4, 14, 13}, {728, 182, 13, 1});
  q.y = y11;
  EXPECT_EQ(cpu::dwconv_nchwc_declines(q), nullptr);
  q = p;  // NHWC-strided output: channels in the lanes already, any plane
  q.y = TensorView(y.view().raw(), DType::f32, {1, 4, 6, 6}, {144, 1, 24, 4});
  EXPECT_EQ(cpu::dwconv_nchwc_declines(q), nullptr);
  q.x = TensorView(big.view().raw(), DType::f32, {1, 4, 57, 56}, {12768, 1, 224, 4});
  q.y = TensorView(ybig.view().raw(), DType::f32, {1, 4, 55, 54}, {11880, 1, 216, 4});
  EXPECT_EQ(cpu::dwconv_nchwc_declines(q), nullptr);
  EXPECT_EQ(cpu::dwconv_nchwc_avx2_declines(q), nullptr);
  q = p;  // every other column of a wider plane: neither form
  q.y = TensorView(ybig.view().raw(), DType::f32, {1, 4, 6, 6}, {144, 36, 12, 2});
  EXPECT_STREQ(cpu::dwconv_nchwc_declines(q),
               "input or output neither dense planes nor channels contiguous");
}

}  // namespace
}  // namespace test_dwconv_nchwc
}  // namespace npukit
