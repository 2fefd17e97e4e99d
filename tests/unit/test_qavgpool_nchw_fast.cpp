// The NCHW 16-bit kernel's integer final step and stride-2 row loops
// (x8-qavgpool-u16-nchw-avx512: idiv32, idiv32_uniform, s2_interior) against
// the reference, bit for bit: stride_w 2 with 1 to 4 window columns and any
// window height (unrolled 2 and 3, and the runtime loop), interior rows with
// plain loads (x placed so that its last byte is the last byte before an
// unreadable page: an over-read crashes the test), whole-register stores into
// later rows (y contiguous) or masked ones (y with a row pitch, whose gap
// bytes must stay untouched), the profiles whose last step is an integer
// division (ONNX Runtime with x_scale == y_scale == 2^j, TFLite, MiCo and
// every rounding rule of int_mean), zero points that make negative numerators
// and ties, windows of up to 257 taps (the 16-bit numerator bound decides
// between idiv32 and the float step), u8 and s8, 1 to 3 threads, the ISA caps
// and Impl::reference. Every variant that accepts a case runs; a failure
// prints the seed and the configuration. The NHWC kernel's per-pixel integer
// step is checked the same way with a channel pitch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "npukit/npukit.hpp"
#include "ops/cpu/qavgpool.hpp"
#include "ops/quantized_common.hpp"
#include "qpool_test_util.hpp"
#include "unit/guarded_bytes.hpp"
#include "variant_test_util.hpp"

namespace npukit {
namespace test_qavgpool_nchw_fast {
namespace {

constexpr uint32_t kSeed = 20261140;

using qpool_test::bytes_nchw;
using qpool_test::first_difference;
using qpool_test::Restore;
using test::GuardedBytes;

std::string describe(const QLinearAvgPoolParams& p, Profile profile, DType t, const Shape& x,
                     int64_t y_extra) {
  std::ostringstream s;
  const Window2d& w = p.window;
  s << "profile=" << profile_name(profile) << " dtype=" << dtype_name(t) << " x=" << shape_text(x)
    << " y row pitch extra=" << y_extra << " k=" << w.kernel_h << "x" << w.kernel_w
    << " s=" << w.stride_h << "x" << w.stride_w << " pads(t,b,l,r)=" << w.pad_top << ","
    << w.pad_bottom << "," << w.pad_left << "," << w.pad_right << " ceil=" << w.ceil_mode
    << " include_pad=" << p.count_include_pad << " x_scale=" << p.x_scale
    << " x_zp=" << p.x_zero_point << " y_scale=" << p.y_scale << " y_zp=" << p.y_zero_point
    << " arith=" << qavg_arith_name(p.arith) << " rounding=" << rounding_name(p.rounding);
  return s.str();
}

// Codes: uniform, only the extremes, or near the zero point (ties).
void fill_codes(std::mt19937& g, uint8_t* d, int64_t n, DType t, int32_t zp) {
  const detail::CodeRange r = detail::code_range(t);
  const int mode = static_cast<int>(g() % 3);
  for (int64_t i = 0; i < n; ++i) {
    int v = r.lo + static_cast<int>(g() % 256);
    if (mode == 0) v = g() % 2 ? r.lo : r.hi;
    if (mode == 1) v = std::clamp(zp + static_cast<int>(g() % 5) - 2, r.lo, r.hi);
    d[i] = static_cast<uint8_t>(v);
  }
}

struct Case {
  Profile profile = Profile::onnxruntime;
  DType t = DType::u8;
  Shape xs;
  QLinearAvgPoolParams p;
};

// Stride-2 rows (or any stride with a large window), integer final steps.
bool make_case(std::mt19937& g, int attempt, Case& c) {
  auto pick = test::picker(g);
  const Profile profiles[] = {Profile::onnxruntime, Profile::tflite, Profile::mico};
  c.profile = profiles[attempt % 3];
  c.t = g() % 2 ? DType::u8 : DType::s8;
  QLinearAvgPoolParams& p = c.p;
  p = QLinearAvgPoolParams{};
  Window2d& w = p.window;
  const bool large = attempt % 10 == 9;  // near the 16-bit bounds
  w.kernel_w = large ? pick(1, 4) : pick(1, 4);
  w.kernel_h = large ? pick(30, 257 / w.kernel_w) : pick(1, 5);
  w.stride_w = large && g() % 2 ? 1 : 2;
  w.stride_h = pick(1, 3);
  w.pad_top = pick(0, std::min<int64_t>(w.kernel_h - 1, 3));
  w.pad_bottom = pick(0, std::min<int64_t>(w.kernel_h - 1, 3));
  w.pad_left = g() % 2 ? 0 : pick(0, w.kernel_w - 1);
  w.pad_right = g() % 2 ? 0 : pick(0, w.kernel_w - 1);
  w.ceil_mode = g() % 3 == 0;
  p.count_include_pad = g() % 2;
  const int64_t H = large ? w.kernel_h + pick(0, 6) : pick(1, 12);
  // Widths around whole 32-output blocks, exact fits (2*OW == W) and narrow.
  const int64_t blocks = pick(1, 3);
  const int64_t W = g() % 2 ? 64 * blocks + pick(-3, 2) : pick(1, 150);
  c.xs = Shape{pick(1, 3), pick(1, 5), H, W};
  const detail::CodeRange r = detail::code_range(c.t);
  p.x_scale = std::ldexp(1.0f, static_cast<int>(pick(-10, 10)));
  p.y_scale = p.x_scale;
  p.x_zero_point = g() % 3 == 0 ? 0 : static_cast<int32_t>(pick(r.lo, r.hi));
  p.y_zero_point = g() % 3 == 0 ? 0 : static_cast<int32_t>(pick(r.lo, r.hi));
  apply_profile(p, c.profile);
  if (c.profile != Profile::onnxruntime) {
    if (c.profile == Profile::mico) p.x_zero_point = 0;
    p.y_zero_point = p.x_zero_point;
    if (g() % 2) p.rounding = all_roundings()[g() % all_roundings().size()];
  }
  try {
    (void)qlinear_average_pool_output_shape(c.xs, p);
  } catch (const Error&) {
    return false;
  }
  return true;
}

TEST(QAvgPoolNchwFast, IntegerFinalStepsOnStrideTwoRowsEqualTheReference) {
  Restore restore;
  std::mt19937 g(kSeed);
  const auto& list = cpu::qlinear_average_pool_kernels();
  std::map<std::string, int> runs;
  int guarded = 0;
  for (int attempt = 0; attempt < 1500; ++attempt) {
    Case c;
    if (!make_case(g, attempt, c)) continue;
    const Shape ys = qlinear_average_pool_output_shape(c.xs, c.p);
    const int64_t xn = shape_numel(c.xs);
    GuardedBytes xb(static_cast<size_t>(xn));
    fill_codes(g, xb.data(), xn, c.t, c.p.x_zero_point);
    const TensorView x = TensorView::contiguous(xb.data(), c.t, c.xs);
    Tensor want(c.t, ys);
    try {
      ref::qlinear_average_pool(x, want, c.p);
    } catch (const Error&) {
      continue;
    }
    ++guarded;
    const std::vector<uint8_t> wb = bytes_nchw(want);
    set_num_threads(1 + attempt % 3);
    // y contiguous (whole-register stores) or with a row pitch whose gaps and
    // tail must keep their canary bytes.
    const int64_t y_extra = attempt % 4 == 0 ? 1 + attempt % 7 : 0;
    const int64_t N = ys[0], C = ys[1], OH = ys[2], OW = ys[3], pitch = OW + y_extra;
    std::vector<uint8_t> yb(static_cast<size_t>(N * C * OH * pitch + 64), 0xa5);
    const TensorView y(yb.data(), c.t, ys, {C * OH * pitch, OH * pitch, pitch, 1});
    cpu::QAvgPoolProblem prob{x, y, &c.p, cpu::make_qavg_plan(x, y, c.p)};
    for (const auto& v : list.variants) {
      if (v.reference || !list.runnable(v) || v.declines(prob)) continue;
      std::fill(yb.begin(), yb.end(), uint8_t{0xa5});
      v.run(prob);
      ASSERT_EQ(bytes_nchw(y), wb)
          << v.name << " seed " << kSeed << " attempt " << attempt << " threads " << num_threads()
          << "\n  " << describe(c.p, c.profile, c.t, c.xs, y_extra) << "\n  "
          << first_difference(bytes_nchw(y), wb);
      for (int64_t row = 0; row < N * C * OH; ++row)
        for (int64_t i = OW; i < pitch; ++i)
          ASSERT_EQ(yb[static_cast<size_t>(row * pitch + i)], 0xa5)
              << v.name << " wrote into y's row gap, attempt " << attempt;
      for (size_t i = static_cast<size_t>(N * C * OH * pitch); i < yb.size(); ++i)
        ASSERT_EQ(yb[i], 0xa5) << v.name << " wrote past y, attempt " << attempt;
      ++runs[v.name];
    }
  }
  for (const auto& [name, n] : runs) std::printf("[ qavg-nchw ] ran %s: %d\n", name.c_str(), n);
  EXPECT_GT(guarded, 1000);
  for (const auto& v : list.variants) {
    if (!v.reference && list.runnable(v) && std::string(v.name) == "x8-qavgpool-u16-nchw-avx512") {
      EXPECT_GT(runs[v.name], 800) << v.name;
    }
  }
}

// The AVX2 NCHW kernel's 16-bit integer final step (idiv16_uniform: row
// classes whose stored lanes share one divisor, e.g. windows inside the image
// or count_include_pad) and its float fallback (classes with border columns
// under valid-count divisors), stride_w 1 and 2, small windows with padding,
// 1-wide to 2-block-wide rows, x ending before an unreadable page, 1 to 3
// threads, through run_every_variant.
TEST(QAvgPoolNchwFast, Avx2IntegerStepOnStrideOneAndTwoRowsEqualsTheReference) {
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "needs AVX2 (host or NPUKIT_MAX_ISA below avx2)";
  Restore restore;
  const uint32_t seed = kSeed + 3;
  std::mt19937 g(seed);
  const auto& list = cpu::qlinear_average_pool_kernels();
  variant_test::Runs runs;
  variant_test::Options opt;
  opt.only = "x8-qavgpool-u16-nchw-avx2";
  opt.threads = 1;
  for (int attempt = 0; attempt < 1200; ++attempt) {
    Case c;
    if (!make_case(g, attempt, c)) continue;
    Window2d& w = c.p.window;
    w.stride_w = 1 + attempt % 2;
    w.kernel_w = 1 + static_cast<int64_t>(g() % 4);
    w.kernel_h = std::min<int64_t>(w.kernel_h, 4);
    w.pad_top = std::min(w.pad_top, w.kernel_h - 1);
    w.pad_bottom = std::min(w.pad_bottom, w.kernel_h - 1);
    w.pad_left = g() % 2 ? 0 : static_cast<int64_t>(g() % static_cast<uint64_t>(w.kernel_w));
    w.pad_right = g() % 2 ? 0 : static_cast<int64_t>(g() % static_cast<uint64_t>(w.kernel_w));
    const int64_t widths[] = {1, 2, 7, 15, 16, 17, 31, 33, 56, 65};
    c.xs = Shape{c.xs[0], c.xs[1], std::min<int64_t>(c.xs[2], 12), widths[g() % 10]};
    Shape ys;
    try {
      ys = qlinear_average_pool_output_shape(c.xs, c.p);
    } catch (const Error&) {
      continue;
    }
    const int64_t xn = shape_numel(c.xs);
    GuardedBytes xb(static_cast<size_t>(xn));
    fill_codes(g, xb.data(), xn, c.t, c.p.x_zero_point);
    const TensorView x = TensorView::contiguous(xb.data(), c.t, c.xs);
    Tensor want(c.t, ys);
    try {
      ref::qlinear_average_pool(x, want, c.p);
    } catch (const Error&) {
      continue;
    }
    const std::vector<uint8_t> wb = bytes_nchw(want);
    Tensor y(c.t, ys);
    const bool ok = variant_test::run_every_variant(
        list,
        [&] {
          std::memset(y.view().raw(), 0xa5, static_cast<size_t>(y.numel()));
          return cpu::QAvgPoolProblem{x, y.view(), &c.p, cpu::make_qavg_plan(x, y.view(), c.p)};
        },
        [&](const cpu::QAvgPoolProblem&) { return first_difference(bytes_nchw(y), wb); },
        "seed " + std::to_string(seed) + " attempt " + std::to_string(attempt) + "\n  " +
            describe(c.p, c.profile, c.t, c.xs, 0),
        runs, opt);
    if (!ok) break;
  }
  std::printf("[ qavg-nchw-avx2 ] ran %s: %lld\n", opt.only.c_str(),
              static_cast<long long>(runs.of(opt.only)));
  EXPECT_GT(runs.of(opt.only), 600);
}

// NHWC with the per-pixel integer final step (x8-qavgpool-u16-nhwc-avx512):
// channel counts around 32 and 64, y with a channel pitch whose gap bytes and
// tail keep their canaries (a whole-register store past a pixel's channels
// would land there).
TEST(QAvgPoolNchwFast, ChannelsLastIntegerFinalStepKeepsOutsideBytes) {
  Restore restore;
  const uint32_t seed = kSeed + 2;
  std::mt19937 g(seed);
  const auto& list = cpu::qlinear_average_pool_kernels();
  std::map<std::string, int> runs;
  for (int attempt = 0; attempt < 400; ++attempt) {
    Case c;
    if (!make_case(g, attempt, c)) continue;
    const int64_t C = std::vector<int64_t>{31, 32, 33, 63, 64, 65, 100}[g() % 7];
    c.xs = Shape{c.xs[0], C, std::min<int64_t>(c.xs[2], 9), std::min<int64_t>(c.xs[3], 20)};
    Shape ys;
    try {
      ys = qlinear_average_pool_output_shape(c.xs, c.p);
    } catch (const Error&) {
      continue;
    }
    Tensor x(c.t, c.xs, Layout::nhwc);
    fill_codes(g, static_cast<uint8_t*>(x.view().raw()), x.numel(), c.t, c.p.x_zero_point);
    Tensor want(c.t, ys);
    try {
      ref::qlinear_average_pool(x, want, c.p);
    } catch (const Error&) {
      continue;
    }
    const std::vector<uint8_t> wb = bytes_nchw(want);
    set_num_threads(1 + attempt % 3);
    const int64_t extra = attempt % 2 ? 1 + attempt % 5 : 0;
    const int64_t N = ys[0], OH = ys[2], OW = ys[3], pitch = C + extra;
    std::vector<uint8_t> yb(static_cast<size_t>(N * OH * OW * pitch + 64), 0xa5);
    const TensorView y(yb.data(), c.t, ys, {OH * OW * pitch, 1, OW * pitch, pitch});
    cpu::QAvgPoolProblem prob{x, y, &c.p, cpu::make_qavg_plan(x, y, c.p)};
    for (const auto& v : list.variants) {
      if (v.reference || !list.runnable(v) || v.declines(prob)) continue;
      std::fill(yb.begin(), yb.end(), uint8_t{0xa5});
      v.run(prob);
      ASSERT_EQ(bytes_nchw(y), wb)
          << v.name << " seed " << seed << " attempt " << attempt << " threads " << num_threads()
          << "\n  " << describe(c.p, c.profile, c.t, c.xs, extra) << "\n  "
          << first_difference(bytes_nchw(y), wb);
      for (int64_t px = 0; px < N * OH * OW; ++px)
        for (int64_t i = C; i < pitch; ++i)
          ASSERT_EQ(yb[static_cast<size_t>(px * pitch + i)], 0xa5)
              << v.name << " wrote into y's channel gap, attempt " << attempt;
      for (size_t i = static_cast<size_t>(N * OH * OW * pitch); i < yb.size(); ++i)
        ASSERT_EQ(yb[i], 0xa5) << v.name << " wrote past y, attempt " << attempt;
      ++runs[v.name];
    }
  }
  for (const auto& [name, n] : runs) std::printf("[ qavg-nhwc ] ran %s: %d\n", name.c_str(), n);
  for (const auto& v : list.variants) {
    if (!v.reference && list.runnable(v) && std::string(v.name) == "x8-qavgpool-u16-nhwc-avx512") {
      EXPECT_GT(runs[v.name], 200) << v.name;
    }
  }
}

// The public call under the ISA caps and Impl::reference on the issue #9
// shapes' geometry (scaled down), every profile with an integer last step.
TEST(QAvgPoolNchwFast, PublicCallEqualsReferenceUnderIsaCapsAndThreads) {
  Restore restore;
  const uint32_t seed = kSeed + 1;
  std::mt19937 g(seed);
  struct Geo {
    Shape x;
    int64_t k, s, pad;
  };
  const Geo geos[] = {{{1, 6, 112, 112}, 3, 2, 1},
                      {{1, 9, 56, 56}, 2, 2, 0},
                      {{2, 5, 56, 56}, 2, 2, 0},
                      {{1, 7, 14, 14}, 3, 1, 1},
                      {{1, 3, 57, 57}, 3, 2, 1}};
  std::vector<Isa> caps{Isa::portable};
  if (host_isa() >= Isa::avx2) caps.push_back(Isa::avx2);
  if (host_isa() >= Isa::avx512) caps.push_back(Isa::avx512);
  int checked = 0;
  for (const Geo& geo : geos)
    for (const Profile profile : {Profile::onnxruntime, Profile::tflite, Profile::mico})
      for (const DType t : {DType::u8, DType::s8})
        for (const bool include_pad : {false, true}) {
          QLinearAvgPoolParams p;
          Window2d& w = p.window;
          w.kernel_h = w.kernel_w = geo.k;
          w.stride_h = w.stride_w = geo.s;
          w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = geo.pad;
          p.count_include_pad = include_pad;
          p.x_scale = p.y_scale = 1.0f;
          const int32_t zp = profile == Profile::mico ? 0 : t == DType::s8 ? -7 : 130;
          p.x_zero_point = zp;
          p.y_zero_point = profile == Profile::onnxruntime ? zp / 2 : zp;
          apply_profile(p, profile);
          Tensor x(t, geo.x);
          fill_codes(g, static_cast<uint8_t*>(x.view().raw()), x.numel(), t, zp);
          const Shape ys = qlinear_average_pool_output_shape(geo.x, p);
          Tensor want(t, ys);
          ref::qlinear_average_pool(x, want, p);
          const std::vector<uint8_t> wb = bytes_nchw(want);
          for (const Isa cap : caps)
            for (const Impl impl : {Impl::fast, Impl::reference})
              for (int threads = 1; threads <= 3; ++threads) {
                set_max_isa(cap);
                set_impl(impl);
                set_num_threads(threads);
                Tensor y(t, ys);
                qlinear_average_pool(x, y, p);
                ASSERT_EQ(bytes_nchw(y), wb)
                    << "seed " << seed << " cap " << isa_name(cap) << " impl "
                    << (impl == Impl::fast ? "fast" : "reference") << " threads " << threads
                    << "\n  " << describe(p, profile, t, geo.x, 0) << "\n  "
                    << first_difference(bytes_nchw(y), wb);
                ++checked;
              }
          set_max_isa(host_isa());
          set_impl(Impl::fast);
        }
  EXPECT_GT(checked, 1000);
}

// x8-qavgpool-u16-nchw-avx2's direct path for 2x2 windows, stride 2, no
// padding (plane_2x2s2: pair sums straight from x, no row copy): even and odd
// H and W (the last row and column left out), widths around 16- and 32-byte
// loads, x ending right before an unreadable page (the last loads read a
// copy), y contiguous (whole 16-byte stores spill into later rows) or with a
// row pitch whose gap bytes must keep their canary, 1 to 3 threads.
TEST(QAvgPoolNchwFast, Avx2TwoByTwoStrideTwoFromXEqualsTheReference) {
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "needs AVX2 (host or NPUKIT_MAX_ISA below avx2)";
  Restore restore;
  const uint32_t seed = kSeed + 4;
  std::mt19937 g(seed);
  const auto& list = cpu::qlinear_average_pool_kernels();
  variant_test::Runs runs;
  variant_test::Options opt;
  opt.only = "x8-qavgpool-u16-nchw-avx2";
  opt.threads = 1;
  for (int attempt = 0; attempt < 600; ++attempt) {
    Case c;
    if (!make_case(g, attempt, c)) continue;
    Window2d& w = c.p.window;
    w.kernel_h = w.kernel_w = w.stride_h = w.stride_w = 2;
    w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = 0;
    const int64_t widths[] = {2, 3, 31, 32, 33, 34, 56, 57, 63, 64, 65, 96, 113};
    c.xs = Shape{c.xs[0], c.xs[1], 2 + static_cast<int64_t>(g() % 15), widths[g() % 13]};
    const Shape ys = qlinear_average_pool_output_shape(c.xs, c.p);
    const int64_t xn = shape_numel(c.xs);
    GuardedBytes xb(static_cast<size_t>(xn));
    fill_codes(g, xb.data(), xn, c.t, c.p.x_zero_point);
    const TensorView x = TensorView::contiguous(xb.data(), c.t, c.xs);
    Tensor want(c.t, ys);
    try {
      ref::qlinear_average_pool(x, want, c.p);
    } catch (const Error&) {
      continue;
    }
    const std::vector<uint8_t> wb = bytes_nchw(want);
    const int64_t pitch = ys[3] + (g() % 2 ? 0 : 1 + static_cast<int64_t>(g() % 5));
    std::vector<uint8_t> yb(static_cast<size_t>(ys[0] * ys[1] * ys[2] * pitch));
    const TensorView y(yb.data(), c.t, ys, {ys[1] * ys[2] * pitch, ys[2] * pitch, pitch, 1});
    const bool ok = variant_test::run_every_variant(
        list,
        [&] {
          std::fill(yb.begin(), yb.end(), uint8_t{0xa5});
          return cpu::QAvgPoolProblem{x, y, &c.p, cpu::make_qavg_plan(x, y, c.p)};
        },
        [&](const cpu::QAvgPoolProblem&) {
          std::string d = first_difference(bytes_nchw(y), wb);
          for (size_t i = 0; d.empty() && i < yb.size(); ++i)
            if (static_cast<int64_t>(i) % pitch >= ys[3] && yb[i] != 0xa5)
              d = "wrote byte " + std::to_string(i) + " of y's row-pitch gap";
          return d;
        },
        "seed " + std::to_string(seed) + " attempt " + std::to_string(attempt) + " y pitch " +
            std::to_string(pitch) + "\n  " + describe(c.p, c.profile, c.t, c.xs, 0),
        runs, opt);
    if (!ok) break;
  }
  std::printf("[ qavg-nchw-avx2 ] 2x2 stride 2 ran %s: %lld\n", opt.only.c_str(),
              static_cast<long long>(runs.of(opt.only)));
  EXPECT_GT(runs.of(opt.only), 300);
}

}  // namespace
}  // namespace test_qavgpool_nchw_fast
}  // namespace npukit
