// fp32 pooling under profile onnxruntime: each rule of ONNX Runtime 1.30's CPU
// kernels (docs/semantics.md) on a case whose answer is worked out by hand in
// the comment, chosen so that the other orders or divisors give another answer.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "npukit/npukit.hpp"
#include "ops/cpu/pool2d_plan.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_pool2d_onnxruntime {
namespace {

using test::kInf;
using test::kNaN;
using test::raises;
using test::same_bits;

Tensor t4(const Shape& s, const std::vector<float>& v) {
  return Tensor::from<float>(s, v);
}

// An ONNX pool of `mode` under onnxruntime, geometry set before the profile
// (which reads it to pick ONNX Runtime's loop).
Pool2dParams ort(PoolMode mode, const Window2d& w, bool count_include_pad = false,
                 int64_t opset = 0) {
  Pool2dParams p;
  p.mode = mode;
  p.window = w;
  p.window.truncated_count = true;  // PoolGeometry::onnxruntime
  p.count_include_pad = count_include_pad;
  p.opset = opset;
  apply_profile(p, Profile::onnxruntime);
  return p;
}

uint32_t bits(float v) {
  return std::bit_cast<uint32_t>(v);
}

float out0(const Tensor& x, const Pool2dParams& p) {
  return test::run_pool(x, p).data<float>()[0];
}

TEST(Pool2dOnnxruntime, ProfilePicksOrtLoops) {
  Window2d w = test::window(3, 3, 2, 2);
  // MaxPool: MLAS unless dilated; the dilated loop keeps the first input tap.
  Pool2dParams p = ort(PoolMode::max, w);
  EXPECT_EQ(p.loop, PoolLoop::mlas);
  w.dilation_w = 2;
  p = ort(PoolMode::max, w);
  EXPECT_EQ(p.loop, PoolLoop::taps);
  EXPECT_EQ(p.nan, MaxNaN::first_tap);
  EXPECT_FALSE(p.end_pad_crops);
  // AveragePool before opset 19: MLAS, kernel area or valid count.
  w.dilation_w = 1;
  p = ort(PoolMode::avg, w, true, 13);
  EXPECT_EQ(p.loop, PoolLoop::mlas);
  EXPECT_EQ(p.divisor, AvgDivisor::kernel_area);
  p = ort(PoolMode::avg, w, false, 13);
  EXPECT_EQ(p.divisor, AvgDivisor::valid_count);
  // ... except ceil_mode with count_include_pad, and from opset 19 on: its own loop.
  w.ceil_mode = true;
  p = ort(PoolMode::avg, w, true, 13);
  EXPECT_EQ(p.loop, PoolLoop::taps);
  EXPECT_EQ(p.divisor, AvgDivisor::clipped_window);
  EXPECT_TRUE(p.end_pad_crops);
  p = ort(PoolMode::avg, w, false, 13);
  EXPECT_EQ(p.loop, PoolLoop::mlas);
  w.ceil_mode = false;
  p = ort(PoolMode::avg, w, false, 19);
  EXPECT_EQ(p.loop, PoolLoop::taps);
  EXPECT_EQ(p.divisor, AvgDivisor::valid_count);
  // opset 0: 19 for a dilated window, else 18.
  EXPECT_EQ(ort(PoolMode::avg, w, true).loop, PoolLoop::mlas);
  w.dilation_h = 2;
  EXPECT_EQ(ort(PoolMode::avg, w, true).loop, PoolLoop::taps);
  // Another profile puts the plain loop back.
  p.count_include_pad = true;
  apply_profile(p, Profile::pytorch);
  EXPECT_EQ(p.loop, PoolLoop::taps);
  EXPECT_FALSE(p.end_pad_crops);
  EXPECT_STREQ(pool_loop_name(PoolLoop::mlas), "mlas");
  EXPECT_STREQ(max_nan_name(MaxNaN::first_tap), "first_tap");
}

TEST(Pool2dOnnxruntime, IssueExampleCeilModeDividesByTheWindowCutAtThePaddedEnd) {
  // Issue #12: 1x1x4x5 ones, kernel 3, stride 2, pads 1, ceil_mode, count_include_pad.
  // Rows: 4 + 2 = 6 padded, out = ceil(3/2) + 1 = 3; the last row window starts at
  // padded row 4 (input row 3), rows {3, pad, past the end}: 2 of its 3 rows count.
  // Last row: columns {pad, 0, 1} -> 2 ones / (2*3) = 1/3; {1, 2, 3} -> 3 / 6 = 0.5;
  // {3, 4, pad} -> 2 / 6. The MLAS divisor (kernel area 9) would give 2/9, 3/9, 2/9.
  Window2d w = test::window(3, 3, 2, 2);
  test::set_pads(w, 1, 1, 1, 1);
  w.ceil_mode = true;
  const Tensor y = test::run_pool(Tensor::from<float>({1, 1, 4, 5}, std::vector<float>(20, 1.0f)),
                                  ort(PoolMode::avg, w, true, 13));
  ASSERT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  const std::vector<float> v = y.to_vector<float>();
  EXPECT_TRUE(same_bits({v[6], v[7], v[8]}, {2.0f / 6.0f, 0.5f, 2.0f / 6.0f}));
  // First row: rows {pad, 0, 1}, all three count (padding included): 4/9, 6/9, 4/9.
  EXPECT_TRUE(same_bits({v[0], v[1], v[2]}, {4.0f / 9.0f, 6.0f / 9.0f, 4.0f / 9.0f}));
}

TEST(Pool2dOnnxruntime, MlasWholeImageSumsFourLanes) {
  // kernel = image, strides 1, no pads: lanes l_i = x_i (+ x_{i+4} ...).
  // {1e8, 1, -1e8, 1}: (l3 + l1) + (l2 + l0) = 2 + 0 = 2 -> 0.5. Row-major from 0
  // gives ((1e8 + 1) - 1e8) + 1 = 1 -> 0.25 (1e8 + 1 rounds to 1e8).
  const Tensor x = t4({1, 1, 1, 4}, {1e8f, 1.0f, -1e8f, 1.0f});
  EXPECT_EQ(out0(x, ort(PoolMode::avg, test::window(1, 4), false, 13)), 0.5f);
  // A fifth element is added after the lanes: (2 + 3) / 5 = 1.
  const Tensor x5 = t4({1, 1, 1, 5}, {1e8f, 1.0f, -1e8f, 1.0f, 3.0f});
  EXPECT_EQ(out0(x5, ort(PoolMode::avg, test::window(1, 5), false, 13)), 1.0f);
  // The global pools take the same path.
  Pool2dParams g = global_pool2d_params(x.shape(), PoolMode::avg);
  apply_profile(g, Profile::onnxruntime);
  EXPECT_EQ(out0(x, g), 0.5f);
}

TEST(Pool2dOnnxruntime, MlasWholeImageNaNPriority) {
  // 8 elements: lane 2 = inf + -inf = the default NaN 0xffc00000, lane 0 = NaN
  // 0x7fc00000 + 0. ONNX Runtime adds l2 before l0, so its NaN wins: 0xffc00000.
  const Tensor x = t4({1, 1, 2, 4}, {kNaN, 1.0f, kInf, 1.0f, 0.0f, 1.0f, -kInf, 1.0f});
  EXPECT_EQ(bits(out0(x, ort(PoolMode::avg, test::window(2, 4), false, 13))), 0xffc00000u);
}

TEST(Pool2dOnnxruntime, MlasColumnSumsThenRows) {
  // x = [[1e8, 1, 7], [-1e8, 1, 7]], kernel 2x2, stride 1: column sums first:
  // (1e8 - 1e8) + (1 + 1) = 2 -> 0.5; row-major: ((1e8 + 1) - 1e8) + 1 = 1 -> 0.25.
  const Tensor x = t4({1, 1, 2, 3}, {1e8f, 1.0f, 7.0f, -1e8f, 1.0f, 7.0f});
  EXPECT_EQ(out0(x, ort(PoolMode::avg, test::window(2, 2), false, 13)), 0.5f);
  // stride_w 3 leaves MLAS's vector kernel: row-major.
  EXPECT_EQ(out0(x, ort(PoolMode::avg, test::window(2, 2, 1, 3), false, 13)), 0.25f);
  // Kernels above 32 wide leave it too: on a row of 34 -0, a 1x32 kernel sums
  // from the first column (-0), a 1x33 kernel row-major from +0.
  const Tensor z = Tensor::from<float>({1, 1, 1, 34}, std::vector<float>(34, -0.0f));
  EXPECT_TRUE(same_bits({out0(z, ort(PoolMode::avg, test::window(1, 32), false, 13))}, {-0.0f}));
  EXPECT_TRUE(same_bits({out0(z, ort(PoolMode::avg, test::window(1, 33), false, 13))}, {0.0f}));
}

TEST(Pool2dOnnxruntime, MlasColumnsStartFromTheirFirstRowPaddingFromZero) {
  // [[-0, 5], [-0, 5]], kernel 2x1, stride_w 2 (column sums): column 0 = -0 + -0 = -0,
  // a kernel_w of 1 adds nothing: -0 / 2 = -0.
  const Tensor x = t4({1, 1, 2, 2}, {-0.0f, 5.0f, -0.0f, 5.0f});
  EXPECT_TRUE(same_bits(test::run_pool(x, ort(PoolMode::avg, test::window(2, 1, 1, 2), true, 13)),
                        {-0.0f}));
  // Row-major (stride_w 3) starts from +0: (+0 + -0) + -0 = +0.
  EXPECT_TRUE(
      same_bits(test::run_pool(x, ort(PoolMode::avg, test::window(2, 1, 1, 3), true, 13)), {0.0f}));
  // A padding column holds +0: kernel 1x2, pad_left 1 on [-0]: +0 + -0 = +0.
  Window2d w = test::window(1, 2);
  test::set_pads(w, 0, 0, 1, 0);
  EXPECT_TRUE(same_bits(test::run_pool(t4({1, 1, 1, 1}, {-0.0f}), ort(PoolMode::avg, w, false, 13)),
                        {0.0f}));
}

TEST(Pool2dOnnxruntime, MlasIncludePadDividesByKernelAreaEvenPastThePaddedEnd) {
  // x 1x4 = [4, 8, 12, 16], kernel 2x2, strides [3, 1], pad_left 1: along H the
  // kernel (2) exceeds the input (1): trunc(-1/3) + 1 = 1 row, hanging past the end.
  // Window (0, 0) = {pad, 4} -> 4 / (2*2) = 1; (0, 1) = {4, 8} -> 3.
  Window2d w = test::window(2, 2, 3, 1);
  test::set_pads(w, 0, 0, 1, 0);
  const Tensor y =
      test::run_pool(t4({1, 1, 1, 4}, {4, 8, 12, 16}), ort(PoolMode::avg, w, true, 13));
  EXPECT_TRUE(same_bits(y, {1.0f, 3.0f, 5.0f, 7.0f}));
}

TEST(Pool2dOnnxruntime, MlasMaxNaNAndSignedZeros) {
  // Row [2, NaN, 1, -FLT_MAX...], kernel 1x2 (not the whole image): each output
  // is maxps(a, b) = a > b ? a : b: (2, NaN) -> NaN, (NaN, 1) -> 1, (1, 0) -> 1.
  const Tensor x = t4({1, 1, 1, 4}, {2.0f, kNaN, 1.0f, 0.0f});
  const Tensor y = test::run_pool(x, ort(PoolMode::max, test::window(1, 2)));
  const std::vector<float> v = y.to_vector<float>();
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 1.0f);
  EXPECT_EQ(v[2], 1.0f);
  // (+0, -0): maxps returns the second, -0; row-major (stride_w 3) uses std::max: +0.
  const Tensor z = t4({1, 1, 1, 3}, {0.0f, -0.0f, -5.0f});
  EXPECT_TRUE(same_bits(test::run_pool(z, ort(PoolMode::max, test::window(1, 2))), {-0.0f, -0.0f}));
  EXPECT_TRUE(same_bits(test::run_pool(z, ort(PoolMode::max, test::window(1, 2, 1, 3))), {0.0f}));
  // Down a column: the first 4*floor(W/4) columns reduce with maxps, the rest with
  // std::max. W = 5, kernel 2x1, rows [2, NaN]: column 0 -> NaN, column 4 -> 2.
  const Tensor c = t4({1, 1, 2, 5}, {2, 2, 2, 2, 2, kNaN, kNaN, kNaN, kNaN, kNaN});
  const std::vector<float> cv =
      test::run_pool(c, ort(PoolMode::max, test::window(2, 1))).to_vector<float>();
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(cv[static_cast<size_t>(i)])) << i;
  EXPECT_EQ(cv[4], 2.0f);
  // Whole image, all -inf: lanes start at -FLT_MAX and -inf never beats it.
  const Tensor m = t4({1, 1, 1, 2}, {-kInf, -kInf});
  EXPECT_EQ(out0(m, ort(PoolMode::max, test::window(1, 2))), -FLT_MAX);
}

TEST(Pool2dOnnxruntime, DilatedMaxKeepsTheFirstInputTap) {
  // kernel 1x2, dilation 2 on [a, 5, b]: taps a and b.
  auto max2 = [](float a, float b) {
    Window2d w = test::window(1, 2);
    w.dilation_w = 2;
    return out0(t4({1, 1, 1, 3}, {a, 5.0f, b}), ort(PoolMode::max, w));
  };
  EXPECT_TRUE(std::isnan(max2(kNaN, 2.0f)));             // a NaN first tap stays
  EXPECT_EQ(max2(2.0f, kNaN), 2.0f);                     // a later NaN never wins
  EXPECT_EQ(max2(-kInf, kNaN), -kInf);                   // -inf taken as the first tap
  EXPECT_TRUE(same_bits({max2(-0.0f, 0.0f)}, {-0.0f}));  // ties keep the first
  // Taps -1 and 2 on a 1x2 input with pads 1: both in padding -> -FLT_MAX.
  Window2d w = test::window(1, 2);
  w.dilation_w = 3;
  test::set_pads(w, 0, 0, 1, 1);
  EXPECT_EQ(out0(t4({1, 1, 1, 2}, {5.0f, 7.0f}), ort(PoolMode::max, w)), -FLT_MAX);
}

TEST(Pool2dOnnxruntime, AveragePoolLoopCropsAtANegativeEndPad) {
  // SAME_UPPER, in 3, kernel 2, stride 3, dilation 2: ONNX Runtime's SAME pads use
  // the undilated kernel: total = (1 - 1)*3 + 2 - 3 = -1 -> begin 0, end -1. One
  // window, taps 0 and 2; the AveragePool loop ends at 3 + (-1) = 2: tap 2 is
  // neither summed nor counted: [1, 2, 4] -> 1 / 1 = 1 (not (1 + 4) / 2).
  Window2d w = test::window(1, 2, 1, 3);
  w.dilation_w = 2;
  resolve_pool_auto_pad(w, AutoPad::same_upper, 1, 3, PoolGeometry::onnxruntime);
  ASSERT_EQ(w.pad_right, -1);
  const Tensor x = t4({1, 1, 1, 3}, {1.0f, 2.0f, 4.0f});
  for (bool cip : {false, true}) EXPECT_EQ(out0(x, ort(PoolMode::avg, w, cip, 19)), 1.0f) << cip;
  // MaxPool's loop reads tap 2: max(1, 4) = 4.
  EXPECT_EQ(out0(x, ort(PoolMode::max, w)), 4.0f);
}

TEST(Pool2dOnnxruntime, AveragePoolLoopSumsFromZeroWithX86NaNs) {
  // opset 19, kernel 1x3: 0 + inf = inf, inf + -inf = the default NaN (0xffc00000),
  // then + NaN (0x7fc00000): the accumulator's NaN stays.
  const Tensor x = t4({1, 1, 1, 3}, {kInf, -kInf, kNaN});
  EXPECT_EQ(bits(out0(x, ort(PoolMode::avg, test::window(1, 3), false, 19))), 0xffc00000u);
  // -0 alone: 0 + -0 = +0.
  EXPECT_TRUE(same_bits(
      test::run_pool(t4({1, 1, 1, 1}, {-0.0f}), ort(PoolMode::avg, test::window(1, 1), false, 19)),
      {0.0f}));
}

TEST(Pool2dOnnxruntime, RejectsWhatOrtRejects) {
  // Negative SAME pads on the MLAS path: ORT fails with "padding values must be non-negative".
  Window2d w = test::window(1, 1, 1, 2);
  resolve_pool_auto_pad(w, AutoPad::same_upper, 1, 2, PoolGeometry::onnxruntime);
  ASSERT_EQ(w.pad_right, -1);
  const Pool2dParams p = ort(PoolMode::max, w);
  EXPECT_TRUE(raises(
      [&] {
        (void)pool2d_output_shape({1, 1, 1, 2}, p);
      },
      "npukit::pool2d", "pad_right", "-1"));
  // The AveragePool loop (opset 19) takes them.
  EXPECT_EQ(pool2d_output_shape({1, 1, 1, 2}, ort(PoolMode::avg, w, false, 19)),
            (Shape{1, 1, 1, 1}));
  // Pads as large as the kernel: "Pad should be smaller than kernel".
  Window2d big = test::window(3, 3);
  test::set_pads(big, 1, 1, 3, 0);
  EXPECT_TRUE(
      raises([&] { (void)ort(PoolMode::avg, big); }, "npukit::apply_profile", "pad_left", "3"));
  EXPECT_TRUE(raises([&] { (void)ort(PoolMode::avg, test::window(2, 2), false, -1); },
                     "npukit::apply_profile", "opset", "-1"));
  // PoolLoop::mlas has no dilation or zero insertion.
  Pool2dParams q = ort(PoolMode::max, test::window(2, 2));
  q.window.ins_w = 1;
  EXPECT_TRUE(raises(
      [&] {
        (void)pool2d_output_shape({1, 1, 4, 4}, q);
      },
      "npukit::pool2d", "ins_w", "1"));
}

// Randomized: the result does not depend on the thread count or on strided
// (NHWC) views, for every loop the profile picks.
TEST(Pool2dOnnxruntime, ThreadsAndLayoutsAgree) {
  constexpr uint32_t kSeed = 20261126;
  std::mt19937 gen(kSeed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  test::ThreadGuard guard;
  for (int iter = 0; iter < 150; ++iter) {
    // A fifth of the shapes fill ONNX Runtime's NCHWc blocks (its NCHWc loop).
    const int64_t channels = pick(0, 4) == 0 ? 16 : pick(1, 5);
    const Shape shape{pick(1, 2), channels, pick(1, 9), pick(1, 9)};
    Window2d w = test::window(pick(1, static_cast<int>(shape[2])),
                              pick(1, static_cast<int>(shape[3])), pick(1, 3), pick(1, 3));
    test::set_pads(
        w, pick(0, static_cast<int>(w.kernel_h) - 1), pick(0, static_cast<int>(w.kernel_h) - 1),
        pick(0, static_cast<int>(w.kernel_w) - 1), pick(0, static_cast<int>(w.kernel_w) - 1));
    w.ceil_mode = pick(0, 1) == 1;
    if (pick(0, 3) == 0) w.dilation_w = 2;
    const PoolMode mode = pick(0, 1) ? PoolMode::avg : PoolMode::max;
    Pool2dParams p;
    try {
      p = ort(mode, w, pick(0, 1) == 1, pick(0, 1) ? 13 : 19);
      (void)pool2d_output_shape(shape, p);
    } catch (const Error&) {
      continue;  // an effective kernel larger than the padded input
    }
    Tensor x = test::random_f32(shape, kSeed + static_cast<uint32_t>(iter));
    x.data<float>()[0] = iter % 3 == 0 ? kNaN : -0.0f;
    Tensor xh = test::random_f32(shape, kSeed + static_cast<uint32_t>(iter), Layout::nhwc);
    copy(x, xh);
    set_num_threads(1);
    const Tensor want = test::run_pool(x, p);
    for (int threads : {2, 3}) {
      set_num_threads(threads);
      const Tensor got = test::run_pool(x, p);
      Tensor got_h(DType::f32, want.shape(), Layout::nhwc);
      pool2d(xh, got_h, p);
      char repro[160];
      std::snprintf(repro, sizeof repro, "seed %u iter %d threads %d loop %s", kSeed, iter, threads,
                    pool_loop_name(effective_pool_loop(p, shape[1])));
      EXPECT_TRUE(same_bits(got, want.to_vector<float>())) << repro;
      EXPECT_TRUE(same_bits(got_h.to_vector<float>(), want.to_vector<float>())) << repro;
    }
  }
}

// ---- MLAS's NCHWc kernel: ONNX Runtime's graph optimizer runs MaxPool and
// AveragePool there when the channels fill its blocks (16 with AVX512F, else 8).

// A tensor of `block` channels, each holding `plane` (H x W).
Tensor nchwc_input(int64_t block, int64_t H, int64_t W, const std::vector<float>& plane) {
  std::vector<float> v;
  for (int64_t c = 0; c < block; ++c) v.insert(v.end(), plane.begin(), plane.end());
  return t4({1, block, H, W}, v);
}

TEST(Pool2dOnnxruntime, NchwcBlockFollowsTheHostAndTheOpset) {
  const int64_t block = onnxruntime_nchwc_block();
#if defined(__x86_64__)
  EXPECT_EQ(block, host_cpu_features().avx512f ? 16 : 8);
#endif
  const Window2d w = test::window(2, 2);
  EXPECT_EQ(ort(PoolMode::max, w).nchwc_block, block);
  EXPECT_EQ(ort(PoolMode::max, w, false, 12).nchwc_block, block);
  EXPECT_EQ(ort(PoolMode::max, w, false, 22).nchwc_block, block);
  EXPECT_EQ(ort(PoolMode::avg, w, true, 13).nchwc_block, block);
  EXPECT_EQ(ort(PoolMode::avg, w, true, 19).nchwc_block, block);
  Window2d c = w;
  c.ceil_mode = true;  // ceil_mode with count_include_pad keeps ORT's own loop
  EXPECT_EQ(ort(PoolMode::avg, c, true, 13).nchwc_block, 0);
  EXPECT_EQ(ort(PoolMode::avg, c, false, 13).nchwc_block, block);
  Pool2dParams g = global_pool2d_params({1, 16, 4, 4}, PoolMode::avg);
  apply_global_profile(g, Profile::onnxruntime);
  EXPECT_EQ(g.nchwc_block, block);  // a lone GlobalAveragePool is rewritten too
  Pool2dParams p = ort(PoolMode::max, w);
  apply_profile(p, Profile::pytorch);
  EXPECT_EQ(p.nchwc_block, 0);
  p.nchwc_block = 8;
  EXPECT_EQ(effective_pool_loop(p, 16), PoolLoop::mlas_nchwc);
  EXPECT_EQ(effective_pool_loop(p, 12), PoolLoop::taps);
  EXPECT_STREQ(pool_loop_name(PoolLoop::mlas_nchwc), "mlas_nchwc");
}

TEST(Pool2dOnnxruntime, NchwcSumsTheInputTapsRowMajor) {
  const int64_t block = onnxruntime_nchwc_block();
  if (block == 0) GTEST_SKIP() << "no NCHWc rewrite on this host";
  // [[1e8, 1, 7], [-1e8, 1, 7]], kernel 2x2: row-major from +0:
  // ((1e8 + 1) - 1e8) + 1 = 1 -> 0.25 (MLAS's column sums would give 0.5).
  const std::vector<float> plane{1e8f, 1.0f, 7.0f, -1e8f, 1.0f, 7.0f};
  EXPECT_EQ(
      out0(nchwc_input(block, 2, 3, plane), ort(PoolMode::avg, test::window(2, 2), false, 13)),
      0.25f);
  // With one channel fewer than the block, MLAS's NCHW kernel runs again.
  std::vector<float> fewer;
  for (int64_t c = 0; c + 1 < block; ++c) fewer.insert(fewer.end(), plane.begin(), plane.end());
  EXPECT_EQ(
      out0(t4({1, block - 1, 2, 3}, fewer), ort(PoolMode::avg, test::window(2, 2), false, 13)),
      0.5f);
}

TEST(Pool2dOnnxruntime, NchwcIncludePadDividesByTheKernelArea) {
  const int64_t block = onnxruntime_nchwc_block();
  if (block == 0) GTEST_SKIP() << "no NCHWc rewrite on this host";
  // Issue #12's geometry (1xCx4x5 ones, kernel 3, stride 2, pads 1) with
  // C = block, loop set directly: the NCHWc kernel divides by 9 always, so the
  // last row is 2/9, 3/9, 2/9 (ORT's own loop: 1/3, 1/2, 1/3; with ceil_mode
  // and count_include_pad ONNX Runtime keeps that loop, even with C = block).
  Window2d w = test::window(3, 3, 2, 2);
  test::set_pads(w, 1, 1, 1, 1);
  w.ceil_mode = true;
  Pool2dParams p = ort(PoolMode::avg, w, true, 13);
  p.loop = PoolLoop::mlas_nchwc;
  p.divisor = AvgDivisor::kernel_area;
  const Tensor y = test::run_pool(nchwc_input(block, 4, 5, std::vector<float>(20, 1.0f)), p);
  ASSERT_EQ(y.shape(), (Shape{1, block, 3, 3}));
  const std::vector<float> v = y.to_vector<float>();
  EXPECT_TRUE(same_bits({v[6], v[7], v[8]}, {2.0f / 9.0f, 3.0f / 9.0f, 2.0f / 9.0f}));
}

TEST(Pool2dOnnxruntime, NchwcMaxKeepsTheRunningMaxAsFirstOperand) {
  const int64_t block = onnxruntime_nchwc_block();
  if (block == 0) GTEST_SKIP() << "no NCHWc rewrite on this host";
  // vmaxps acc, acc, v = acc > v ? acc : v from -FLT_MAX: [NaN, 2] -> 2 (the
  // NaN is replaced), [2, NaN] -> NaN, [+0, -0] -> -0, [-inf, -inf] -> -FLT_MAX.
  const Window2d w = test::window(1, 2, 1, 2);
  const std::vector<float> plane{kNaN, 2.0f, 2.0f, kNaN, 0.0f, -0.0f, -kInf, -kInf};
  const Tensor y = test::run_pool(nchwc_input(block, 1, 8, plane), ort(PoolMode::max, w));
  const std::vector<float> v = y.to_vector<float>();
  EXPECT_EQ(v[0], 2.0f);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(bits(v[2]), 0x80000000u);
  EXPECT_EQ(v[3], -FLT_MAX);
  // Dilated windows too (ORT's own MaxPool loop would keep the first tap, the NaN).
  Window2d d = test::window(1, 2, 1, 1);
  d.dilation_w = 2;
  const std::vector<float> row{kNaN, 0.0f, 3.0f};
  EXPECT_EQ(out0(nchwc_input(block, 1, 3, row), ort(PoolMode::max, d)), 3.0f);
}

// ONNX Runtime's own loops (first_tap, end_pad_crops) are not reproduced by
// the SIMD kernels: every fast kernel declines them, so the reference (the
// rules above) computes them. MLAS's orders run fast on NCHW rows.
TEST(Pool2dOnnxruntime, FastKernelsDeclineOnnxRuntimeLoops) {
  Tensor x(DType::f32, {1, 2, 6, 6}), y8(DType::u8, {1, 2, 6, 6});
  {
    Pool2dParams p;
    p.mode = PoolMode::max;
    p.window.kernel_h = p.window.kernel_w = 2;
    p.loop = PoolLoop::mlas;
    Tensor y(DType::f32, pool2d_output_shape(x.shape(), p));
    for (const auto& k : pool2d_kernels().variants) {
      const std::string name = k.name;
      if (name == "f32-pool2d-avx2" || name == "f32-pool2d-avx512") {
        EXPECT_EQ(k.declines(cpu::Pool2dProblem{x, y, p}), nullptr) << name;
      }
    }
  }
  for (int variant = 1; variant < 3; ++variant) {
    Pool2dParams p;
    p.mode = PoolMode::max;
    p.window.kernel_h = p.window.kernel_w = 2;
    if (variant == 0) p.loop = PoolLoop::mlas;
    if (variant == 1) p.nan = MaxNaN::first_tap;
    if (variant == 2) p.end_pad_crops = true;
    Tensor y(DType::f32, pool2d_output_shape(x.shape(), p));
    const cpu::Pool2dProblem pr{x, y, p};
    EXPECT_TRUE(pool2d_kernels().choose(pr).reference) << "variant " << variant;
    for (const auto& k : pool2d_kernels().variants) {
      if (!k.reference) {
        EXPECT_NE(k.declines(pr), nullptr) << k.name << " variant " << variant;
      }
    }
  }
}

}  // namespace
}  // namespace test_pool2d_onnxruntime
}  // namespace npukit
