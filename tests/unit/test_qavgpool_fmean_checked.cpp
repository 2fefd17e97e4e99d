// ONNX Runtime's float QLinearAveragePool from integer window sums with the
// checked tail (QAvgPlan::fmean_checked, qavgpool-fmean-check.cpp) against the
// reference, bit for bit: every variant of the family that takes a case
// (run_every_variant), the public call under every ISA cap the host runs and
// under Impl::reference, 1-3 threads. Geometry: kernels up to 7x7, strides
// 1-3, padding up to kernel - 1, ceil-mode overhang, windows entirely in
// padding, both divisors, 1-wide images, odd widths and channel counts, batch
// > 1, NCHW with a padded row pitch and NHWC. Scales: calibrated (random
// mantissas), tie-prone (exact averages on .5: those lanes must take the
// redo), extreme zero points; tall planes; codes uniform, at the extremes (largest fp32
// rounding errors) or near the zero point. The test counts the lanes its data
// send to the redo (the kernels' own test, recomputed here) so that the redo
// is known to be exercised. A failure prints the seed and the case.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
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
namespace test_qavgpool_fmean_checked {
namespace {

using qpool_test::bytes_nchw;
using qpool_test::first_difference;

constexpr uint32_t kSeed = 20261127;

struct Case {
  DType dtype = DType::u8;
  Shape shape;
  Layout layout = Layout::nchw;
  int64_t extra = 0;  // x row (NCHW) or pixel (NHWC) pitch beyond W or C
  int scale_kind = 0, code_kind = 0;
  QLinearAvgPoolParams p;

  std::string text() const {
    std::ostringstream s;
    const Window2d& w = p.window;
    s << dtype_name(dtype) << " x " << shape_text(shape) << " " << layout_name(layout) << " pitch +"
      << extra << " k " << w.kernel_h << "x" << w.kernel_w << " s " << w.stride_h << "x"
      << w.stride_w << " pad t" << w.pad_top << " b" << w.pad_bottom << " l" << w.pad_left << " r"
      << w.pad_right << " ceil " << w.ceil_mode << " include_pad " << p.count_include_pad
      << " x_scale " << std::hexfloat << p.x_scale << " y_scale " << p.y_scale << std::defaultfloat
      << " x_zp " << p.x_zero_point << " y_zp " << p.y_zero_point << " scale kind " << scale_kind
      << " code kind " << code_kind;
    return s.str();
  }
};

// 0: calibrated (random mantissas); 1: x_scale = y_scale * taps * k / 2
// rounded (exact averages on or next to .5: redo lanes); 2: the race's
// 0.0235 / 0.0198; 3: large ratio (outputs far outside the code range).
void random_scales(std::mt19937& g, Case& c) {
  auto uni = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(g); };
  const auto taps = static_cast<float>(c.p.window.kernel_h * c.p.window.kernel_w);
  c.scale_kind = static_cast<int>(g() % 4);
  switch (c.scale_kind) {
    case 0:
      c.p.x_scale = std::exp(uni(-6.0f, 1.0f));
      c.p.y_scale = std::exp(uni(-6.0f, 1.0f));
      break;
    case 1:
      c.p.y_scale = std::exp(uni(-6.0f, 0.0f));
      c.p.x_scale = c.p.y_scale * taps * static_cast<float>(1 + g() % 5) * 0.5f;
      break;
    case 2:
      c.p.x_scale = 0.0235f;
      c.p.y_scale = 0.0198f;
      break;
    default:
      c.p.y_scale = std::exp(uni(-6.0f, 0.0f));
      c.p.x_scale = c.p.y_scale * uni(3.0f, 40.0f);
      break;
  }
}

bool random_case(std::mt19937& g, Case& c) {
  auto pick = test::picker(g);
  c.dtype = g() % 2 ? DType::s8 : DType::u8;
  c.layout = g() % 3 == 0 ? Layout::nhwc : Layout::nchw;
  // Some tall planes: narrow rows whose window rows exceed the kernels' row buffer.
  const int64_t H = g() % 6 == 0 ? 1 : g() % 12 == 0 ? pick(60, 90) : pick(1, 18);
  const int64_t W = g() % 6 == 0 ? 1 : g() % 3 == 0 ? 32 * pick(1, 3) + pick(-3, 3) : pick(1, 45);
  const int64_t C = c.layout == Layout::nhwc && g() % 2 ? pick(30, 99) : 2 * pick(0, 3) + 1;
  c.shape = {pick(1, 3), C, H, W};
  c.extra = g() % 3 == 0 ? pick(1, 9) : 0;
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

// Codes: only the extremes, near the zero point, or uniform.
void fill_codes(std::mt19937& g, Case& c, const TensorView& x) {
  Tensor dense(c.dtype, c.shape);
  const detail::CodeRange r = detail::code_range(c.dtype);
  c.code_kind = static_cast<int>(g() % 3);
  auto* d = static_cast<uint8_t*>(dense.view().raw());
  for (int64_t i = 0; i < dense.numel(); ++i) {
    int v = r.lo + static_cast<int>(g() % 256);
    if (c.code_kind == 0) v = g() % 2 ? r.lo : r.hi;
    if (c.code_kind == 1)
      v = std::clamp(c.p.x_zero_point + static_cast<int>(g() % 7) - 3, r.lo, r.hi);
    d[i] = static_cast<uint8_t>(v);
  }
  copy(dense.view(), x);
}

struct Storage {
  std::vector<uint8_t> bytes;
  TensorView view;
};
Storage make_x(const Case& c) {
  const int64_t N = c.shape[0], C = c.shape[1], H = c.shape[2], W = c.shape[3];
  Storage st;
  if (c.layout == Layout::nchw) {
    const int64_t pitch = W + c.extra;
    st.bytes.assign(static_cast<size_t>(N * C * H * pitch), 0x5a);
    st.view = TensorView(st.bytes.data(), c.dtype, c.shape, {C * H * pitch, H * pitch, pitch, 1});
  } else {
    const int64_t pitch = C + c.extra;
    st.bytes.assign(static_cast<size_t>(N * H * W * pitch), 0x5a);
    st.view = TensorView(st.bytes.data(), c.dtype, c.shape, {H * W * pitch, 1, W * pitch, pitch});
  }
  return st;
}

// The outputs whose integer-sum value v' fails the kernels' check (they take
// the redo), recomputed from the plan as the kernels compute it.
int64_t redo_lanes(const cpu::QAvgPlan& P, const TensorView& x) {
  if (!P.fmean_checked) return 0;
  int64_t count = 0;
  for (int64_t n = 0; n < P.N; ++n)
    for (int64_t ch = 0; ch < P.C; ++ch)
      for (size_t oh = 0; oh < P.h.valid.size(); ++oh)
        for (size_t ow = 0; ow < P.w.valid.size(); ++ow) {
          int64_t D = 0;
          const int64_t valid = int64_t{P.h.valid[oh]} * P.w.valid[ow];
          for (int64_t r = 0; r < P.h.valid[oh]; ++r)
            for (int64_t q = 0; q < P.w.valid[ow]; ++q)
              D += detail::code_at(static_cast<const char*>(x.raw()), x.dtype(),
                                   n * x.stride(0) + ch * x.stride(1) +
                                       (P.h.first[oh] + r) * x.stride(2) +
                                       (P.w.first[ow] + q) * x.stride(3)) -
                   P.x_zp;
          const int64_t div = P.divisor == AvgDivisor::kernel_area ? P.taps : valid;
          const float c = div > 0 ? cpu::fmean_check_multiplier(P, div) : 0.0f;
          const float v = static_cast<float>(D) * c + static_cast<float>(P.y_zp);
          count += !(std::fabs(v - std::nearbyint(v)) < P.fmean_check_below);
        }
  return count;
}

TEST(QAvgPoolFmeanCheckedFast, EveryVariantAndThePublicCallMatchTheReference) {
  qpool_test::Restore restore;
  const uint32_t seed = kSeed;
  std::printf("[ fmean-checked ] seed %u\n", seed);
  std::mt19937 g(seed);
  const auto& list = cpu::qlinear_average_pool_kernels();
  std::vector<Isa> caps;
  for (Isa isa : {Isa::avx512_vnni, Isa::avx2, Isa::portable})
    if (isa <= host_isa()) caps.push_back(isa);
  variant_test::Runs runs;
  int problems = 0, checked = 0;
  int64_t redo = 0, outputs = 0, redo_rows16 = 0;
  std::vector<int> by_scale_kind(4, 0);
  const auto rows16_avx2 = std::find_if(
      list.variants.begin(), list.variants.end(),
      [](const auto& v) { return v.name == std::string("x8-qavgpool-rows16-nchw-avx2"); });
  ASSERT_NE(rows16_avx2, list.variants.end());
  for (int attempt = 0; attempt < 600; ++attempt) {
    Case c;
    if (!random_case(g, c)) continue;
    Storage xs = make_x(c);
    fill_codes(g, c, xs.view);
    const Shape ys = qlinear_average_pool_output_shape(c.shape, c.p);
    Tensor want(c.dtype, ys, c.layout);
    ref::qlinear_average_pool(xs.view, want, c.p);
    const std::vector<uint8_t> wb = bytes_nchw(want);
    ++problems;
    const cpu::QAvgPlan plan = cpu::make_qavg_plan(xs.view, want, c.p);
    if (plan.fmean_checked) {
      ++checked;
      ++by_scale_kind[static_cast<size_t>(c.scale_kind)];
      const int64_t r = redo_lanes(plan, xs.view);
      redo += r;
      outputs += shape_numel(ys);
      // The rows16 kernel's checked tail (narrow NCHW rows) met undecided outputs.
      const cpu::QAvgPoolProblem q{xs.view, want.view(), &c.p, plan};
      if (rows16_avx2->declines(q) == nullptr) redo_rows16 += r;
    }
    const std::string context =
        "seed " + std::to_string(seed) + " attempt " + std::to_string(attempt) + ": " + c.text();
    Tensor y(c.dtype, ys, c.layout);
    auto make = [&] {
      // Poison: an output a kernel leaves unwritten must not pass.
      std::memset(y.view().raw(), 0xa5, static_cast<size_t>(y.numel()));
      return cpu::QAvgPoolProblem{xs.view, y.view(), &c.p, plan};
    };
    auto compare = [&](const cpu::QAvgPoolProblem&) { return first_difference(bytes_nchw(y), wb); };
    ASSERT_TRUE(
        variant_test::run_every_variant(list, make, compare, context, runs, {"", 1 + attempt % 3}));
    for (Isa cap : caps) {
      set_max_isa(cap);
      for (Impl impl : {Impl::fast, Impl::reference}) {
        set_impl(impl);
        set_num_threads(1 + (attempt + static_cast<int>(cap)) % 3);
        Tensor out(c.dtype, ys, c.layout);
        qlinear_average_pool(xs.view, out, c.p);
        ASSERT_EQ(bytes_nchw(out), wb)
            << "public call, impl " << (impl == Impl::fast ? "fast" : "reference") << ", cap "
            << isa_name(cap) << ", threads " << num_threads() << ", " << context << "\n  "
            << first_difference(bytes_nchw(out), wb);
      }
      set_impl(Impl::fast);
    }
    set_max_isa(host_isa());
  }
  variant_test::print_runs("fmean-checked", runs);
  std::printf(
      "[ fmean-checked ] %d problems, %d with the checked tail, %lld of %lld outputs redone (%lld "
      "in problems x8-qavgpool-rows16-nchw-avx2 takes)\n",
      problems, checked, static_cast<long long>(redo), static_cast<long long>(outputs),
      static_cast<long long>(redo_rows16));
  EXPECT_GT(problems, 450);
  EXPECT_GT(checked, 300);
  for (int k = 0; k < 4; ++k) EXPECT_GT(by_scale_kind[static_cast<size_t>(k)], 40) << k;
  // The redo ran on many outputs (the tie-prone scales), and most outputs did not need it.
  EXPECT_GT(redo, 1000);
  EXPECT_LT(redo, outputs / 4);
  EXPECT_GT(redo_rows16, 50);
  if (max_isa() >= Isa::avx2) {
    EXPECT_GT(runs.of("x8-qavgpool-rows16-nchw-avx2"), 40);
  }
  if (max_isa() >= Isa::avx512) {  // the cap, as dispatch and runnable() see it
    // Stride-1 rows of more than 32 outputs go to the fmean kernel (133 runs left here).
    EXPECT_GT(runs.of("x8-qavgpool-u16-nchw-avx512"), 110);
    EXPECT_GT(runs.of("x8-qavgpool-u16-nhwc-avx512"), 60);
  }
}

// The race's shapes (fewer channels) with the race's scales, calibrated and
// tie-prone ones: whole 32-output blocks, stride-2 rows, 14x14 narrow rows
// (also through the rows16 kernels), batch > 1; 1 to 3 threads.
TEST(QAvgPoolFmeanCheckedFast, MatchesTheReferenceOnTheRaceShapes) {
  qpool_test::Restore restore;
  const uint32_t seed = kSeed + 1;
  std::mt19937 g(seed);
  const auto& list = cpu::qlinear_average_pool_kernels();
  struct Geometry {
    Shape x;
    int64_t k, s, pad;
  };
  const Geometry shapes[] = {{{1, 5, 112, 112}, 3, 2, 1},
                             {{2, 7, 56, 56}, 2, 2, 0},
                             {{1, 9, 14, 14}, 3, 1, 1},
                             {{3, 4, 56, 56}, 2, 2, 0}};
  variant_test::Runs runs;
  int64_t redo = 0;
  for (const Geometry& s : shapes)
    for (int variant = 0; variant < 8; ++variant) {
      Case c;
      c.dtype = variant % 2 ? DType::s8 : DType::u8;
      c.layout = variant % 4 == 3 ? Layout::nhwc : Layout::nchw;
      c.shape = s.x;
      Window2d& w = c.p.window;
      w.kernel_h = w.kernel_w = s.k;
      w.stride_h = w.stride_w = s.s;
      w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = s.pad;
      c.p.count_include_pad = variant / 2 % 2 == 0;
      random_scales(g, c);
      c.p.x_zero_point = c.dtype == DType::s8 ? -3 : 121;
      c.p.y_zero_point = c.dtype == DType::s8 ? 5 : 117;
      apply_profile(c.p, Profile::onnxruntime);
      Storage xs = make_x(c);
      fill_codes(g, c, xs.view);
      const Shape ys = qlinear_average_pool_output_shape(c.shape, c.p);
      Tensor want(c.dtype, ys, c.layout);
      ref::qlinear_average_pool(xs.view, want, c.p);
      const std::vector<uint8_t> wb = bytes_nchw(want);
      const cpu::QAvgPlan plan = cpu::make_qavg_plan(xs.view, want, c.p);
      redo += redo_lanes(plan, xs.view);
      Tensor y(c.dtype, ys, c.layout);
      auto make = [&] { return cpu::QAvgPoolProblem{xs.view, y.view(), &c.p, plan}; };
      auto compare = [&](const cpu::QAvgPoolProblem&) {
        return first_difference(bytes_nchw(y), wb);
      };
      const std::string context = "seed " + std::to_string(seed) + ": " + c.text();
      for (const char* only : {"u16-n", "rows16"})
        ASSERT_TRUE(variant_test::run_every_variant(list, make, compare, context, runs,
                                                    {only, 1 + variant % 3}));
    }
  variant_test::print_runs("fmean-checked race", runs);
  std::printf("[ fmean-checked ] race shapes: %lld outputs redone (seed %u)\n",
              static_cast<long long>(redo), seed);
  if (max_isa() >= Isa::avx512) {  // the cap, as dispatch and runnable() see it
    EXPECT_GT(runs.of("x8-qavgpool-u16-nchw-avx512"), 12);
    EXPECT_GT(runs.of("x8-qavgpool-u16-nhwc-avx512"), 2);
  }
  // The 14x14 rows (NCHW: 6 of the 8 variants of that shape).
  if (max_isa() >= Isa::avx2) {
    EXPECT_GE(runs.of("x8-qavgpool-rows16-nchw-avx2"), 6);
  }
  EXPECT_GT(redo, 100);
}

// The bound behind the check, against observed errors: for random windows
// of codes (extremes included) the reference's v and the kernels' v' lie
// within fmean_check_error of the exact value together.
TEST(QAvgPoolFmeanChecked, ErrorBoundCoversTheReferenceAndTheKernel) {
  const uint32_t seed = kSeed + 2;
  std::mt19937 g(seed);
  int planned = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Case c;
    c.dtype = g() % 2 ? DType::s8 : DType::u8;
    c.shape = {1, 1, 8, 8};
    Window2d& w = c.p.window;
    w.kernel_h = 1 + static_cast<int64_t>(g() % 7);
    w.kernel_w = 1 + static_cast<int64_t>(g() % 7);
    c.p.count_include_pad = g() % 2;
    random_scales(g, c);
    const detail::CodeRange r = detail::code_range(c.dtype);
    c.p.x_zero_point = trial % 3 == 0 ? r.lo : r.lo + static_cast<int32_t>(g() % 256);
    c.p.y_zero_point = r.lo + static_cast<int32_t>(g() % 256);
    apply_profile(c.p, Profile::onnxruntime);
    Tensor x(c.dtype, c.shape);
    const Shape ys = qlinear_average_pool_output_shape(c.shape, c.p);
    Tensor y(c.dtype, ys);
    const cpu::QAvgPlan P = cpu::make_qavg_plan(x.view(), y.view(), c.p);
    if (!P.fmean_checked) continue;
    ++planned;
    const int64_t taps = P.taps;
    for (int window = 0; window < 2000; ++window) {
      const int64_t n = 1 + static_cast<int64_t>(g() % static_cast<uint64_t>(taps));
      const int64_t div = P.divisor == AvgDivisor::kernel_area ? taps : n;
      float fsum = 0.0f;
      int64_t D = 0;
      for (int64_t i = 0; i < n; ++i) {
        const int32_t q =
            window % 2 ? (g() % 2 ? r.lo : r.hi) : r.lo + static_cast<int32_t>(g() % 256);
        fsum += P.x_scale * static_cast<float>(q - P.x_zp);
        D += q - P.x_zp;
      }
      const float v = fsum / static_cast<float>(div) / P.y_scale + static_cast<float>(P.y_zp);
      const float vk =
          static_cast<float>(D) * cpu::fmean_check_multiplier(P, div) + static_cast<float>(P.y_zp);
      const long double exact =
          static_cast<long double>(P.x_scale) * D / (static_cast<long double>(div) * P.y_scale) +
          P.y_zp;
      const long double err = std::fabs(v - exact) + std::fabs(vk - exact);
      ASSERT_LE(err, static_cast<long double>(P.fmean_check_error))
          << "seed " << seed << " trial " << trial << " window " << window << ": " << c.text()
          << " n " << n << " D " << D;
    }
  }
  std::printf("[ fmean-checked ] bound checked on %d plans (seed %u)\n", planned, seed);
  EXPECT_GT(planned, 150);
}

}  // namespace
}  // namespace test_qavgpool_fmean_checked
}  // namespace npukit
