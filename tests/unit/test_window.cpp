// Window geometry: output sizes (floor / ceil_mode and the dropped last
// window), zero insertion, dilation, tap classification and ONNX auto_pad.
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "unit/test_util.hpp"

namespace npukit {
namespace test_window {
namespace {

using test::raises;

AxisWindow axis(int64_t in, int64_t k, int64_t s, int64_t d = 1, int64_t ins = 0, int64_t pb = 0,
                int64_t pe = 0, bool ceil = false) {
  AxisWindow a;
  a.in = in;
  a.kernel = k;
  a.stride = s;
  a.dilation = d;
  a.ins = ins;
  a.pad_begin = pb;
  a.pad_end = pe;
  a.ceil_mode = ceil;
  return a;
}

int64_t out_size(const AxisWindow& a) {
  return axis_output_size(a, "test", 'h');
}

TEST(Window, FloorOutputSize) {
  // (5 - 3) / 2 + 1 = 2
  EXPECT_EQ(out_size(axis(5, 3, 2)), 2);
  // (6 - 3) / 2 + 1 = 2 (floor of 1.5)
  EXPECT_EQ(out_size(axis(6, 3, 2)), 2);
  // pads 1 + 1: (5 + 2 - 3) / 1 + 1 = 5
  EXPECT_EQ(out_size(axis(5, 3, 1, 1, 0, 1, 1)), 5);
  // kernel = input: one output
  EXPECT_EQ(out_size(axis(7, 7, 3)), 1);
}

TEST(Window, CeilModeKeepsPartialLastWindow) {
  // in 6, k 3, s 2: ceil((6 - 3) / 2) + 1 = 3; the last window starts at 4 < 6: kept.
  EXPECT_EQ(out_size(axis(6, 3, 2, 1, 0, 0, 0, true)), 3);
  // in 4, k 3, s 2, pads 1/1: ceil((6 - 3) / 2) + 1 = 3; last start (3-1)*2 = 4 < 4 + 1: kept.
  EXPECT_EQ(out_size(axis(4, 3, 2, 1, 0, 1, 1, true)), 3);
  // exact fit: ceil == floor, (7 - 3) / 2 + 1 = 3
  EXPECT_EQ(out_size(axis(7, 3, 2, 1, 0, 0, 0, true)), 3);
}

TEST(Window, CeilModeDropsWindowStartingInEndPadding) {
  // in 5, k 2, s 2, pads 1/1: ceil((7 - 2) / 2) + 1 = 4, but the 4th window
  // starts at (4-1)*2 = 6 >= 5 + 1 (inside the end padding): dropped -> 3.
  EXPECT_EQ(out_size(axis(5, 2, 2, 1, 0, 1, 1, true)), 3);
  // Same window without ceil_mode: floor(5 / 2) + 1 = 3.
  EXPECT_EQ(out_size(axis(5, 2, 2, 1, 0, 1, 1, false)), 3);
  // in 1, k 1, s 2, pads 1/1: ceil((3 - 1) / 2) + 1 = 2; 2nd start 2 >= 1 + 1: dropped -> 1.
  EXPECT_EQ(out_size(axis(1, 1, 2, 1, 0, 1, 1, true)), 1);
}

TEST(Window, ZeroInsertionAndDilation) {
  // 3 elements with 2 zeros between neighbours: (3 - 1) * 3 + 1 = 7; k 3 s 1: 5 outputs.
  EXPECT_EQ(axis(3, 3, 1, 1, 2).inserted_size(), 7);
  EXPECT_EQ(out_size(axis(3, 3, 1, 1, 2)), 5);
  // dilation 3 makes k 3 span (3 - 1) * 3 + 1 = 7 taps: one output on 7.
  EXPECT_EQ(axis(7, 3, 1, 3).effective_kernel(), 7);
  EXPECT_EQ(out_size(axis(7, 3, 1, 3)), 1);
  // ins 1 + pads 2/1 + dilation 2: span (4-1)*2+1 + 3 = 10, extent 5, s 2: (10-5)/2+1 = 3.
  EXPECT_EQ(out_size(axis(4, 3, 2, 2, 1, 2, 1)), 3);
}

TEST(Window, KernelLargerThanPaddedInputIsAnError) {
  // k 3 dilation 4: extent 9 > 7.
  EXPECT_TRUE(raises([] { out_size(axis(7, 3, 1, 4)); }, "test", "kernel_h", "3"));
  // k 4 on 2 + pads 1/0 = 3.
  EXPECT_TRUE(raises([] { out_size(axis(2, 4, 1, 1, 0, 1, 0)); }, "test", "kernel_h", "4"));
  // The w axis names the w fields.
  EXPECT_TRUE(raises([] { axis_output_size(axis(2, 3, 1), "f", 'w'); }, "f", "kernel_w", "3"));
}

TEST(Window, EveryFieldIsValidated) {
  EXPECT_TRUE(raises([] { out_size(axis(0, 1, 1)); }, "test", "x.H", "0"));
  EXPECT_TRUE(raises([] { axis_output_size(axis(-3, 1, 1), "f", 'w'); }, "f", "x.W", "-3"));
  EXPECT_TRUE(raises([] { out_size(axis(3, 0, 1)); }, "test", "kernel_h", "0"));
  EXPECT_TRUE(raises([] { out_size(axis(3, 1, 0)); }, "test", "stride_h", "0"));
  EXPECT_TRUE(raises([] { out_size(axis(3, 1, -1)); }, "test", "stride_h", "-1"));
  EXPECT_TRUE(raises([] { out_size(axis(3, 1, 1, 0)); }, "test", "dilation_h", "0"));
  EXPECT_TRUE(raises([] { out_size(axis(3, 1, 1, 1, -1)); }, "test", "ins_h", "-1"));
  EXPECT_TRUE(raises([] { out_size(axis(3, 1, 1, 1, 0, -1)); }, "test", "pad_top", "-1"));
  EXPECT_TRUE(raises([] { out_size(axis(3, 1, 1, 1, 0, 0, -2)); }, "test", "pad_bottom", "-2"));
  EXPECT_TRUE(
      raises([] { axis_output_size(axis(3, 1, 1, 1, 0, -1), "f", 'w'); }, "f", "pad_left", "-1"));
  EXPECT_TRUE(raises([] { axis_output_size(axis(3, 1, 1, 1, 0, 0, -1), "f", 'w'); }, "f",
                     "pad_right", "-1"));
  EXPECT_FALSE(raises([] { axis_output_size(axis(3, 1, 1, 1, 0, 0, 0), "f", 'w'); }, "f",
                      "pad_right"));  // a valid window does not raise
  // Sizes beyond int32 would overflow the geometry arithmetic; they are refused.
  EXPECT_TRUE(raises([] { out_size(axis(3, 1, 1, int64_t{1} << 40)); }, "test", "dilation_h"));
  EXPECT_TRUE(raises([] { out_size(axis(3, 1, 1, 1, 0, int64_t{1} << 62)); }, "test", "pad_top"));
}

// window_output_shape of windows at or near the whole plane (global pools
// take a shortcut there): (N, C, axis_output_size(h), axis_output_size(w))
// whenever both axes are valid, N and C in [1, 2^31) and kernel_h * kernel_w
// <= 2^26; otherwise an Error naming the function. Near misses: one field off
// its range or the whole plane by one.
TEST(Window, WholePlaneWindowsGiveTheAxisRuleOrAnError) {
  constexpr uint32_t kSeed = 20261128;
  std::mt19937 g(kSeed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(g);
  };
  const int64_t big = int64_t{1} << 31;
  int64_t shortcuts = 0;
  for (int i = 0; i < 4000; ++i) {
    const int64_t H = pick(0, 3) == 0 ? pick(1, 3) : pick(1, 9000);
    const int64_t W = pick(0, 3) == 0 ? pick(1, 3) : pick(1, 9000);
    std::vector<int64_t> x{pick(0, 9) == 0 ? big - pick(0, 1) : pick(1, 4),
                           pick(0, 9) == 0 ? pick(-1, 0) : pick(1, 3000), H, W};
    Window2d w;
    w.kernel_h = H, w.kernel_w = W;
    w.stride_h = pick(0, 3) == 0 ? big - pick(0, 1) : pick(1, 3);
    w.stride_w = pick(0, 9) == 0 ? pick(-1, 0) : pick(1, 3);
    w.ceil_mode = pick(0, 1) == 1;
    w.truncated_count = pick(0, 1) == 1;
    switch (pick(0, 7)) {  // one near miss, or none
      case 0:
        w.kernel_h += pick(0, 1) ? 1 : -1;
        break;
      case 1:
        w.dilation_w = pick(0, 2);
        break;
      case 2:
        w.ins_h = pick(0, 1);
        break;
      case 3:
        (pick(0, 1) ? w.pad_top : w.pad_right) = pick(-1, 1);
        break;
      default:
        break;
    }
    const std::string where = "seed " + std::to_string(kSeed) + ", case " + std::to_string(i) +
                              ": x " + shape_text(x) + " kernel " + std::to_string(w.kernel_h) +
                              "x" + std::to_string(w.kernel_w);
    std::optional<std::vector<int64_t>> want;
    try {
      const int64_t oh = axis_output_size(axis_h(w, H), "f", 'h');
      const int64_t ow = axis_output_size(axis_w(w, W), "f", 'w');
      const bool nc = x[0] >= 1 && x[0] < big && x[1] >= 1 && x[1] < big;
      constexpr int64_t taps = int64_t{1} << 26;  // per window and per axis table
      if (nc && w.kernel_h * w.kernel_w <= taps && oh * w.kernel_h <= taps &&
          ow * w.kernel_w <= taps)
        want = {x[0], x[1], oh, ow};
    } catch (const Error&) {
    }
    if (want) {
      EXPECT_EQ(window_output_shape(x, w, "f"), *want) << where;
      shortcuts += (*want)[2] == 1 && (*want)[3] == 1;
    } else {
      try {
        window_output_shape(x, w, "f");
        ADD_FAILURE() << "no error: " << where;
      } catch (const Error& e) {
        EXPECT_EQ(e.function(), "f") << where;
      }
    }
  }
  EXPECT_GT(shortcuts, 500);  // the whole-plane cases were met
}

TEST(Window, TapsClassifyEveryPosition) {
  // in 2, ins 1, pads 1/2, k 3, d 2, s 1: expanded axis P x0 Z x1 P P (positions -1..4),
  // extent 5 on 6: 2 outputs. Output 0 reads -1, 1, 3 -> padding, zero, padding.
  // Output 1 reads 0, 2, 4 -> x0, x1, padding.
  const AxisWindow a = axis(2, 3, 1, 2, 1, 1, 2);
  ASSERT_EQ(out_size(a), 2);
  const AxisTaps t = axis_taps(a, 2);
  EXPECT_EQ(t.kind_at(0, 0), Tap::padding);
  EXPECT_EQ(t.kind_at(0, 1), Tap::inserted_zero);
  EXPECT_EQ(t.kind_at(0, 2), Tap::padding);
  EXPECT_EQ(t.kind_at(1, 0), Tap::input);
  EXPECT_EQ(t.index_at(1, 0), 0);
  EXPECT_EQ(t.kind_at(1, 1), Tap::input);
  EXPECT_EQ(t.index_at(1, 1), 1);
  EXPECT_EQ(t.kind_at(1, 2), Tap::padding);
  EXPECT_EQ(t.index_at(0, 1), -1);
}

TEST(Window, CeilModeTapsPastThePaddingAreOutside) {
  // in 3, k 2, s 2, ceil: 2 outputs; output 1 reads position 2 (x2) and 3 (past the end).
  const AxisWindow a = axis(3, 2, 2, 1, 0, 0, 0, true);
  ASSERT_EQ(out_size(a), 2);
  const AxisTaps t = axis_taps(a, 2);
  EXPECT_EQ(t.kind_at(1, 0), Tap::input);
  EXPECT_EQ(t.index_at(1, 0), 2);
  EXPECT_EQ(t.kind_at(1, 1), Tap::outside);
  // The 2-D kind is the "more outside" of row and column.
  EXPECT_EQ(combine(Tap::input, Tap::padding), Tap::padding);
  EXPECT_EQ(combine(Tap::outside, Tap::inserted_zero), Tap::outside);
  EXPECT_EQ(combine(Tap::inserted_zero, Tap::input), Tap::inserted_zero);
}

TEST(Window, AutoPadSame) {
  // in 5, k 3, s 2: out ceil(5/2) = 3, total pad (3-1)*2 + 3 - 5 = 2 -> 1 / 1 either way.
  Window2d w = test::window(3, 3, 2, 2);
  resolve_auto_pad(w, AutoPad::same_upper, 5, 5);
  EXPECT_EQ(w.pad_top, 1);
  EXPECT_EQ(w.pad_bottom, 1);
  // in 6, k 3, s 2: out 3, total (3-1)*2 + 3 - 6 = 1: UPPER puts it at the end, LOWER at the start.
  w = test::window(3, 3, 2, 2);
  resolve_auto_pad(w, AutoPad::same_upper, 6, 6);
  EXPECT_EQ(w.pad_top, 0);
  EXPECT_EQ(w.pad_bottom, 1);
  EXPECT_EQ(w.pad_left, 0);
  EXPECT_EQ(w.pad_right, 1);
  resolve_auto_pad(w, AutoPad::same_lower, 6, 6);
  EXPECT_EQ(w.pad_top, 1);
  EXPECT_EQ(w.pad_bottom, 0);
  // Different axes: h in 4, k 3, s 1 -> total 2 (1/1); w in 7, k 2, s 3 -> out 3,
  // total (3-1)*3 + 2 - 7 = 1 -> LOWER: left 1, right 0.
  w = test::window(3, 2, 1, 3);
  resolve_auto_pad(w, AutoPad::same_lower, 4, 7);
  EXPECT_EQ(w.pad_top, 1);
  EXPECT_EQ(w.pad_bottom, 1);
  EXPECT_EQ(w.pad_left, 1);
  EXPECT_EQ(w.pad_right, 0);
  // Dilation 2, k 3 on 5, s 1: total 4 + 5 - 5 = 4 -> 2 / 2.
  w = test::window(3, 3);
  w.dilation_h = w.dilation_w = 2;
  resolve_auto_pad(w, AutoPad::same_upper, 5, 5);
  EXPECT_EQ(w.pad_top, 2);
  EXPECT_EQ(w.pad_bottom, 2);
  // k 1 s 2 on 4: (2-1)*2 + 1 - 4 < 0 -> no padding.
  w = test::window(1, 1, 2, 2);
  resolve_auto_pad(w, AutoPad::same_upper, 4, 4);
  EXPECT_EQ(w.pad_top + w.pad_bottom + w.pad_left + w.pad_right, 0);
}

TEST(Window, AutoPadSameGivesCeilOfInputOverStride) {
  for (int64_t in = 1; in <= 9; ++in)
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t s = 1; s <= 3; ++s)
        for (AutoPad m : {AutoPad::same_upper, AutoPad::same_lower}) {
          Window2d w = test::window(k, k, s, s);
          resolve_auto_pad(w, m, in, in);
          if (k > in + w.pad_top + w.pad_bottom) continue;
          EXPECT_EQ(axis_output_size(axis_h(w, in), "t", 'h'), (in + s - 1) / s)
              << "in " << in << " k " << k << " s " << s;
          EXPECT_LE(w.pad_bottom - w.pad_top, m == AutoPad::same_upper ? 1 : 0);
          EXPECT_GE(w.pad_bottom - w.pad_top, m == AutoPad::same_upper ? 0 : -1);
        }
}

TEST(Window, AutoPadValidAndNotset) {
  Window2d w = test::window(3, 3);
  test::set_pads(w, 1, 2, 3, 4);
  resolve_auto_pad(w, AutoPad::notset, 8, 8);
  EXPECT_EQ(w.pad_top + w.pad_bottom + w.pad_left + w.pad_right, 10);
  resolve_auto_pad(w, AutoPad::valid, 8, 8);
  EXPECT_EQ(w.pad_top + w.pad_bottom + w.pad_left + w.pad_right, 0);
}

TEST(Window, AutoPadLeavesInvalidFieldsToValidation) {
  // A zero stride must not divide by zero while resolving SAME pads; the
  // window check then names it.
  Window2d w = test::window(2, 2, 0, 1);
  resolve_auto_pad(w, AutoPad::same_upper, 4, 4);
  EXPECT_EQ(w.pad_top + w.pad_bottom, 0);
  EXPECT_EQ(w.pad_left + w.pad_right, 1);  // the w axis is valid: total (4-1)*1 + 2 - 4 = 1
  EXPECT_TRUE(raises([&] { axis_output_size(axis_h(w, 4), "f", 'h'); }, "f", "stride_h", "0"));
  w = test::window(0, 2);
  resolve_auto_pad(w, AutoPad::same_lower, 4, 4);
  EXPECT_EQ(w.pad_top + w.pad_bottom, 0);
  w = test::window(2, 2);
  w.dilation_w = -1;
  resolve_auto_pad(w, AutoPad::same_lower, 4, 4);
  EXPECT_EQ(w.pad_left + w.pad_right, 0);
}

TEST(Window, AutoPadNames) {
  EXPECT_EQ(auto_pad_from_name("NOTSET", "f"), AutoPad::notset);
  EXPECT_EQ(auto_pad_from_name("", "f"), AutoPad::notset);
  EXPECT_EQ(auto_pad_from_name("VALID", "f"), AutoPad::valid);
  EXPECT_EQ(auto_pad_from_name("SAME_UPPER", "f"), AutoPad::same_upper);
  EXPECT_EQ(auto_pad_from_name("SAME_LOWER", "f"), AutoPad::same_lower);
  EXPECT_TRUE(raises([] { auto_pad_from_name("SAME", "f"); }, "f", "auto_pad", "'SAME'"));
  EXPECT_TRUE(raises([] { auto_pad_from_name("valid", "f"); }, "f", "auto_pad", "'valid'"));
}

// ONNX Runtime 1.30's pool_attributes.h, hand-computed (and probed against ORT itself
// by tests/python/test_ort_quant.py's geometry sweep).
Window2d ort_window(int64_t k, int64_t s, int64_t d, AutoPad mode, int64_t in, bool ceil = false) {
  Window2d w;
  w.kernel_w = k;
  w.stride_w = s;
  w.dilation_w = d;
  w.ceil_mode = ceil;
  resolve_pool_auto_pad(w, mode, 1, in, PoolGeometry::onnxruntime);
  return w;
}

TEST(Window, OnnxRuntimeSamePadsCanBeNegative) {
  // in 7, k 1, s 4: total = (ceil(7/4) - 1)*4 + 1 - 7 = -2 -> begin -1, end -1 (UPPER);
  // out = trunc((7 - 2 - 1) / 4) + 1 = 2; windows read inputs 1 and 5.
  Window2d w = ort_window(1, 4, 1, AutoPad::same_upper, 7);
  EXPECT_EQ(w.pad_left, -1);
  EXPECT_EQ(w.pad_right, -1);
  EXPECT_TRUE(w.truncated_count);
  const AxisWindow a = axis_w(w, 7);
  ASSERT_EQ(axis_output_size(a, "f", 'w'), 2);
  const AxisTaps t = axis_taps(a, 2);
  EXPECT_EQ(t.index_at(0, 0), 1);
  EXPECT_EQ(t.index_at(1, 0), 5);
  // LOWER: total -2 -> begin (-2 + 1) / 2 = 0 in C, end -2; inputs 0 and 4.
  w = ort_window(1, 4, 1, AutoPad::same_lower, 7);
  EXPECT_EQ(w.pad_left, 0);
  EXPECT_EQ(w.pad_right, -2);
  const AxisTaps tl = axis_taps(axis_w(w, 7), 2);
  EXPECT_EQ(tl.index_at(0, 0), 0);
  EXPECT_EQ(tl.index_at(1, 0), 4);
  // The ONNX rule for the same attributes: pads 0, out ceil(7/4) = 2 from 0 and 4.
  Window2d o;
  o.kernel_w = 1;
  o.stride_w = 4;
  resolve_pool_auto_pad(o, AutoPad::same_upper, 1, 7, PoolGeometry::onnx);
  EXPECT_EQ(o.pad_left, 0);
  EXPECT_FALSE(o.truncated_count);
}

TEST(Window, OnnxRuntimeSamePadsUseTheUndilatedKernel) {
  // in 1, k 2, s 2, d 2, LOWER: total = 0*2 + 2 - 1 = 1 -> begin 1, end 0; the dilated
  // extent 3 overhangs the padded size 2: num = -1, trunc(-1/2) + 1 = 1 window whose taps
  // are padding (-1) and past the end (1): no input at all.
  const Window2d w = ort_window(2, 2, 2, AutoPad::same_lower, 1);
  EXPECT_EQ(w.pad_left, 1);
  EXPECT_EQ(w.pad_right, 0);
  const AxisWindow a = axis_w(w, 1);
  ASSERT_EQ(axis_output_size(a, "f", 'w'), 1);
  const AxisTaps t = axis_taps(a, 1);
  EXPECT_EQ(t.kind_at(0, 0), Tap::padding);
  EXPECT_EQ(t.kind_at(0, 1), Tap::outside);
  // The ONNX rule pads for the dilated kernel: total 2 -> 1 / 1, one window on input 0.
  Window2d o;
  o.kernel_w = 2;
  o.stride_w = 2;
  o.dilation_w = 2;
  resolve_pool_auto_pad(o, AutoPad::same_lower, 1, 1, PoolGeometry::onnx);
  EXPECT_EQ(o.pad_left, 1);
  EXPECT_EQ(o.pad_right, 1);
}

TEST(Window, OnnxRuntimeCountTruncatesAndNeedsOneWindow) {
  // NOTSET, in 1, k 2, s 2, no pads: num = -1 -> trunc(-1/2) + 1 = 1 window (ONNX: error).
  AxisWindow a = axis(1, 2, 2);
  EXPECT_TRUE(raises([&] { axis_output_size(a, "f", 'w'); }, "f", "kernel_w", "2"));
  a.truncated_count = true;
  EXPECT_EQ(axis_output_size(a, "f", 'w'), 1);
  // in 1, k 3, s 1: num = -2 -> -1 windows: ORT rejects it, so does npukit; in 2, k 4, s 2:
  // num = -2 -> 0 windows (ORT returns an empty tensor): an npukit error.
  AxisWindow b = axis(1, 3, 1);
  b.truncated_count = true;
  EXPECT_TRUE(raises([&] { axis_output_size(b, "f", 'h'); }, "f", "kernel_h", "3"));
  AxisWindow c = axis(2, 4, 2);
  c.truncated_count = true;
  EXPECT_TRUE(raises([&] { axis_output_size(c, "f", 'w'); }, "f", "kernel_w", "4"));
  // ceil_mode: ceil(num / s) of a negative num: in 4, k 5, s 2 -> num -1, ceil(-0.5) + 1 = 1.
  AxisWindow d = axis(4, 5, 2, 1, 0, 0, 0, true);
  d.truncated_count = true;
  EXPECT_EQ(axis_output_size(d, "f", 'w'), 1);
  // Given pads stay >= 0 under this geometry.
  Window2d g;
  g.pad_left = -1;
  EXPECT_TRUE(
      raises([&] { resolve_pool_auto_pad(g, AutoPad::notset, 1, 1, PoolGeometry::onnxruntime); },
             "npukit::resolve_pool_auto_pad", "pad_left", "-1"));
}

}  // namespace
}  // namespace test_window
}  // namespace npukit

namespace npukit {
namespace test_window {
namespace {
// The forced-kernel ONNX Runtime profiles share ORT's pooling geometry; only
// their integer GEMM accumulation differs from `onnxruntime`.
TEST(PoolGeometryFor, OnnxRuntimeVariantsUseOnnxRuntimeGeometry) {
  for (Profile p : {Profile::onnxruntime, Profile::onnxruntime_avx2, Profile::onnxruntime_vnni})
    EXPECT_EQ(pool_geometry_for(p), PoolGeometry::onnxruntime) << profile_name(p);
  for (Profile p : {Profile::pytorch, Profile::bm1684, Profile::ghp_rtl, Profile::tflite})
    EXPECT_EQ(pool_geometry_for(p), PoolGeometry::onnx) << profile_name(p);
}
}  // namespace
}  // namespace test_window
}  // namespace npukit
