// s8/u8 global pools (src/ops/cpu/x8-globalpool*): every runnable variant of
// the "qlinear_global_average_pool" list and the x8-globalmax-* variants of
// "pool2d" against the reference, byte for byte, on seeded random problems:
// every profile with random scales and zero points, channel counts across
// the 8-plane groups and the 256- and 1024-channel blocks, planes of 1 to 400
// codes (one register, several, and NHWC 16-bit sums flushed after 256
// positions), NCHW,
// NHWC and gapped strides, batches, saturating and constant images, 1-3
// threads, inputs that end right before an unreadable page; then the public
// calls under every ISA cap and Impl::reference.
// A failure prints the seed, the case index and the configuration.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>

#include "ops/cpu/pool2d_plan.hpp"
#include "ops/cpu/x8-globalpool.hpp"
#include "unit/guarded_bytes.hpp"
#include "unit/test_util.hpp"
#include "unit/variant_test_util.hpp"

namespace npukit {
namespace test_x8_global_pool {
namespace {

using cpu::Pool2dProblem;
using cpu::QGlobalAvgProblem;

struct Restore {
  ~Restore() {
    set_num_threads(0);
    set_max_isa(host_isa());
    set_impl(Impl::fast);
  }
};

struct Case {
  Shape shape;
  DType dtype = DType::u8;
  Profile profile = Profile::onnxruntime;
  bool float_mean = false;  // onnxruntime without its whole-image integer path
  QLinearAvgPoolParams q;
  // 0 NCHW, 1 NHWC, 2 NCHW with gaps between planes, 3 NHWC with gaps between
  // positions, 4 NCHW with gaps between rows (no fast kernel takes it)
  int x_layout = 0, y_layout = 0;
  int values = 0;  // 0 random, 1 all highest, 2 all lowest, 3 near the top

  std::string text() const {
    std::ostringstream s;
    s << dtype_name(dtype) << " x" << shape_text(shape) << " profile " << profile_name(profile)
      << (float_mean ? " float_mean" : "") << " x_scale " << q.x_scale << " y_scale " << q.y_scale
      << " x_zp " << q.x_zero_point << " y_zp " << q.y_zero_point << " x_layout " << x_layout
      << " y_layout " << y_layout << " values " << values;
    return s.str();
  }
};

Shape strides_of(const Shape& s, int layout) {
  const int64_t C = s[1], H = s[2], W = s[3];
  Shape st;
  switch (layout) {
    case 0:
      st = contiguous_strides(s, Layout::nchw);
      break;
    case 1:
      st = contiguous_strides(s, Layout::nhwc);
      break;
    case 2:
      st = {(H * W + 5) * C + 3, H * W + 5, W, 1};
      break;
    case 3:
      st = {(C + 5) * H * W + 1, 1, (C + 5) * W, C + 5};
      break;
    default:
      st = {(W + 2) * H * C + 7, (W + 2) * H, W + 2, 1};
  }
  return st;
}

int64_t span_of(const Shape& s, const Shape& st) {
  int64_t span = 1;
  for (int i = 0; i < 4; ++i) span += (s[static_cast<size_t>(i)] - 1) * st[static_cast<size_t>(i)];
  return span;
}

TensorView make_view(std::vector<uint8_t>& buf, DType dt, const Shape& s, int layout) {
  const Shape st = strides_of(s, layout);
  buf.assign(static_cast<size_t>(span_of(s, st)), 0xa5);  // poison around the view
  return TensorView(buf.data(), dt, s, st);
}

// An input whose last byte is followed by an unreadable page (reads past
// the tensor crash the test).
TensorView make_guarded_view(std::unique_ptr<test::GuardedBytes>& mem, DType dt, const Shape& s,
                             int layout) {
  const Shape st = strides_of(s, layout);
  const auto span = static_cast<size_t>(span_of(s, st));
  mem = std::make_unique<test::GuardedBytes>(span);
  std::memset(mem->data(), 0xa5, span);
  return TensorView(mem->data(), dt, s, st);
}

// The same with the first byte 64-byte aligned (the aligned kernels' runs
// take only such starts); the guard page then follows within 63 bytes.
TensorView make_aligned_guarded_view(std::unique_ptr<test::GuardedBytes>& mem, DType dt,
                                     const Shape& s) {
  const Shape st = strides_of(s, 0);
  const auto span = static_cast<size_t>(span_of(s, st));
  mem = std::make_unique<test::GuardedBytes>((span + 63) / 64 * 64);
  std::memset(mem->data(), 0xa5, span);
  return TensorView(mem->data(), dt, s, st);
}

int64_t offset(const TensorView& t, int64_t n, int64_t c, int64_t h, int64_t w) {
  return n * t.stride(0) + c * t.stride(1) + h * t.stride(2) + w * t.stride(3);
}

void fill(const Case& c, const TensorView& x, std::mt19937& g) {
  const int hi = c.dtype == DType::u8 ? 255 : 127, lo = c.dtype == DType::u8 ? 0 : -128;
  auto* p = static_cast<uint8_t*>(x.raw());
  for (int64_t n = 0; n < x.dim(0); ++n)
    for (int64_t ch = 0; ch < x.dim(1); ++ch)
      for (int64_t h = 0; h < x.dim(2); ++h)
        for (int64_t w = 0; w < x.dim(3); ++w) {
          int v = lo + static_cast<int>(g() % 256);
          if (c.values == 1) v = hi;
          if (c.values == 2) v = lo;
          if (c.values == 3) v = hi - static_cast<int>(g() % 3);
          p[offset(x, n, ch, h, w)] = static_cast<uint8_t>(v);
        }
}

std::vector<uint8_t> logical_bytes(const TensorView& y) {
  std::vector<uint8_t> out;
  for (int64_t n = 0; n < y.dim(0); ++n)
    for (int64_t c = 0; c < y.dim(1); ++c)
      out.push_back(static_cast<const uint8_t*>(y.raw())[offset(y, n, c, 0, 0)]);
  return out;
}

bool gaps_untouched(const std::vector<uint8_t>& buf, const TensorView& y) {
  std::vector<bool> mine(buf.size(), false);
  for (int64_t n = 0; n < y.dim(0); ++n)
    for (int64_t c = 0; c < y.dim(1); ++c) mine[static_cast<size_t>(offset(y, n, c, 0, 0))] = true;
  for (size_t i = 0; i < buf.size(); ++i)
    if (!mine[i] && buf[i] != 0xa5) return false;
  return true;
}

std::string first_difference(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      std::ostringstream s;
      s << "output " << i << ": got " << int(got[i]) << ", reference " << int(want[i]);
      return s.str();
    }
  return "";
}

// A scale 2^e * (1 + f): short mantissas and calibrated-looking ones.
float random_scale(std::mt19937& g) {
  const float e = std::ldexp(1.0f, static_cast<int>(g() % 14) - 10);
  return g() % 3 == 0 ? e : e * (1.0f + static_cast<float>(g() % 1000000) / 1e6f);
}

Case random_case(std::mt19937& g) {
  auto pick = test::picker(g);
  Case c;
  const int64_t C = g() % 4 == 0 ? pick(250, 700) : pick(1, 40);
  int64_t H = g() % 5 == 0 ? 1 : pick(1, 9), W = g() % 5 == 0 ? 1 : pick(1, 9);
  if (g() % 6 == 0) H = pick(10, 20), W = pick(13, 20);  // 130 to 400 codes
  c.shape = {pick(1, 3), C, H, W};
  const Profile profiles[] = {Profile::onnxruntime, Profile::pytorch,    Profile::tflite,
                              Profile::mico,        Profile::ghp_rtl,    Profile::ghp_golden,
                              Profile::onnxruntime, Profile::onnxruntime};
  c.profile = profiles[g() % 8];
  const bool ghp = c.profile == Profile::ghp_rtl || c.profile == Profile::ghp_golden;
  c.dtype = ghp || g() % 2 ? DType::u8 : DType::s8;
  c.q.window.kernel_h = H;
  c.q.window.kernel_w = W;
  c.q.count_include_pad = ghp || g() % 2;
  c.q.x_scale = random_scale(g);
  c.q.y_scale = random_scale(g);
  const int lo = c.dtype == DType::u8 ? 0 : -128;
  c.q.x_zero_point = lo + static_cast<int>(g() % 256);
  c.q.y_zero_point = lo + static_cast<int>(g() % 256);
  if (c.profile == Profile::tflite || c.profile == Profile::mico) {
    c.q.y_scale = c.q.x_scale;
    if (c.profile == Profile::mico) c.q.x_zero_point = 0;
    c.q.y_zero_point = c.q.x_zero_point;
  }
  apply_profile(c.q, c.profile);
  if (ghp) c.q.ghp_sum_bits = g() % 2 ? 14 : 0;
  if (c.profile == Profile::pytorch && g() % 2)
    c.q.zero_point = g() % 2 ? QZeroPointRounding::inside : QZeroPointRounding::outside;
  c.float_mean = c.profile == Profile::onnxruntime && g() % 8 == 0;
  if (c.float_mean) c.q.whole_image_int_path = false;
  c.x_layout = static_cast<int>(g() % 5);
  c.y_layout = static_cast<int>(g() % 3);
  c.values = g() % 4 == 0 ? static_cast<int>(pick(1, 3)) : 0;
  return c;
}

struct Stats {
  int64_t cases = 0, outputs = 0;
  variant_test::Runs runs;
};

// Every runnable variant of `list` named like `only` that accepts the problem
// (make(x, y) on a fresh, gapped y) against `want`; false after a mismatch.
template <class Problem, class MakeProblem>
bool check_variants(const KernelList<Problem>& list, const char* only, const Case& c,
                    const TensorView& x, const Shape& ys, const std::vector<uint8_t>& want,
                    const MakeProblem& make, uint32_t seed, int index, Stats& st) {
  std::vector<uint8_t> ybuf;
  const auto fresh_y = [&] { return make(x, make_view(ybuf, c.dtype, ys, c.y_layout)); };
  const auto compare = [&](const Problem& pr) -> std::string {
    const std::string diff = first_difference(logical_bytes(pr.y), want);
    if (!diff.empty()) return diff;
    return gaps_untouched(ybuf, pr.y) ? "" : "wrote outside the output view";
  };
  const int64_t before = st.runs.total();
  variant_test::Options opt;
  opt.only = only;
  opt.threads = 1 + index % 3;
  const bool ok = variant_test::run_every_variant(
      list, fresh_y, compare,
      "seed " + std::to_string(seed) + ", case " + std::to_string(index) + "\n  " + c.text(),
      st.runs, opt);
  st.outputs += (st.runs.total() - before) * static_cast<int64_t>(want.size());
  return ok;
}

TEST(X8GlobalPool, AverageVariantsEqualReferenceUnderEveryProfile) {
  Restore restore;
  const uint32_t seed = 20261130;
  std::mt19937 g(seed);
  Stats st;
  int declined_float_mean = 0;
  for (int i = 0; i < 700; ++i) {
    const Case c = random_case(g);
    std::mt19937 gv(seed * 31u + static_cast<uint32_t>(i));
    std::unique_ptr<test::GuardedBytes> xmem;
    std::vector<uint8_t> rbuf;
    const TensorView x = make_guarded_view(xmem, c.dtype, c.shape, c.x_layout);
    fill(c, x, gv);
    const Shape ys = {c.shape[0], c.shape[1], 1, 1};
    const TensorView r = make_view(rbuf, c.dtype, ys, 0);
    set_num_threads(1);
    try {
      ref::qlinear_average_pool(x, r, c.q);
    } catch (const Error&) {
      continue;  // a GHP multiplier the accelerator cannot hold (bad-input tests cover it)
    }
    ++st.cases;
    const std::vector<uint8_t> want = logical_bytes(r);
    const auto make = [&](TensorView xv, TensorView yv) {  // owned: yv is a temporary
      return QGlobalAvgProblem{std::move(xv), std::move(yv), &c.q};
    };
    if (c.float_mean && cpu::x8_global_avg_declines(QGlobalAvgProblem{x, r, &c.q}) != nullptr)
      ++declined_float_mean;
    if (!check_variants(cpu::qlinear_global_average_pool_kernels(), "globalavg", c, x, ys, want,
                        make, seed, i, st))
      break;
  }
  std::printf("x8 global avg: seed %u, %lld cases, %lld outputs compared\n", seed,
              static_cast<long long>(st.cases), static_cast<long long>(st.outputs));
  variant_test::print_runs("x8 global avg", st.runs);
  EXPECT_GT(st.cases, 500);
  EXPECT_GT(declined_float_mean, 20);  // float_mean keeps its tap order elsewhere
  variant_test::expect_each_ran(cpu::qlinear_global_average_pool_kernels(), st.runs, 300);
}

TEST(X8GlobalPool, MaxVariantsEqualReference) {
  Restore restore;
  const uint32_t seed = 20261131;
  std::mt19937 g(seed);
  Stats st;
  for (int i = 0; i < 500; ++i) {
    Case c = random_case(g);
    Pool2dParams p;
    p.mode = PoolMode::max;
    p.window.kernel_h = c.shape[2];
    p.window.kernel_w = c.shape[3];
    apply_profile(p, g() % 2 ? Profile::onnxruntime : Profile::pytorch);
    std::mt19937 gv(seed * 31u + static_cast<uint32_t>(i));
    std::unique_ptr<test::GuardedBytes> xmem;
    std::vector<uint8_t> rbuf;
    const TensorView x = make_guarded_view(xmem, c.dtype, c.shape, c.x_layout);
    fill(c, x, gv);
    const Shape ys = {c.shape[0], c.shape[1], 1, 1};
    const TensorView r = make_view(rbuf, c.dtype, ys, 0);
    if (c.dtype == DType::s8)
      ref::max_pool2d_int<int8_t>(x, r, p);
    else
      ref::max_pool2d_int<uint8_t>(x, r, p);
    ++st.cases;
    const auto make = [&](TensorView xv, TensorView yv) {  // owned: yv is a temporary
      return Pool2dProblem{std::move(xv), std::move(yv), p};
    };
    if (!check_variants(pool2d_kernels(), "globalmax", c, x, ys, logical_bytes(r), make, seed, i,
                        st))
      break;
  }
  variant_test::print_runs("x8 global max", st.runs);
  variant_test::expect_each_ran(pool2d_kernels(), st.runs, 300,
                                variant_test::name_has("globalmax"));
}

// The public calls on the race's shape and on odd ones, at every ISA cap the
// host runs, with the reference forced, and 1-3 threads.
// Gap-free 7x7 planes (the max kernels' fixed passes: AVX-512 64 planes by
// the unpack tree, each plane one zero-masked load, or an aligned window when
// the block starts 64-byte aligned, in the tree's leaf order; AVX2 32 planes
// in their own order, each from two overlapping 32-byte loads, merged at the
// 128-bit halves and permuted at the end; the sums' loop with the
// plane stride fixed at 49): each plane's unique maximum sits at position
// (plane + case) % 49, so every position of every slot of a pass is the
// answer somewhere; plane counts around the pass size and batches (the last
// pass and the tensor's end, a guard page, go to the general pass). Cases
// 36-71 repeat 0-35 with the input's first byte 64-byte aligned: AVX-512's
// aligned windows (x8-globalpool-avx512.cpp aligned_window) for whole blocks,
// the masked loads for images whose start the previous one left unaligned.
// The averages of the same inputs under ONNX Runtime's integer path too.
TEST(X8GlobalPool, GapFree7x7PlanesAtEveryPosition) {
  Restore restore;
  const uint32_t seed = 20261201;
  std::mt19937 g(seed);
  Stats st, avg;
  const int64_t channels[] = {64, 65, 127, 128, 191, 256, 320, 700, 2048};
  for (int i = 0; i < 72; ++i) {
    Case c;
    c.dtype = i % 2 ? DType::s8 : DType::u8;
    c.shape = {1 + i % 3, channels[i % 36 / 4], 7, 7};
    c.values = i % 9 == 8 ? 2 : 0;  // all lowest: nothing to find
    Pool2dParams p;
    p.mode = PoolMode::max;
    p.window.kernel_h = p.window.kernel_w = 7;
    apply_profile(p, i % 4 < 2 ? Profile::onnxruntime : Profile::pytorch);
    std::unique_ptr<test::GuardedBytes> xmem;
    std::vector<uint8_t> rbuf;
    const TensorView x = i < 36 ? make_guarded_view(xmem, c.dtype, c.shape, 0)
                                : make_aligned_guarded_view(xmem, c.dtype, c.shape);
    fill(c, x, g);
    const int lo = c.dtype == DType::u8 ? 0 : -128;
    auto* px = static_cast<uint8_t*>(x.raw());
    for (int64_t k = 0; c.values == 0 && k < c.shape[0] * c.shape[1]; ++k) {
      // Below the top, then one top at its position; the tops differ between the
      // planes of a pass (lo + 200 + k % 56), so a plane landing in another's
      // output byte is seen too.
      for (int64_t e = 0; e < 49; ++e)
        px[k * 49 + e] = static_cast<uint8_t>(lo + static_cast<int>(g() % 200));
      px[k * 49 + (k + i) % 49] = static_cast<uint8_t>(lo + 200 + static_cast<int>(k % 56));
    }
    const Shape ys = {c.shape[0], c.shape[1], 1, 1};
    const TensorView r = make_view(rbuf, c.dtype, ys, 0);
    if (c.dtype == DType::s8)
      ref::max_pool2d_int<int8_t>(x, r, p);
    else
      ref::max_pool2d_int<uint8_t>(x, r, p);
    ++st.cases;
    const auto make = [&](TensorView xv, TensorView yv) {  // owned: yv is a temporary
      return Pool2dProblem{std::move(xv), std::move(yv), p};
    };
    if (!check_variants(pool2d_kernels(), "globalmax", c, x, ys, logical_bytes(r), make, seed, i,
                        st))
      break;
    c.q.window.kernel_h = c.q.window.kernel_w = 7;
    c.q.x_zero_point = lo + static_cast<int>(g() % 256);
    c.q.y_zero_point = lo + static_cast<int>(g() % 256);
    apply_profile(c.q, Profile::onnxruntime);
    std::vector<uint8_t> abuf;
    const TensorView ra = make_view(abuf, c.dtype, ys, 0);
    ref::qlinear_average_pool(x, ra, c.q);
    const auto make_avg = [&](TensorView xv, TensorView yv) {  // owned: yv is a temporary
      return QGlobalAvgProblem{std::move(xv), std::move(yv), &c.q};
    };
    if (!check_variants(cpu::qlinear_global_average_pool_kernels(), "globalavg", c, x, ys,
                        logical_bytes(ra), make_avg, seed, i, avg))
      break;
  }
  variant_test::print_runs("x8 global max 7x7", st.runs);
  variant_test::print_runs("x8 global avg 7x7", avg.runs);
  variant_test::expect_each_ran(pool2d_kernels(), st.runs, 60, variant_test::name_has("globalmax"));
  variant_test::expect_each_ran(cpu::qlinear_global_average_pool_kernels(), avg.runs, 60);
}

TEST(X8GlobalPool, PublicCallsAtEveryIsaCapAndThreadCount) {
  Restore restore;
  const uint32_t seed = 20261132;
  std::mt19937 g(seed);
  const Shape shapes[] = {{1, 2048, 7, 7}, {2, 300, 17, 17}, {3, 5, 1, 1}, {1, 1000, 3, 30}};
  int compared = 0;
  for (const Shape& s : shapes)
    for (DType dt : {DType::u8, DType::s8})
      for (Layout layout : {Layout::nchw, Layout::nhwc})
        for (Profile profile : {Profile::onnxruntime, Profile::pytorch, Profile::tflite}) {
          Case c;
          c.shape = s;
          c.dtype = dt;
          c.profile = profile;
          Tensor x(dt, s, layout);
          fill(c, x.view(), g);
          QLinearAvgPoolParams q;
          q.x_scale = random_scale(g);
          q.y_scale = profile == Profile::tflite ? q.x_scale : random_scale(g);
          q.x_zero_point = (dt == DType::u8 ? 0 : -128) + static_cast<int>(g() % 256);
          q.y_zero_point = profile == Profile::tflite
                               ? q.x_zero_point
                               : (dt == DType::u8 ? 0 : -128) + static_cast<int>(g() % 256);
          apply_profile(q, profile);
          Tensor want_avg(dt, {s[0], s[1], 1, 1}, layout), want_max(dt, {s[0], s[1], 1, 1}, layout);
          set_impl(Impl::reference);
          qlinear_global_average_pool(x, want_avg, q);
          global_pool2d(x, want_max, PoolMode::max);
          set_impl(Impl::fast);
          for (Isa cap : {Isa::portable, Isa::avx2, Isa::avx512, Isa::avx512_vnni}) {
            if (cap > host_isa()) continue;
            set_max_isa(cap);
            for (int threads = 1; threads <= 3; ++threads) {
              set_num_threads(threads);
              Tensor avg(dt, want_avg.shape(), layout), mx(dt, want_max.shape(), layout);
              qlinear_global_average_pool(x, avg, q);
              global_pool2d(x, mx, PoolMode::max);
              const std::string where = std::string("seed ") + std::to_string(seed) + " cap " +
                                        isa_name(cap) + " threads " + std::to_string(threads) +
                                        " " + layout_name(layout) + " " + c.text();
              ASSERT_EQ(logical_bytes(avg.view()), logical_bytes(want_avg.view())) << where;
              ASSERT_EQ(logical_bytes(mx.view()), logical_bytes(want_max.view())) << where;
              ++compared;
            }
          }
        }
  EXPECT_GT(compared, 100);
}

// ONNX Runtime's int_sum_float with scale ratios on both sides of the AVX-512
// kernel's bound for clamping by saturating packs (|v| < 2^30: ratios up to
// about 2^22 here; past it the float clamp): planes of constant x_zp (v = 0),
// x_zp +- 1 at one tap (v = +-m) and random codes, 2048 channels (whole
// 64-code packs) and 130 (a tail), every ISA cap, against the reference.
TEST(X8GlobalPool, IntSumFloatOnEitherSideOfThePackBound) {
  Restore restore;
  const uint32_t seed = 20261133;
  std::mt19937 g(seed);
  int compared = 0;
  for (DType dt : {DType::u8, DType::s8})
    for (int e : {-6, 0, 12, 20, 22, 23, 24, 30, 40})
      for (int64_t C : {2048, 130}) {
        const int lo = dt == DType::u8 ? 0 : -128;
        QLinearAvgPoolParams q;
        q.x_scale = std::ldexp(0.75f, e);
        q.y_scale = 1.0f;
        q.x_zero_point = lo + static_cast<int>(g() % 256);
        q.y_zero_point = lo + static_cast<int>(g() % 256);
        apply_profile(q, Profile::onnxruntime);
        Tensor x(dt, {1, C, 7, 7});
        auto* p = static_cast<uint8_t*>(x.view().raw());
        for (int64_t ch = 0; ch < C; ++ch) {
          const int kind = static_cast<int>(g() % 4);
          for (int t = 0; t < 49; ++t) {
            int v = kind == 0 ? lo + static_cast<int>(g() % 256) : q.x_zero_point;
            if (kind >= 2 && t == 17) v += kind == 2 ? 1 : -1;
            p[ch * 49 + t] = static_cast<uint8_t>(std::clamp(v, lo, lo + 255));
          }
        }
        Tensor want(dt, {1, C, 1, 1});
        set_impl(Impl::reference);
        qlinear_global_average_pool(x, want, q);
        set_impl(Impl::fast);
        for (Isa cap : {Isa::portable, Isa::avx2, Isa::avx512}) {
          if (cap > host_isa()) continue;
          set_max_isa(cap);
          Tensor got(dt, want.shape());
          qlinear_global_average_pool(x, got, q);
          ASSERT_EQ(logical_bytes(got.view()), logical_bytes(want.view()))
              << "seed " << seed << " " << dtype_name(dt) << " C " << C << " x_scale 0.75*2^" << e
              << " cap " << isa_name(cap);
          ++compared;
        }
      }
  EXPECT_GE(compared, 36);
}

}  // namespace
}  // namespace test_x8_global_pool
}  // namespace npukit
