// The in-register 16-bit kernels of QLinearAveragePool and bm_pool_quantized
// (x8-qavgpool-u16-*, x8-bmpool-avg-u16-*) and the NHWC float path
// (x8-qavgpool-fmean-nhwc-*) against the reference, bit for bit,
// where their final steps differ most from the reference's code: wide rows
// (several 32-output blocks, masked first and last loads, padding and
// ceil-mode overhang on both sides), strides 1 and 2 with odd and even
// windows, x rows with a padded pitch, every profile they take, the integer
// form of float_mean (x_scale == y_scale == 2^j, including zero points that
// make ties), short-mantissa scales (exact fp32 sums), every rounding rule of
// int_mean, bm_pool_quantized shifts and ReLU, u8 and s8, NCHW and NHWC,
// 1 to 3 threads. Every variant that accepts a case runs; a failure prints
// the seed and the configuration.
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
#include "test_util.hpp"

namespace npukit {
namespace test_qpool_u16 {
namespace {

constexpr uint32_t kSeed = 20261127;

const Profile kProfiles[] = {Profile::onnxruntime, Profile::pytorch, Profile::tflite,
                             Profile::mico};

using qpool_test::bytes_nchw;
using qpool_test::first_difference;
using qpool_test::Restore;

std::string describe(const QLinearAvgPoolParams& p, Profile profile, DType t, const Shape& x,
                     Layout layout, int64_t pitch) {
  std::ostringstream s;
  const Window2d& w = p.window;
  s << "profile=" << profile_name(profile) << " dtype=" << dtype_name(t) << " x=" << shape_text(x)
    << " layout=" << layout_name(layout) << " x row pitch=" << pitch << " k=" << w.kernel_h << "x"
    << w.kernel_w << " s=" << w.stride_h << "x" << w.stride_w << " pads(t,b,l,r)=" << w.pad_top
    << "," << w.pad_bottom << "," << w.pad_left << "," << w.pad_right << " ceil=" << w.ceil_mode
    << " include_pad=" << p.count_include_pad << " x_scale=" << p.x_scale
    << " x_zp=" << p.x_zero_point << " y_scale=" << p.y_scale << " y_zp=" << p.y_zero_point
    << " arith=" << qavg_arith_name(p.arith) << " rounding=" << rounding_name(p.rounding);
  return s.str();
}

// Codes: uniform, only the extremes, or near the zero point (ties).
void fill_codes(std::mt19937& g, const TensorView& x, int32_t zp) {
  const detail::CodeRange r = detail::code_range(x.dtype());
  Tensor dense(x.dtype(), x.shape());
  auto* d = static_cast<uint8_t*>(dense.view().raw());
  const int mode = static_cast<int>(g() % 3);
  for (int64_t i = 0; i < dense.numel(); ++i) {
    int v = r.lo + static_cast<int>(g() % 256);
    if (mode == 0) v = g() % 2 ? r.lo : r.hi;
    if (mode == 1) v = std::clamp(zp + static_cast<int>(g() % 5) - 2, r.lo, r.hi);
    d[i] = static_cast<uint8_t>(v);
  }
  copy(dense.view(), x);
}

// x as a view with a padded row pitch (NCHW) or channel pitch (NHWC).
struct Storage {
  std::vector<uint8_t> bytes;
  TensorView view;
};
Storage make_x(DType t, const Shape& s, Layout layout, int64_t extra) {
  const int64_t N = s[0], C = s[1], H = s[2], W = s[3];
  Storage st;
  if (layout == Layout::nchw) {
    const int64_t pitch = W + extra;
    st.bytes.assign(static_cast<size_t>(N * C * H * pitch), 0x5a);
    st.view = TensorView(st.bytes.data(), t, s, {C * H * pitch, H * pitch, pitch, 1});
  } else {
    const int64_t pitch = C + extra;
    st.bytes.assign(static_cast<size_t>(N * H * W * pitch), 0x5a);
    st.view = TensorView(st.bytes.data(), t, s, {H * W * pitch, 1, W * pitch, pitch});
  }
  return st;
}

TEST(QPoolU16, EveryVariantEqualsReferenceOnWideRowsUnderEveryProfile) {
  Restore restore;
  std::mt19937 g(kSeed);
  const auto& list = cpu::qlinear_average_pool_kernels();
  auto pick = test::picker(g);
  std::map<std::string, int> runs;
  for (int attempt = 0; attempt < 700; ++attempt) {
    const Profile profile = kProfiles[attempt % 4];
    const DType t = g() % 2 ? DType::u8 : DType::s8;
    const Layout layout = g() % 3 == 0 ? Layout::nhwc : Layout::nchw;
    const int64_t H = pick(1, 9);
    const int64_t W = g() % 2 ? 32 * pick(1, 4) + pick(-3, 3) : pick(1, 140);
    const int64_t C = layout == Layout::nhwc && g() % 2 ? pick(30, 140) : pick(1, 5);
    const Shape xs{pick(1, 2), C, H, W};
    QLinearAvgPoolParams p;
    qpool_test::random_avg_window(g, 4, 5, 3, 2, p);
    const detail::CodeRange r = detail::code_range(t);
    p.x_zero_point = static_cast<int32_t>(pick(r.lo, r.hi));
    p.y_zero_point = static_cast<int32_t>(pick(r.lo, r.hi));
    // Equal powers of two (float_mean's integer form), short mantissas
    // (exact fp32 sums), or calibrated-looking scales.
    const int scales = static_cast<int>(g() % 3);
    p.x_scale = scales == 0   ? std::ldexp(1.0f, static_cast<int>(pick(-12, 12)))
                : scales == 1 ? static_cast<float>(pick(1, 63)) / 64.0f
                              : std::exp(std::uniform_real_distribution<float>(-6.0f, 2.0f)(g));
    p.y_scale = scales == 0 || g() % 3 == 0 ? p.x_scale : std::ldexp(1.0f, -3) * 3.0f;
    apply_profile(p, profile);
    if (profile == Profile::tflite || profile == Profile::mico) {
      p.y_scale = p.x_scale;
      if (profile == Profile::mico) p.x_zero_point = 0;
      p.y_zero_point = p.x_zero_point;
      if (g() % 2) p.rounding = all_roundings()[g() % all_roundings().size()];
    }
    Shape ys;
    try {
      ys = qlinear_average_pool_output_shape(xs, p);
    } catch (const Error&) {
      continue;
    }
    const int64_t extra = g() % 3 == 0 ? pick(1, 9) : 0;
    Storage x = make_x(t, xs, layout, extra);
    fill_codes(g, x.view, p.x_zero_point);
    Tensor want(t, ys, layout);
    try {
      ref::qlinear_average_pool(x.view, want, p);
    } catch (const Error&) {
      continue;
    }
    const std::vector<uint8_t> wb = bytes_nchw(want);
    set_num_threads(1 + attempt % 3);
    cpu::QAvgPoolProblem prob{x.view, want, &p, cpu::make_qavg_plan(x.view, want, p)};
    for (const auto& v : list.variants) {
      if (v.reference || !list.runnable(v) || v.declines(prob)) continue;
      Tensor y(t, ys, layout);
      prob.y = y;
      v.run(prob);
      ASSERT_EQ(bytes_nchw(y), wb)
          << v.name << " seed " << kSeed << " attempt " << attempt << " threads " << num_threads()
          << "\n  " << describe(p, profile, t, xs, layout, extra) << "\n  "
          << first_difference(bytes_nchw(y), wb);
      ++runs[v.name];
    }
  }
  for (const auto& [name, n] : runs) std::printf("[ qpool-u16 ] ran %s: %d\n", name.c_str(), n);
  // On an AVX-512 host the u16 kernels and the NHWC float path must have run.
  for (const auto& v : list.variants) {
    const std::string name = v.name;
    if (v.reference || !list.runnable(v)) continue;
    if (name.find("-u16-") != std::string::npos) {
      EXPECT_GT(runs[name], 100) << name;
    }
    if (name.find("fmean-nhwc") != std::string::npos) {
      EXPECT_GT(runs[name], 10) << name;
    }
  }
}

// bm_pool_quantized average (rshift, ReLU, s8/u8) on wide rows: every variant
// of its list against the reference.
TEST(QPoolU16, BmPoolAverageOnWideRows) {
  // Its kernels are AVX2/AVX-512 only: nothing to compare under a lower cap.
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "needs AVX2 kernels (NPUKIT_MAX_ISA is below avx2)";
  Restore restore;
  const uint32_t seed = kSeed + 1;
  std::mt19937 g(seed);
  const auto& list = cpu::bm_pool_quantized_kernels();
  auto pick = test::picker(g);
  int u16_runs = 0;
  for (int attempt = 0; attempt < 300; ++attempt) {
    const DType t = g() % 2 ? DType::u8 : DType::s8;
    const Layout layout = g() % 3 == 0 ? Layout::nhwc : Layout::nchw;
    const Shape xs{pick(1, 2), pick(1, 70), pick(1, 8), pick(1, 130)};
    BmPoolQuantParams p;
    p.mode = QuantPoolMode::avg;
    Window2d& w = p.window;
    w.kernel_h = pick(1, 4);
    w.kernel_w = pick(1, 4);
    w.stride_h = pick(1, 2);
    w.stride_w = pick(1, 2);
    w.pad_top = w.pad_bottom = pick(0, w.kernel_h - 1);
    w.pad_left = w.pad_right = pick(0, w.kernel_w - 1);
    p.rshift = static_cast<int>(pick(0, 6));
    p.relu = g() % 2;
    Shape ys;
    try {
      ys = bm_pool_quantized_output_shape(xs, p);
    } catch (const Error&) {
      continue;
    }
    Storage x = make_x(t, xs, layout, g() % 3 == 0 ? pick(1, 5) : 0);
    fill_codes(g, x.view, 0);
    Tensor want(t, ys, layout);
    try {
      set_impl(Impl::reference);
      bm_pool_quantized(x.view, want, p);
      set_impl(Impl::fast);
    } catch (const Error&) {
      set_impl(Impl::fast);
      continue;
    }
    const std::vector<uint8_t> wb = bytes_nchw(want);
    set_num_threads(1 + attempt % 3);
    cpu::BmPoolProblem prob{{x.view, want, nullptr, cpu::make_bm_pool_plan(x.view, want, p)}, &p};
    for (const auto& v : list.variants) {
      if (v.reference || !list.runnable(v) || (v.declines && v.declines(prob))) continue;
      Tensor y(t, ys, layout);
      prob.q.y = y;
      v.run(prob);
      ASSERT_EQ(bytes_nchw(y), wb)
          << v.name << " seed " << seed << " attempt " << attempt << " rshift " << p.rshift
          << " relu " << p.relu << " x " << shape_text(xs) << " " << layout_name(layout) << "\n  "
          << first_difference(bytes_nchw(y), wb);
      u16_runs += std::string(v.name).find("-u16-") != std::string::npos;
    }
  }
  std::printf("[ qpool-u16 ] bm_pool_quantized u16 runs: %d (seed %u)\n", u16_runs, seed);
  if (host_isa() >= Isa::avx2) {  // x8-bmpool-avg-u16-nhwc-avx2 and up
    EXPECT_GT(u16_runs, 100);
  }
}

}  // namespace
}  // namespace test_qpool_u16
}  // namespace npukit
