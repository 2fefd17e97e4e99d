// The stride-2 8-bit average kernels x8-qavgpool-k2s2-nchw-avx512vbmi and
// x8-qavgpool-k2s2-nchw-avx2 (2x2 windows inside the image, the integer
// final steps or the checked float tail; AVX2: rows of at least 16 outputs,
// the last chunk overlapping) and x8-qavgpool-k3s2-nchw-{avx512vbmi,avx2}
// (3x3, one pixel of padding before the first row and column, ONNX Runtime)
// against the reference, bit for
// bit: every 2x2 window sum of u8 and s8 under every rounding rule and
// zero-point offset; random geometry (rows up to 80 outputs: the
// two-rows-per-store and the 64-output steps with their tails, odd row
// counts, odd W and H whose last column or row no window reads, planes
// stacked into one stream or not, x and y with a padded row pitch, x ending
// right before an unreadable page, canaries after y), scale-1 ONNX Runtime
// (x_scale == y_scale == 2^j, any zero points, either divisor), calibrated
// scales (ONNX Runtime's float path: the checked tail), TFLite and
// MiCo under every rounding rule, 1 to 3 threads; then the public call at
// every ISA cap and with the reference forced. Calls the kernels must decline
// (ceil mode, other padding, calibrated scales, PyTorch) are drawn too and go
// to the other kernels. A failure prints the seed and the configuration.
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
namespace test_qavgpool_stride2 {
namespace {

constexpr uint32_t kSeed = 20261127u + 212u;
constexpr uint8_t kCanary = 0xa5;

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

std::vector<int64_t> pitched(const Shape& s, int64_t extra) {
  const int64_t pitch = s[3] + extra;
  return {s[1] * s[2] * pitch, s[2] * pitch, pitch, 1};
}

// x's bytes (guarded) over the span of its strides, the view and the
// reference's codes; false when the reference rejects the call.
bool finish(Case& c, const std::vector<uint8_t>& codes) {
  const std::vector<int64_t> xst = pitched(c.xs, c.x_extra);
  c.xmem = std::make_shared<test::GuardedBytes>(codes.size());
  std::copy(codes.begin(), codes.end(), c.xmem->data());
  c.x = TensorView(c.xmem->data(), c.t, c.xs, xst);
  try {
    c.ys = qlinear_average_pool_output_shape(c.xs, c.p);
    Tensor want(c.t, c.ys);
    ref::qlinear_average_pool(c.x, want, c.p);
    c.want = qpool_test::bytes_nchw(want);
  } catch (const Error&) {
    return false;
  }
  return true;
}

int64_t span_of(const Case& c) {
  const std::vector<int64_t> xst = pitched(c.xs, c.x_extra);
  return (c.xs[0] - 1) * xst[0] + (c.xs[1] - 1) * xst[1] + (c.xs[2] - 1) * xst[2] + c.xs[3];
}

enum class Kind { k2s2, k3s2p1 };

void set_window(Kind kind, Window2d& w) {
  w = Window2d{};
  w.kernel_h = w.kernel_w = kind == Kind::k2s2 ? 2 : 3;
  w.stride_h = w.stride_w = 2;
  if (kind == Kind::k3s2p1) w.pad_top = w.pad_left = w.pad_bottom = w.pad_right = 1;
}

// A random case (the window of `kind` in 7 draws of 8; k3s2p1: no padding
// after the last row or column in half of the draws), or false when the draw
// is not a valid call.
bool draw(std::mt19937& g, Case& c, Kind window = Kind::k2s2, bool calibrated = false) {
  auto pick = test::picker(g);
  // 0-3 ONNX Runtime scale 2^j, 4 TFLite, 5 MiCo, 6 ONNX Runtime calibrated, 7 PyTorch
  const int kind = calibrated ? 6 : static_cast<int>(g() % 8);
  c.profile = kind < 4 || kind == 6 ? Profile::onnxruntime
              : kind == 4           ? Profile::tflite
              : kind == 5           ? Profile::mico
                                    : Profile::pytorch;
  c.t = g() % 2 ? DType::u8 : DType::s8;
  const int64_t W = g() % 4 == 0 ? pick(120, 161) : pick(1, 70);
  c.xs = Shape{pick(1, 3), pick(1, 5), pick(1, 9), W};
  QLinearAvgPoolParams& p = c.p;
  p = QLinearAvgPoolParams{};
  set_window(window, p.window);
  p.count_include_pad = g() % 2;
  if (window == Kind::k3s2p1 && g() % 2) p.window.pad_bottom = p.window.pad_right = 0;
  if (g() % 8 == 0) {  // calls the kernel declines (or must check it need not)
    Window2d& w = p.window;
    w.ceil_mode = g() % 2;
    w.pad_top = pick(0, 1), w.pad_left = pick(0, 1);
    w.pad_bottom = pick(0, 1), w.pad_right = pick(0, 1);
  }
  qpool_test::random_zero_points(g, c.t, p);
  p.x_scale = std::ldexp(1.0f, static_cast<int>(pick(-20, 20)));
  p.y_scale = p.x_scale;
  if (kind == 6) {  // ONNX Runtime's float path: calibrated scales, equal ones (ties) or the race's
    const int s = static_cast<int>(g() % 3);
    p.x_scale = s == 2 ? 0.0235f : 0.0235f * static_cast<float>(pick(50, 150)) / 100.0f;
    p.y_scale = s == 0 ? p.x_scale : s == 2 ? 0.0198f : p.x_scale * 1.37f;
  }
  apply_profile(p, c.profile);
  if (c.profile == Profile::tflite || c.profile == Profile::mico) {
    if (c.profile == Profile::mico) p.x_zero_point = 0;
    p.y_zero_point = p.x_zero_point;
    if (g() % 2) p.rounding = all_roundings()[g() % all_roundings().size()];
  }
  const bool dense = g() % 2 == 0;
  c.x_extra = !dense && g() % 2 ? pick(1, 70) : 0;
  c.y_extra = !dense && g() % 2 ? pick(1, 5) : 0;
  // Codes: uniform, only the extremes, or near the zero point (ties).
  const detail::CodeRange r = detail::code_range(c.t);
  const int mode = static_cast<int>(g() % 3);
  std::vector<uint8_t> codes(static_cast<size_t>(span_of(c)));
  for (auto& b : codes) {
    int v = r.lo + static_cast<int>(g() % 256);
    if (mode == 0) v = g() % 2 ? r.lo : r.hi;
    if (mode == 1) v = std::clamp(p.x_zero_point + static_cast<int>(g() % 5) - 2, r.lo, r.hi);
    b = static_cast<uint8_t>(v);
  }
  return finish(c, codes);
}

// y with a row pitch and 64 bytes after its last element; the gap and
// trailing bytes hold kCanary and must keep it.
struct YBuffer {
  std::vector<uint8_t> bytes;
  TensorView view;
  int64_t span = 0;
  explicit YBuffer(const Case& c) {
    const std::vector<int64_t> st = pitched(c.ys, c.y_extra);
    span = c.ys[0] * st[0];
    bytes.assign(static_cast<size_t>(span + 64), kCanary);
    view = TensorView(bytes.data(), c.t, c.ys, st);
  }
  std::string check(const Case& c) const {
    std::string d = qpool_test::first_difference(qpool_test::bytes_nchw(view), c.want);
    if (!d.empty()) return d;
    const int64_t pitch = c.ys[3] + c.y_extra;
    for (size_t i = 0; i < bytes.size(); ++i)
      if ((static_cast<int64_t>(i) >= span || static_cast<int64_t>(i) % pitch >= c.ys[3]) &&
          bytes[i] != kCanary)
        return "wrote byte " + std::to_string(i) + " outside y's elements";
    return "";
  }
};

// Every variant on c; false after the first difference.
bool check_variants(const Case& c, const std::string& context, variant_test::Runs& runs,
                    int threads) {
  std::unique_ptr<YBuffer> y;
  variant_test::Options opt;
  opt.threads = threads;
  return variant_test::run_every_variant(
      cpu::qlinear_average_pool_kernels(),
      [&] {
        y = std::make_unique<YBuffer>(c);
        return cpu::QAvgPoolProblem{c.x, y->view, &c.p, cpu::make_qavg_plan(c.x, y->view, c.p)};
      },
      [&](const cpu::QAvgPoolProblem&) { return y->check(c); }, context + ": " + c.describe(), runs,
      opt);
}

// The kernels named by `part` took their share of the calls where they may
// run (the VBMI kernels decline every call on AVX-512 hosts without VBMI:
// said, not counted; the AVX2 kernels are counted wherever they run).
void expect_ran(const variant_test::Runs& runs, const std::string& part, int64_t more_than) {
#if defined(__x86_64__)
  const bool vbmi = __builtin_cpu_supports("avx512vbmi");
#else
  const bool vbmi = false;
#endif
  if (!vbmi) std::printf("[ stride2 ] this host has no AVX-512 VBMI: its kernels did not run\n");
  variant_test::expect_each_ran(cpu::qlinear_average_pool_kernels(), runs, more_than,
                                [&](const std::string& name) {
                                  return name.find(part) != std::string::npos &&
                                         (vbmi || name.find("vbmi") == std::string::npos);
                                });
}

// `attempts` random calls with the window of `kind`, every variant on each.
void random_calls(Kind kind, uint32_t seed, int attempts, const std::string& part,
                  int64_t more_than, bool calibrated = false) {
  qpool_test::Restore restore;
  std::mt19937 g(seed);
  variant_test::Runs runs;
  int cases = 0;
  for (int attempt = 0; attempt < attempts && !::testing::Test::HasFatalFailure(); ++attempt) {
    Case c;
    if (!draw(g, c, kind, calibrated)) continue;
    ++cases;
    if (!check_variants(c, "seed " + std::to_string(seed) + " attempt " + std::to_string(attempt),
                        runs, 1 + attempt % 3))
      break;
  }
  std::printf("[ %s ] %d cases (seed %u)\n", part.c_str(), cases, seed);
  variant_test::print_runs(part.c_str(), runs);
  expect_ran(runs, part, more_than);
}

TEST(QAvgPoolStride2Fast, K2s2EqualsReferenceOnRandomCalls) {
  random_calls(Kind::k2s2, kSeed, 800, "-k2s2-", 250);
}

TEST(QAvgPoolStride2Fast, K3s2p1EqualsReferenceOnRandomCalls) {
  random_calls(Kind::k3s2p1, kSeed + 2, 1000, "-k3s2-", 150);
}

// Every window sum each dtype can have (u8 0..1020, s8 -512..508), under
// every rounding rule, with the scale-1 ONNX Runtime offsets y_zp - x_zp of
// -255, -1, 0, 1 and 255 (clamped) as well: the quotient by 4 of every
// numerator the kernel can see, in the two-rows and the 64-output steps.
// Calibrated scales only (the checked float tail and its redone outputs).
TEST(QAvgPoolStride2Fast, K2s2CalibratedEqualsReference) {
  random_calls(Kind::k2s2, kSeed + 4, 400, "-k2s2-", 150, true);
}

TEST(QAvgPoolStride2Fast, K3s2p1CalibratedEqualsReference) {
  random_calls(Kind::k3s2p1, kSeed + 3, 400, "-k3s2-", 100, true);
}

TEST(QAvgPoolStride2Fast, K2s2EveryWindowSumUnderEveryRule) {
  qpool_test::Restore restore;
  variant_test::Runs runs;
  for (const DType t : {DType::u8, DType::s8}) {
    const detail::CodeRange r = detail::code_range(t);
    // Window i sums to 4*lo + i % sums.
    const int64_t sums = 4 * (r.hi - r.lo) + 1;
    for (const int64_t OW : {int64_t{31}, int64_t{100}}) {
      const int64_t OH = (sums + OW - 1) / OW;
      std::vector<uint8_t> codes(static_cast<size_t>(4 * OH * OW));
      for (int64_t i = 0; i < OH * OW; ++i) {
        // Sum k = 4q + e (e < 4) as taps q + 1 (e of them) and q.
        const int64_t k = i % sums, q = k / 4, e = k % 4, oh = i / OW, ow = i % OW;
        for (int64_t j = 0; j < 4; ++j) {
          const int64_t row = 2 * oh + j / 2, col = 2 * ow + j % 2;
          codes[static_cast<size_t>(row * 2 * OW + col)] =
              static_cast<uint8_t>(r.lo + q + (j < e ? 1 : 0));
        }
      }
      for (const Rounding rule : all_roundings())
        for (const int offset : {0, -255, -1, 1, 255}) {
          Case c;
          c.t = t;
          c.xs = Shape{1, 1, 2 * OH, 2 * OW};
          set_window(Kind::k2s2, c.p.window);
          if (offset == 0) {
            c.profile = Profile::tflite;
            apply_profile(c.p, c.profile);
            c.p.rounding = rule;
          } else {
            if (rule != Rounding::half_to_even) continue;
            c.profile = Profile::onnxruntime;
            apply_profile(c.p, c.profile);
            const int lo = r.lo, hi = r.hi;
            c.p.x_zero_point = offset > 0 ? lo : hi;
            c.p.y_zero_point = std::clamp(c.p.x_zero_point + offset, lo, hi);
          }
          ASSERT_TRUE(finish(c, codes)) << c.describe();
          ASSERT_TRUE(check_variants(c, "every sum, OW " + std::to_string(OW), runs, 1));
        }
    }
  }
  variant_test::print_runs("k2s2 sums", runs);
  expect_ran(runs, "-k2s2-", 30);
}

// The public call at every ISA cap the host runs and with the reference
// forced gives the reference's codes.
TEST(QAvgPoolStride2Fast, PublicCallAtEveryIsaCap) {
  qpool_test::Restore restore;
  const uint32_t seed = kSeed + 1;
  std::mt19937 g(seed);
  int cases = 0;
  for (int attempt = 0; attempt < 200; ++attempt) {
    Case c;
    if (!draw(g, c, attempt % 2 ? Kind::k3s2p1 : Kind::k2s2)) continue;
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

}  // namespace
}  // namespace test_qavgpool_stride2
}  // namespace npukit
