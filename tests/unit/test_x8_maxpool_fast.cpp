// s8/u8 max pooling: every kernel of the "pool2d" family that takes 8-bit
// input and runs on this host against ref::max_pool2d_int, byte for byte, on
// seeded random problems: every loop / NaN / crop setting (integer max does
// not depend on them), windows entirely in padding with and without
// empty_max_is_zero, ceil-mode overhang, ONNX Runtime's truncated count with
// negative end pads, dilation and zero insertion (the generic kernels), rows
// wider than two vectors, 1-wide images, odd channel counts, batches, NCHW /
// NHWC / gapped strides, 1-3 threads, every ISA cap and Impl::reference.
// A failure prints the seed, the case index and the configuration.
#include <map>
#include <memory>
#include <sstream>

#include "ops/cpu/pool2d_plan.hpp"
#include "unit/guarded_bytes.hpp"
#include "unit/test_util.hpp"
#include "unit/variant_test_util.hpp"

namespace npukit {
namespace test_x8_maxpool_fast {
namespace {

using cpu::Pool2dProblem;
using variant_test::expect_each_ran;
using variant_test::name_has;

struct Case {
  Shape shape;
  DType dtype = DType::u8;
  Pool2dParams p;
  // 0 NCHW, 1 NHWC, 2 NCHW with gaps between rows and planes, 3 NCHW with gaps
  // between planes only (rows back to back), 4 NHWC with gaps between pixels,
  // rows and images
  int x_layout = 0, y_layout = 0;
  int values = 0;              // 0 full range, 1 near the lowest value, 2 few distinct values
  bool x_at_page_end = false;  // x's last byte right before an unreadable page
};

std::string describe(const Case& c) {
  const Pool2dParams& p = c.p;
  const Window2d& w = p.window;
  std::ostringstream s;
  s << dtype_name(c.dtype) << " x" << shape_text(c.shape) << " k" << w.kernel_h << "x" << w.kernel_w
    << " s" << w.stride_h << "x" << w.stride_w << " d" << w.dilation_h << "x" << w.dilation_w
    << " ins" << w.ins_h << "x" << w.ins_w << " pads(" << w.pad_top << "," << w.pad_bottom << ","
    << w.pad_left << "," << w.pad_right << ")" << (w.ceil_mode ? " ceil" : "")
    << (w.truncated_count ? " truncated_count" : "") << " pad=" << pad_value_name(p.pad_value)
    << " loop=" << pool_loop_name(p.loop) << " nan=" << max_nan_name(p.nan)
    << (p.end_pad_crops ? " end_pad_crops" : "")
    << (p.empty_max_is_zero ? " empty_max_is_zero" : "") << " x_layout=" << c.x_layout
    << " y_layout=" << c.y_layout << " values=" << c.values;
  return s.str();
}

// The strides of layout (see Case) and the span in elements.
Shape layout_strides(const Shape& s, int layout, int64_t& span) {
  const int64_t C = s[1], H = s[2], W = s[3];
  Shape st;
  if (layout == 0) st = contiguous_strides(s, Layout::nchw);
  if (layout == 1) st = contiguous_strides(s, Layout::nhwc);
  if (layout == 2) {
    const int64_t row = W + 3, plane = row * H + 5;
    st = {plane * C + 7, plane, row, 1};
  }
  if (layout == 3) {
    const int64_t plane = W * H + 5;
    st = {plane * C + 7, plane, W, 1};
  }
  if (layout == 4) {  // NHWC with gaps between pixels, rows and images
    const int64_t pixel = C + 3, row = W * pixel + 5;
    st = {row * H + 9, 1, row, pixel};
  }
  span = 1;
  for (int i = 0; i < 4; ++i) span += (s[static_cast<size_t>(i)] - 1) * st[static_cast<size_t>(i)];
  return st;
}

TensorView make_view(std::vector<uint8_t>& buf, DType dt, const Shape& s, int layout) {
  int64_t span = 0;
  const Shape st = layout_strides(s, layout, span);
  buf.assign(static_cast<size_t>(span) + 64, 0xa5);  // poison outside the view
  return TensorView(buf.data(), dt, s, st);
}

void fill(const Case& c, const TensorView& x, std::mt19937& g) {
  for (int64_t n = 0; n < x.dim(0); ++n)
    for (int64_t ch = 0; ch < x.dim(1); ++ch)
      for (int64_t h = 0; h < x.dim(2); ++h)
        for (int64_t w = 0; w < x.dim(3); ++w) {
          int v = static_cast<int>(g() % 256);
          if (c.values == 1) v = static_cast<int>(g() % 3);  // 0..2 above the lowest
          if (c.values == 2) v = static_cast<int>(g() % 4) * 85;
          if (c.dtype == DType::u8) x.at<uint8_t>(n, ch, h, w) = static_cast<uint8_t>(v);
          if (c.dtype == DType::s8) x.at<int8_t>(n, ch, h, w) = static_cast<int8_t>(v - 128);
        }
}

Case random_case(std::mt19937& g) {
  auto pick = test::picker(g);
  Case c;
  const int shape_kind = static_cast<int>(g() % 10);
  const int64_t H = shape_kind == 0 ? 1 : pick(1, 14);
  const int64_t W = shape_kind == 1 ? 1 : shape_kind == 2 ? pick(120, 300) : pick(1, 70);
  const int64_t C = g() % 8 == 0 ? pick(60, 70) : pick(1, 9);
  c.shape = {pick(1, 3), C, H, W};
  c.dtype = g() % 2 ? DType::u8 : DType::s8;
  Pool2dParams& p = c.p;
  p.mode = PoolMode::max;
  Window2d& w = p.window;
  w.kernel_h = pick(1, 5);
  w.kernel_w = pick(1, 5);
  w.stride_h = pick(1, 3);
  w.stride_w = g() % 8 == 0 ? pick(3, 4) : pick(1, 2);
  w.dilation_h = g() % 8 == 0 ? 2 : 1;
  w.dilation_w = g() % 8 == 0 ? pick(2, 3) : 1;
  w.ins_h = g() % 10 == 0 ? pick(1, 2) : 0;
  w.ins_w = g() % 10 == 0 ? pick(1, 2) : 0;
  if (g() % 4 != 0) {
    // Up to 5: a pad >= the kernel makes windows entirely in padding.
    w.pad_top = pick(0, 5);
    w.pad_bottom = pick(0, 5);
    w.pad_left = pick(0, 5);
    w.pad_right = pick(0, 5);
  }
  w.ceil_mode = g() % 3 == 0;
  w.truncated_count = !w.ceil_mode && g() % 6 == 0;
  if (w.truncated_count && g() % 3 == 0) w.pad_bottom = w.pad_right = -1;
  if (g() % 10 == 0) {  // global
    w = Window2d{};
    w.kernel_h = H;
    w.kernel_w = W;
  }
  p.pad_value = static_cast<PadValue>(g() % 3);
  p.nan = static_cast<MaxNaN>(g() % 3);
  p.end_pad_crops = g() % 4 == 0;
  p.empty_max_is_zero = g() % 2 == 0;
  // ONNX Runtime's MLAS loop where its window rules allow it.
  const bool mlas_ok = w.dilation_h == 1 && w.dilation_w == 1 && w.ins_h == 0 && w.ins_w == 0 &&
                       w.pad_bottom >= 0 && w.pad_right >= 0;
  p.loop = mlas_ok && g() % 2 ? PoolLoop::mlas : PoolLoop::taps;
  c.x_layout = static_cast<int>(g() % 4 == 0 ? 1 : g() % 3 == 0 ? 2 : 0);
  c.y_layout = static_cast<int>(g() % 3);
  c.values = static_cast<int>(g() % 3);
  return c;
}

// Output bytes in logical order.
std::vector<uint8_t> logical_bytes(const TensorView& y) {
  std::vector<uint8_t> out;
  for (int64_t n = 0; n < y.dim(0); ++n)
    for (int64_t c = 0; c < y.dim(1); ++c)
      for (int64_t h = 0; h < y.dim(2); ++h)
        for (int64_t w = 0; w < y.dim(3); ++w)
          out.push_back(static_cast<const uint8_t*>(
              y.raw())[n * y.stride(0) + c * y.stride(1) + h * y.stride(2) + w * y.stride(3)]);
  return out;
}

bool gaps_untouched(const std::vector<uint8_t>& buf, const TensorView& y) {
  std::vector<bool> marked(buf.size(), false);
  for (int64_t n = 0; n < y.dim(0); ++n)
    for (int64_t c = 0; c < y.dim(1); ++c)
      for (int64_t h = 0; h < y.dim(2); ++h)
        for (int64_t w = 0; w < y.dim(3); ++w)
          marked[static_cast<size_t>(n * y.stride(0) + c * y.stride(1) + h * y.stride(2) +
                                     w * y.stride(3))] = true;
  for (size_t i = 0; i < buf.size(); ++i)
    if (!marked[i] && buf[i] != 0xa5) return false;
  return true;
}

std::string first_difference(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      std::ostringstream s;
      s << "element " << i << ": got " << int(got[i]) << ", reference " << int(want[i]);
      return s.str();
    }
  return "";
}

struct Stats {
  int64_t cases = 0, elements = 0, empty_windows = 0;
  variant_test::Runs runs;
};

void reference(const TensorView& x, const TensorView& y, const Pool2dParams& p) {
  if (x.dtype() == DType::s8) return ref::max_pool2d_int<int8_t>(x, y, p);
  ref::max_pool2d_int<uint8_t>(x, y, p);
}

// Every runnable, accepting x8 kernel against the reference; false after a mismatch.
bool check_case(const Case& c, uint32_t seed, int index, Stats& st) {
  Shape ys;
  try {
    ys = pool2d_output_shape(c.shape, c.p);
  } catch (const Error&) {
    return true;  // an invalid window (bad-input tests cover it)
  }
  std::mt19937 g(seed * 7919u + static_cast<uint32_t>(index));
  std::vector<uint8_t> xbuf, refbuf, ybuf;
  std::unique_ptr<test::GuardedBytes> guarded;
  TensorView x;
  if (c.x_at_page_end) {
    int64_t span = 0;
    const Shape st = layout_strides(c.shape, c.x_layout, span);
    guarded = std::make_unique<test::GuardedBytes>(static_cast<size_t>(span));
    x = TensorView(guarded->data(), c.dtype, c.shape, st);
  } else {
    x = make_view(xbuf, c.dtype, c.shape, c.x_layout);
  }
  fill(c, x, g);
  const TensorView want_view = make_view(refbuf, c.dtype, ys, 0);
  set_num_threads(1);
  reference(x, want_view, c.p);
  const std::vector<uint8_t> want = logical_bytes(want_view);
  ++st.cases;
  const auto fresh_y = [&] {
    return Pool2dProblem{x, make_view(ybuf, c.dtype, ys, c.y_layout), c.p};
  };
  const auto compare = [&](const Pool2dProblem& pr) -> std::string {
    const std::string diff = first_difference(logical_bytes(pr.y), want);
    if (!diff.empty()) return diff;
    return gaps_untouched(ybuf, pr.y) ? "" : "wrote outside the output view";
  };
  const int64_t before = st.runs.total();
  variant_test::Options opt;
  opt.threads = 1 + index % 3;
  const bool ok = variant_test::run_every_variant(
      pool2d_kernels(), fresh_y, compare,
      "seed " + std::to_string(seed) + ", case " + std::to_string(index) + "\n  " + describe(c),
      st.runs, opt);
  st.elements += (st.runs.total() - before) * static_cast<int64_t>(want.size());
  return ok;
}

TEST(X8MaxPoolFast, EveryKernelMatchesReferenceOnRandomProblems) {
  test::SettingsRestore restore;
  const uint32_t seed = 20261127;
  std::mt19937 g(seed);
  Stats st;
  for (int i = 0; i < 2500; ++i)
    if (!check_case(random_case(g), seed, i, st)) break;
  std::printf("x8 max pool fast: seed %u, %lld cases, %lld elements compared\n", seed,
              static_cast<long long>(st.cases), static_cast<long long>(st.elements));
  variant_test::print_runs("x8 max pool", st.runs);
  EXPECT_GT(st.cases, 1500);
  // Every x8 kernel this host runs took a fair share of the cases. The
  // flat-plane kernels take same-size stride-1 or global windows only
  // (FlatPlaneKernelsOnSameSizeAndGlobalWindows gives them their share). The
  // stride-2 kernels take a third of the windows, the NHWC ones need 16
  // channels (StrideTwoRows and ChannelsLastWindows give them their share).
  expect_each_ran(pool2d_kernels(), st.runs, 200, [](const std::string& n) {
    return n.rfind("x8-", 0) == 0 && !name_has("-same-")(n) && !name_has("globalmax")(n) &&
           !name_has("-s2-")(n) && !name_has("-nhwc-")(n);
  });
}

// Same-size stride-1 windows (output = input size: pads total kernel - 1 per
// axis, split at random) and whole-plane windows, on contiguous planes and on
// planes with gaps between them, every padding value, 1-3 threads: every
// accepting kernel (the flat-plane ones above all) against the reference.
TEST(X8MaxPoolFast, FlatPlaneKernelsOnSameSizeAndGlobalWindows) {
  test::SettingsRestore restore;
  const uint32_t seed = 20261128;
  std::mt19937 g(seed);
  auto pick = test::picker(g);
  Stats st;
  for (int i = 0; i < 600; ++i) {
    Case c;
    const int64_t H = g() % 6 == 0 ? 1 : pick(1, 20), W = g() % 6 == 0 ? 1 : pick(1, 70);
    // Global windows: enough planes for the 8-plane batches of every thread.
    c.shape = {pick(1, 3), i % 4 == 0 ? pick(1, 60) : pick(1, 9), H, W};
    c.dtype = g() % 2 ? DType::u8 : DType::s8;
    c.p.mode = PoolMode::max;
    Window2d& w = c.p.window;
    if (i % 4 == 0) {  // global
      w.kernel_h = H;
      w.kernel_w = W;
    } else {
      w.kernel_h = pick(1, 5);
      w.kernel_w = pick(1, 5);
      w.pad_top = pick(0, w.kernel_h - 1);
      w.pad_bottom = w.kernel_h - 1 - w.pad_top;
      w.pad_left = pick(0, w.kernel_w - 1);
      w.pad_right = w.kernel_w - 1 - w.pad_left;
      w.ceil_mode = g() % 2;
    }
    c.p.pad_value = static_cast<PadValue>(g() % 3);
    c.p.empty_max_is_zero = g() % 2;
    c.x_layout = g() % 3 == 0 ? 3 : 0;
    c.y_layout = g() % 4 == 0 ? 3 : g() % 5 == 0 ? 1 : 0;
    c.values = static_cast<int>(g() % 3);
    if (!check_case(c, seed, i, st)) break;
  }
  variant_test::print_runs("x8 max pool", st.runs);
  expect_each_ran(pool2d_kernels(), st.runs, 250, name_has("-same-"));
  expect_each_ran(pool2d_kernels(), st.runs, 100, name_has("globalmax"));
}

// Horizontal stride 2 (the x8-maxpool2d-s2 register kernels): kernels 1-16
// wide, any vertical kernel and stride, pads up to the kernel (ceil-mode
// overhang, ORT's negative end pads), rows from 1 to 150 columns (edge chunks
// on both sides, overlapping last chunks), every padding value, NCHW with and
// without gaps, dense and gapped y (whole-register stores into later rows),
// batches, 1-3 threads: every accepting kernel against the reference.
TEST(X8MaxPoolFast, StrideTwoRows) {
  test::SettingsRestore restore;
  const uint32_t seed = 20261133;
  std::mt19937 g(seed);
  auto pick = test::picker(g);
  Stats st;
  for (int i = 0; i < 900; ++i) {
    Case c;
    const int64_t W = g() % 8 == 0 ? pick(1, 3) : g() % 3 == 0 ? pick(60, 150) : pick(4, 60);
    c.shape = {pick(1, 3), pick(1, 7), pick(1, 12), W};
    c.dtype = g() % 2 ? DType::u8 : DType::s8;
    c.p.mode = PoolMode::max;
    Window2d& w = c.p.window;
    w.kernel_w = g() % 6 == 0 ? pick(4, 16) : pick(1, 3);
    w.kernel_h = pick(1, 4);
    w.stride_w = 2;
    w.stride_h = pick(1, 3);
    if (g() % 3 != 0) {
      w.pad_left = pick(0, w.kernel_w);
      w.pad_right = pick(0, w.kernel_w);
      w.pad_top = pick(0, w.kernel_h);
      w.pad_bottom = pick(0, w.kernel_h);
    }
    w.ceil_mode = g() % 3 == 0;
    w.truncated_count = !w.ceil_mode && g() % 6 == 0;
    if (w.truncated_count && g() % 2) w.pad_right = -1;
    c.p.pad_value = static_cast<PadValue>(g() % 3);
    c.p.empty_max_is_zero = g() % 2;
    c.x_layout = g() % 3 == 0 ? 3 : g() % 4 == 0 ? 2 : 0;
    c.y_layout = g() % 4 == 0 ? 2 : 0;
    c.values = static_cast<int>(g() % 3);
    if (!check_case(c, seed, i, st)) break;
  }
  std::printf("stride 2: seed %u, %lld cases\n", seed, static_cast<long long>(st.cases));
  variant_test::print_runs("x8 max pool", st.runs);
  // x8-maxpool2d-s2-avx512vbmi and -s2-cols- take a narrower set (StrideTwoColumnMaxima).
  expect_each_ran(pool2d_kernels(), st.runs, 400, [](const std::string& n) {
    return name_has("-s2-")(n) && !name_has("vbmi")(n) && !name_has("-cols-")(n);
  });
}

// The windows of x8-maxpool2d-s2-avx512vbmi (column taps 2j - 1 .. 2j + 1:
// pad_left 0 or 1, kernel_w up to 2 + pad_left; k3s2p1, k2s2 among them) and
// their neighbours it declines: rows 1 to 300 columns (the two-rows-per-permute
// path up to 64 columns, its edge at 32 outputs, one and several chunks of 64
// outputs, partial last chunks), right pads -1 to 2 and ceil mode (a tap past
// the row: padding or past it), any vertical kernel, stride and pads, odd
// channel counts, batches, dense / gapped x and y (whole-vector stores into
// later rows only when y is dense), every padding value, codes near the
// lowest, 1-3 threads; a quarter with x ending right before an unreadable
// page. Every accepting kernel against the reference.
TEST(X8MaxPoolFast, StrideTwoColumnMaxima) {
  test::SettingsRestore restore;
  const uint32_t seed = 20261209;
  std::mt19937 g(seed);
  auto pick = test::picker(g);
  Stats st;
  for (int i = 0; i < 1500; ++i) {
    Case c;
    const int kind = static_cast<int>(g() % 6);
    const int64_t W = kind == 0   ? pick(1, 8)
                      : kind == 1 ? pick(60, 68)
                      : kind == 2 ? pick(120, 300)
                                  : pick(9, 130);
    c.shape = {pick(1, 3), g() % 5 == 0 ? pick(30, 70) : pick(1, 7), pick(1, 12), W};
    c.dtype = g() % 2 ? DType::u8 : DType::s8;
    c.p.mode = PoolMode::max;
    Window2d& w = c.p.window;
    w.pad_left = g() % 8 == 0 ? 2 : pick(0, 1);
    w.kernel_w = g() % 8 == 0 ? pick(1, 5) : pick(1, 2 + w.pad_left);
    w.pad_right = pick(-1, 2);
    w.kernel_h = pick(1, 5);
    w.stride_w = 2;
    w.stride_h = pick(1, 3);
    // Mostly pads below the kernel (a pad of the kernel's size or more makes
    // windows without input taps, which every -s2- kernel declines).
    w.pad_top = g() % 10 == 0 ? w.kernel_h : pick(0, w.kernel_h - 1);
    w.pad_bottom = pick(-1, w.kernel_h - 1);
    w.ceil_mode = g() % 3 == 0;
    w.truncated_count = w.pad_right < 0 || w.pad_bottom < 0;
    if (w.truncated_count) w.ceil_mode = false;
    c.p.pad_value = static_cast<PadValue>(g() % 3);
    c.p.empty_max_is_zero = g() % 2;
    c.x_layout = g() % 4 == 0 ? 2 : g() % 3 == 0 ? 3 : 0;
    c.y_layout = g() % 4 == 0 ? 2 : g() % 4 == 0 ? 3 : 0;
    c.values = static_cast<int>(g() % 3);
    c.x_at_page_end = g() % 4 == 0;
    if (!check_case(c, seed, i, st)) break;
  }
  std::printf("stride 2 column maxima: seed %u, %lld cases\n", seed,
              static_cast<long long>(st.cases));
  variant_test::print_runs("x8 max pool", st.runs);
  expect_each_ran(pool2d_kernels(), st.runs, 600, name_has("-s2-"));
}

// Ceil-mode windows of the column-maxima kernels (-s2-cols-, -s2-avx512vbmi)
// whose last column tap lies past the right padding: that tap is no tap (the
// reference skips it), not the padding value; s8 with zero padding and codes
// near the lowest tells the two apart (a zero would win). k2s2 / k3s2p1 /
// k1s2 shapes, right pads 0-1, odd and even widths up to 140, 1-3 threads.
TEST(X8MaxPoolFast, StrideTwoColumnMaximaOverhangPastThePadding) {
  test::SettingsRestore restore;
  const uint32_t seed = 20261127;
  std::mt19937 g(seed);
  auto pick = test::picker(g);
  Stats st;
  for (int i = 0; i < 300; ++i) {
    Case c;
    c.shape = {pick(1, 2), pick(1, 5), pick(1, 9), pick(1, 140)};
    c.dtype = g() % 4 == 0 ? DType::u8 : DType::s8;
    c.p.mode = PoolMode::max;
    Window2d& w = c.p.window;
    w.pad_left = pick(0, 1);
    w.kernel_w = pick(1, 2 + w.pad_left);
    w.pad_right = pick(0, 1);
    w.kernel_h = pick(1, 4);
    w.stride_w = 2;
    w.stride_h = pick(1, 2);
    w.pad_top = pick(0, w.kernel_h - 1);
    w.pad_bottom = pick(0, w.kernel_h - 1);
    w.ceil_mode = true;
    c.p.pad_value = g() % 4 == 0 ? PadValue::neg_inf : PadValue::zero;
    c.values = 1;
    c.x_at_page_end = g() % 2 == 0;
    if (!check_case(c, seed, i, st)) break;
  }
  std::printf("stride 2 overhang: seed %u, %lld cases\n", seed, static_cast<long long>(st.cases));
  variant_test::print_runs("x8 max pool", st.runs);
  expect_each_ran(pool2d_kernels(), st.runs, 150, name_has("-s2-"));
}

// At the AVX2 cap (Zen 3 hosts) the race's stride-2 windows on NCHW run the
// column-maxima kernel, not the per-tap-offset x8-maxpool2d-s2-avx2.
TEST(X8MaxPoolFast, AvxTwoCapTakesColumnMaximaForStrideTwoWindows) {
  test::SettingsRestore restore;
  set_max_isa(Isa::avx2);
  if (max_isa() != Isa::avx2) GTEST_SKIP() << "AVX2 not reachable (host or NPUKIT_MAX_ISA)";
  if (impl() == Impl::reference) GTEST_SKIP() << "NPUKIT_IMPL=reference: no fast kernel runs";
  for (DType dt : {DType::u8, DType::s8}) {
    for (int k : {2, 3}) {
      Pool2dParams p;
      p.mode = PoolMode::max;
      p.window = test::window(k, k, 2, 2);
      if (k == 3) test::set_pads(p.window, 1, 1, 1, 1);
      Tensor x(dt, {1, 3, 56, 56}, Layout::nchw);
      Tensor y(dt, pool2d_output_shape(x.shape(), p), Layout::nchw);
      EXPECT_STREQ(pool2d_kernels().choose(Pool2dProblem{x.view(), y.view(), p}).name,
                   "x8-maxpool2d-s2-cols-avx2")
          << dtype_name(dt) << " k" << k;
    }
  }
}

// Channels in lanes (the x8-maxpool2d-nhwc register kernels): 8 to 600
// channels (8-15 the AVX-512 kernel only; partial last registers, the
// four-register steps), any window up
// to 5x5 with strides 1-3, pads up to the kernel, ceil-mode overhang, ORT's
// negative end pads, every padding value, dense and gapped NHWC x and y,
// batches, 1-3 threads: every accepting kernel against the reference.
TEST(X8MaxPoolFast, ChannelsLastWindows) {
  test::SettingsRestore restore;
  const uint32_t seed = 20261134;
  std::mt19937 g(seed);
  auto pick = test::picker(g);
  Stats st;
  for (int i = 0; i < 760; ++i) {  // 8-15 channels: a sixth of the AVX2 kernel's cases declined
    Case c;
    const int64_t C = g() % 4 == 0 ? pick(250, 600) : g() % 5 == 0 ? pick(8, 15) : pick(16, 100);
    c.shape = {pick(1, 3), C, g() % 6 == 0 ? 1 : pick(1, 12), g() % 6 == 0 ? 1 : pick(1, 12)};
    c.dtype = g() % 2 ? DType::u8 : DType::s8;
    c.p.mode = PoolMode::max;
    Window2d& w = c.p.window;
    w.kernel_h = pick(1, 5);
    w.kernel_w = pick(1, 5);
    w.stride_h = pick(1, 3);
    w.stride_w = pick(1, 3);
    if (g() % 3 != 0) {
      w.pad_top = pick(0, w.kernel_h);
      w.pad_bottom = pick(0, w.kernel_h);
      w.pad_left = pick(0, w.kernel_w);
      w.pad_right = pick(0, w.kernel_w);
    }
    w.ceil_mode = g() % 3 == 0;
    w.truncated_count = !w.ceil_mode && g() % 6 == 0;
    if (w.truncated_count && g() % 2) w.pad_bottom = w.pad_right = -1;
    c.p.pad_value = static_cast<PadValue>(g() % 3);
    c.p.empty_max_is_zero = g() % 2;
    c.x_layout = g() % 3 == 0 ? 4 : 1;
    c.y_layout = g() % 3 == 0 ? 4 : 1;
    c.values = static_cast<int>(g() % 3);
    if (!check_case(c, seed, i, st)) break;
  }
  std::printf("channels last: seed %u, %lld cases\n", seed, static_cast<long long>(st.cases));
  variant_test::print_runs("x8 max pool", st.runs);
  expect_each_ran(pool2d_kernels(), st.runs, 250, name_has("-nhwc-"));
}

// Windows entirely in padding next to real ones, with each padding value and
// empty-window rule, across several vectors of row outputs.
TEST(X8MaxPoolFast, WindowsEntirelyInPadding) {
  test::SettingsRestore restore;
  // Two kernels must run (the fast ones and the reference): none is fast under
  // NPUKIT_IMPL=reference.
  if (impl() == Impl::reference) GTEST_SKIP() << "NPUKIT_IMPL=reference: no fast kernel runs";
  const uint32_t seed = 31;
  std::mt19937 g(seed);
  Stats st;
  int index = 0;
  for (int pad_value = 0; pad_value < 3; ++pad_value)
    for (int empty_zero = 0; empty_zero < 2; ++empty_zero)
      for (int stride = 1; stride <= 2; ++stride)
        for (DType dt : {DType::u8, DType::s8}) {
          Case c;
          c.dtype = dt;
          c.shape = {2, 3, 5, 150};
          c.p.mode = PoolMode::max;
          c.p.window = test::window(2, 2, stride, stride);
          Window2d& w = c.p.window;
          w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = 4;  // >= the kernel
          c.p.window.ceil_mode = stride == 2;
          c.p.pad_value = static_cast<PadValue>(pad_value);
          c.p.empty_max_is_zero = empty_zero != 0;
          c.values = 1;
          c.y_layout = index % 3;
          EXPECT_TRUE(check_case(c, seed, index++, st));
        }
  EXPECT_GT(st.runs.per_kernel.size(), 1u);
}

// Through npukit::pool2d as the profiles set it up (ONNX Runtime's MLAS loop
// included): a fast kernel is chosen, at every ISA cap the result is the
// reference's, and Impl::reference runs the reference.
TEST(X8MaxPoolFast, DispatchUnderEveryProfileAndIsaCap) {
  test::SettingsRestore restore;
  const uint32_t seed = 4242;
  std::mt19937 g(seed);
  int compared = 0;
  const Profile profiles[] = {Profile::onnxruntime, Profile::pytorch, Profile::bm1684};
  for (int i = 0; i < 120; ++i) {
    Case c;
    c.dtype = i % 2 ? DType::u8 : DType::s8;
    c.shape = {1 + i % 2, 1 + i % 7, 3 + i % 13, 1 + static_cast<int64_t>(g() % 130)};
    c.p.mode = PoolMode::max;
    const int64_t k = 1 + i % 3, s = 1 + (i / 3) % 2;
    c.p.window = test::window(k, k, s, s);
    c.p.window.pad_top = c.p.window.pad_bottom = c.p.window.pad_left = c.p.window.pad_right =
        (i / 6) % 2 && c.p.window.kernel_h > 1 ? 1 : 0;
    c.p.window.ceil_mode = (i / 12) % 2;
    c.x_layout = i % 5 == 0 ? 1 : 0;
    c.values = i % 3;
    c.p.count_include_pad = true;
    apply_profile(c.p, profiles[i % 3]);
    Shape ys;
    try {
      ys = pool2d_output_shape(c.shape, c.p);
    } catch (const Error&) {
      continue;
    }
    std::vector<uint8_t> xbuf, refbuf, ybuf;
    const TensorView x = make_view(xbuf, c.dtype, c.shape, c.x_layout);
    fill(c, x, g);
    const TensorView want_view = make_view(refbuf, c.dtype, ys, 0);
    set_impl(Impl::reference);
    EXPECT_TRUE(pool2d_kernels().choose(Pool2dProblem{x, want_view, c.p}).reference);
    pool2d(x, want_view, c.p);
    set_impl(Impl::fast);
    EXPECT_FALSE(pool2d_kernels().choose(Pool2dProblem{x, want_view, c.p}).reference)
        << describe(c);
    const std::vector<uint8_t> want = logical_bytes(want_view);
    for (int isa = 0; isa <= static_cast<int>(host_isa()); ++isa) {
      set_max_isa(static_cast<Isa>(isa));
      set_num_threads(1 + (i + isa) % 3);
      const TensorView y = make_view(ybuf, c.dtype, ys, c.x_layout);
      pool2d(x, y, c.p);
      const std::string diff = first_difference(logical_bytes(y), want);
      EXPECT_TRUE(diff.empty()) << "max_isa " << isa_name(static_cast<Isa>(isa)) << ", seed "
                                << seed << ", case " << i << " profile "
                                << profile_name(profiles[i % 3]) << ": " << diff << "\n  "
                                << describe(c);
      if (!diff.empty()) return;
      ++compared;
    }
  }
  EXPECT_GT(compared, 200);
}

}  // namespace
}  // namespace test_x8_maxpool_fast
}  // namespace npukit
