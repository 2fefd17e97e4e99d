// Fast quantized average pooling against the reference, bit for bit: every
// variant of the "qlinear_average_pool" list that this host runs, every
// profile, u8 and s8, NCHW and NHWC, on seeded random configurations
// (ceil-mode overhang, windows entirely in padding, 1-wide images, odd channel
// counts, batch > 1, extreme scales and zero points, saturation). A failure
// prints the seed and the configuration.
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
#include "variant_test_util.hpp"

namespace npukit {
namespace test_qpool_fast {
namespace {

constexpr uint32_t kSeed = 20261126;

struct Case {
  Profile profile = Profile::onnxruntime;
  DType dtype = DType::u8;
  Layout x_layout = Layout::nchw, y_layout = Layout::nchw;
  Shape x_shape;
  QLinearAvgPoolParams p;
  std::string text() const {
    std::ostringstream s;
    const Window2d& w = p.window;
    s << "profile=" << profile_name(profile) << " dtype=" << dtype_name(dtype)
      << " x=" << shape_text(x_shape) << " x_layout=" << layout_name(x_layout)
      << " y_layout=" << layout_name(y_layout) << " k=" << w.kernel_h << "x" << w.kernel_w
      << " s=" << w.stride_h << "x" << w.stride_w << " pads(t,b,l,r)=" << w.pad_top << ","
      << w.pad_bottom << "," << w.pad_left << "," << w.pad_right << " ceil=" << w.ceil_mode
      << " truncated=" << w.truncated_count << " include_pad=" << p.count_include_pad
      << " x_scale=" << p.x_scale << " x_zp=" << p.x_zero_point << " y_scale=" << p.y_scale
      << " y_zp=" << p.y_zero_point << " arith=" << qavg_arith_name(p.arith)
      << " rounding=" << rounding_name(p.rounding);
    return s.str();
  }
};

const Profile kProfiles[] = {Profile::onnxruntime, Profile::pytorch, Profile::ghp_rtl,
                             Profile::ghp_golden,  Profile::tflite,  Profile::mico};

float random_scale(std::mt19937& g) {
  const int kind = static_cast<int>(g() % 10);
  if (kind == 0) return std::ldexp(1.0f, static_cast<int>(g() % 41) - 20);         // powers of two
  if (kind == 1) return std::uniform_real_distribution<float>(1e-30f, 1e-20f)(g);  // extreme
  if (kind == 2) return std::uniform_real_distribution<float>(1e20f, 1e30f)(g);
  return std::exp(std::uniform_real_distribution<float>(-8.0f, 8.0f)(g));
}

// A random configuration; false when the window is invalid for the shape.
bool random_case(std::mt19937& g, Case& c) {
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(g() % (hi - lo + 1)); };
  c.profile = kProfiles[g() % 6];
  const bool ghp = c.profile == Profile::ghp_rtl || c.profile == Profile::ghp_golden;
  c.dtype = ghp || g() % 2 ? DType::u8 : DType::s8;
  c.x_layout = g() % 2 ? Layout::nhwc : Layout::nchw;
  c.y_layout =
      g() % 3 == 0 ? (c.x_layout == Layout::nhwc ? Layout::nchw : Layout::nhwc) : c.x_layout;
  const int H = g() % 5 == 0 ? 1 : pick(1, 13), W = g() % 5 == 0 ? 1 : pick(1, 17);
  c.x_shape = {pick(1, 3), g() % 4 == 0 ? 1 : pick(1, 19), H, W};
  Window2d& w = c.p.window;
  w = Window2d{};
  if (g() % 6 == 0) {  // whole image (ORT's integer path), sometimes padded
    w.kernel_h = H;
    w.kernel_w = W;
    if (g() % 3 == 0) w.pad_top = w.pad_left = pick(0, 1);
  } else {
    w.kernel_h = pick(1, std::min(H + 2, 5));
    w.kernel_w = pick(1, std::min(W + 2, 5));
    w.stride_h = pick(1, 3);
    w.stride_w = pick(1, 3);
    w.pad_top = pick(0, static_cast<int>(w.kernel_h));
    w.pad_bottom = pick(0, static_cast<int>(w.kernel_h));
    w.pad_left = pick(0, static_cast<int>(w.kernel_w));
    w.pad_right = pick(0, static_cast<int>(w.kernel_w));
    w.ceil_mode = g() % 2;
    w.truncated_count = g() % 8 == 0;
  }
  c.p.count_include_pad = ghp || g() % 2;
  c.p.x_scale = random_scale(g);
  c.p.y_scale = g() % 4 == 0 ? c.p.x_scale : random_scale(g);
  qpool_test::random_zero_points(g, c.dtype, c.p);
  apply_profile(c.p, c.profile);
  if (c.profile == Profile::tflite || c.profile == Profile::mico) {
    c.p.y_scale = c.p.x_scale;
    if (c.profile == Profile::mico) c.p.x_zero_point = 0;
    c.p.y_zero_point = c.p.x_zero_point;
  }
  // Other rounding rules reach the scalar tails and int_mean's rule table.
  if (g() % 8 == 0) c.p.rounding = all_roundings()[g() % all_roundings().size()];
  try {
    qlinear_average_pool_output_shape(c.x_shape, c.p);
  } catch (const Error&) {
    return false;
  }
  return true;
}

Tensor random_codes(std::mt19937& g, const Case& c) {
  Tensor dense(c.dtype, c.x_shape);
  const detail::CodeRange r = detail::code_range(c.dtype);
  const int mode = static_cast<int>(g() % 5);
  auto* d = static_cast<uint8_t*>(dense.view().raw());
  for (int64_t i = 0; i < dense.numel(); ++i) {
    int v;
    if (mode == 0)  // saturation: only the extremes
      v = g() % 2 ? r.lo : r.hi;
    else if (mode == 1)  // near the zero point: ties and small averages
      v = std::clamp(c.p.x_zero_point + static_cast<int>(g() % 5) - 2, r.lo, r.hi);
    else
      v = r.lo + static_cast<int>(g() % 256);
    d[i] = static_cast<uint8_t>(v);
  }
  Tensor x(c.dtype, c.x_shape, c.x_layout);
  copy(dense, x);
  return x;
}

using qpool_test::bytes_nchw;
using qpool_test::first_difference;
using qpool_test::Restore;
using variant_test::expect_each_ran;
using variant_test::name_has;
using variant_test::Runs;

// Every accepting variant of the 8-bit average pool list on `prob`, each on a
// fresh y of c's dtype and y layout, against the reference's NCHW bytes.
bool every_variant(const cpu::QAvgPoolProblem& prob, const Case& c, const Shape& ys,
                   const std::vector<uint8_t>& want, const std::string& context, Runs& runs) {
  Tensor y;
  return variant_test::run_every_variant(
      cpu::qlinear_average_pool_kernels(),
      [&] {
        cpu::QAvgPoolProblem p = prob;
        y = Tensor(c.dtype, ys, c.y_layout);
        p.y = y;
        return p;
      },
      [&](const cpu::QAvgPoolProblem& p) { return first_difference(bytes_nchw(p.y), want); },
      context, runs);
}

std::string where(uint32_t seed, int attempt, const std::string& more) {
  return "seed " + std::to_string(seed) + " attempt " + std::to_string(attempt) + more;
}

TEST(QPoolFast, EveryVariantEqualsReferenceOnRandomConfigurations) {
  Restore restore;
  std::mt19937 g(kSeed);
  const auto& list = cpu::qlinear_average_pool_kernels();
  Runs runs;
  std::map<std::string, int> per_profile;
  int cases = 0, mostly_saturated = 0;
  for (int attempt = 0; attempt < 1500; ++attempt) {
    Case c;
    if (!random_case(g, c)) continue;
    const Tensor x = random_codes(g, c);
    const Shape ys = qlinear_average_pool_output_shape(c.x_shape, c.p);
    Tensor want(c.dtype, ys, c.y_layout);
    try {
      ref::qlinear_average_pool(x, want, c.p);
    } catch (const Error&) {
      // The reference rejects it (e.g. an fp32 overflow to NaN): the public
      // call must reject it too, whichever kernel is chosen.
      Tensor y(c.dtype, ys, c.y_layout);
      EXPECT_THROW(qlinear_average_pool(x, y, c.p), Error) << c.text();
      continue;
    }
    ++cases;
    ++per_profile[profile_name(c.profile)];
    const std::vector<uint8_t> w = bytes_nchw(want);
    {
      std::map<uint8_t, int> values;
      for (uint8_t v : w) ++values[v];
      if (values.size() == 1 && w.size() > 8) ++mostly_saturated;
    }
    set_num_threads(1 + attempt % 3);
    const cpu::QAvgPoolProblem prob{x, want, &c.p, cpu::make_qavg_plan(x, want, c.p)};
    if (!every_variant(prob, c, ys, w, where(kSeed, attempt, "\n  " + c.text()), runs)) return;
  }
  set_num_threads(0);
  std::printf("[ qpool ] %d cases (seed %u), %d with one output value\n", cases, kSeed,
              mostly_saturated);
  for (const auto& [name, n] : per_profile)
    std::printf("[ qpool ] profile %s: %d\n", name.c_str(), n);
  variant_test::print_runs("qpool", runs);
  EXPECT_GT(cases, 700);
  EXPECT_LT(mostly_saturated, cases / 3);  // the comparison must see varied outputs
  // The float-path kernels take ONNX Runtime's non-whole-image NCHW cases only.
  // The stride-2 VBMI kernels take 2x2 / 3x3 windows only: test_qavgpool_stride2.cpp.
  expect_each_ran(list, runs, 180, [](const std::string& n) {
    return !name_has("fmean")(n) && !name_has("-rows16-")(n) && !name_has("-flat3x3-")(n) &&
           !name_has("-k2s2-")(n) && !name_has("-k3s2-")(n);
  });
  expect_each_ran(list, runs, 30, name_has("fmean"));
  // Rows of at most 16 columns and integer final steps only (test_qavgpool_rows16.cpp).
  expect_each_ran(list, runs, 10, name_has("-rows16-"));
  // k3s1p1 on 64 planes or more only: its own test (test_qavgpool_rows16.cpp).
  for (const auto& [name, n] : per_profile) EXPECT_GT(n, 60) << name;
}

// The public entry points under every ISA cap, Impl::reference and 1..3
// threads, including QLinearGlobalAveragePool on larger images.
TEST(QPoolFast, PublicCallsEqualReferenceAtEveryIsaAndThreadCount) {
  Restore restore;
  std::mt19937 g(kSeed + 1);
  int compared = 0;
  for (int attempt = 0; attempt < 200; ++attempt) {
    Case c;
    if (!random_case(g, c)) continue;
    const bool global = attempt % 4 == 0;
    if (global) {
      c.x_shape = {1 + static_cast<int64_t>(g() % 2), 1 + static_cast<int64_t>(g() % 300),
                   1 + static_cast<int64_t>(g() % 20), 1 + static_cast<int64_t>(g() % 20)};
      c.p.window = Window2d{};
      c.p.window.kernel_h = c.x_shape[2];
      c.p.window.kernel_w = c.x_shape[3];
    }
    const Tensor x = random_codes(g, c);
    const Shape ys = qlinear_average_pool_output_shape(c.x_shape, c.p);
    Tensor want(c.dtype, ys, c.y_layout);
    try {
      ref::qlinear_average_pool(x, want, c.p);
    } catch (const Error&) {
      continue;
    }
    const std::vector<uint8_t> w = bytes_nchw(want);
    std::vector<Isa> isas;
    for (Isa i : {Isa::portable, Isa::avx2, Isa::avx512, Isa::avx512_vnni})
      if (i <= host_isa()) isas.push_back(i);
    for (int mode = 0; mode <= static_cast<int>(isas.size()); ++mode) {
      const bool reference = mode == static_cast<int>(isas.size());
      set_impl(reference ? Impl::reference : Impl::fast);
      if (!reference) set_max_isa(isas[static_cast<size_t>(mode)]);
      for (int threads = 1; threads <= 3; ++threads) {
        set_num_threads(threads);
        Tensor y(c.dtype, ys, c.y_layout);
        if (global)
          qlinear_global_average_pool(x, y, c.p);
        else
          qlinear_average_pool(x, y, c.p);
        const std::vector<uint8_t> got = bytes_nchw(y);
        ASSERT_EQ(got, w) << "seed " << kSeed + 1 << " attempt " << attempt << " impl "
                          << (reference ? "reference" : isa_name(max_isa())) << " threads "
                          << threads << (global ? " global" : "") << "\n  " << c.text() << "\n  "
                          << first_difference(got, w);
        ++compared;
      }
    }
    set_impl(Impl::fast);
    set_max_isa(host_isa());
  }
  EXPECT_GT(compared, 500);
}

// Outputs whose exact answer is known, so that the reference and the fast
// kernels cannot agree on a wrong value: a constant image averages to itself.
TEST(QPoolFast, ConstantImageAveragesToItselfUnderEveryProfile) {
  Restore restore;
  for (Profile profile : kProfiles) {
    for (DType t : {DType::u8, DType::s8}) {
      const bool ghp = profile == Profile::ghp_rtl || profile == Profile::ghp_golden;
      if (ghp && t == DType::s8) continue;
      const detail::CodeRange r = detail::code_range(t);
      for (int v : {r.lo, r.lo + 1, 0, 7, r.hi}) {
        if (v < r.lo || v > r.hi) continue;
        QLinearAvgPoolParams p;
        p.window.kernel_h = p.window.kernel_w = 3;
        p.window.stride_h = p.window.stride_w = 2;
        p.count_include_pad = ghp;  // no padding below: the divisor is the kernel area
        p.x_scale = p.y_scale = 0.5f;
        p.x_zero_point = p.y_zero_point = profile == Profile::mico ? 0 : (r.lo + r.hi) / 2;
        apply_profile(p, profile);
        Tensor x(t, {2, 5, 9, 11});
        auto* d = static_cast<uint8_t*>(x.view().raw());
        for (int64_t i = 0; i < x.numel(); ++i) d[i] = static_cast<uint8_t>(v);
        Tensor y(t, qlinear_average_pool_output_shape(x.shape(), p));
        qlinear_average_pool(x, y, p);
        for (uint8_t got : bytes_nchw(y))
          ASSERT_EQ(got, static_cast<uint8_t>(v))
              << profile_name(profile) << " " << dtype_name(t) << " value " << v;
      }
    }
  }
}

// The fast kernels must not decline the shapes the issue names.
TEST(QPoolFast, IssueShapesRunFastKernels) {
  Restore restore;
  struct Shape4 {
    Shape x;
    int64_t k, s, pad;
    Layout layout;
  };
  const Shape4 shapes[] = {{{1, 64, 112, 112}, 3, 2, 1, Layout::nchw},
                           {{1, 256, 56, 56}, 2, 2, 0, Layout::nchw},
                           {{1, 64, 112, 112}, 3, 2, 1, Layout::nhwc}};
  for (Profile profile : kProfiles) {
    for (const auto& s : shapes) {
      QLinearAvgPoolParams p;
      p.window.kernel_h = p.window.kernel_w = s.k;
      p.window.stride_h = p.window.stride_w = s.s;
      p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = s.pad;
      p.count_include_pad = true;
      p.x_scale = p.y_scale = 0.05f;
      apply_profile(p, profile);
      Tensor x(DType::u8, s.x, s.layout);
      Tensor y(DType::u8, qlinear_average_pool_output_shape(x.shape(), p), s.layout);
      cpu::QAvgPoolProblem prob{x, y, &p, cpu::make_qavg_plan(x, y, p)};
      const auto& chosen = cpu::qlinear_average_pool_kernels().choose(prob);
      EXPECT_FALSE(chosen.reference) << profile_name(profile) << " " << shape_text(s.x);
    }
  }
}

}  // namespace
}  // namespace test_qpool_fast
}  // namespace npukit

namespace npukit {
namespace test_qpool_fast {
namespace {

// ONNX Runtime's float path on tie-prone windows (x_scale = y_scale, two or
// four taps, so exact averages often end in .5): the fp32 sum's rounding
// decides many outputs, so a variant that reordered one output's sum would
// differ. The test counts those outputs to prove it can see such a mistake.
TEST(QPoolFast, FloatPathKeepsTheReferenceSummationOrder) {
  // Its kernels are AVX2/AVX-512 only: nothing to compare under a lower cap.
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "needs AVX2 kernels (NPUKIT_MAX_ISA is below avx2)";
  Restore restore;
  std::mt19937 g(kSeed + 2);
  int64_t order_sensitive = 0, compared = 0;
  for (int attempt = 0; attempt < 60; ++attempt) {
    Case c;
    c.profile = Profile::onnxruntime;
    c.dtype = attempt % 2 ? DType::s8 : DType::u8;
    c.x_layout = c.y_layout = attempt % 3 == 0 ? Layout::nhwc : Layout::nchw;
    c.x_shape = {1, 1 + static_cast<int64_t>(g() % 16), 8 + static_cast<int64_t>(g() % 9),
                 8 + static_cast<int64_t>(g() % 9)};
    Window2d& w = c.p.window;
    w.kernel_h = 1 + static_cast<int64_t>(g() % 2);
    w.kernel_w = 2 + static_cast<int64_t>(g() % 3);
    w.stride_h = w.stride_w = 1 + static_cast<int64_t>(g() % 2);
    c.p.count_include_pad = true;
    const float scales[] = {0.1f, 0.3f, 0.7f, 0.0173f, 1.1f};
    c.p.x_scale = c.p.y_scale = scales[g() % 5];
    const detail::CodeRange r = detail::code_range(c.dtype);
    c.p.x_zero_point = c.p.y_zero_point = r.lo + static_cast<int>(g() % 256);
    apply_profile(c.p, c.profile);
    const Tensor x = random_codes(g, c);
    const Shape ys = qlinear_average_pool_output_shape(c.x_shape, c.p);
    Tensor want(c.dtype, ys, c.y_layout);
    ref::qlinear_average_pool(x, want, c.p);
    const std::vector<uint8_t> wb = bytes_nchw(want);
    // Exact rational answer: round_half_even(sum(q - zp) / taps) + zp, clamped.
    const std::vector<uint8_t> xb = bytes_nchw(x);
    const int64_t H = c.x_shape[2], W = c.x_shape[3], OH = ys[2], OW = ys[3];
    for (int64_t ch = 0; ch < c.x_shape[1]; ++ch)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t s = 0;
          for (int64_t i = 0; i < w.kernel_h; ++i)
            for (int64_t j = 0; j < w.kernel_w; ++j) {
              const uint8_t b =
                  xb[static_cast<size_t>((ch * H + oh * w.stride_h + i) * W + ow * w.stride_w + j)];
              s += (c.dtype == DType::s8 ? int64_t{static_cast<int8_t>(b)} : int64_t{b}) -
                   c.p.x_zero_point;
            }
          const int64_t exact = saturate(
              div_round(s, w.kernel_h * w.kernel_w, Rounding::half_to_even) + c.p.y_zero_point,
              r.lo, r.hi);
          const uint8_t got = wb[static_cast<size_t>((ch * OH + oh) * OW + ow)];
          const int64_t ref = c.dtype == DType::s8 ? int64_t{static_cast<int8_t>(got)} : got;
          order_sensitive += ref != exact;
        }
    const cpu::QAvgPoolProblem prob{x, want, &c.p, cpu::make_qavg_plan(x, want, c.p)};
    Runs runs;
    if (!every_variant(prob, c, ys, wb, where(kSeed + 2, attempt, "\n  " + c.text()), runs)) return;
    compared += runs.total();
  }
  std::printf("[ qpool ] float path: %lld outputs where fp32 rounding decides, %lld runs\n",
              static_cast<long long>(order_sensitive), static_cast<long long>(compared));
  EXPECT_GT(order_sensitive, 100);
  EXPECT_GT(compared, 100);
}

// 2x2 windows at stride 2 without padding (the issue's k2s2 problems and
// MiCo's) take a dedicated integer-sum step on NCHW (vpmaddubsw): every
// profile, u8 and s8, widths around the 32-output steps (masked last steps,
// odd W leaving a column unread), x rows with a padded pitch, 1-3 threads.
TEST(QPoolFast, K2S2WindowsUnderEveryProfile) {
  Restore restore;
  const uint32_t seed = kSeed + 6;
  std::mt19937 g(seed);
  auto pick = test::picker(g);
  Runs runs;
  for (int attempt = 0; attempt < 300; ++attempt) {
    Case c;
    c.profile = kProfiles[attempt % 6];
    const bool ghp = c.profile == Profile::ghp_rtl || c.profile == Profile::ghp_golden;
    c.dtype = ghp || g() % 2 ? DType::u8 : DType::s8;
    const int64_t H = 2 * pick(1, 6) + pick(0, 1);
    const int64_t W = g() % 2 ? 64 * pick(1, 2) + pick(-3, 3) : pick(2, 150);
    c.x_shape = {pick(1, 2), pick(1, 5), H, W};
    c.p.window = Window2d{};
    c.p.window.kernel_h = c.p.window.kernel_w = 2;
    c.p.window.stride_h = c.p.window.stride_w = 2;
    c.p.count_include_pad = true;
    c.p.x_scale = g() % 2 ? 0.5f : std::exp(std::uniform_real_distribution<float>(-5.0f, 1.0f)(g));
    c.p.y_scale = g() % 2 ? c.p.x_scale : 0.37f;
    const detail::CodeRange r = detail::code_range(c.dtype);
    c.p.x_zero_point = static_cast<int32_t>(pick(r.lo, r.hi));
    c.p.y_zero_point = static_cast<int32_t>(pick(r.lo, r.hi));
    apply_profile(c.p, c.profile);
    if (c.profile == Profile::tflite || c.profile == Profile::mico) {
      c.p.y_scale = c.p.x_scale;
      if (c.profile == Profile::mico) c.p.x_zero_point = 0;
      c.p.y_zero_point = c.p.x_zero_point;
    }
    const Shape ys = qlinear_average_pool_output_shape(c.x_shape, c.p);
    const int64_t pitch = W + (g() % 3 == 0 ? pick(1, 9) : 0);
    const int64_t N = c.x_shape[0], C = c.x_shape[1];
    const Tensor dense = random_codes(g, c);
    std::vector<uint8_t> storage(static_cast<size_t>(N * C * H * pitch), 0x5a);
    const TensorView x(storage.data(), c.dtype, c.x_shape, {C * H * pitch, H * pitch, pitch, 1});
    copy(dense.view(), x);
    Tensor want(c.dtype, ys, c.y_layout);
    try {
      ref::qlinear_average_pool(x, want, c.p);
    } catch (const Error&) {
      continue;
    }
    const std::vector<uint8_t> wb = bytes_nchw(want);
    set_num_threads(1 + attempt % 3);
    const cpu::QAvgPoolProblem prob{x, want, &c.p, cpu::make_qavg_plan(x, want, c.p)};
    const std::string context =
        where(seed, attempt, " x row pitch " + std::to_string(pitch) + "\n  " + c.text());
    if (!every_variant(prob, c, ys, wb, context, runs)) return;
  }
  set_num_threads(0);
  std::printf("[ qpool ] k2s2: %lld runs (seed %u)\n", static_cast<long long>(runs.total()), seed);
  EXPECT_GT(runs.total(),
            variant_test::scaled_to_runnable(cpu::qlinear_average_pool_kernels(), 900));
}

// A random window over c.x_shape (padding, ceil mode, both divisors, strides
// 1-3) with calibrated scales under ONNX Runtime's profile.
void calibrated_window(std::mt19937& g, Case& c) {
  auto pick = test::picker(g);
  const int64_t H = c.x_shape[2], W = c.x_shape[3];
  qpool_test::random_avg_window(g, std::min<int64_t>(H + 1, 4), std::min<int64_t>(W + 1, 5), 3, 3,
                                c.p);
  // Calibrated scales: 24-bit mantissas, so the fp32 sums round.
  c.p.x_scale = std::exp(std::uniform_real_distribution<float>(-7.0f, 1.0f)(g));
  // y_scale = x_scale makes exact averages end in .5 with an even divisor:
  // there the fp32 sum's rounding decides the output (the order matters).
  const int ys_kind = static_cast<int>(g() % 5);
  c.p.y_scale = ys_kind == 0   ? 1.0f
                : ys_kind <= 2 ? c.p.x_scale
                               : std::exp(std::uniform_real_distribution<float>(-7.0f, 1.0f)(g));
  const detail::CodeRange r = detail::code_range(c.dtype);
  c.p.x_zero_point = g() % 4 == 0 ? r.lo : static_cast<int32_t>(pick(r.lo, r.hi));
  c.p.y_zero_point = g() % 4 == 0 ? r.hi : static_cast<int32_t>(pick(r.lo, r.hi));
  apply_profile(c.p, c.profile);
}

// ONNX Runtime's float path on NCHW with calibrated (long-mantissa) scales,
// on images wide enough for several vector blocks per row and their masked
// tails (W up to 90), strides 1 to 3, padding, ceil mode, both divisors, x
// rows with a padded pitch, y in NHWC (a strided output row), 1 to 3 threads:
// every variant that accepts the problem against the reference.
TEST(QPoolFast, FloatPathNchwOnWideImagesWithCalibratedScales) {
  Restore restore;
  const uint32_t seed = kSeed + 5;
  std::mt19937 g(seed);
  const auto& list = cpu::qlinear_average_pool_kernels();
  auto pick = test::picker(g);
  Runs runs;
  int cases = 0;
  for (int attempt = 0; attempt < 400; ++attempt) {
    Case c;
    c.profile = Profile::onnxruntime;
    c.dtype = g() % 2 ? DType::s8 : DType::u8;
    c.y_layout = g() % 4 == 0 ? Layout::nhwc : Layout::nchw;
    const int64_t H = g() % 6 == 0 ? 1 : pick(1, 12);
    const int64_t W = g() % 8 == 0   ? pick(1, 3)
                      : g() % 3 == 0 ? 16 * pick(1, 4) + pick(-1, 1)
                                     : pick(1, 90);
    c.x_shape = {pick(1, 2), pick(1, 5), H, W};
    calibrated_window(g, c);
    Shape ys;
    try {
      ys = qlinear_average_pool_output_shape(c.x_shape, c.p);
    } catch (const Error&) {
      continue;
    }
    // x with a row pitch of W + extra codes (unit stride along W only).
    const int64_t pitch = W + (g() % 3 == 0 ? pick(1, 7) : 0);
    const int64_t N = c.x_shape[0], C = c.x_shape[1];
    const Tensor dense = random_codes(g, c);
    std::vector<uint8_t> storage(static_cast<size_t>(N * C * H * pitch), 0xa5);
    const TensorView x(storage.data(), c.dtype, c.x_shape, {C * H * pitch, H * pitch, pitch, 1});
    copy(dense.view(), x);
    Tensor want(c.dtype, ys, c.y_layout);
    ref::qlinear_average_pool(x, want, c.p);
    const std::vector<uint8_t> wb = bytes_nchw(want);
    ++cases;
    set_num_threads(1 + attempt % 3);
    const cpu::QAvgPoolProblem prob{x, want, &c.p, cpu::make_qavg_plan(x, want, c.p)};
    const std::string context =
        where(seed, attempt, " x row pitch " + std::to_string(pitch) + "\n  " + c.text());
    if (!every_variant(prob, c, ys, wb, context, runs)) return;
  }
  set_num_threads(0);
  std::printf("[ qpool ] float path NCHW: %d cases (seed %u)\n", cases, seed);
  variant_test::print_runs("qpool", runs);
  EXPECT_GT(cases, 300);
  expect_each_ran(list, runs, 250, name_has("fmean-nchw"));
}

// ONNX Runtime's float path on NHWC with calibrated scales: channel counts
// around the vector steps (1-8 lanes, 32 and 64 channels per step and their
// tails, up to 150), x pixels with a padded pitch, windows as above (1-wide
// images, padding, ceil mode, both divisors), batch 1-3, 1 to 3 threads:
// every variant that accepts the problem against the reference.
TEST(QPoolFast, FloatPathNhwcOnManyChannelsWithCalibratedScales) {
  Restore restore;
  const uint32_t seed = kSeed + 7;
  std::mt19937 g(seed);
  const auto& list = cpu::qlinear_average_pool_kernels();
  auto pick = test::picker(g);
  Runs runs;
  int cases = 0;
  for (int attempt = 0; attempt < 300; ++attempt) {
    Case c;
    c.profile = Profile::onnxruntime;
    c.dtype = g() % 2 ? DType::s8 : DType::u8;
    c.x_layout = c.y_layout = Layout::nhwc;
    const int64_t C = g() % 3 == 0 ? 32 * pick(1, 4) + pick(-1, 1) : pick(1, 150);
    const int64_t H = g() % 6 == 0 ? 1 : pick(1, 9), W = g() % 6 == 0 ? 1 : pick(1, 9);
    c.x_shape = {pick(1, 3), C, H, W};
    calibrated_window(g, c);
    Shape ys;
    try {
      ys = qlinear_average_pool_output_shape(c.x_shape, c.p);
    } catch (const Error&) {
      continue;
    }
    // x pixels pitch + extra codes apart (unit stride along C only).
    const int64_t pitch = C + (g() % 3 == 0 ? pick(1, 9) : 0);
    const int64_t N = c.x_shape[0];
    const Tensor dense = random_codes(g, c);
    std::vector<uint8_t> storage(static_cast<size_t>(N * H * W * pitch), 0xa5);
    const TensorView x(storage.data(), c.dtype, c.x_shape, {H * W * pitch, 1, W * pitch, pitch});
    copy(dense.view(), x);
    Tensor want(c.dtype, ys, c.y_layout);
    ref::qlinear_average_pool(x, want, c.p);
    const std::vector<uint8_t> wb = bytes_nchw(want);
    ++cases;
    set_num_threads(1 + attempt % 3);
    const cpu::QAvgPoolProblem prob{x, want, &c.p, cpu::make_qavg_plan(x, want, c.p)};
    const std::string context =
        where(seed, attempt, " x pixel pitch " + std::to_string(pitch) + "\n  " + c.text());
    if (!every_variant(prob, c, ys, wb, context, runs)) return;
  }
  set_num_threads(0);
  std::printf("[ qpool ] float path NHWC: %d cases (seed %u)\n", cases, seed);
  variant_test::print_runs("qpool", runs);
  EXPECT_GT(cases, 250);
  expect_each_ran(list, runs, 200, name_has("fmean-nhwc"));
}

}  // namespace
}  // namespace test_qpool_fast
}  // namespace npukit

namespace npukit {
namespace test_qpool_fast {
namespace {

// bm_pool_quantized (BM168x atomic pooling): every variant of its list against
// the reference; mode max, zero insertion and dilation must be declined.
TEST(QPoolFast, BmPoolQuantizedVariantsEqualReference) {
  Restore restore;
  const uint32_t seed = kSeed + 3;
  std::mt19937 g(seed);
  const auto& list = cpu::bm_pool_quantized_kernels();
  Runs runs;
  int cases = 0;
  for (int attempt = 0; attempt < 1500; ++attempt) {
    auto pick = [&](int lo, int hi) { return lo + static_cast<int>(g() % (hi - lo + 1)); };
    BmPoolQuantParams p;
    p.mode = g() % 5 == 0 ? QuantPoolMode::max : QuantPoolMode::avg;
    Window2d& w = p.window;
    const int H = pick(1, 12), W = pick(1, 15);
    w.kernel_h = pick(1, 4);
    w.kernel_w = pick(1, 4);
    w.stride_h = pick(1, 3);
    w.stride_w = pick(1, 3);
    w.pad_top = pick(0, 2);
    w.pad_bottom = pick(0, 2);
    w.pad_left = pick(0, 2);
    w.pad_right = pick(0, 2);
    if (g() % 8 == 0) w.ins_h = pick(1, 2);
    if (g() % 8 == 0) w.dilation_w = 2;
    p.rshift = g() % 4 == 0 ? pick(0, 31) : pick(0, 6);
    p.relu = g() % 2;
    const DType t = g() % 2 ? DType::s8 : DType::u8;
    const Layout layout = g() % 2 ? Layout::nhwc : Layout::nchw;
    const Shape xs = {pick(1, 3), pick(1, 13), H, W};
    Shape ys;
    try {
      ys = bm_pool_quantized_output_shape(xs, p);
    } catch (const Error&) {
      continue;
    }
    Case codes;
    codes.dtype = t;
    codes.x_shape = xs;
    codes.x_layout = layout;
    const Tensor x = random_codes(g, codes);
    Tensor want(t, ys, layout);
    if (t == DType::s8)
      ref::bm_pool_quantized<int8_t>(x, want, p);
    else
      ref::bm_pool_quantized<uint8_t>(x, want, p);
    const std::vector<uint8_t> wb = bytes_nchw(want);
    ++cases;
    set_num_threads(1 + attempt % 3);
    const cpu::BmPoolProblem prob{{x, want, nullptr, cpu::make_bm_pool_plan(x, want, p)}, &p};
    Tensor yv;
    const auto fresh_y = [&] {
      cpu::BmPoolProblem q = prob;
      yv = Tensor(t, ys, layout);
      q.q.y = yv;
      return q;
    };
    const auto compare = [&](const cpu::BmPoolProblem& q) {
      return first_difference(bytes_nchw(q.q.y), wb);
    };
    const std::string context =
        where(seed, attempt,
              " x=" + shape_text(xs) + " " + dtype_name(t) + " " + layout_name(layout) +
                  " k=" + std::to_string(w.kernel_h) + "x" + std::to_string(w.kernel_w) +
                  " s=" + std::to_string(w.stride_h) + "x" + std::to_string(w.stride_w) +
                  " pads=" + std::to_string(w.pad_top) + "," + std::to_string(w.pad_bottom) + "," +
                  std::to_string(w.pad_left) + "," + std::to_string(w.pad_right) +
                  " rshift=" + std::to_string(p.rshift) + " relu=" + std::to_string(p.relu));
    if (!variant_test::run_every_variant(list, fresh_y, compare, context, runs)) return;
    // The public call (whichever kernel it picks) agrees too.
    Tensor y(t, ys, layout);
    bm_pool_quantized(x, y, p);
    ASSERT_EQ(bytes_nchw(y), wb) << "public call, attempt " << attempt;
  }
  set_num_threads(0);
  std::printf("[ qpool ] bm_pool_quantized: %d cases, %lld declines\n", cases,
              static_cast<long long>(runs.declines()));
  EXPECT_GT(cases, 800);
  EXPECT_GT(runs.declines(), 100);  // max, ins and dilation reach the reference
  expect_each_ran(list, runs, 150);
}

}  // namespace
}  // namespace test_qpool_fast
}  // namespace npukit

namespace npukit {
namespace test_qpool_fast {
namespace {

// int_mean (TFLite, MiCo) on windows up to 60000 taps, whose sums approach
// 2^24 where the fast kernels' fp32 quotient is closest to its limit, under
// every rounding rule.
TEST(QPoolFast, IntMeanLargeWindowsEveryRounding) {
  // Its kernels are AVX2/AVX-512 only: nothing to compare under a lower cap.
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "needs AVX2 kernels (NPUKIT_MAX_ISA is below avx2)";
  Restore restore;
  const uint32_t seed = kSeed + 4;
  std::mt19937 g(seed);
  Runs runs;
  for (Rounding rounding : all_roundings()) {
    for (int rep = 0; rep < 3; ++rep) {
      Case c;
      c.profile = rep % 2 ? Profile::mico : Profile::tflite;
      c.dtype = rep == 2 ? DType::u8 : DType::s8;
      c.x_layout = c.y_layout = Layout::nchw;
      const int64_t H = 150 + static_cast<int64_t>(g() % 51),
                    W = 250 + static_cast<int64_t>(g() % 51);
      c.x_shape = {1, 3, H, W};
      c.p.window.kernel_h = rep == 1 ? H : H - static_cast<int64_t>(g() % 3);
      c.p.window.kernel_w = rep == 1 ? W : W - static_cast<int64_t>(g() % 3);
      c.p.window.pad_top = rep == 0 ? 1 : 0;
      apply_profile(c.p, c.profile);
      c.p.rounding = rounding;
      const Tensor x = random_codes(g, c);
      const Shape ys = qlinear_average_pool_output_shape(c.x_shape, c.p);
      Tensor want(c.dtype, ys, c.y_layout);
      ref::qlinear_average_pool(x, want, c.p);
      const cpu::QAvgPoolProblem prob{x, want, &c.p, cpu::make_qavg_plan(x, want, c.p)};
      const std::string context = "seed " + std::to_string(seed) + " rounding " +
                                  rounding_name(rounding) + " rep " + std::to_string(rep) + "\n  " +
                                  c.text();
      if (!every_variant(prob, c, ys, bytes_nchw(want), context, runs)) return;
    }
  }
  EXPECT_GT(runs.total(), 24);
}

}  // namespace
}  // namespace test_qpool_fast
}  // namespace npukit

namespace npukit {
namespace test_qpool_fast {
namespace {

// ONNX Runtime's float path with short-mantissa scales (exact_float_sum: the
// kernels form integer sums) next to ones that do not qualify, y_scale 1 and
// power-of-two windows (the tail's exact division shortcuts): every variant
// against the reference, u8 and s8, NCHW and NHWC, both divisors, 1-3 threads.
TEST(QPoolFast, ExactFloatSumsAndDivisorShortcutsEqualReference) {
  // Its kernels are AVX2/AVX-512 only: nothing to compare under a lower cap.
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "needs AVX2 kernels (NPUKIT_MAX_ISA is below avx2)";
  Restore restore;
  const uint32_t seed = 9127;
  std::mt19937 g(seed);
  const float x_scales[] = {1.0f, 0.5f, 3.0f / 64.0f, 255.0f, 0.1f, 6.0f / 255.0f, 0x1p-140f};
  const float y_scales[] = {1.0f, 0.37f, 2.0f, 0.5f};
  Runs runs;
  int exact = 0, inexact = 0;
  for (int i = 0; i < 400; ++i) {
    Case c;
    c.profile = Profile::onnxruntime;
    c.dtype = i % 2 ? DType::u8 : DType::s8;
    c.x_layout = c.y_layout = (i / 2) % 3 == 0 ? Layout::nhwc : Layout::nchw;
    const int64_t k = 2 + (i / 6) % 3, s = 1 + (i / 18) % 2;
    c.x_shape = {1 + i % 2, 1 + static_cast<int64_t>(g() % 9), 5 + static_cast<int64_t>(g() % 9),
                 5 + static_cast<int64_t>(g() % 60)};
    Window2d& w = c.p.window;
    w = Window2d{};
    w.kernel_h = w.kernel_w = k;
    w.stride_h = w.stride_w = s;
    w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = (i / 36) % 2;
    w.ceil_mode = (i / 72) % 2;
    c.p.count_include_pad = (i / 3) % 2;
    c.p.x_scale = x_scales[g() % 7];
    c.p.y_scale = y_scales[g() % 4];
    const detail::CodeRange r = detail::code_range(c.dtype);
    c.p.x_zero_point = r.lo + static_cast<int>(g() % 256);
    c.p.y_zero_point = r.lo + static_cast<int>(g() % 256);
    apply_profile(c.p, c.profile);
    const Tensor x = random_codes(g, c);
    const Shape ys = qlinear_average_pool_output_shape(c.x_shape, c.p);
    Tensor want(c.dtype, ys, c.y_layout);
    ref::qlinear_average_pool(x, want, c.p);
    const std::vector<uint8_t> wb = bytes_nchw(want);
    const cpu::QAvgPoolProblem prob{x, want, &c.p, cpu::make_qavg_plan(x, want, c.p)};
    (prob.plan.exact_float_sum ? exact : inexact) += 1;
    set_num_threads(1 + i % 3);
    const std::string context =
        "seed " + std::to_string(seed) + ", case " + std::to_string(i) + "\n  " + c.text();
    if (!every_variant(prob, c, ys, wb, context, runs)) return;
  }
  EXPECT_GT(exact, 100);
  EXPECT_GT(inexact, 50);
  EXPECT_GT(runs.total(), 600);
}

}  // namespace
}  // namespace test_qpool_fast
}  // namespace npukit
