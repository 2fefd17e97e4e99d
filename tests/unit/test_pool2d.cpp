// Pooling on hand-computed cases: every divisor rule and pad value, windows
// entirely in padding, ceil_mode's last window, zero insertion with padding
// and dilation, 1x1 images, kernel = whole image, integer max pooling, NaN,
// -0 and infinities, and layout independence.
#include <cfloat>

#include "unit/test_util.hpp"

namespace npukit {
namespace test_pool2d {
namespace {

using test::iota4;
using test::kInf;
using test::kNaN;
using test::raises;
using test::run_pool;
using test::same_bits;

Pool2dParams params(PoolMode mode, Window2d w, AvgDivisor d = AvgDivisor::kernel_area,
                    PadValue pv = PadValue::neg_inf, MaxNaN nan = MaxNaN::propagate) {
  Pool2dParams p;
  p.mode = mode;
  p.window = w;
  p.divisor = d;
  p.pad_value = pv;
  p.nan = nan;
  return p;
}

// 1x1 image holding v, k 2, s 1, pads 2 on every side: the padded axis is
// P P v P P, windows start at -2, -1, 0, 1, so 4x4 outputs. Window (0, 0)
// covers rows/cols {-2, -1}: entirely padding. Window (1, 1) covers {-1, 0}:
// three pad taps and v.
Window2d k2_pad2() {
  Window2d w = test::window(2, 2);
  test::set_pads(w, 2, 2, 2, 2);
  return w;
}

TEST(Pool2d, WindowEntirelyInPaddingAverage) {
  const Tensor x = Tensor::from<float>({1, 1, 1, 1}, {8.0f});
  // kernel_area: (0,0) = 0 / 4 = 0; (1,1) = 8 / 4 = 2.
  Tensor y = run_pool(x, params(PoolMode::avg, k2_pad2(), AvgDivisor::kernel_area));
  ASSERT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  EXPECT_EQ(y.view().at<float>(0, 0, 0, 0), 0.0f);
  EXPECT_FALSE(std::signbit(y.view().at<float>(0, 0, 0, 0)));
  EXPECT_EQ(y.view().at<float>(0, 0, 1, 1), 2.0f);
  // valid_count: (0,0) has no valid tap -> documented 0; (1,1) = 8 / 1 = 8;
  // (1,2) covers rows {-1,0} cols {0,1}: only v -> 8.
  y = run_pool(x, params(PoolMode::avg, k2_pad2(), AvgDivisor::valid_count));
  EXPECT_EQ(y.view().at<float>(0, 0, 0, 0), 0.0f);
  EXPECT_FALSE(std::signbit(y.view().at<float>(0, 0, 0, 0)));
  EXPECT_EQ(y.view().at<float>(0, 0, 1, 1), 8.0f);
  EXPECT_EQ(y.view().at<float>(0, 0, 1, 2), 8.0f);
  EXPECT_EQ(y.view().at<float>(0, 0, 3, 3), 0.0f);
  // clipped_window: every tap is input or padding -> divisor 4 everywhere: (1,1) = 2.
  y = run_pool(x, params(PoolMode::avg, k2_pad2(), AvgDivisor::clipped_window));
  EXPECT_EQ(y.view().at<float>(0, 0, 0, 0), 0.0f);
  EXPECT_EQ(y.view().at<float>(0, 0, 1, 1), 2.0f);
  EXPECT_EQ(y.view().at<float>(0, 0, 2, 2), 2.0f);
}

TEST(Pool2d, WindowEntirelyInPaddingMaxAndSum) {
  const Tensor x = Tensor::from<float>({1, 1, 1, 1}, {-8.0f});
  // The all-padding window returns the pad value itself; the window with v
  // returns max(pad, -8).
  Tensor y = run_pool(x, params(PoolMode::max, k2_pad2(), {}, PadValue::neg_inf));
  EXPECT_EQ(y.view().at<float>(0, 0, 0, 0), -kInf);
  EXPECT_EQ(y.view().at<float>(0, 0, 1, 1), -8.0f);
  y = run_pool(x, params(PoolMode::max, k2_pad2(), {}, PadValue::neg_flt_max));
  EXPECT_EQ(y.view().at<float>(0, 0, 0, 0), -FLT_MAX);
  EXPECT_EQ(y.view().at<float>(0, 0, 1, 1), -8.0f);
  y = run_pool(x, params(PoolMode::max, k2_pad2(), {}, PadValue::zero));
  EXPECT_EQ(y.view().at<float>(0, 0, 0, 0), 0.0f);
  EXPECT_EQ(y.view().at<float>(0, 0, 1, 1), 0.0f);  // max(0, 0, 0, -8)
  // sum: padding adds 0; (0,0) = 0, (1,1) = -8 * coeff 0.5 = -4.
  Pool2dParams s = params(PoolMode::sum, k2_pad2());
  s.coeff = 0.5f;
  y = run_pool(x, s);
  EXPECT_EQ(y.view().at<float>(0, 0, 0, 0), 0.0f);
  EXPECT_EQ(y.view().at<float>(0, 0, 1, 1), -4.0f);
}

TEST(Pool2d, CeilModeLastWindowEachDivisor) {
  // x = [1 2 3 4] (1 row), k (1,3), s (1,2), pads left/right 1, ceil_mode:
  // span 6, ceil(3/2)+1 = 3 outputs (last start 4 < 4+1, kept).
  //   out 0 reads positions -1, 0, 1 -> P, 1, 2:   sum 3, valid 2, clipped 3
  //   out 1 reads 1, 2, 3           -> 2, 3, 4:   sum 9, valid 3, clipped 3
  //   out 2 reads 3, 4, 5           -> 4, P, out: sum 4, valid 1, clipped 2
  const Tensor x = iota4({1, 1, 1, 4});
  Window2d w = test::window(1, 3, 1, 2);
  test::set_pads(w, 0, 0, 1, 1);
  w.ceil_mode = true;
  // ONNX Runtime, count_include_pad=1: always / 3.
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::avg, w, AvgDivisor::kernel_area)),
                        {1.0f, 3.0f, 4.0f / 3.0f}));
  // count_include_pad=0: 3/2, 9/3, 4/1.
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::avg, w, AvgDivisor::valid_count)),
                        {1.5f, 3.0f, 4.0f}));
  // PyTorch count_include_pad=True: the window clipped to input + padding: 3/3, 9/3, 4/2.
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::avg, w, AvgDivisor::clipped_window)),
                        {1.0f, 3.0f, 2.0f}));
  // Max and sum of the same windows: 2, 4, 4 and 3, 9, 4.
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::max, w)), {2.0f, 4.0f, 4.0f}));
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::sum, w)), {3.0f, 9.0f, 4.0f}));
}

TEST(Pool2d, CeilModeWindowStartingInEndPaddingIsDropped) {
  // x = [1..5], k (1,2), s (1,2), pads 1/1, ceil: windows start at -1, 1, 3
  // ({P,1}, {2,3}, {4,5}); a 4th would start at 5, inside the end pad: dropped.
  const Tensor x = iota4({1, 1, 1, 5});
  Window2d w = test::window(1, 2, 1, 2);
  test::set_pads(w, 0, 0, 1, 1);
  w.ceil_mode = true;
  // clipped: 1/2, 5/2, 9/2.
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::avg, w, AvgDivisor::clipped_window)),
                        {0.5f, 2.5f, 4.5f}));
}

TEST(Pool2d, CeilMode2dOnThreeByThree) {
  // 1..9 in 3x3, k2 s2 ceil: windows {1,2,4,5} {3,6} {7,8} {9}: sums 12, 9, 15, 9.
  const Tensor x = iota4({1, 1, 3, 3});
  Window2d w = test::window(2, 2, 2, 2);
  w.ceil_mode = true;
  // kernel area 4: 3, 2.25, 3.75, 2.25; valid (= clipped, no pads): 3, 4.5, 7.5, 9.
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::avg, w, AvgDivisor::kernel_area)),
                        {3.0f, 2.25f, 3.75f, 2.25f}));
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::avg, w, AvgDivisor::valid_count)),
                        {3.0f, 4.5f, 7.5f, 9.0f}));
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::avg, w, AvgDivisor::clipped_window)),
                        {3.0f, 4.5f, 7.5f, 9.0f}));
}

TEST(Pool2d, CeilModeOverhangHoldsNoPadValue) {
  // x = [-1 -2 -3], k (1,2), s (1,2), ceil, no pads: windows {-1,-2} and {-3, past the end}.
  // The overhang is not padding: even with PadValue::zero the max is -3, not 0.
  const Tensor x = Tensor::from<float>({1, 1, 1, 3}, {-1, -2, -3});
  Window2d w = test::window(1, 2, 1, 2);
  w.ceil_mode = true;
  for (PadValue pv : {PadValue::zero, PadValue::neg_inf, PadValue::neg_flt_max})
    EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::max, w, {}, pv)), {-1.0f, -3.0f}))
        << pad_value_name(pv);
  const Tensor xi = Tensor::from<int8_t>({1, 1, 1, 3}, {-1, -2, -3});
  const Tensor yi = run_pool(xi, params(PoolMode::max, w, {}, PadValue::zero));
  EXPECT_EQ(yi.to_vector<int8_t>(), (std::vector<int8_t>{-1, -3}));
}

TEST(Pool2d, ZeroInsertionWithPaddingAndDilation) {
  // x = [[1,2],[3,4]], ins_h 1, ins_w 0 -> rows [1 2], [0 0], [3 4]; pads top 1,
  // bottom 0, left 1, right 1 -> padded rows -1..2, cols -1..2:
  //   row -1:  P P P P
  //   row  0:  P 1 2 P
  //   row  1:  P 0 0 P      (inserted zeros)
  //   row  2:  P 3 4 P
  // k (2,2), dilation (2,1), stride 1: out 2x3; window (oh,ow) reads rows
  // {oh-1, oh+1} and cols {ow-1, ow}.
  //   (0,0): P P P 0  sum 0  valid 1  max 0
  //   (0,1): P P 0 0  sum 0  valid 2  max 0
  //   (0,2): P P 0 P  sum 0  valid 1  max 0
  //   (1,0): P 1 P 3  sum 4  valid 2  max 3
  //   (1,1): 1 2 3 4  sum 10 valid 4  max 4
  //   (1,2): 2 P 4 P  sum 6  valid 2  max 4
  const Tensor x = iota4({1, 1, 2, 2});
  Window2d w = test::window(2, 2);
  w.dilation_h = 2;
  w.ins_h = 1;
  test::set_pads(w, 1, 0, 1, 1);
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::avg, w, AvgDivisor::kernel_area)),
                        {0, 0, 0, 1.0f, 2.5f, 1.5f}));
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::avg, w, AvgDivisor::valid_count)),
                        {0, 0, 0, 2.0f, 2.5f, 3.0f}));
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::sum, w)), {0, 0, 0, 4, 10, 6}));
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::max, w)), {0, 0, 0, 3, 4, 4}));
  // On -x the inserted zeros beat every input; padding (-inf) never wins:
  // (1,0) max(-1,-3) = -1, (1,1) -1, (1,2) max(-2,-4) = -2.
  const Tensor xn = iota4({1, 1, 2, 2}, 1.0f, -1.0f);
  EXPECT_TRUE(same_bits(run_pool(xn, params(PoolMode::max, w)), {0, 0, 0, -1, -1, -2}));
}

TEST(Pool2d, ZeroInsertionBothAxesSumWithCoeff) {
  // [[1,2],[3,4]] with ins 1 -> [[1,0,2],[0,0,0],[3,0,4]]; k 2 s 1: sums
  // (0,0) 1, (0,1) 2, (1,0) 3, (1,1) 4; coeff 0.25 -> 0.25, 0.5, 0.75, 1.
  const Tensor x = iota4({1, 1, 2, 2});
  Window2d w = test::window(2, 2);
  w.ins_h = w.ins_w = 1;
  Pool2dParams p = params(PoolMode::sum, w);
  p.coeff = 0.25f;
  EXPECT_TRUE(same_bits(run_pool(x, p), {0.25f, 0.5f, 0.75f, 1.0f}));
  // avg valid_count counts the inserted zeros: 1/4, 2/4, 3/4, 4/4.
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::avg, w, AvgDivisor::valid_count)),
                        {0.25f, 0.5f, 0.75f, 1.0f}));
}

TEST(Pool2d, OneByOneImage) {
  const Tensor x = Tensor::from<float>({1, 1, 1, 1}, {7.0f});
  const Window2d k1 = test::window(1, 1);
  for (PoolMode m : {PoolMode::avg, PoolMode::max, PoolMode::sum})
    EXPECT_TRUE(same_bits(run_pool(x, params(m, k1)), {7.0f})) << pool_mode_name(m);
  // k 3, pads 1: one window, 8 pad taps + 7: area 7/9, valid 7/1, clipped 7/9.
  Window2d k3 = test::window(3, 3);
  test::set_pads(k3, 1, 1, 1, 1);
  EXPECT_TRUE(
      same_bits(run_pool(x, params(PoolMode::avg, k3, AvgDivisor::kernel_area)), {7.0f / 9.0f}));
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::avg, k3, AvgDivisor::valid_count)), {7.0f}));
  EXPECT_TRUE(
      same_bits(run_pool(x, params(PoolMode::avg, k3, AvgDivisor::clipped_window)), {7.0f / 9.0f}));
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::max, k3)), {7.0f}));
  // Global pooling of 1x1 is the identity.
  Tensor y(DType::f32, {1, 1, 1, 1});
  global_pool2d(x, y, PoolMode::avg);
  EXPECT_TRUE(same_bits(y, {7.0f}));
}

TEST(Pool2d, KernelIsWholeImage) {
  // 2x3 image 1..6: avg 21/6 = 3.5, max 6, sum 21; two channels (second 7..12: 57/6 = 9.5, 12).
  const Tensor x = iota4({1, 2, 2, 3});
  const Window2d w = test::window(2, 3);
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::avg, w)), {3.5f, 9.5f}));
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::max, w)), {6.0f, 12.0f}));
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::sum, w)), {21.0f, 57.0f}));
  Tensor ya(DType::f32, {1, 2, 1, 1}), ym(DType::f32, {1, 2, 1, 1});
  global_pool2d(x, ya, PoolMode::avg);
  global_pool2d(x, ym, PoolMode::max);
  EXPECT_TRUE(same_bits(ya, {3.5f, 9.5f}));
  EXPECT_TRUE(same_bits(ym, {6.0f, 12.0f}));
  const Pool2dParams g = global_pool2d_params(x.shape(), PoolMode::max);
  EXPECT_EQ(g.window.kernel_h, 2);
  EXPECT_EQ(g.window.kernel_w, 3);
}

TEST(Pool2d, StrideLargerThanKernelSkipsElements) {
  // [1..7], k 1, s 3: picks 1, 4, 7.
  const Tensor x = iota4({1, 1, 1, 7});
  EXPECT_TRUE(
      same_bits(run_pool(x, params(PoolMode::max, test::window(1, 1, 1, 3))), {1.0f, 4.0f, 7.0f}));
}

TEST(Pool2d, BatchesAndChannelsAreIndependent) {
  // N 2, C 2, 1x2 images: values 1..8; k (1,2) avg: (1+2)/2, (3+4)/2, ... = 1.5 3.5 5.5 7.5.
  const Tensor x = iota4({2, 2, 1, 2});
  EXPECT_TRUE(
      same_bits(run_pool(x, params(PoolMode::avg, test::window(1, 2))), {1.5f, 3.5f, 5.5f, 7.5f}));
}

TEST(Pool2d, Int8AndUint8MaxPool) {
  // s8 [[-5, -100], [-128, -7]], k 2, s 1, pads 1: 3x3 windows.
  //   corners each hold one element: -5, -100, -128, -7; centre holds all four: -5.
  //   edge (0,1) holds {-5, -100}: -5; (1,0) {-5, -128}: -5; (1,2) {-100, -7}: -7;
  //   (2,1) {-128, -7}: -7.
  // Padding with the lowest value (-128) never beats a real element.
  const Tensor x = Tensor::from<int8_t>({1, 1, 2, 2}, {-5, -100, -128, -7});
  Window2d w = test::window(2, 2);
  test::set_pads(w, 1, 1, 1, 1);
  Tensor y = run_pool(x, params(PoolMode::max, w, {}, PadValue::neg_inf));
  EXPECT_EQ(y.to_vector<int8_t>(), (std::vector<int8_t>{-5, -5, -100, -5, -5, -7, -128, -7, -7}));
  y = run_pool(x, params(PoolMode::max, w, {}, PadValue::neg_flt_max));
  EXPECT_EQ(y.to_vector<int8_t>(), (std::vector<int8_t>{-5, -5, -100, -5, -5, -7, -128, -7, -7}));
  // Zero padding (BM168x unsigned rule applied to s8): every window touching padding gives 0;
  // only the centre window (1,1) has no padding: -5.
  y = run_pool(x, params(PoolMode::max, w, {}, PadValue::zero));
  EXPECT_EQ(y.to_vector<int8_t>(), (std::vector<int8_t>{0, 0, 0, 0, -5, 0, 0, 0, 0}));
  // u8 [[200, 3], [255, 0]]: lowest is 0 so the pad value does not matter:
  // corners 200, 3, 255, 0; (0,1) {200,3} 200, (1,0) {200,255} 255, centre 255,
  // (1,2) {3,0} 3, (2,1) {255,0} 255.
  const Tensor xu = Tensor::from<uint8_t>({1, 1, 2, 2}, {200, 3, 255, 0});
  const std::vector<uint8_t> want{200, 200, 3, 255, 255, 3, 255, 255, 0};
  for (PadValue pv : {PadValue::neg_inf, PadValue::zero})
    EXPECT_EQ(run_pool(xu, params(PoolMode::max, w, {}, pv)).to_vector<uint8_t>(), want);
  // Zero insertion in s8: [[-1, -2]] with ins_w 1 -> [-1, 0, -2]; k (1,2): max 0, 0.
  Window2d wi = test::window(1, 2);
  wi.ins_w = 1;
  const Tensor xi = Tensor::from<int8_t>({1, 1, 1, 2}, {-1, -2});
  EXPECT_EQ(run_pool(xi, params(PoolMode::max, wi)).to_vector<int8_t>(),
            (std::vector<int8_t>{0, 0}));
  // Global max of s8.
  Tensor g(DType::s8, {1, 1, 1, 1});
  global_pool2d(x, g, PoolMode::max);
  EXPECT_EQ(g.to_vector<int8_t>(), (std::vector<int8_t>{-5}));
}

TEST(Pool2d, MaxNaNRules) {
  // [NaN, 1, 2] and [1, 2, NaN] in one window of 3.
  const Tensor first = Tensor::from<float>({1, 1, 1, 3}, {kNaN, 1, 2});
  const Tensor last = Tensor::from<float>({1, 1, 1, 3}, {1, 2, kNaN});
  const Tensor all = Tensor::from<float>({1, 1, 1, 3}, {kNaN, kNaN, kNaN});
  const Window2d w = test::window(1, 3);
  // propagate (PyTorch): a NaN anywhere wins.
  EXPECT_TRUE(std::isnan(run_pool(first, params(PoolMode::max, w)).to_vector<float>()[0]));
  EXPECT_TRUE(std::isnan(run_pool(last, params(PoolMode::max, w)).to_vector<float>()[0]));
  // ignore (strict v > m): NaN never wins; all NaN leaves the start value.
  const auto ign = [&](PadValue pv) {
    return params(PoolMode::max, w, AvgDivisor::kernel_area, pv, MaxNaN::ignore);
  };
  EXPECT_TRUE(same_bits(run_pool(first, ign(PadValue::neg_flt_max)), {2.0f}));
  EXPECT_TRUE(same_bits(run_pool(last, ign(PadValue::neg_flt_max)), {2.0f}));
  EXPECT_TRUE(same_bits(run_pool(all, ign(PadValue::neg_flt_max)), {-FLT_MAX}));
  EXPECT_TRUE(same_bits(run_pool(all, ign(PadValue::neg_inf)), {-kInf}));
  // A NaN next to padding: propagate still gives NaN whatever the pad value.
  Window2d wp = test::window(1, 3);
  test::set_pads(wp, 0, 0, 1, 1);
  const Tensor one = Tensor::from<float>({1, 1, 1, 1}, {kNaN});
  for (PadValue pv : {PadValue::neg_inf, PadValue::neg_flt_max, PadValue::zero}) {
    EXPECT_TRUE(std::isnan(run_pool(one, params(PoolMode::max, wp, {}, pv)).to_vector<float>()[0]))
        << pad_value_name(pv);
  }
  // ignore with zero padding: taps P, NaN, P -> the padding's 0 is the answer.
  Pool2dParams pz = params(PoolMode::max, wp, {}, PadValue::zero, MaxNaN::ignore);
  EXPECT_TRUE(same_bits(run_pool(one, pz), {0.0f}));
  // Averages propagate NaN under every divisor.
  EXPECT_TRUE(std::isnan(run_pool(last, params(PoolMode::avg, w)).to_vector<float>()[0]));
}

TEST(Pool2d, SignedZeroAndInfinities) {
  const Window2d w = test::window(1, 2);
  // Ties keep the first tap (strict >): max(-0, +0) = -0, max(+0, -0) = +0 (PyTorch agrees).
  EXPECT_TRUE(same_bits(
      run_pool(Tensor::from<float>({1, 1, 1, 2}, {-0.0f, 0.0f}), params(PoolMode::max, w)),
      {-0.0f}));
  EXPECT_TRUE(same_bits(
      run_pool(Tensor::from<float>({1, 1, 1, 2}, {0.0f, -0.0f}), params(PoolMode::max, w)),
      {0.0f}));
  // +inf wins; -inf loses to -FLT_MAX only when the start value is -FLT_MAX.
  EXPECT_TRUE(same_bits(
      run_pool(Tensor::from<float>({1, 1, 1, 2}, {1.0f, kInf}), params(PoolMode::max, w)), {kInf}));
  const Tensor ninf = Tensor::from<float>({1, 1, 1, 2}, {-kInf, -kInf});
  EXPECT_TRUE(same_bits(run_pool(ninf, params(PoolMode::max, w, {}, PadValue::neg_inf)), {-kInf}));
  EXPECT_TRUE(
      same_bits(run_pool(ninf, params(PoolMode::max, w, {}, PadValue::neg_flt_max)), {-FLT_MAX}));
  // Averages: inf / 2 = inf; inf + -inf = NaN.
  EXPECT_TRUE(same_bits(
      run_pool(Tensor::from<float>({1, 1, 1, 2}, {kInf, 1.0f}), params(PoolMode::avg, w)), {kInf}));
  EXPECT_TRUE(std::isnan(
      run_pool(Tensor::from<float>({1, 1, 1, 2}, {kInf, -kInf}), params(PoolMode::avg, w))
          .to_vector<float>()[0]));
  // The sum of two -0 taps starts from +0: +0 + -0 + -0 = +0.
  EXPECT_TRUE(same_bits(
      run_pool(Tensor::from<float>({1, 1, 1, 2}, {-0.0f, -0.0f}), params(PoolMode::sum, w)),
      {0.0f}));
}

TEST(Pool2d, MaxPadValueAgainstNegativeInputs) {
  // -x for x = 1..9 in 3x3, k2 s2 pad1: 2x2 windows starting at -1 and 1 hold
  // {-1}, {-2,-3}, {-4,-7} plus padding, and {-5,-6,-8,-9} with no padding.
  // neg_inf / neg_flt_max: -1, -2, -4, -5. zero: the padding's 0 wins the first
  // three; the last has no padding: -5.
  const Tensor x = iota4({1, 1, 3, 3}, 1.0f, -1.0f);
  Window2d w = test::window(2, 2, 2, 2);
  test::set_pads(w, 1, 1, 1, 1);
  EXPECT_TRUE(
      same_bits(run_pool(x, params(PoolMode::max, w, {}, PadValue::neg_inf)), {-1, -2, -4, -5}));
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::max, w, {}, PadValue::neg_flt_max)),
                        {-1, -2, -4, -5}));
  EXPECT_TRUE(same_bits(run_pool(x, params(PoolMode::max, w, {}, PadValue::zero)), {0, 0, 0, -5}));
}

TEST(Pool2d, NhwcGivesIdenticalResults) {
  const Shape shape{2, 3, 5, 6};
  const Tensor xc = test::random_f32(shape, 11);
  const Tensor xh = test::random_f32(shape, 11, Layout::nhwc);
  ASSERT_EQ(xc.to_vector<float>(), xh.to_vector<float>());
  Window2d w = test::window(3, 2, 2, 1);
  test::set_pads(w, 1, 0, 0, 1);
  w.dilation_w = 2;
  w.ins_h = 1;
  w.ceil_mode = true;
  for (PoolMode m : {PoolMode::avg, PoolMode::max, PoolMode::sum}) {
    const Pool2dParams p = params(m, w, AvgDivisor::clipped_window);
    const Shape os = pool2d_output_shape(shape, p);
    Tensor yc(DType::f32, os), yh(DType::f32, os, Layout::nhwc);
    pool2d(xc, yc, p);
    pool2d(xh, yh, p);
    EXPECT_TRUE(same_bits(yh, yc.to_vector<float>())) << pool_mode_name(m);
  }
}

TEST(Pool2d, OutputShape) {
  // (7 + 1 + 2 - 3) / 2 + 1 = 4 rows; ins_w 1 on 4 -> 7, (7 - (2-1)*3 - 1) / 1 + 1 = 4 cols.
  Pool2dParams p;
  p.window = test::window(3, 2, 2, 1);
  test::set_pads(p.window, 1, 2, 0, 0);
  p.window.ins_w = 1;
  p.window.dilation_w = 3;
  EXPECT_EQ(pool2d_output_shape({3, 5, 7, 4}, p), (Shape{3, 5, 4, 4}));
}

TEST(Pool2d, Profiles) {
  Pool2dParams p;
  p.count_include_pad = true;
  apply_profile(p, Profile::pytorch);
  EXPECT_EQ(p.divisor, AvgDivisor::clipped_window);
  EXPECT_EQ(p.pad_value, PadValue::neg_inf);
  EXPECT_EQ(p.nan, MaxNaN::propagate);
  p.count_include_pad = false;
  apply_profile(p, Profile::pytorch);
  EXPECT_EQ(p.divisor, AvgDivisor::valid_count);
  p.count_include_pad = true;
  apply_profile(p, Profile::onnxruntime);
  EXPECT_EQ(p.divisor, AvgDivisor::kernel_area);
  p.count_include_pad = false;
  apply_profile(p, Profile::onnxruntime);
  EXPECT_EQ(p.divisor, AvgDivisor::valid_count);
  p.count_include_pad = true;
  apply_profile(p, Profile::bm1684);
  EXPECT_EQ(p.divisor, AvgDivisor::kernel_area);
  EXPECT_EQ(p.pad_value, PadValue::neg_flt_max);
  EXPECT_EQ(p.nan, MaxNaN::ignore);
  // A profile leaves the geometry alone.
  p.window = test::window(3, 2, 2, 1);
  p.count_include_pad = true;
  apply_profile(p, Profile::pytorch);
  EXPECT_EQ(p.window.kernel_h, 3);
  EXPECT_EQ(p.window.stride_h, 2);
  EXPECT_TRUE(raises(
      [&] {
        p.count_include_pad = false;
        apply_profile(p, Profile::bm1684);
      },
      "npukit::apply_profile", "count_include_pad", "false"));
  EXPECT_TRUE(raises(
      [&] {
        p.count_include_pad = true;
        apply_profile(p, Profile::cvm);
      },
      "npukit::apply_profile", "profile", "cvm"));
}

TEST(Pool2d, Names) {
  EXPECT_STREQ(pool_mode_name(PoolMode::sum), "sum");
  EXPECT_STREQ(avg_divisor_name(AvgDivisor::clipped_window), "clipped_window");
  EXPECT_STREQ(pad_value_name(PadValue::neg_flt_max), "neg_flt_max");
}

}  // namespace
}  // namespace test_pool2d
}  // namespace npukit
