// The fp32 depthwise family (src/ops/cpu/f32-dwconv-nchw*) against the
// reference kernels, bit for bit (a NaN equals any NaN): every variant this
// host runs, both accumulations, seeded random geometry (stride, dilation,
// zero insertion, pads up to windows entirely in padding, 1-wide images,
// multipliers, batch > 1, NHWC-strided views), special values, 1, 2 and 3
// threads. A mismatch prints the seed and the configuration.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <sstream>

#include "npukit/npukit.hpp"
#include "ops/cpu/dwconv.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_dwconv_fast {
namespace {

// Mostly uniform in [-2, 2]; about 1 in `rare` is NaN, +-inf, +-0, a
// denormal, huge, or a pair whose product x86 FTZ flushes.
constexpr float kSpecials[] = {test::kNaN, test::kInf,     -test::kInf, 0.0f,
                               -0.0f,      1e-40f,         -3e-39f,     1e30f,
                               -1e30f,     0x1.fffffep-1f, 0x1p-126f,   -FLT_MIN};

float value(std::mt19937& rng, int rare) {
  return test::uniform_or_special(rng, rare, kSpecials);
}

std::string text(const cpu::DwconvProblem& p, const char* kernel, int threads, bool nhwc) {
  std::ostringstream s;
  const Window2d& w = p.window;
  s << kernel << ": x " << shape_text(p.x.shape()) << (nhwc ? " (NHWC views)" : "") << " w "
    << shape_text(p.w.shape()) << " multiplier " << p.multiplier << " stride " << w.stride_h << "x"
    << w.stride_w << " dilation " << w.dilation_h << "x" << w.dilation_w << " ins " << w.ins_h
    << "x" << w.ins_w << " pads " << w.pad_top << "," << w.pad_bottom << "," << w.pad_left << ","
    << w.pad_right << " bias " << p.has_bias << " result_add " << p.result_add << " accumulation "
    << fp32_accumulation_name(p.accumulation) << " flush " << p.flush_denormals << " "
    << test::clip_text(p.clip) << " threads " << threads;
  return s.str();
}

// An (N, C, H, W) tensor stored as NHWC when `nhwc`, with its NCHW view.
struct Nchw {
  Tensor storage;
  TensorView view;
  Nchw(const Shape& s, bool nhwc)
      : storage(DType::f32, nhwc ? Shape{s[0], s[2], s[3], s[1]} : s),
        view(nhwc ? TensorView(storage.view().raw(), DType::f32, s,
                               {s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]})
                  : storage.view()) {}
  std::vector<float> values() const {  // in NCHW order
    std::vector<float> v;
    for (int64_t a = 0; a < view.dim(0); ++a)
      for (int64_t b = 0; b < view.dim(1); ++b)
        for (int64_t c = 0; c < view.dim(2); ++c)
          for (int64_t d = 0; d < view.dim(3); ++d) v.push_back(view.at<float>(a, b, c, d));
    return v;
  }
};

void reference(const cpu::DwconvProblem& p) {
  if (p.accumulation == Fp32Accumulation::interleaved) {
    ref::depthwise2d_f32_interleaved(
        p.x, p.w, p.bias, p.y,
        {p.window, p.multiplier, p.has_bias, p.result_add, p.accumulation, p.flush_denormals});
  } else if (mlas_nchwc_block(p.accumulation)) {
    ref::conv2d_f32_mlas(
        p.x, p.w, p.bias, p.y,
        {p.window, p.x.dim(1), p.has_bias, p.result_add, p.accumulation, p.flush_denormals});
  } else {
    ref::conv2d_f32(
        p.x, p.w, p.bias, p.y,
        {p.window, p.x.dim(1), p.has_bias, p.result_add, p.accumulation, p.flush_denormals});
  }
  ref::clip_f32(p.y, p.y, p.clip);  // a fused clip is the unfused Clip after the convolution
}

TEST(DwconvFast, EveryVariantEqualsReferenceBitForBit) {
  test::SettingsRestore restore;
  const unsigned seed = 20261126;
  std::mt19937 rng(seed);
  const auto& list = cpu::dwconv_kernels();
  std::map<std::string, int64_t> runs, walks;
  int64_t outputs = 0, declined = 0;
  for (int iter = 0; iter < 240; ++iter) {
    const bool interleaved = iter % 2 == 1;
    const bool nhwc = iter % 5 == 3;
    Depthwise2dParams dp;
    apply_profile(dp, interleaved ? Profile::bm1684 : Profile::pytorch);
    // A quarter under ORT's FMA chains (MLAS's NCHWc block 16 or 8).
    if (iter % 4 == 2)
      dp.accumulation =
          iter % 8 == 2 ? Fp32Accumulation::mlas_nchwc16 : Fp32Accumulation::mlas_nchwc8;
    Window2d& w = dp.window;
    w.kernel_h = 1 + rng() % 5;
    w.kernel_w = 1 + rng() % 5;
    w.stride_h = 1 + rng() % 3;
    w.stride_w = 1 + rng() % 3;
    w.dilation_h = 1 + rng() % 2;
    w.dilation_w = 1 + rng() % 3;
    w.ins_h = rng() % 5 == 0 ? rng() % 2 + 1 : 0;
    w.ins_w = rng() % 5 == 0 ? rng() % 2 + 1 : 0;
    // Up to 6: with small inputs some windows lie entirely in the padding.
    w.pad_top = rng() % 4 == 0 ? rng() % 7 : rng() % 2;
    w.pad_bottom = rng() % 3;
    w.pad_left = rng() % 4 == 0 ? rng() % 7 : rng() % 2;
    w.pad_right = rng() % 3;
    dp.multiplier = rng() % 4 == 0 ? 2 + rng() % 2 : 1;
    dp.has_bias = rng() % 2;
    dp.result_add = rng() % 2;
    dp.clip = test::fused_clip_case(static_cast<uint32_t>(iter));
    // Odd counts too; 16 channels: MLAS's NCHWc depthwise order.
    const int64_t C = iter % 16 == 10 ? 16 : 1 + rng() % 7;
    // Widths from 1 to 70 so that every vector grouping and tail is reached.
    const int64_t W = iter % 7 == 0 ? 1 : 1 + rng() % 70;
    const Shape xs{int64_t(1 + rng() % 2), C, int64_t(1 + rng() % 12), W};
    const Shape ws{C * dp.multiplier, 1, w.kernel_h, w.kernel_w};
    Shape ys;
    try {
      ys = depthwise2d_output_shape(xs, ws, dp);
    } catch (const Error&) {
      continue;  // the dilated kernel does not fit this input
    }
    const int rare = iter % 3 == 0 ? 0 : 25;  // a third without special values
    Nchw x(xs, nhwc), y0(ys, nhwc);
    Tensor wt(DType::f32, ws), b(DType::f32, {ws[0]});
    for (Tensor* t : {&x.storage, &wt, &b, &y0.storage})
      for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, rare);
    Nchw want(ys, nhwc);
    want.storage = y0.storage;
    want.view = TensorView(want.storage.view().raw(), DType::f32, ys, y0.view.strides());
    cpu::DwconvProblem p{x.view,
                         wt,
                         b,
                         want.view,
                         dp.window,
                         dp.multiplier,
                         dp.has_bias,
                         dp.result_add,
                         dp.accumulation,
                         dp.flush_denormals,
                         dp.clip};
    reference(p);
    const std::vector<float> expected = want.values();
    {  // which walk the vector kernels take (the driver's padded row: every input column)
      const int64_t Wp = (xs[3] - 1) * (w.ins_w + 1) + 1 + w.pad_left + w.pad_right;
      const int64_t row = (Wp + w.stride_w - 1) / w.stride_w;
      for (const int64_t lanes : {8, 16})
        ++walks[std::string(cpu::dwconv_flat_walk(ys[2], ys[3], row, lanes) ? "flat" : "rows") +
                " " + std::to_string(lanes)];
    }
    for (const auto& v : list.variants) {
      if (v.reference || !list.runnable(v)) continue;
      if (v.declines(p) != nullptr) {
        ++declined;
        continue;
      }
      for (int threads = 1; threads <= 3; ++threads) {
        set_num_threads(threads);
        Nchw got(ys, nhwc);
        got.storage = y0.storage;
        got.view = TensorView(got.storage.view().raw(), DType::f32, ys, y0.view.strides());
        p.y = got.view;
        v.run(p);
        const std::vector<float> g = got.values();
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < g.size(); ++i)
          if (!test::same_bits_or_both_nan(g[i], expected[i]) && bad++ == 0) first = i;
        ASSERT_EQ(bad, 0u) << "seed " << seed << " iter " << iter << " "
                           << text(p, v.name, threads, nhwc) << "; first mismatch at element "
                           << first << ": " << g[first] << " (0x" << std::hex
                           << std::bit_cast<uint32_t>(g[first]) << ") vs " << expected[first]
                           << " (0x" << std::bit_cast<uint32_t>(expected[first]) << ")";
        outputs += static_cast<int64_t>(g.size());
        ++runs[v.name];
      }
    }
  }
  std::printf("dwconv: seed %u, %lld outputs compared, %lld declined\n", seed,
              static_cast<long long>(outputs), static_cast<long long>(declined));
  for (const auto& [name, n] : runs) std::printf("  %s: %lld runs\n", name.c_str(), (long long)n);
  // Both walks of the vector plane kernels (DwPlane::flat) at both widths.
  for (const char* walk : {"flat 8", "flat 16", "rows 8", "rows 16"}) {
    std::printf("  walk %s: %lld problems\n", walk, static_cast<long long>(walks[walk]));
    EXPECT_GT(walks[walk], 20) << walk;
  }
  // Every variant this host may run was exercised, many times (the
  // channels-in-lanes kernels take a narrower set: test_dwconv_nchwc.cpp
  // covers them more).
  for (const auto& v : list.variants)
    if (!v.reference && list.runnable(v)) {
      const bool nchwc = std::string(v.name).find("nchwc") != std::string::npos;
      EXPECT_GT(runs[v.name], nchwc ? 60 : 300) << v.name;
    }
}

// The plane kernels' lines walks (3x3 windows, undilated rows, stride_h 1 or
// 2; DwPlane::line_stride) and the in-place read at strides 1 and 2
// (DwPlane::direct: lines of padding skipped, columns outside the plane
// masked off, stride 2 deinterleaved): every
// row-block and vector-block remainder (heights 1-14, widths 1-70), pads 0-3
// on each side (rows entirely in padding), column strides and dilations,
// multipliers, NHWC views (not read in place), both accumulations, bias,
// old output, clip, special values, 1-3 threads.
TEST(DwconvFast, ThreeByThreeLinesWalksEqualReferenceBitForBit) {
  test::SettingsRestore restore;
  const unsigned seed = 20261212;
  std::mt19937 rng(seed);
  const auto& list = cpu::dwconv_kernels();
  std::map<std::string, int64_t> runs, walks;
  for (int iter = 0; iter < 300; ++iter) {
    const bool nhwc = iter % 7 == 3;
    Depthwise2dParams dp;
    apply_profile(dp, Profile::pytorch);
    if (iter % 3 != 0)
      dp.accumulation =
          iter % 3 == 1 ? Fp32Accumulation::mlas_nchwc16 : Fp32Accumulation::mlas_nchwc8;
    Window2d& w = dp.window;
    w.kernel_h = w.kernel_w = 3;
    w.stride_h = iter % 2 == 0 ? 1 : 2;
    w.stride_w = rng() % 3 == 0 ? 3 - w.stride_h : w.stride_h;
    w.dilation_w = rng() % 5 == 0 ? 2 : 1;
    w.ins_w = rng() % 9 == 0 ? 1 : 0;
    w.pad_top = rng() % 4;
    w.pad_bottom = rng() % 4;
    w.pad_left = rng() % 4;
    w.pad_right = rng() % 4;
    dp.multiplier = rng() % 4 == 0 ? 2 : 1;
    dp.has_bias = rng() % 2;
    dp.result_add = rng() % 3 == 0;
    dp.clip = test::fused_clip_case(static_cast<uint32_t>(iter) + 77u);
    const int64_t C = 1 + rng() % 4;
    const Shape xs{int64_t(1 + rng() % 2), C, int64_t(1 + rng() % 14), int64_t(1 + rng() % 70)};
    const Shape ws{C * dp.multiplier, 1, 3, 3};
    Shape ys;
    try {
      ys = depthwise2d_output_shape(xs, ws, dp);
    } catch (const Error&) {
      continue;  // the window does not fit this input
    }
    const int rare = iter % 3 == 0 ? 0 : 30;
    Nchw x(xs, nhwc), y0(ys, nhwc);
    Tensor wt(DType::f32, ws), b(DType::f32, {ws[0]});
    for (Tensor* t : {&x.storage, &b, &y0.storage})
      for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, rare);
    for (int64_t i = 0; i < wt.numel(); ++i) wt.data<float>()[i] = value(rng, 0);  // finite
    Nchw want(ys, nhwc);
    want.storage = y0.storage;
    want.view = TensorView(want.storage.view().raw(), DType::f32, ys, y0.view.strides());
    cpu::DwconvProblem p{
        x.view,          wt,    b,      want.view, w, dp.multiplier, dp.has_bias, dp.result_add,
        dp.accumulation, false, dp.clip};
    reference(p);
    const std::vector<float> expected = want.values();
    const int64_t Wp = (xs[3] - 1) * (w.ins_w + 1) + 1 + w.pad_left + w.pad_right;
    const int64_t row =
        std::max((Wp + w.stride_w - 1) / w.stride_w, ys[3] + (2 * w.dilation_w) / w.stride_w);
    const std::string walk = (cpu::dwconv_reads_in_place(p)                  ? "direct"
                              : cpu::dwconv_flat_walk(ys[2], ys[3], row, 16) ? "flat"
                                                                             : "lines") +
                             std::string(" stride ") + std::to_string(w.stride_h);
    ++walks[walk];
    for (const auto& v : list.variants) {
      if (v.reference || !list.runnable(v) ||
          std::string(v.name).find("nchwc") != std::string::npos)
        continue;
      ASSERT_EQ(v.declines(p), nullptr) << text(p, v.name, 1, nhwc);
      for (int threads = 1; threads <= 3; ++threads) {
        set_num_threads(threads);
        Nchw got(ys, nhwc);
        got.storage = y0.storage;
        got.view = TensorView(got.storage.view().raw(), DType::f32, ys, y0.view.strides());
        p.y = got.view;
        v.run(p);
        const std::vector<float> g = got.values();
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < g.size(); ++i)
          if (!test::same_bits_or_both_nan(g[i], expected[i]) && bad++ == 0) first = i;
        ASSERT_EQ(bad, 0u) << "seed " << seed << " iter " << iter << " walk " << walk << " "
                           << text(p, v.name, threads, nhwc) << "; first mismatch at element "
                           << first << ": " << g[first] << " vs " << expected[first];
        ++runs[v.name];
      }
    }
  }
  std::printf("dwconv 3x3 lines: seed %u\n", seed);
  for (const auto& [name, n] : runs) std::printf("  %s: %lld runs\n", name.c_str(), (long long)n);
  for (const auto& [walk, n] : walks)
    std::printf("  walk %s (16 lanes): %lld problems\n", walk.c_str(), (long long)n);
  for (const char* walk :
       {"direct stride 1", "direct stride 2", "lines stride 1", "lines stride 2"})
    EXPECT_GT(walks[walk], 20) << walk;
  for (const auto& v : list.variants)
    if (!v.reference && list.runnable(v) &&
        std::string(v.name).find("nchwc") == std::string::npos) {
      EXPECT_GT(runs[v.name], 600) << v.name;
    }
}

// The in-place read's row edges (DwPlane::direct, f32-dwconv-plane-body.inc's
// RowPlan): rows of 1-5 vectors of 16 lanes (stride 2: widths around 32 k,
// every combination of vectors past the left and right edges, including the
// 144@56 row of two), and wide pads (up to 300 columns) whose edge vectors
// outnumber the planned masks, so that their masks are worked out per
// block; both accumulations, bias, old output, clip, special values, 1-3
// threads.
TEST(DwconvFast, InPlaceRowEdgesEqualReferenceBitForBit) {
  test::SettingsRestore restore;
  const unsigned seed = 20261527;
  std::mt19937 rng(seed);
  const auto& list = cpu::dwconv_kernels();
  std::map<std::string, int64_t> runs;
  int64_t wide = 0;  // problems with more than 8 edge vectors at 16 lanes on the left
  for (int iter = 0; iter < 160; ++iter) {
    Depthwise2dParams dp;
    apply_profile(dp, Profile::pytorch);
    if (iter % 2 == 1) dp.accumulation = Fp32Accumulation::mlas_nchwc16;
    Window2d& w = dp.window;
    w.kernel_h = w.kernel_w = 3;
    w.stride_h = w.stride_w = iter % 4 < 2 ? 2 : 1;
    const bool wide_pads = iter % 3 == 0;
    w.pad_left = wide_pads ? 100 + rng() % 201 : rng() % 4;
    w.pad_right = wide_pads ? rng() % 301 : rng() % 4;
    w.pad_top = rng() % 3;
    w.pad_bottom = rng() % 3;
    dp.has_bias = rng() % 2;
    dp.result_add = rng() % 3 == 0;
    dp.clip = test::fused_clip_case(static_cast<uint32_t>(iter) + 501u);
    const int64_t span = 16 * w.stride_w;  // input columns under one 16-lane vector
    const int64_t width = std::max<int64_t>(1, span * int64_t(rng() % 5) + int64_t(rng() % 7) - 3);
    const Shape xs{int64_t(1 + rng() % 2), int64_t(1 + rng() % 2), int64_t(1 + rng() % 12), width};
    const Shape ws{xs[1], 1, 3, 3};
    Shape ys;
    try {
      ys = depthwise2d_output_shape(xs, ws, dp);
    } catch (const Error&) {
      continue;  // the window does not fit this input
    }
    wide += w.pad_left > 8 * span;
    const int rare = iter % 4 == 0 ? 0 : 20;
    Tensor x(DType::f32, xs), wt(DType::f32, ws), b(DType::f32, {ws[0]}), y0(DType::f32, ys);
    for (Tensor* t : {&x, &b, &y0})
      for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, rare);
    for (int64_t i = 0; i < wt.numel(); ++i) wt.data<float>()[i] = value(rng, 0);  // finite
    Tensor want = y0;
    cpu::DwconvProblem p{x,     wt,     b, want, w, 1, dp.has_bias, dp.result_add, dp.accumulation,
                         false, dp.clip};
    ASSERT_TRUE(cpu::dwconv_reads_in_place(p));
    reference(p);
    for (const auto& v : list.variants) {
      if (v.reference || !list.runnable(v) ||
          std::string(v.name).find("nchwc") != std::string::npos)
        continue;
      ASSERT_EQ(v.declines(p), nullptr) << text(p, v.name, 1, false);
      for (int threads = 1; threads <= 3; ++threads) {
        set_num_threads(threads);
        Tensor got = y0;
        p.y = got;
        v.run(p);
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < static_cast<size_t>(got.numel()); ++i)
          if (!test::same_bits_or_both_nan(got.data<float>()[i], want.data<float>()[i]) &&
              bad++ == 0)
            first = i;
        ASSERT_EQ(bad, 0u) << "seed " << seed << " iter " << iter << " "
                           << text(p, v.name, threads, false) << "; first mismatch at element "
                           << first << ": " << got.data<float>()[first] << " vs "
                           << want.data<float>()[first];
        ++runs[v.name];
      }
    }
  }
  std::printf("dwconv in-place row edges: seed %u, %lld with wide pads\n", seed, (long long)wide);
  EXPECT_GT(wide, 10);
  for (const auto& v : list.variants)
    if (!v.reference && list.runnable(v) &&
        std::string(v.name).find("nchwc") == std::string::npos) {
      std::printf("  %s: %lld runs\n", v.name, (long long)runs[v.name]);
      EXPECT_GT(runs[v.name], 300) << v.name;  // 3 thread counts per problem
    }
}

// The public entries choose the family's kernels: equal results whatever the
// ISA cap, and with Impl::reference.
TEST(DwconvFast, PublicEntriesAgreeAcrossIsaLevelsAndImpl) {
  test::SettingsRestore restore;
  const unsigned seed = 77;
  std::mt19937 rng(seed);
  const Shape xs{2, 5, 9, 23};
  Tensor x(DType::f32, xs), w(DType::f32, {10, 1, 3, 3}), b(DType::f32, {10});
  for (Tensor* t : {&x, &w, &b})
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, 30);
  for (int64_t i = 0; i < w.numel(); ++i)  // finite weights: padding allowed on every path
    if (!std::isfinite(w.data<float>()[i])) w.data<float>()[i] = 0.5f;
  for (const Profile profile : {Profile::pytorch, Profile::onnxruntime, Profile::bm1684}) {
    const bool interleaved = profile == Profile::bm1684;
    std::vector<std::vector<float>> results;
    std::vector<std::string> names;
    auto run = [&](const std::string& name) {
      Depthwise2dParams p;
      apply_profile(p, profile);
      p.window.kernel_h = p.window.kernel_w = 3;
      p.window.stride_w = 2;
      p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 1;
      p.multiplier = 2;
      p.has_bias = true;
      Tensor y(DType::f32, depthwise2d_output_shape(xs, w.shape(), p));
      depthwise2d(x, w, b, y, p);
      results.push_back(y.to_vector<float>());
      names.push_back(name);
      if (!interleaved) {  // the same convolution through conv2d with groups = C
        Conv2dParams c{p.window, 5, true, false, p.accumulation, false};
        Tensor y2(DType::f32, y.shape());
        conv2d(x, w, b, y2, c);
        results.push_back(y2.to_vector<float>());
        names.push_back(name + " (conv2d groups=C)");
      }
    };
    set_impl(Impl::reference);
    run("reference");
    set_impl(Impl::fast);
    for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512}) {
      if (isa > host_isa()) continue;
      set_max_isa(isa);
      for (int threads = 1; threads <= 3; ++threads) {
        set_num_threads(threads);
        run(std::string(isa_name(isa)) + " threads " + std::to_string(threads));
      }
    }
    for (size_t r = 1; r < results.size(); ++r)
      for (size_t i = 0; i < results[0].size(); ++i)
        ASSERT_TRUE(test::same_bits_or_both_nan(results[r][i], results[0][i]))
            << "seed " << seed << " profile " << profile_name(profile) << ": " << names[r]
            << " element " << i << ": " << results[r][i] << " vs " << results[0][i];
  }
}

// With Impl::reference the family runs its reference; with a non-finite
// weight and padding the sequential fast kernels decline (and say why).
TEST(DwconvFast, ChoiceAndDeclines) {
  test::SettingsRestore restore;
  Tensor x(DType::f32, {1, 2, 4, 4}), w(DType::f32, {2, 1, 3, 3}), y(DType::f32, {1, 2, 4, 4});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = 1.0f;
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = 1.0f;
  Window2d win;
  win.kernel_h = win.kernel_w = 3;
  win.pad_top = win.pad_bottom = win.pad_left = win.pad_right = 1;
  cpu::DwconvProblem p{x, w, TensorView(), y, win};
  const auto& list = cpu::dwconv_kernels();
  set_impl(Impl::fast);  // whatever NPUKIT_IMPL says
  EXPECT_FALSE(list.choose(p).reference);
  set_impl(Impl::reference);
  EXPECT_TRUE(list.choose(p).reference);
  set_impl(Impl::fast);
  w.data<float>()[4] = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(list.choose(p).reference);
  EXPECT_NE(list.variants[0].declines(p), nullptr);
  // Reference semantics: the padded taps are skipped, so only real taps meet the inf.
  list.run(p);
  EXPECT_TRUE(std::isinf(y.data<float>()[0]));
  p.accumulation = Fp32Accumulation::interleaved;  // padded taps count as 0 * w there
  EXPECT_FALSE(list.choose(p).reference);
}

}  // namespace
}  // namespace test_dwconv_fast
}  // namespace npukit
