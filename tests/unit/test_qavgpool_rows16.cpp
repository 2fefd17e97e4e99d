// x8-qavgpool-rows16-nchw-{avx512,avx2} (rows of at most 16 columns, the
// integer final steps) against the reference, bit for bit, through
// run_every_variant: random geometry around their limits (W and OW up to 16
// and just past, taps up to 7 columns away, ceil-mode overhang, windows
// entirely in padding, 1-wide images, odd channel counts, batch > 1, strides
// along H, x and y rows with a padded pitch whose gap bytes must stay
// untouched, x ending right before an unreadable page), zero points at the
// extremes, scale-1 ONNX Runtime (x_scale == y_scale == 2^j) and int_mean
// (TFLite, MiCo) under every rounding rule, u8 and s8, 1 to 3 threads; then
// the public call at every ISA cap and with the reference forced. A failure
// prints the seed and the configuration.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "guarded_bytes.hpp"
#include "npukit/npukit.hpp"
#include "ops/cpu/qavgpool.hpp"
#include "qpool_test_util.hpp"
#include "variant_test_util.hpp"

namespace npukit {
namespace test_qavgpool_rows16 {
namespace {

constexpr uint32_t kSeed = 20261127u + 16u;

struct Case {
  QLinearAvgPoolParams p;
  Profile profile = Profile::onnxruntime;
  DType t = DType::u8;
  Shape xs, ys;
  int64_t x_extra = 0, y_extra = 0;  // row pitch beyond W / OW
  std::shared_ptr<test::GuardedBytes> xmem;
  TensorView x;
  std::vector<uint8_t> want;  // the reference's codes, NCHW order

  std::string describe() const {
    std::ostringstream s;
    const Window2d& w = p.window;
    s << "profile=" << profile_name(profile) << " dtype=" << dtype_name(t)
      << " x=" << shape_text(xs) << " x pitch +" << x_extra << " y pitch +" << y_extra
      << " k=" << w.kernel_h << "x" << w.kernel_w << " s=" << w.stride_h << "x" << w.stride_w
      << " pads(t,b,l,r)=" << w.pad_top << "," << w.pad_bottom << "," << w.pad_left << ","
      << w.pad_right << " ceil=" << w.ceil_mode << " include_pad=" << p.count_include_pad
      << " scales=" << p.x_scale << "/" << p.y_scale << " zps=" << p.x_zero_point << "/"
      << p.y_zero_point << " rounding=" << rounding_name(p.rounding);
    return s.str();
  }
};

// Row-pitched NCHW strides of a shape.
std::vector<int64_t> pitched(const Shape& s, int64_t extra) {
  const int64_t pitch = s[3] + extra;
  return {s[1] * s[2] * pitch, s[2] * pitch, pitch, 1};
}

// A random case, or false when the draw is not a valid call. k3s1p1: the
// window of x8-qavgpool-flat3x3-nchw-avx512 (3x3, stride 1, pads 1) on
// planes of 1 to 20 rows, 20 to 70 channels (at least 64 planes in most
// draws), dense tensors in 3 draws of 4.
bool draw(std::mt19937& g, Case& c, bool k3s1p1 = false) {
  auto pick = test::picker(g);
  const int kind = static_cast<int>(g() % 4);  // 0-1 ONNX Runtime, 2 TFLite, 3 MiCo
  c.profile = kind < 2 ? Profile::onnxruntime : kind == 2 ? Profile::tflite : Profile::mico;
  c.t = g() % 2 ? DType::u8 : DType::s8;
  const int64_t W = g() % 8 == 0 ? pick(17, 18) : pick(1, 16);
  c.xs = Shape{pick(1, 3), k3s1p1 ? pick(20, 70) : 2 * pick(0, 4) + 1, pick(1, 20), W};
  QLinearAvgPoolParams& p = c.p;
  p = QLinearAvgPoolParams{};
  qpool_test::random_avg_window(g, 5, g() % 4 == 0 ? 9 : 5, 3, g() % 6 == 0 ? 2 : 1, p);
  const bool dense = k3s1p1 && g() % 4 != 0;
  if (k3s1p1) {
    Window2d& w = p.window;
    w.kernel_h = w.kernel_w = 3;
    w.stride_h = w.stride_w = 1;
    w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = 1;
  }
  qpool_test::random_zero_points(g, c.t, p);
  p.x_scale = p.y_scale = std::ldexp(1.0f, static_cast<int>(pick(-20, 20)));
  apply_profile(p, c.profile);
  if (c.profile != Profile::onnxruntime) {  // int_mean: same quantization in and out
    if (c.profile == Profile::mico) p.x_zero_point = 0;
    p.y_zero_point = p.x_zero_point;
    if (g() % 2) p.rounding = all_roundings()[g() % all_roundings().size()];
  }
  try {
    c.ys = qlinear_average_pool_output_shape(c.xs, p);
  } catch (const Error&) {
    return false;
  }
  c.x_extra = !dense && g() % 3 == 0 ? pick(1, 5) : 0;
  c.y_extra = !dense && g() % 3 == 0 ? pick(1, 5) : 0;
  const std::vector<int64_t> xst = pitched(c.xs, c.x_extra);
  const int64_t span =
      (c.xs[0] - 1) * xst[0] + (c.xs[1] - 1) * xst[1] + (c.xs[2] - 1) * xst[2] + c.xs[3];
  c.xmem = std::make_shared<test::GuardedBytes>(static_cast<size_t>(span));
  c.x = TensorView(c.xmem->data(), c.t, c.xs, xst);
  // Codes: uniform, only the extremes, or near the zero point (ties).
  const detail::CodeRange r = detail::code_range(c.t);
  const int mode = static_cast<int>(g() % 3);
  for (int64_t i = 0; i < span; ++i) {
    int v = r.lo + static_cast<int>(g() % 256);
    if (mode == 0) v = g() % 2 ? r.lo : r.hi;
    if (mode == 1) v = std::clamp(p.x_zero_point + static_cast<int>(g() % 5) - 2, r.lo, r.hi);
    c.xmem->data()[i] = static_cast<uint8_t>(v);
  }
  Tensor want(c.t, c.ys);
  try {
    ref::qlinear_average_pool(c.x, want, p);
  } catch (const Error&) {
    return false;
  }
  c.want = qpool_test::bytes_nchw(want);
  return true;
}

// y with a row pitch; the gap bytes hold 0xa5 and must keep it.
struct YBuffer {
  std::vector<uint8_t> bytes;
  TensorView view;
  YBuffer(const Case& c) {
    const std::vector<int64_t> st = pitched(c.ys, c.y_extra);
    bytes.assign(static_cast<size_t>(c.ys[0] * st[0]), 0xa5);
    view = TensorView(bytes.data(), c.t, c.ys, st);
  }
  std::string check(const Case& c) const {
    std::string d = qpool_test::first_difference(qpool_test::bytes_nchw(view), c.want);
    if (!d.empty()) return d;
    const int64_t pitch = c.ys[3] + c.y_extra;
    for (size_t i = 0; i < bytes.size(); ++i)
      if (static_cast<int64_t>(i) % pitch >= c.ys[3] && bytes[i] != 0xa5)
        return "wrote byte " + std::to_string(i) + " of y's row-pitch gap";
    return "";
  }
};

TEST(QAvgPoolRows16Fast, EveryVariantEqualsReferenceOnNarrowRows) {
  qpool_test::Restore restore;
  std::mt19937 g(kSeed);
  const auto& list = cpu::qlinear_average_pool_kernels();
  variant_test::Runs runs;
  variant_test::Options opt;
  opt.threads = 1;
  int cases = 0;
  for (int attempt = 0; attempt < 1500 && !HasFatalFailure(); ++attempt) {
    Case c;
    if (!draw(g, c)) continue;
    ++cases;
    std::unique_ptr<YBuffer> y;
    const bool ok = variant_test::run_every_variant(
        list,
        [&] {
          y = std::make_unique<YBuffer>(c);
          return cpu::QAvgPoolProblem{c.x, y->view, &c.p, cpu::make_qavg_plan(c.x, y->view, c.p)};
        },
        [&](const cpu::QAvgPoolProblem&) { return y->check(c); },
        "seed " + std::to_string(kSeed) + " attempt " + std::to_string(attempt) + ": " +
            c.describe(),
        runs, opt);
    if (!ok) break;
  }
  std::printf("[ rows16 ] %d cases (seed %u)\n", cases, kSeed);
  variant_test::print_runs("rows16", runs);
  variant_test::expect_each_ran(list, runs, 200, variant_test::name_has("-rows16-"));
}

// The flat k3s1p1 kernel (and rows16 beside it) on 3x3 stride-1 windows with
// one pixel of padding: chunks that straddle rows, planes and images, the
// tensor's last partial chunk, 1 to 3 threads (thread ranges that start and
// end mid-plane).
TEST(QAvgPoolRows16Fast, EveryVariantEqualsReferenceOnK3s1p1) {
  qpool_test::Restore restore;
  const uint32_t seed = kSeed + 2;
  std::mt19937 g(seed);
  const auto& list = cpu::qlinear_average_pool_kernels();
  variant_test::Runs runs;
  int cases = 0;
  for (int attempt = 0; attempt < 600 && !HasFatalFailure(); ++attempt) {
    Case c;
    if (!draw(g, c, true)) continue;
    ++cases;
    // Enough planes for several 128-chunk thread pieces in some draws.
    std::unique_ptr<YBuffer> y;
    variant_test::Options opt;
    opt.threads = 1 + attempt % 3;
    const bool ok = variant_test::run_every_variant(
        list,
        [&] {
          y = std::make_unique<YBuffer>(c);
          return cpu::QAvgPoolProblem{c.x, y->view, &c.p, cpu::make_qavg_plan(c.x, y->view, c.p)};
        },
        [&](const cpu::QAvgPoolProblem&) { return y->check(c); },
        "seed " + std::to_string(seed) + " attempt " + std::to_string(attempt) + " threads " +
            std::to_string(opt.threads) + ": " + c.describe(),
        runs, opt);
    if (!ok) break;
  }
  std::printf("[ k3s1p1 ] %d cases (seed %u)\n", cases, seed);
  variant_test::print_runs("k3s1p1", runs);
  variant_test::expect_each_ran(list, runs, 150, variant_test::name_has("-flat3x3-nchw-avx512"));
  // The AVX2 one declines odd W (about half the draws).
  variant_test::expect_each_ran(list, runs, 100, variant_test::name_has("-flat3x3-nchw-avx2"));
}

// The public call picks rows16 where it applies: at every ISA cap the host
// runs and with the reference forced, the codes stay the reference's.
TEST(QAvgPoolRows16Fast, PublicCallAtEveryIsaCap) {
  qpool_test::Restore restore;
  const uint32_t seed = kSeed + 1;
  std::mt19937 g(seed);
  int cases = 0;
  for (int attempt = 0; attempt < 300; ++attempt) {
    Case c;
    if (!draw(g, c)) continue;
    ++cases;
    for (const Isa cap : {Isa::portable, Isa::avx2, Isa::avx512}) {
      if (cap > host_isa()) continue;
      for (const Impl impl : {Impl::fast, Impl::reference}) {
        set_max_isa(cap);
        set_impl(impl);
        set_num_threads(1 + attempt % 3);
        YBuffer y(c);
        qlinear_average_pool(c.x, y.view, c.p);
        const std::string d = y.check(c);
        ASSERT_TRUE(d.empty()) << "seed " << seed << " attempt " << attempt << " cap "
                               << isa_name(cap) << (impl == Impl::reference ? " reference" : "")
                               << ": " << d << "\n  " << c.describe();
      }
    }
  }
  EXPECT_GT(cases, 150);
}

// The flat kernel keeps its plan per geometry and thread: back-to-back calls
// on one 1x96x14x14 k3s1p1 shape that differ only in what the plan's final
// step depends on (zero points, the divisor rule, the rounding rule, the
// dtype and so the clamp) must each give the reference's codes, i.e. not
// reuse the previous call's plan. The kernel list's walk runs the decline
// check and the kernel per call, as the public entry does.
TEST(QAvgPoolRows16Fast, FlatPlanKeptPerCallFollowsEveryChange) {
  qpool_test::Restore restore;
  const uint32_t seed = kSeed + 3;
  std::mt19937 g(seed);
  const auto& list = cpu::qlinear_average_pool_kernels();
  variant_test::Runs runs;
  variant_test::Options opt;
  opt.threads = 1;
  struct Change {
    Profile profile;
    DType t;
    bool include_pad;
    int x_zp, y_zp;
    Rounding rounding;
  };
  const Change changes[] = {
      {Profile::onnxruntime, DType::u8, true, 0, 0, Rounding::half_to_even},
      {Profile::onnxruntime, DType::u8, false, 0, 0, Rounding::half_to_even},
      {Profile::onnxruntime, DType::u8, false, 3, 250, Rounding::half_to_even},  // clamps
      {Profile::onnxruntime, DType::u8, false, 0, 0, Rounding::half_to_even},
      {Profile::onnxruntime, DType::s8, false, 0, 0, Rounding::half_to_even},
      {Profile::tflite, DType::s8, true, -5, -5, Rounding::half_up},
      {Profile::tflite, DType::s8, true, -5, -5, Rounding::half_down},
      {Profile::tflite, DType::u8, false, 7, 7, Rounding::half_away_from_zero},
      {Profile::onnxruntime, DType::u8, true, 0, 0, Rounding::half_to_even},
  };
  int index = 0;
  for (const Change& ch : changes) {
    Case c;
    c.profile = ch.profile;
    c.t = ch.t;
    c.xs = Shape{1, 96, 14, 14};
    Window2d& w = c.p.window;
    w.kernel_h = w.kernel_w = 3;
    w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = 1;
    c.p.count_include_pad = ch.include_pad;
    c.p.x_scale = c.p.y_scale = 0.5f;
    apply_profile(c.p, c.profile);
    c.p.x_zero_point = ch.x_zp;
    c.p.y_zero_point = ch.y_zp;
    if (c.profile != Profile::onnxruntime) c.p.rounding = ch.rounding;
    c.ys = qlinear_average_pool_output_shape(c.xs, c.p);
    const int64_t span = shape_numel(c.xs);
    c.xmem = std::make_shared<test::GuardedBytes>(static_cast<size_t>(span));
    c.x = TensorView(c.xmem->data(), c.t, c.xs, pitched(c.xs, 0));
    for (int64_t i = 0; i < span; ++i) c.xmem->data()[i] = static_cast<uint8_t>(g());
    Tensor want(c.t, c.ys);
    ref::qlinear_average_pool(c.x, want, c.p);
    c.want = qpool_test::bytes_nchw(want);
    std::unique_ptr<YBuffer> y;
    const bool ok = variant_test::run_every_variant(
        list,
        [&] {
          y = std::make_unique<YBuffer>(c);
          return cpu::QAvgPoolProblem{c.x, y->view, &c.p, cpu::make_qavg_plan(c.x, y->view, c.p)};
        },
        [&](const cpu::QAvgPoolProblem&) { return y->check(c); },
        "seed " + std::to_string(seed) + " change " + std::to_string(index) + ": " + c.describe(),
        runs, opt);
    if (!ok) break;
    ++index;
  }
  variant_test::print_runs("kept flat plan", runs);
  variant_test::expect_each_ran_exactly(list, runs, 9, variant_test::name_has("-flat3x3-"));
}

}  // namespace
}  // namespace test_qavgpool_rows16
}  // namespace npukit
