// s8/u8 max pooling on NCHW planes, the kernels that take several planes per
// pass (x8-maxpool2d-same-*): every pool2d kernel that runs on this host and
// accepts the problem, against ref::max_pool2d_int, byte for byte, on seeded
// random same-size stride-1 windows: planes 1x1 to 20x20 (1-wide images,
// one-row planes), kernels 1-5 with dilation 1-3 and pads split at random (some
// without a tap on the output's own position, which the kernel declines),
// channel counts that are not multiples of 16/32/64, batches 1-3, NCHW dense or
// with gaps between planes and images, every padding value, codes at the
// extremes (-128/127, 0/255), 1-3 threads, the AVX-512 kernel with and without
// its VBMI column pass; then streams of many planes (the
// group cut, the partial last group, the first and last groups whose taps
// reach outside x), through the public API under every ISA cap and
// Impl::reference. Buffers are exactly the tensors' spans, so the sanitizer
// build sees any read past them. A failure prints seed, case and configuration.
#include <map>
#include <sstream>

#include "ops/cpu/pool2d_plan.hpp"
#include "ops/cpu/x8-maxpool2d-same.hpp"
#include "unit/test_util.hpp"
#include "unit/variant_test_util.hpp"

namespace npukit {
namespace test_x8_maxpool_nchw_fast {
namespace {

using cpu::Pool2dProblem;

struct Case {
  Shape shape;
  DType dtype = DType::u8;
  Pool2dParams p;
  int x_layout = 0, y_layout = 0;  // 0 dense NCHW, 1 gaps between planes, 2 gaps between images
  int values = 0;                  // 0 full range, 1 extremes only, 2 near the lowest code
};

std::string describe(const Case& c) {
  const Window2d& w = c.p.window;
  std::ostringstream s;
  s << dtype_name(c.dtype) << " x" << shape_text(c.shape) << " k" << w.kernel_h << "x" << w.kernel_w
    << " d" << w.dilation_h << "x" << w.dilation_w << " pads(" << w.pad_top << "," << w.pad_bottom
    << "," << w.pad_left << "," << w.pad_right << ")" << (w.ceil_mode ? " ceil" : "")
    << " pad=" << pad_value_name(c.p.pad_value) << " x_layout=" << c.x_layout
    << " y_layout=" << c.y_layout << " values=" << c.values;
  return s.str();
}

// A view over a buffer exactly its span long, `poison` in the gaps.
TensorView make_view(std::vector<uint8_t>& buf, DType dt, const Shape& s, int layout) {
  const int64_t C = s[1], HW = s[2] * s[3];
  const int64_t plane = layout == 1 ? HW + 5 : HW;
  const int64_t image = plane * C + (layout == 2 ? 11 : 0);
  const Shape st = {image, plane, s[3], 1};
  const int64_t span = (s[0] - 1) * image + (C - 1) * plane + HW;
  buf.assign(static_cast<size_t>(span), 0xa5);
  return TensorView(buf.data(), dt, s, st);
}

void fill(const Case& c, const TensorView& x, std::mt19937& g) {
  static const int kExtremes[] = {0, 255, 127, 128};  // as s8: -128, 127, -1, 0
  for (int64_t n = 0; n < x.dim(0); ++n)
    for (int64_t ch = 0; ch < x.dim(1); ++ch)
      for (int64_t h = 0; h < x.dim(2); ++h)
        for (int64_t w = 0; w < x.dim(3); ++w) {
          int v = static_cast<int>(g() % 256);
          if (c.values == 1) v = kExtremes[g() % 4];
          if (c.values == 2) v = static_cast<int>(g() % 3);  // lowest code and the two above
          if (c.dtype == DType::u8) x.at<uint8_t>(n, ch, h, w) = static_cast<uint8_t>(v);
          if (c.dtype == DType::s8) x.at<int8_t>(n, ch, h, w) = static_cast<int8_t>(v - 128);
        }
}

std::vector<uint8_t> logical_bytes(const TensorView& y) {
  std::vector<uint8_t> out;
  for (int64_t n = 0; n < y.dim(0); ++n)
    for (int64_t c = 0; c < y.dim(1); ++c)
      for (int64_t h = 0; h < y.dim(2); ++h)
        for (int64_t w = 0; w < y.dim(3); ++w)
          out.push_back(static_cast<const uint8_t*>(
              y.raw())[n * y.stride(0) + c * y.stride(1) + h * y.stride(2) + w]);
  return out;
}

// Bytes of buf outside y's elements still hold the poison.
bool gaps_untouched(const std::vector<uint8_t>& buf, const TensorView& y) {
  std::vector<bool> mine(buf.size(), false);
  for (int64_t n = 0; n < y.dim(0); ++n)
    for (int64_t c = 0; c < y.dim(1); ++c)
      for (int64_t i = 0; i < y.dim(2) * y.dim(3); ++i)
        mine[static_cast<size_t>(n * y.stride(0) + c * y.stride(1) + i)] = true;
  for (size_t i = 0; i < buf.size(); ++i)
    if (!mine[i] && buf[i] != 0xa5) return false;
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

void reference(const TensorView& x, const TensorView& y, const Pool2dParams& p) {
  if (x.dtype() == DType::s8) return ref::max_pool2d_int<int8_t>(x, y, p);
  ref::max_pool2d_int<uint8_t>(x, y, p);
}

bool is_same_kernel(const std::string& name) {
  return name.find("x8-maxpool2d-same-") == 0;
}

// Every runnable kernel accepting the case against the reference (the list's
// loop, tests/unit/variant_test_util.hpp), then the AVX-512 same-size kernel
// again without its VBMI column pass (counted as "<name> without VBMI");
// false after a mismatch.
bool check_case(const Case& c, uint32_t seed, int index, variant_test::Runs& runs) {
  const Shape ys = pool2d_output_shape(c.shape, c.p);
  std::mt19937 g(seed * 7919u + static_cast<uint32_t>(index));
  std::vector<uint8_t> xbuf, wantbuf, ybuf;
  const TensorView x = make_view(xbuf, c.dtype, c.shape, c.x_layout);
  fill(c, x, g);
  const TensorView want_view = make_view(wantbuf, c.dtype, ys, 0);
  set_num_threads(1);
  reference(x, want_view, c.p);
  const std::vector<uint8_t> want = logical_bytes(want_view);
  const auto fresh_y = [&] {
    return Pool2dProblem{x, make_view(ybuf, c.dtype, ys, c.y_layout), c.p};
  };
  const auto compare = [&](const Pool2dProblem& pr) -> std::string {
    const std::string diff = first_difference(logical_bytes(pr.y), want);
    if (!diff.empty()) return diff;
    return gaps_untouched(ybuf, pr.y) ? "" : "wrote outside the output view";
  };
  const std::string context =
      "seed " + std::to_string(seed) + ", case " + std::to_string(index) + "\n  " + describe(c);
  variant_test::Options opt;
  opt.threads = 1 + index % 3;
  if (!variant_test::run_every_variant(pool2d_kernels(), fresh_y, compare, context, runs, opt))
    return false;
  const std::string same512 = "x8-maxpool2d-same-avx512";
  variant_test::Runs plain;
  opt.only = same512;
  cpu::x8_same_allow_vbmi(false);
  const bool ok = variant_test::run_every_variant(pool2d_kernels(), fresh_y, compare,
                                                  context + " (without VBMI)", plain, opt);
  cpu::x8_same_allow_vbmi(true);
  runs.per_kernel[same512 + " without VBMI"] += plain.of(same512);
  return ok;
}

// A same-size stride-1 window (pads total the dilated kernel minus one).
Case same_size_case(std::mt19937& g, const Shape& shape) {
  auto pick = test::picker(g);
  Case c;
  c.shape = shape;
  c.dtype = g() % 2 ? DType::u8 : DType::s8;
  c.p.mode = PoolMode::max;
  Window2d& w = c.p.window;
  w.kernel_h = g() % 3 == 0 ? 3 : pick(1, 5);
  w.kernel_w = g() % 3 == 0 ? 3 : pick(1, 5);
  w.dilation_h = g() % 5 == 0 ? pick(2, 3) : 1;
  w.dilation_w = g() % 5 == 0 ? pick(2, 3) : 1;
  const int64_t eh = (w.kernel_h - 1) * w.dilation_h, ew = (w.kernel_w - 1) * w.dilation_w;
  // Mostly pads on a multiple of the dilation (a tap on the output's own
  // position); the others must be declined and still match elsewhere.
  w.pad_top = g() % 6 == 0 ? pick(0, eh) : pick(0, w.kernel_h - 1) * w.dilation_h;
  w.pad_bottom = eh - w.pad_top;
  w.pad_left = g() % 6 == 0 ? pick(0, ew) : pick(0, w.kernel_w - 1) * w.dilation_w;
  w.pad_right = ew - w.pad_left;
  w.ceil_mode = g() % 2;
  c.p.pad_value = static_cast<PadValue>(g() % 3);
  c.p.empty_max_is_zero = g() % 2;
  // ONNX Runtime's MLAS loop (integer max ignores it) has no dilation.
  const bool dilated = w.dilation_h > 1 || w.dilation_w > 1;
  c.p.loop = !dilated && g() % 2 ? PoolLoop::mlas : PoolLoop::taps;
  c.x_layout = g() % 4 == 0 ? 1 : g() % 5 == 0 ? 2 : 0;
  c.y_layout = g() % 4 == 0 ? 1 : g() % 5 == 0 ? 2 : 0;
  c.values = static_cast<int>(g() % 3);
  return c;
}

void print_runs(const char* what, uint32_t seed, int cases, const variant_test::Runs& runs) {
  std::printf("%s: seed %u, %d cases\n", what, seed, cases);
  variant_test::print_runs(what, runs);
}

TEST(X8MaxPoolNchwFast, SameSizeWindowsOnSmallPlanes) {
  test::SettingsRestore restore;
  const uint32_t seed = 20261201;
  std::mt19937 g(seed);
  auto pick = test::picker(g);
  variant_test::Runs runs;
  int cases = 0;
  for (int i = 0; i < 700; ++i, ++cases) {
    const int64_t H = g() % 8 == 0 ? 1 : pick(1, 20), W = g() % 8 == 0 ? 1 : pick(1, 20);
    const int64_t C = g() % 4 == 0 ? pick(60, 140) : pick(1, 19);
    if (!check_case(same_size_case(g, {pick(1, 3), C, H, W}), seed, i, runs)) break;
  }
  print_runs("same-size windows on small planes", seed, cases, runs);
  for (const auto& v : pool2d_kernels().variants)
    if (is_same_kernel(v.name) && KernelList<Pool2dProblem>::runnable(v)) {
      EXPECT_GT(runs.of(v.name), 450) << v.name;
      if (std::string(v.name) == "x8-maxpool2d-same-avx512") {
        EXPECT_GT(runs.of(std::string(v.name) + " without VBMI"), 450) << v.name;
      }
    }
}

// Many planes: several groups per thread, the last one partial, planes larger
// than a vector, odd plane sizes whose mask period spans many planes.
TEST(X8MaxPoolNchwFast, StreamsOfManyPlanes) {
  test::SettingsRestore restore;
  const uint32_t seed = 20261202;
  std::mt19937 g(seed);
  const Shape shapes[] = {{1, 512, 14, 14},  {2, 97, 7, 7},  {1, 33, 56, 56}, {3, 41, 13, 13},
                          {1, 300, 1, 9},    {1, 70, 9, 1},  {2, 5, 28, 28},  {1, 1000, 3, 3},
                          {1, 20, 112, 112}, {1, 129, 5, 17}};
  // 1x20x112x112 (250 KB) is the one shape above the kernels' 128 KB
  // threshold for splitting the work between threads.
  variant_test::Runs runs;
  int cases = 0;
  for (int i = 0; i < 60; ++i, ++cases) {
    Case c = same_size_case(g, shapes[i % 10]);
    if (i % 3 == 0) {  // the race's window
      c.p.window = Window2d{};
      c.p.window.kernel_h = c.p.window.kernel_w = 3;
      c.p.window.pad_top = c.p.window.pad_bottom = c.p.window.pad_left = c.p.window.pad_right = 1;
    }
    if (!check_case(c, seed, i, runs)) break;
  }
  print_runs("streams of many planes", seed, cases, runs);
  for (const auto& v : pool2d_kernels().variants)
    if (is_same_kernel(v.name) && KernelList<Pool2dProblem>::runnable(v)) {
      EXPECT_GT(runs.of(v.name), 40) << v.name;
    }
}

// The kernels keep their plan per geometry and thread: back-to-back calls of
// one shape and window that differ only in the padding value (which decides
// whether a window touching padding takes max with 0) or in the strides (a
// stream of planes or one group per plane) must not reuse the other's plan.
TEST(X8MaxPoolNchwFast, KeptPlanFollowsPaddingValueAndStrides) {
  test::SettingsRestore restore;
  const uint32_t seed = 20261203;
  variant_test::Runs runs;
  int cases = 0;
  const PadValue pads[] = {PadValue::zero, PadValue::neg_inf, PadValue::zero};
  for (int i = 0; i < 12; ++i, ++cases) {
    Case c;
    c.shape = {1, 96, 14, 14};
    c.dtype = DType::s8;
    c.p.mode = PoolMode::max;
    c.p.window.kernel_h = c.p.window.kernel_w = 3;
    c.p.window.pad_top = c.p.window.pad_bottom = c.p.window.pad_left = c.p.window.pad_right = 1;
    c.p.pad_value = pads[i % 3];
    c.x_layout = c.y_layout = i / 3 % 2;  // dense, then gaps between planes
    c.values = 2;  // the lowest codes: padding with zero wins every edge window
    if (!check_case(c, seed, i, runs)) break;
  }
  print_runs("kept plan", seed, cases, runs);
  for (const auto& v : pool2d_kernels().variants)
    if (is_same_kernel(v.name) && KernelList<Pool2dProblem>::runnable(v)) {
      EXPECT_GE(runs.of(v.name), 12) << v.name;
    }
}

// The public entry under each ISA cap and the reference policy: the kernel
// the list picks gives the reference's bytes (the list is walked, not one
// kernel called).
TEST(X8MaxPoolNchwFast, PublicEntryUnderEveryCapAndThreadCount) {
  test::SettingsRestore restore;
  const uint32_t seed = 20261203;
  std::mt19937 g(seed);
  int compared = 0;
  for (int i = 0; i < 40; ++i) {
    const Shape shape = {1 + i % 2, 64 + i, 14, 14};
    Case c = same_size_case(g, shape);
    c.x_layout = c.y_layout = 0;
    Tensor x(c.dtype, shape);
    fill(c, x.view(), g);
    Tensor want(c.dtype, pool2d_output_shape(shape, c.p));
    set_impl(Impl::reference);
    pool2d(x.view(), want.view(), c.p);
    set_impl(Impl::fast);
    for (Isa cap : {Isa::avx512, Isa::avx2, Isa::portable}) {
      if (cap > host_isa()) continue;
      set_max_isa(cap);
      for (int threads = 1; threads <= 3; ++threads) {
        set_num_threads(threads);
        Tensor y(c.dtype, want.shape());
        pool2d(x.view(), y.view(), c.p);
        ASSERT_EQ(logical_bytes(y.view()), logical_bytes(want.view()))
            << "seed " << seed << ", case " << i << ", cap " << isa_name(cap) << ", threads "
            << threads << "\n  " << describe(c);
        ++compared;
      }
    }
    set_max_isa(host_isa());
  }
  std::printf("public entry: seed %u, %d runs compared\n", seed, compared);
  EXPECT_GE(compared, 40 * 3);
}

// Global max on NCHW planes (x8-globalmax-*, whose small-plane path takes a
// vector of planes per pass): planes of 1 to 400 codes (below, inside and past
// the 16/32..256 range of that path, 7x7 among them), channel counts around
// the 32/64 planes of a pass, batches, dense and gapped planes, extremes.
TEST(X8MaxPoolNchwFast, GlobalMaxOverManyPlanes) {
  test::SettingsRestore restore;
  const uint32_t seed = 20261204;
  std::mt19937 g(seed);
  auto pick = test::picker(g);
  variant_test::Runs runs;
  int cases = 0;
  for (int i = 0; i < 300; ++i, ++cases) {
    Case c;
    const int64_t H = i % 5 == 0 ? 7 : pick(1, 20), W = i % 5 == 0 ? 7 : pick(1, 20);
    const int64_t C = g() % 3 == 0 ? pick(1, 9) : pick(30, 200);
    c.shape = {pick(1, 3), C, H, W};
    c.dtype = g() % 2 ? DType::u8 : DType::s8;
    c.p.mode = PoolMode::max;
    c.p.window.kernel_h = H;
    c.p.window.kernel_w = W;
    c.p.pad_value = static_cast<PadValue>(g() % 3);
    c.x_layout = static_cast<int>(g() % 3);
    c.y_layout = static_cast<int>(g() % 3);
    c.values = static_cast<int>(g() % 3);
    if (!check_case(c, seed, i, runs)) break;
  }
  print_runs("global max", seed, cases, runs);
  for (const auto& v : pool2d_kernels().variants)
    if (std::string(v.name).find("x8-globalmax-") == 0 && KernelList<Pool2dProblem>::runnable(v)) {
      EXPECT_GT(runs.of(v.name), 250) << v.name;
    }
}

// What the kernel declines, with the reason.
TEST(X8MaxPoolNchwFast, DeclinesWhatItDoesNotTake) {
  test::SettingsRestore restore;
  const KernelVariant<Pool2dProblem>* same = nullptr;
  for (const auto& v : pool2d_kernels().variants)
    if (std::string(v.name) == "x8-maxpool2d-same-portable") same = &v;
  ASSERT_NE(same, nullptr);
  Tensor x(DType::u8, {1, 4, 14, 14});
  auto declines = [&](const Window2d& w, const Shape& ys) {
    Tensor y(DType::u8, ys);
    Pool2dParams p;
    p.mode = PoolMode::max;
    p.window = w;
    const char* why = same->declines(Pool2dProblem{x.view(), y.view(), p});
    return std::string(why ? why : "");
  };
  Window2d w = test::window(3, 3);
  test::set_pads(w, 1, 1, 1, 1);
  EXPECT_EQ(declines(w, {1, 4, 14, 14}), "");
  Window2d s2 = test::window(3, 3, 2, 2);
  test::set_pads(s2, 1, 1, 1, 1);
  EXPECT_EQ(declines(s2, {1, 4, 7, 7}), "output size differs from the input's");
  Window2d odd = test::window(3, 3);
  odd.dilation_w = 2;
  test::set_pads(odd, 1, 1, 1, 3);
  EXPECT_NE(declines(odd, {1, 4, 14, 14}).find("no tap at the output's own position"),
            std::string::npos);
}

}  // namespace
}  // namespace test_x8_maxpool_nchw_fast
}  // namespace npukit
