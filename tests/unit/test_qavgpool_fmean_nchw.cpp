// x8-qavgpool-fmean-nchw-{avx512,avx2} (ONNX Runtime's float QLinearAveragePool
// on NCHW) against the reference, bit for bit, on seeded random problems:
// kernels up to 7x7, strides 1-3, padding up to kernel - 1, ceil-mode
// overhang, windows entirely in padding, both divisors, 1-wide images, odd
// widths, batch > 1, a padded x row pitch, threads 1-3, every ISA cap the
// host runs, Impl::reference. The scales include ratios that put many exact
// averages on half-integers (the kernel's multiply-then-check tail must send
// those to the divisions), tiny and huge y_scale (outside the fast tail's
// range) and extreme zero points. A failure prints the seed and the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
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
namespace test_qavgpool_fmean_nchw {
namespace {

using qpool_test::bytes_nchw;
using qpool_test::first_difference;

constexpr uint32_t kSeed = 20261127;

struct Problem {
  DType dtype = DType::u8;
  Shape shape;
  int64_t pitch = 0;  // x row pitch (>= W)
  int scale_kind = 0;
  int code_kind = 0;
  QLinearAvgPoolParams p;

  std::string text() const {
    std::ostringstream s;
    const Window2d& w = p.window;
    s << dtype_name(dtype) << " x " << shape[0] << "x" << shape[1] << "x" << shape[2] << "x"
      << shape[3] << " pitch " << pitch << " k " << w.kernel_h << "x" << w.kernel_w << " s "
      << w.stride_h << "x" << w.stride_w << " pad t" << w.pad_top << " b" << w.pad_bottom << " l"
      << w.pad_left << " r" << w.pad_right << " ceil " << w.ceil_mode << " include_pad "
      << p.count_include_pad << " x_scale " << p.x_scale << " (" << std::hexfloat << p.x_scale
      << std::defaultfloat << ") zp " << p.x_zero_point << " y_scale " << p.y_scale << " ("
      << std::hexfloat << p.y_scale << std::defaultfloat << ") zp " << p.y_zero_point
      << " scale kind " << scale_kind << " code kind " << code_kind;
    return s.str();
  }
};

// Scales of five kinds: calibrated (random 24-bit mantissas); y_scale a small
// multiple of x_scale over a power of two (exact averages on .5, ties that
// only the divisions decide); y_scale == x_scale; y_scale beyond the fast
// tail's [2^-100, 2^100]; tiny x_scale (subnormal-range quotients).
void random_scales(std::mt19937& g, Problem& c) {
  auto uni = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(g); };
  c.scale_kind = static_cast<int>(g() % 5);
  switch (c.scale_kind) {
    case 0:
      c.p.x_scale = std::exp(uni(-7.0f, 1.0f));
      c.p.y_scale = std::exp(uni(-7.0f, 1.0f));
      break;
    case 1: {
      c.p.y_scale = std::exp(uni(-6.0f, 0.0f));
      const float k = static_cast<float>(1 + g() % 7), two = std::ldexp(1.0f, -int(g() % 3));
      c.p.x_scale = c.p.y_scale * k * two;
      break;
    }
    case 2:
      c.p.x_scale = c.p.y_scale = std::exp(uni(-7.0f, 1.0f));
      break;
    case 3:
      c.p.y_scale = g() % 2 ? std::ldexp(std::exp(uni(-1.0f, 1.0f)), -110)
                            : std::ldexp(std::exp(uni(-1.0f, 1.0f)), 105);
      c.p.x_scale = c.p.y_scale * std::exp(uni(-3.0f, 1.0f));
      break;
    default:
      c.p.x_scale = std::ldexp(std::exp(uni(-1.0f, 1.0f)), -120);
      c.p.y_scale = c.p.x_scale * std::exp(uni(-2.0f, 2.0f));
      break;
  }
}

// A random problem; false when the window does not fit the shape.
bool random_problem(std::mt19937& g, Problem& c) {
  auto pick = test::picker(g);
  c.dtype = g() % 2 ? DType::s8 : DType::u8;
  const int64_t H = g() % 6 == 0 ? 1 : pick(1, 20);
  const int64_t W = g() % 6 == 0 ? 1 : g() % 3 == 0 ? 2 * pick(0, 20) + 1 : pick(1, 45);
  c.shape = {pick(1, 3), pick(1, 5), H, W};
  c.pitch = W + (g() % 3 == 0 ? pick(1, 9) : 0);
  c.p = QLinearAvgPoolParams{};
  qpool_test::random_avg_window(g, std::min<int64_t>(H + 2, 7), std::min<int64_t>(W + 2, 7), 3, 3,
                                c.p);
  random_scales(g, c);
  qpool_test::random_zero_points(g, c.dtype, c.p);
  apply_profile(c.p, Profile::onnxruntime);
  try {
    qlinear_average_pool_output_shape(c.shape, c.p);
  } catch (const Error&) {
    return false;
  }
  return true;
}

// Codes: uniform, only the extremes, or near the zero point (small averages).
void fill_codes(std::mt19937& g, Problem& c, const TensorView& x) {
  Tensor dense(c.dtype, c.shape);
  const detail::CodeRange r = detail::code_range(c.dtype);
  c.code_kind = static_cast<int>(g() % 4);
  auto* d = static_cast<uint8_t*>(dense.view().raw());
  for (int64_t i = 0; i < dense.numel(); ++i) {
    int v;
    if (c.code_kind == 0)
      v = g() % 2 ? r.lo : r.hi;
    else if (c.code_kind == 1)
      v = std::clamp(c.p.x_zero_point + static_cast<int>(g() % 7) - 3, r.lo, r.hi);
    else
      v = r.lo + static_cast<int>(g() % 256);
    d[i] = static_cast<uint8_t>(v);
  }
  copy(dense.view(), x);
}

bool is_fmean_nchw(const char* name) {
  return std::string(name).find("fmean-nchw") != std::string::npos;
}

TEST(QAvgPoolFmeanNchwFast, MatchesTheReferenceOnRandomProblems) {
  // Its kernels are AVX2/AVX-512 only: nothing to compare under a lower cap.
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "needs AVX2 kernels (NPUKIT_MAX_ISA is below avx2)";
  qpool_test::Restore restore;
  const uint32_t seed = kSeed;
  std::mt19937 g(seed);
  const auto& list = cpu::qlinear_average_pool_kernels();
  std::vector<Isa> caps;
  for (Isa isa : {Isa::avx512_vnni, Isa::avx2, Isa::portable})
    if (isa <= host_isa()) caps.push_back(isa);
  std::map<std::string, int> ran;
  std::map<int, int> by_scale_kind;
  int problems = 0, public_calls = 0;
  for (int attempt = 0; attempt < 700; ++attempt) {
    Problem c;
    if (!random_problem(g, c)) continue;
    const int64_t N = c.shape[0], C = c.shape[1], H = c.shape[2];
    std::vector<uint8_t> storage(static_cast<size_t>(N * C * H * c.pitch), 0x5a);
    const TensorView x(storage.data(), c.dtype, c.shape,
                       {C * H * c.pitch, H * c.pitch, c.pitch, 1});
    fill_codes(g, c, x);
    const Shape ys = qlinear_average_pool_output_shape(c.shape, c.p);
    Tensor want(c.dtype, ys);
    ref::qlinear_average_pool(x, want, c.p);
    const std::vector<uint8_t> wb = bytes_nchw(want);
    ++problems;
    const int threads = 1 + attempt % 3;
    set_num_threads(threads);
    cpu::QAvgPoolProblem prob{x, want, &c.p, cpu::make_qavg_plan(x, want, c.p)};
    bool any = false;
    for (Isa cap : caps) {
      set_max_isa(cap);
      for (const auto& v : list.variants) {
        if (!is_fmean_nchw(v.name) || !list.runnable(v) || v.declines(prob)) continue;
        Tensor y(c.dtype, ys);
        prob.y = y;
        v.run(prob);
        ASSERT_EQ(bytes_nchw(y), wb) << v.name << " seed " << seed << " attempt " << attempt
                                     << " threads " << threads << " cap " << isa_name(cap) << "\n  "
                                     << c.text() << "\n  " << first_difference(bytes_nchw(y), wb);
        ++ran[v.name];
        any = true;
      }
      // The public call under this cap and under Impl::reference.
      for (Impl impl : {Impl::fast, Impl::reference}) {
        set_impl(impl);
        Tensor y(c.dtype, ys);
        qlinear_average_pool(x, y, c.p);
        ASSERT_EQ(bytes_nchw(y), wb)
            << "qlinear_average_pool impl " << (impl == Impl::fast ? "fast" : "reference")
            << " seed " << seed << " attempt " << attempt << " threads " << threads << " cap "
            << isa_name(cap) << "\n  " << c.text() << "\n  " << first_difference(bytes_nchw(y), wb);
        ++public_calls;
      }
      set_impl(Impl::fast);
    }
    if (any) ++by_scale_kind[c.scale_kind];
    set_max_isa(host_isa());
  }
  std::printf("[ fmean-nchw ] %d problems (seed %u), %d public calls\n", problems, seed,
              public_calls);
  for (const auto& [name, n] : ran) std::printf("[ fmean-nchw ] ran %s: %d\n", name.c_str(), n);
  for (const auto& [kind, n] : by_scale_kind)
    std::printf("[ fmean-nchw ] scale kind %d: %d problems a variant took\n", kind, n);
  EXPECT_GT(problems, 500);
  for (const auto& v : list.variants)
    if (is_fmean_nchw(v.name) && list.runnable(v)) {
      EXPECT_GT(ran[v.name], 250) << v.name;
    }
  // Every scale kind reached a kernel (tie-prone ratios and out-of-range y_scale included).
  for (int kind = 0; kind < 5; ++kind) EXPECT_GT(by_scale_kind[kind], 20) << "scale kind " << kind;
}

// The race's shapes, scaled down in channels, with calibrated scales and with
// tie-prone ones: whole vectors of outputs, the stride-2 split and the
// per-output divisors on the sizes the kernels are tuned for.
TEST(QAvgPoolFmeanNchwFast, MatchesTheReferenceOnTheRaceShapes) {
  // Its kernels are AVX2/AVX-512 only: nothing to compare under a lower cap.
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "needs AVX2 kernels (NPUKIT_MAX_ISA is below avx2)";
  qpool_test::Restore restore;
  const uint32_t seed = kSeed + 1;
  std::mt19937 g(seed);
  const auto& list = cpu::qlinear_average_pool_kernels();
  struct Geometry {
    Shape x;
    int64_t k, s, pad;
  };
  const Geometry shapes[] = {{{1, 4, 112, 112}, 3, 2, 1},
                             {{2, 3, 56, 56}, 2, 2, 0},
                             {{1, 6, 14, 14}, 3, 1, 1},
                             {{1, 3, 28, 28}, 7, 3, 3}};
  int runs = 0;
  for (const Geometry& s : shapes) {
    for (int variant = 0; variant < 8; ++variant) {
      Problem c;
      c.dtype = variant % 2 ? DType::s8 : DType::u8;
      c.shape = s.x;
      c.pitch = s.x[3];
      Window2d& w = c.p.window;
      w.kernel_h = w.kernel_w = s.k;
      w.stride_h = w.stride_w = s.s;
      w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = s.pad;
      c.p.count_include_pad = variant / 2 % 2;
      random_scales(g, c);
      if (variant / 4 == 0) {  // the race's calibrated scales
        c.p.x_scale = 0.0235f;
        c.p.y_scale = 0.0198f;
      }
      c.p.x_zero_point = c.dtype == DType::s8 ? -3 : 121;
      c.p.y_zero_point = c.dtype == DType::s8 ? 5 : 117;
      apply_profile(c.p, Profile::onnxruntime);
      Tensor x(c.dtype, c.shape);
      fill_codes(g, c, x.view());
      const Shape ys = qlinear_average_pool_output_shape(c.shape, c.p);
      Tensor want(c.dtype, ys);
      ref::qlinear_average_pool(x.view(), want, c.p);
      const std::vector<uint8_t> wb = bytes_nchw(want);
      for (int threads = 1; threads <= 3; ++threads) {
        set_num_threads(threads);
        cpu::QAvgPoolProblem prob{x.view(), want, &c.p, cpu::make_qavg_plan(x.view(), want, c.p)};
        for (const auto& v : list.variants) {
          if (!is_fmean_nchw(v.name) || !list.runnable(v) || v.declines(prob)) continue;
          Tensor y(c.dtype, ys);
          prob.y = y;
          v.run(prob);
          ASSERT_EQ(bytes_nchw(y), wb)
              << v.name << " seed " << seed << " threads " << threads << "\n  " << c.text()
              << "\n  " << first_difference(bytes_nchw(y), wb);
          ++runs;
        }
      }
    }
  }
  std::printf("[ fmean-nchw ] race shapes: %d runs (seed %u)\n", runs, seed);
  EXPECT_GT(runs, variant_test::scaled_to_runnable(cpu::qlinear_average_pool_kernels(), 100));
}

}  // namespace
}  // namespace test_qavgpool_fmean_nchw
}  // namespace npukit
