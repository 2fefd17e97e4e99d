// conv2d on channels-last operands (NHWC strides behind the (N, C, H, W)
// shape: the runner's fp32 layout, src/onnx/fp32_layout.hpp) against the
// reference, bit for bit (a NaN equals any NaN): the output-channels-in-lanes
// form with x, y or both channels-last (blocked padded input copies, whole-
// vector stores and residual loads), seeded network-like and odd geometry
// (channels not a multiple of 16, groups of 6 to 16 channels, strides, dilation,
// inserted zeros, pads up to the kernel, 1x1 with and without padding, batch
// 1-2), padded taps of whole output rows skipped (sums of -0 included), special
// values, bias, result_add and residual_first, fused clips, both MLAS orders
// and the sequential one, 1 to 3 threads, every ISA level of the form;
// resnet18-sized planes (the driver's many tasks and blocks, its prefetches);
// plus the public entry's dispatch and the form's refusals. A mismatch prints
// the seed and the case.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "npukit/npukit.hpp"
#include "ops/cpu/conv_nchw.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_conv_channels_last {
namespace {

constexpr float kSpecials[] = {test::kNaN, test::kInf, -test::kInf, 0.0f,   -0.0f,
                               1e-40f,     -3e-39f,    1e30f,       -1e30f, 0x1p-126f};

float value(std::mt19937& rng, int rare) {
  return test::uniform_or_special(rng, rare, kSpecials);
}

// A tensor of logical shape s, channels-last in memory when `cl`.
struct Operand {
  Tensor store;
  TensorView view;
  Operand(const Shape& s, bool cl)
      : store(DType::f32, cl ? Shape{s[0], s[2], s[3], s[1]} : s),
        view(cl ? TensorView(store.view().raw(), DType::f32, s,
                             {s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]})
                : store.view()) {}
};

struct Case {
  int64_t n, ic, oc, h, w, k, stride, dilation, pad, groups, ins = 0;
};

std::string text(const Case& c, const Conv2dParams& p, bool cl_x, bool cl_y, const char* isa,
                 int threads) {
  std::ostringstream s;
  s << isa << ": n " << c.n << " ic " << c.ic << " oc " << c.oc << " " << c.h << "x" << c.w << " k "
    << c.k << " stride " << c.stride << " dilation " << c.dilation << " pad " << c.pad << " groups "
    << c.groups << " ins " << c.ins << " x " << (cl_x ? "NHWC" : "NCHW") << " y "
    << (cl_y ? "NHWC" : "NCHW") << " bias " << p.has_bias << " result_add " << p.result_add
    << " residual_first " << p.residual_first << " accumulation "
    << fp32_accumulation_name(p.accumulation) << " " << test::clip_text(p.clip) << " threads "
    << threads;
  return s.str();
}

void reference(const TensorView& x, const TensorView& w, const TensorView& b, const TensorView& y,
               const Conv2dParams& p) {
  if (mlas_nchwc_block(p.accumulation))
    ref::conv2d_f32_mlas(x, w, b, y, p);
  else
    ref::conv2d_f32(x, w, b, y, p);
  ref::clip_f32(y, y, p.clip);
}

// Compares two views of one logical shape element by element (their layouts may differ).
::testing::AssertionResult same_values(const TensorView& got, const TensorView& want) {
  for (int64_t n = 0; n < got.dim(0); ++n)
    for (int64_t c = 0; c < got.dim(1); ++c)
      for (int64_t h = 0; h < got.dim(2); ++h)
        for (int64_t w = 0; w < got.dim(3); ++w) {
          const float g = got.at<float>(n, c, h, w), e = want.at<float>(n, c, h, w);
          if (!test::same_bits_or_both_nan(g, e))
            return ::testing::AssertionFailure() << "element (" << n << ", " << c << ", " << h
                                                 << ", " << w << "): " << g << " vs " << e;
        }
  return ::testing::AssertionSuccess();
}

TEST(ConvChannelsLast, OclFormEqualsReferenceBitForBit) {
  test::SettingsRestore restore;
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "the ocl form needs AVX2 (NPUKIT_MAX_ISA below avx2)";
  const unsigned seed = 20261212;
  std::mt19937 rng(seed);
  // resnet18's kinds (3x3 stride 1 and 2, 1x1 stride 2, the 7x7 stem from 3
  // channels), then odd ones: partial channel blocks, groups (of 16, 6 and
  // 12 channels: blocks per group), dilation, pads up to the kernel, 1x1
  // padded, inserted zeros.
  const Case cases[] = {
      {1, 64, 64, 9, 9, 3, 1, 1, 1, 1},
      {1, 64, 128, 10, 10, 3, 2, 1, 1, 1},
      {2, 32, 64, 7, 6, 1, 2, 1, 0, 1},
      {1, 3, 64, 15, 15, 7, 2, 1, 3, 1},
      {1, 40, 70, 6, 11, 3, 1, 1, 1, 1},
      {2, 32, 96, 5, 5, 3, 1, 2, 2, 2},
      {1, 17, 33, 4, 9, 2, 1, 1, 1, 1},
      {1, 48, 40, 6, 5, 1, 1, 1, 1, 1},
      {1, 64, 32, 3, 3, 3, 1, 1, 2, 1},
      {1, 16, 64, 8, 8, 5, 3, 1, 2, 1},
      {1, 24, 64, 6, 7, 3, 1, 1, 1, 4},
      {2, 36, 96, 5, 6, 1, 2, 1, 0, 3},
      {1, 32, 48, 5, 4, 3, 1, 1, 1, 1, 1},
      {1, 20, 64, 4, 6, 2, 2, 1, 0, 1, 2},
      // Unpadded: x read in place (mobilenet's 1x1 layers; a dilated 3x3 in groups).
      {1, 40, 48, 7, 7, 1, 1, 1, 0, 1},
      {1, 24, 32, 9, 8, 3, 1, 2, 0, 2},
  };
  const Fp32Accumulation orders[] = {Fp32Accumulation::mlas_nchwc16, Fp32Accumulation::mlas_nchwc8,
                                     Fp32Accumulation::sequential};
  int64_t runs = 0, cl_both = 0;
  for (const Case& c : cases)
    for (const Fp32Accumulation a : orders)
      for (int layout = 1; layout < 4; ++layout)  // x, y or both channels-last
        for (int residual = 0; residual < 3; ++residual) {
          const bool cl_x = layout & 1, cl_y = layout & 2;
          Conv2dParams p;
          p.window.kernel_h = p.window.kernel_w = c.k;
          p.window.stride_h = p.window.stride_w = c.stride;
          p.window.dilation_h = p.window.dilation_w = c.dilation;
          p.window.ins_h = p.window.ins_w = c.ins;
          p.window.pad_top = p.window.pad_left = c.pad;
          p.window.pad_bottom = p.window.pad_right = (c.pad + residual) % (c.pad + 1);
          p.groups = c.groups;
          p.accumulation = a;
          p.has_bias = residual != 1;
          p.result_add = residual > 0;
          p.residual_first = residual == 2 && mlas_nchwc_block(a) != 0;
          p.clip = test::fused_clip_case(static_cast<uint32_t>(runs + residual));
          const Shape xs{c.n, c.ic, c.h, c.w}, ws{c.oc, c.ic / c.groups, c.k, c.k};
          const Shape ys = conv2d_output_shape(xs, ws, p);
          Operand x(xs, cl_x), y0(ys, cl_y);
          Tensor w(DType::f32, ws), b(DType::f32, {c.oc});
          // Special values in x, b and the old outputs; finite weights (with
          // padded taps the form declines a non-finite one).
          for (float& v : std::span(x.store.data<float>(), x.store.numel())) v = value(rng, 40);
          for (float& v : std::span(y0.store.data<float>(), y0.store.numel())) v = value(rng, 40);
          for (float& v : std::span(b.data<float>(), b.numel())) v = value(rng, 40);
          for (float& v : std::span(w.data<float>(), w.numel())) v = value(rng, 0);
          Tensor want = y0.store;
          const TensorView want_view(want.view().raw(), DType::f32, ys, y0.view.strides());
          reference(x.view, w, b, want_view, p);
          Operand got(ys, cl_y);
          cpu::ConvProblem prob{x.view, w, b, got.view, p};
          ASSERT_EQ(cpu::conv_ocl_declines_exactness(prob), nullptr)
              << text(c, p, cl_x, cl_y, "", 1);
          for (const cpu::OclKernel* kernel : {&cpu::kOclAvx512, &cpu::kOclAvx2}) {
            const Isa isa = kernel == &cpu::kOclAvx512 ? Isa::avx512 : Isa::avx2;
            if (isa > max_isa()) continue;
            for (int threads = 1; threads <= 3; ++threads) {
              set_num_threads(threads);
              std::copy_n(y0.store.data<float>(), y0.store.numel(), got.store.data<float>());
              cpu::run_conv_ocl_exact(prob, *kernel);
              ASSERT_TRUE(same_values(got.view, want_view))
                  << "seed " << seed << " " << text(c, p, cl_x, cl_y, isa_name(isa), threads);
              ++runs;
              cl_both += cl_x && cl_y;
            }
          }
        }
  std::printf("ocl form on channels-last operands: seed %u, %lld runs\n", seed,
              static_cast<long long>(runs));
  const int64_t kernels = max_isa() >= Isa::avx512 ? 2 : 1;
  EXPECT_EQ(runs, kernels * 16 * 3 * 3 * 3 * 3);  // cases, orders, layouts, residuals, threads
  EXPECT_EQ(cl_both, runs / 3);
}

// The step tables (offsets, MLAS's order) are kept per thread by everything
// they depend on: problems alike in channels, kernel and order but not in
// dilation, padding (the padded copy's pitch) or in-place reading, run in
// turn, each twice (the second time from the kept tables), stay bit-exact.
TEST(ConvChannelsLast, KeptStepTablesFollowTheGeometry) {
  test::SettingsRestore restore;
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "the ocl form needs AVX2 (NPUKIT_MAX_ISA below avx2)";
  const unsigned seed = 20261127;
  std::mt19937 rng(seed);
  const Case cases[] = {
      {1, 32, 32, 9, 9, 3, 1, 1, 1, 1},  // padded
      {1, 32, 32, 9, 9, 3, 1, 2, 1, 1},  // dilation 2: taps twice as far apart
      {1, 32, 32, 9, 9, 3, 1, 1, 2, 1},  // pads of 2: a wider padded pitch
      {1, 32, 32, 9, 9, 3, 1, 1, 0, 1},  // unpadded: read in place
  };
  set_num_threads(1);
  for (int round = 0; round < 2; ++round)
    for (const Case& c : cases) {
      Conv2dParams p;
      p.window.kernel_h = p.window.kernel_w = c.k;
      p.window.dilation_h = p.window.dilation_w = c.dilation;
      p.window.pad_top = p.window.pad_left = p.window.pad_bottom = p.window.pad_right = c.pad;
      p.accumulation = Fp32Accumulation::mlas_nchwc16;
      const Shape xs{c.n, c.ic, c.h, c.w}, ws{c.oc, c.ic, c.k, c.k};
      const Shape ys = conv2d_output_shape(xs, ws, p);
      Operand x(xs, true), got(ys, true);
      Tensor w(DType::f32, ws), want(DType::f32, ys);
      for (float& v : std::span(x.store.data<float>(), x.store.numel())) v = value(rng, 0);
      for (float& v : std::span(w.data<float>(), w.numel())) v = value(rng, 0);
      reference(x.view, w, TensorView(), want, p);
      cpu::ConvProblem prob{x.view, w, TensorView(), got.view, p};
      ASSERT_EQ(cpu::conv_ocl_declines_exactness(prob), nullptr) << text(c, p, true, true, "", 1);
      cpu::run_conv_ocl_exact(prob, max_isa() >= Isa::avx512 ? cpu::kOclAvx512 : cpu::kOclAvx2);
      ASSERT_TRUE(same_values(got.view, want))
          << "seed " << seed << " round " << round << " " << text(c, p, true, true, "", 1);
    }
}

// Chain-outer problems (mlas_nchwc16, residual first or not, relu) against
// the reference: weights packed ahead (as planned) and on the call, 1 and 2
// threads, both ISA levels of the form. Counts the runs.
void chain_outer_equal_reference(const std::vector<Case>& cases, unsigned seed, int64_t& runs) {
  std::mt19937 rng(seed);
  for (const Case& c : cases)
    for (int residual = 0; residual < 2; ++residual) {
      if (c.ic == 3 && residual) continue;  // the stem has no residual
      Conv2dParams p;
      p.window.kernel_h = p.window.kernel_w = c.k;
      p.window.stride_h = p.window.stride_w = c.stride;
      p.window.pad_top = p.window.pad_left = p.window.pad_bottom = p.window.pad_right = c.pad;
      p.groups = c.groups;
      p.accumulation = Fp32Accumulation::mlas_nchwc16;
      p.has_bias = true;
      p.result_add = residual == 1;
      p.residual_first = residual == 1;
      p.clip = {0.0f, std::numeric_limits<float>::infinity()};
      const Shape xs{c.n, c.ic, c.h, c.w}, ws{c.oc, c.ic / c.groups, c.k, c.k};
      const Shape ys = conv2d_output_shape(xs, ws, p);
      const bool cl_x = c.ic > 3;  // the stem reads the NCHW image
      Operand x(xs, cl_x), y0(ys, true);
      Tensor w(DType::f32, ws), b(DType::f32, {c.oc});
      for (Tensor* t : {&x.store, &y0.store, &b, &w})
        for (float& v : std::span(t->data<float>(), t->numel())) v = value(rng, t == &w ? 0 : 200);
      Tensor want = y0.store;
      const TensorView want_view(want.view().raw(), DType::f32, ys, y0.view.strides());
      reference(x.view, w, b, want_view, p);
      Operand got(ys, true);
      for (const cpu::OclKernel* kernel : {&cpu::kOclAvx512, &cpu::kOclAvx2}) {
        const Isa isa = kernel == &cpu::kOclAvx512 ? Isa::avx512 : Isa::avx2;
        if (isa > max_isa()) continue;
        const auto packed = cpu::pack_conv_weights(w, c.groups, kernel->channels, p.accumulation);
        for (const bool planned : {true, false})
          for (int threads = 1; threads <= 2; ++threads) {
            set_num_threads(threads);
            cpu::ConvProblem prob{x.view, w, b, got.view, p};
            if (planned) prob.packed = packed.get();
            std::copy_n(y0.store.data<float>(), y0.store.numel(), got.store.data<float>());
            cpu::run_conv_ocl_exact(prob, *kernel);
            ASSERT_TRUE(same_values(got.view, want_view))
                << "seed " << seed << " " << text(c, p, cl_x, true, isa_name(isa), threads)
                << (planned ? " planned" : " packed on the call");
            ++runs;
          }
      }
    }
}

// Planes as large as resnet18's: the driver's many tasks per channel block
// (only a block's first task asks its next chains' weights into L2), two or
// more blocks (the next block's first chain asked after a task's last
// chain), outputs larger than an L2 (asked for writing tile by tile; the
// 7x7 stride-2 stem from NCHW, and a 3x3 layer with and without its
// residual first).
TEST(ConvChannelsLast, LargePlanesEqualReferenceBitForBit) {
  test::SettingsRestore restore;
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "the ocl form needs AVX2 (NPUKIT_MAX_ISA below avx2)";
  // n, ic, oc, h, w, k, stride, dilation, pad, groups: 4356 x 72 outputs
  // (1.25 MB, 3 chains of 16, 16 and 8 steps' channels), the stem (3.2 MB).
  int64_t runs = 0;
  chain_outer_equal_reference(
      {{1, 40, 72, 66, 66, 3, 1, 1, 1, 1}, {1, 3, 64, 224, 224, 7, 2, 1, 3, 1}}, 20261127, runs);
  const int64_t kernels = max_isa() >= Isa::avx512 ? 2 : 1;
  EXPECT_EQ(runs, kernels * 3 * 2 * 2);  // problems, packings, threads
}

// Small planes in many channel blocks: one task per block holds all of the
// block's tiles, of two sizes (an even split), which the AVX-512 form runs in
// one pass with both tile bodies (7x7 on 64-channel blocks: five tiles of 5
// positions, four of 6; 6x9 on 48-channel groups: 7 and 8; 10x10 on
// 32-channel groups: 11 and 12, one task of them without a tile of 12).
TEST(ConvChannelsLast, MixedTileSizesEqualReferenceBitForBit) {
  test::SettingsRestore restore;
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "the ocl form needs AVX2 (NPUKIT_MAX_ISA below avx2)";
  int64_t runs = 0;
  chain_outer_equal_reference({{1, 32, 512, 7, 7, 3, 1, 1, 1, 1},
                               {1, 256, 384, 6, 9, 3, 1, 1, 1, 8},
                               {1, 256, 256, 10, 10, 3, 1, 1, 1, 8}},
                              20261128, runs);
  const int64_t kernels = max_isa() >= Isa::avx512 ? 2 : 1;
  EXPECT_EQ(runs, kernels * 3 * 2 * 2 * 2);  // problems, residuals, packings, threads
}

// The chains' padded taps of whole output rows (kernel rows above or below
// the input: top and bottom rows, pads of 1-3, stride, dilation, inserted
// zeros, planes of one row or two columns, one chain or several, both MLAS
// orders) are skipped by the tiles, the trailing ones unless a sum is -0:
// against the reference with random values, and with sums of -0 (tiny
// products that round to -0, old outputs of -0 under residual_first) that a
// trailing padded tap with a positive weight turns into +0.
TEST(ConvChannelsLast, PaddedEdgeRowsEqualReferenceBitForBit) {
  test::SettingsRestore restore;
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "the ocl form needs AVX2 (NPUKIT_MAX_ISA below avx2)";
  const unsigned seed = 20261601;
  std::mt19937 rng(seed);
  const Case cases[] = {
      {1, 32, 64, 9, 9, 3, 1, 1, 1, 1},    {1, 48, 64, 1, 13, 3, 1, 1, 1, 1},
      {1, 32, 64, 6, 2, 3, 1, 1, 1, 1},    {1, 32, 64, 8, 8, 3, 1, 1, 2, 1},
      {1, 32, 64, 9, 9, 3, 2, 1, 1, 1},    {1, 32, 64, 9, 9, 3, 1, 2, 2, 1},
      {1, 32, 48, 5, 4, 3, 1, 1, 1, 1, 1}, {1, 32, 64, 3, 3, 3, 1, 1, 3, 1},
      {2, 32, 64, 7, 7, 3, 1, 1, 1, 1},    {1, 16, 32, 7, 7, 3, 1, 1, 1, 1},
      {1, 40, 70, 6, 11, 3, 1, 1, 1, 1},   {1, 64, 128, 14, 14, 3, 1, 1, 1, 1},
  };
  int64_t runs = 0;
  for (const Case& c : cases)
    for (const Fp32Accumulation a : {Fp32Accumulation::mlas_nchwc16, Fp32Accumulation::mlas_nchwc8})
      for (int mode = 0; mode < 4;
           ++mode) {  // random, -0 sums; each without and with residual first
        const bool zeros = mode >= 2, residual = mode % 2 == 1;
        Conv2dParams p;
        p.window.kernel_h = p.window.kernel_w = c.k;
        p.window.stride_h = p.window.stride_w = c.stride;
        p.window.dilation_h = p.window.dilation_w = c.dilation;
        p.window.ins_h = p.window.ins_w = c.ins;
        p.window.pad_top = p.window.pad_left = p.window.pad_right = c.pad;
        p.window.pad_bottom = mode == 1 && c.h > 1 ? 0 : c.pad;  // once without, if it fits
        p.accumulation = a;
        p.has_bias = !zeros;
        p.result_add = residual;
        p.residual_first = residual;
        const Shape xs{c.n, c.ic, c.h, c.w}, ws{c.oc, c.ic, c.k, c.k};
        const Shape ys = conv2d_output_shape(xs, ws, p);
        Operand x(xs, true), y0(ys, true);
        Tensor w(DType::f32, ws), b(DType::f32, {c.oc});
        for (Tensor* t : {&x.store, &y0.store, &b}) {
          for (float& v : std::span(t->data<float>(), t->numel()))
            v = zeros ? (t == &x.store ? -1e-30f : -0.0f) : value(rng, 20);
        }
        // -0 mode: products of -1e-30 and +-1e-20 round to -0 (positive
        // weight) or +0; output channels of even index have positive
        // weights only, so their sums stay -0 until a trailing padded tap.
        const int64_t per_oc = w.numel() / c.oc;
        for (int64_t i = 0; i < w.numel(); ++i) {
          const bool positive = i / per_oc % 2 == 0 || rng() % 4 != 0;
          w.data<float>()[i] = zeros ? (positive ? 1e-20f : -1e-20f) : value(rng, 0);
        }
        Tensor want = y0.store;
        const TensorView want_view(want.view().raw(), DType::f32, ys, y0.view.strides());
        reference(x.view, w, b, want_view, p);
        Operand got(ys, true);
        cpu::ConvProblem prob{x.view, w, b, got.view, p};
        ASSERT_EQ(cpu::conv_ocl_declines_exactness(prob), nullptr) << text(c, p, true, true, "", 1);
        for (const cpu::OclKernel* kernel : {&cpu::kOclAvx512, &cpu::kOclAvx2}) {
          const Isa isa = kernel == &cpu::kOclAvx512 ? Isa::avx512 : Isa::avx2;
          if (isa > max_isa()) continue;
          for (int threads = 1; threads <= 3; ++threads) {
            set_num_threads(threads);
            std::copy_n(y0.store.data<float>(), y0.store.numel(), got.store.data<float>());
            cpu::run_conv_ocl_exact(prob, *kernel);
            ASSERT_TRUE(same_values(got.view, want_view))
                << "seed " << seed << " mode " << mode << " "
                << text(c, p, true, true, isa_name(isa), threads);
            ++runs;
          }
        }
      }
  const int64_t kernels = max_isa() >= Isa::avx512 ? 2 : 1;
  EXPECT_EQ(runs, kernels * 12 * 2 * 4 * 3);  // cases, orders, modes, threads
}

// The public entry: channels-last problems that cpu::conv_ocl_channels_last
// promises run on f32-conv-ocl-avx512 (NPUKIT_LOG_KERNELS would say so; here
// the bits and the promise at each ISA level and policy), and give the
// reference's bits under every policy.
TEST(ConvChannelsLast, PublicEntryAgreesAcrossIsaLevelsAndImpl) {
  test::SettingsRestore restore;
  const unsigned seed = 20261213;
  std::mt19937 rng(seed);
  Conv2dParams p;
  p.window.kernel_h = p.window.kernel_w = 3;
  p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 1;
  p.accumulation = Fp32Accumulation::mlas_nchwc16;
  p.has_bias = true;
  p.result_add = true;
  p.residual_first = true;
  p.clip = {0.0f, std::numeric_limits<float>::infinity()};
  const Shape xs{1, 64, 20, 20}, ws{64, 64, 3, 3};
  Operand x(xs, true), y0(xs, true);
  Tensor w(DType::f32, ws), b(DType::f32, {64});
  for (Tensor* t : {&x.store, &y0.store, &b, &w})
    for (float& v : std::span(t->data<float>(), t->numel())) v = value(rng, t == &w ? 0 : 60);
  Tensor want = y0.store;
  const TensorView want_view(want.view().raw(), DType::f32, xs, y0.view.strides());
  reference(x.view, w, b, want_view, p);
  const auto packed = conv2d_pack_weights(w, p, 20, 20);
  for (const Isa isa : {Isa::avx512, Isa::avx2, Isa::portable})
    for (const Impl policy : {Impl::fast, Impl::reference}) {
      if (isa > host_isa()) continue;
      set_max_isa(isa);
      set_impl(policy);
      const bool fast = max_isa() >= Isa::avx512 && policy == Impl::fast;
      EXPECT_EQ(cpu::conv_ocl_channels_last(ws, p), fast) << isa_name(max_isa());
      Operand got(xs, true);
      std::copy_n(y0.store.data<float>(), y0.store.numel(), got.store.data<float>());
      conv2d(x.view, w, b, got.view, p, packed.get());
      EXPECT_TRUE(same_values(got.view, want_view))
          << "seed " << seed << " " << isa_name(max_isa()) << " impl "
          << (policy == Impl::fast ? "fast" : "reference");
    }
}

// What the form does not take (an output neither row-contiguous nor
// channels-last), with its reason; and what cpu::conv_ocl_channels_last
// refuses.
TEST(ConvChannelsLast, DeclinesWithReasons) {
  test::SettingsRestore restore;
  Conv2dParams p;
  p.window.kernel_h = p.window.kernel_w = 3;
  const Shape xs{1, 32, 6, 6}, ws{32, 32, 3, 3}, ys{1, 32, 4, 4};
  Operand x(xs, true);
  Tensor w(DType::f32, ws), b(DType::f32, {32}), ystore(DType::f32, {1, 32, 4, 8});
  // Every other column of a wider tensor: rows not contiguous, not channels-last.
  const TensorView y(ystore.view().raw(), DType::f32, ys, {32 * 4 * 8, 4 * 8, 8, 2});
  const char* why = cpu::conv_ocl_declines_exactness({x.view, w, b, y, p});
  ASSERT_NE(why, nullptr);
  EXPECT_NE(std::string(why).find("output rows not contiguous"), std::string::npos) << why;

  Conv2dParams seq;
  seq.window.kernel_h = seq.window.kernel_w = 3;
  EXPECT_FALSE(cpu::conv_ocl_channels_last({16, 32, 3, 3}, seq));  // fewer than 32 output channels
  EXPECT_FALSE(cpu::conv_ocl_channels_last({64, 1, 3, 3}, seq));   // depthwise (C/groups = 1)
  EXPECT_FALSE(cpu::conv_ocl_channels_last({64, 4, 3, 3}, seq));   // 36 steps: a short reduction
  Conv2dParams bm;
  bm.window = seq.window;
  apply_profile(bm, Profile::bm1684);  // interleaved accumulators
  EXPECT_FALSE(cpu::conv_ocl_channels_last({64, 64, 3, 3}, bm));
  // Only where f32-conv-ocl-avx512 may run (not under NPUKIT_IMPL=reference).
  EXPECT_EQ(cpu::conv_ocl_channels_last({64, 64, 3, 3}, seq), kernel_allowed(Isa::avx512, false));
}

}  // namespace
}  // namespace test_conv_channels_last
}  // namespace npukit
