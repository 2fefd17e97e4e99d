// The fp32 conv2d family (src/ops/cpu/f32-conv-{ocl,nchw}*, then DotChains)
// against the reference kernels, bit for bit (a NaN equals any NaN): every
// variant this host runs, seeded random geometry (stride, dilation, zero
// insertion, pads up to windows entirely in padding, 1-wide images, groups,
// odd channel counts, batch > 1, NHWC-strided input), special values, both
// accumulations, 1, 2 and 3 threads. A mismatch prints the seed and the case.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string_view>

#include "npukit/npukit.hpp"
#include "ops/cpu/conv_1x1.hpp"
#include "ops/cpu/conv_nchw.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_conv_fast {
namespace {

constexpr float kSpecials[] = {test::kNaN, test::kInf,     -test::kInf, 0.0f,
                               -0.0f,      1e-40f,         -3e-39f,     1e30f,
                               -1e30f,     0x1.fffffep-1f, 0x1p-126f,   -FLT_MIN};

float value(std::mt19937& rng, int rare) {
  return test::uniform_or_special(rng, rare, kSpecials);
}

std::string text(const cpu::ConvProblem& p, const char* kernel, int threads, bool nhwc) {
  std::ostringstream s;
  const Conv2dParams& c = p.params;
  const Window2d& w = c.window;
  s << kernel << ": x " << shape_text(p.x.shape()) << (nhwc ? " (NHWC x)" : "") << " w "
    << shape_text(p.w.shape()) << " groups " << c.groups << " stride " << w.stride_h << "x"
    << w.stride_w << " dilation " << w.dilation_h << "x" << w.dilation_w << " ins " << w.ins_h
    << "x" << w.ins_w << " pads " << w.pad_top << "," << w.pad_bottom << "," << w.pad_left << ","
    << w.pad_right << " bias " << c.has_bias << " result_add " << c.result_add << " residual_first "
    << c.residual_first << " accumulation " << fp32_accumulation_name(c.accumulation) << " flush "
    << c.flush_denormals << " " << test::clip_text(c.clip) << " threads " << threads;
  return s.str();
}

// f32-conv-ocl-* declines the problems where the positions-in-lanes form is
// faster (most of these small ones): its form runs on every problem it
// computes exactly, with the variant's own recheck (run_conv_ocl_exact).
bool is_ocl(const KernelVariant<cpu::ConvProblem>& v) {
  const std::string_view name(v.name);
  return name.find("-ocl-") != std::string_view::npos ||
         name.find("-1x1-") != std::string_view::npos;
}
const cpu::OclKernel& ocl_kernel(const KernelVariant<cpu::ConvProblem>& v) {
  const bool avx512 = v.isa == Isa::avx512;
  if (std::string_view(v.name).find("-1x1-") != std::string_view::npos)
    return avx512 ? cpu::kConv1x1Avx512 : cpu::kConv1x1Avx2;
  return avx512 ? cpu::kOclAvx512 : cpu::kOclAvx2;
}
const char* declines_for_test(const KernelVariant<cpu::ConvProblem>& v, const cpu::ConvProblem& p) {
  return is_ocl(v) ? cpu::conv_ocl_declines_exactness(p) : v.declines(p);
}
void run_for_test(const KernelVariant<cpu::ConvProblem>& v, const cpu::ConvProblem& p) {
  if (is_ocl(v))
    cpu::run_conv_ocl_exact(p, ocl_kernel(v));
  else
    v.run(p);
}

// f32-conv-nchw-s2-* takes 3x3 stride-2 convolutions of few input channels
// only: it runs here where it applies (and must match), its own suite
// (test_conv_nchw_s2.cpp) draws enough of them.
bool is_narrow(const KernelVariant<cpu::ConvProblem>& v) {
  return std::string_view(v.name).find("-s2-") != std::string_view::npos;
}

// The definition of a fused clip: the unfused convolution, then npukit's Clip.
void reference(const cpu::ConvProblem& p) {
  if (p.params.accumulation == Fp32Accumulation::interleaved)
    ref::conv2d_f32_interleaved(p.x, p.w, p.bias, p.y, p.params);
  else if (mlas_nchwc_block(p.params.accumulation))
    ref::conv2d_f32_mlas(p.x, p.w, p.bias, p.y, p.params);
  else
    ref::conv2d_f32(p.x, p.w, p.bias, p.y, p.params);
  ref::clip_f32(p.y, p.y, p.params.clip);
}

// Input channels per group for the mlas_nchwc tests: below a block (a chain
// per channel), multiples of 8 and 16 (NCHWc chains per block; 1x1: per 128
// channels, so past 128 too) and others (im2col, chains of 128 steps).
int64_t mlas_icg(std::mt19937& rng) {
  static const int64_t choices[] = {1, 3, 7, 8, 16, 24, 32, 40, 48, 136, 144, 160, 264, 13, 20};
  return choices[rng() % std::size(choices)];
}

// Random problems of `iterations` draws, batch first_batch .. first_batch +
// batches - 1, 1 .. max_ocg output channels per group, through every
// variant; each runnable variant must run more than min_runs times. With
// `mlas`, the accumulations are mlas_nchwc16 and mlas_nchwc8 (input channels
// from mlas_icg), else sequential and interleaved.
void every_variant_equals_reference(unsigned seed, int iterations, int64_t first_batch,
                                    int64_t batches, int64_t max_ocg, int64_t min_runs,
                                    bool mlas = false) {
  test::SettingsRestore restore;
  std::mt19937 rng(seed);
  const auto& list = cpu::conv_nchw_kernels();
  std::map<std::string, int64_t> runs;
  int64_t outputs = 0, declined = 0;
  for (int iter = 0; iter < iterations; ++iter) {
    const bool interleaved = !mlas && iter % 4 == 1;
    const bool nhwc = iter % 5 == 3;
    Conv2dParams p;
    apply_profile(p, interleaved ? Profile::bm1684 : Profile::pytorch);
    if (mlas)
      p.accumulation = iter % 2 ? Fp32Accumulation::mlas_nchwc8 : Fp32Accumulation::mlas_nchwc16;
    Window2d& w = p.window;
    w.kernel_h = 1 + rng() % 4;
    w.kernel_w = 1 + rng() % 4;
    w.stride_h = 1 + rng() % 3;
    w.stride_w = 1 + rng() % 3;
    w.dilation_h = 1 + rng() % 2;
    w.dilation_w = 1 + rng() % 3;
    w.ins_h = rng() % 5 == 0 ? rng() % 2 + 1 : 0;
    w.ins_w = rng() % 5 == 0 ? rng() % 2 + 1 : 0;
    w.pad_top = rng() % 4 == 0 ? rng() % 6 : rng() % 2;
    w.pad_bottom = rng() % 3;
    w.pad_left = rng() % 4 == 0 ? rng() % 6 : rng() % 2;
    w.pad_right = rng() % 3;
    p.groups = interleaved ? 1 : 1 + rng() % 3;
    p.has_bias = rng() % 2;
    p.result_add = rng() % 2;
    p.residual_first = mlas && p.result_add && rng() % 2;
    p.clip = test::fused_clip_case(static_cast<uint32_t>(iter));
    const int64_t IC = p.groups * (mlas ? mlas_icg(rng) : 1 + int64_t(rng() % 7));
    const int64_t OC = p.groups * (1 + int64_t(rng() % max_ocg));
    const int64_t W = iter % 7 == 0 ? 1 : 1 + rng() % 40;
    const Shape xs{first_batch + int64_t(rng() % batches), IC, int64_t(1 + rng() % 11), W};
    const Shape ws{OC, IC / p.groups, w.kernel_h, w.kernel_w};
    Shape ys;
    try {
      ys = conv2d_output_shape(xs, ws, p);
    } catch (const Error&) {
      continue;
    }
    const int rare = iter % 3 == 0 ? 0 : 25;
    Tensor xstore(DType::f32, nhwc ? Shape{xs[0], xs[2], xs[3], xs[1]} : xs);
    const TensorView x = nhwc ? TensorView(xstore.view().raw(), DType::f32, xs,
                                           {xs[1] * xs[2] * xs[3], 1, xs[3] * xs[1], xs[1]})
                              : xstore.view();
    Tensor wt(DType::f32, ws), b(DType::f32, {OC}), y0(DType::f32, ys);
    for (Tensor* t : {&xstore, &wt, &b, &y0})
      for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, rare);
    Tensor want = y0;
    cpu::ConvProblem prob{x, wt, b, want, p};
    reference(prob);
    for (const auto& v : list.variants) {
      if (v.reference || !list.runnable(v)) continue;
      if (declines_for_test(v, prob) != nullptr) {
        ++declined;
        continue;
      }
      for (int threads = 1; threads <= 3; ++threads) {
        set_num_threads(threads);
        Tensor got = y0;
        prob.y = got;
        run_for_test(v, prob);
        int64_t bad = 0, first = 0;
        const float* g = got.data<float>();
        const float* wv = want.data<float>();
        const int64_t n = got.numel();
        for (int64_t i = 0; i < n; ++i)
          if (!test::same_bits_or_both_nan(g[i], wv[i]) && bad++ == 0) first = i;
        ASSERT_EQ(bad, 0) << "seed " << seed << " iter " << iter << " "
                          << text(prob, v.name, threads, nhwc) << "; first mismatch at element "
                          << first << ": " << got.data<float>()[first] << " vs "
                          << want.data<float>()[first];
        outputs += got.numel();
        ++runs[v.name];
      }
    }
  }
  std::printf("conv2d family: seed %u, %lld outputs compared, %lld declined\n", seed,
              static_cast<long long>(outputs), static_cast<long long>(declined));
  for (const auto& [name, n] : runs) std::printf("  %s: %lld runs\n", name.c_str(), (long long)n);
  for (const auto& v : list.variants) {
    if (v.reference || !list.runnable(v) || is_narrow(v)) continue;
    // DotChains has no FMA chains: it declines every mlas_nchwc problem.
    if (mlas && std::string_view(v.name).find("dotchains") != std::string_view::npos)
      EXPECT_EQ(runs[v.name], 0) << v.name;
    else
      EXPECT_GT(runs[v.name], min_runs) << v.name;
  }
}

TEST(ConvFast, EveryVariantEqualsReferenceBitForBit) {
  every_variant_equals_reference(20261127, 200, 1, 2, 15, 150);
}

// Batches of 8 to 11 images (the positions-in-lanes driver then pads each
// image inside its own task, pads_per_image) and up to 80 output channels per
// group (several tiles per packed block of the ocl form, partial vectors).
TEST(ConvFast, BatchesOfSmallImagesEqualReference) {
  every_variant_equals_reference(20261129, 60, 8, 4, 80, 40);
}

// ONNX Runtime's MLAS orders (chains of FMAs per NCHWc block, per 128
// channels of a 1x1, per channel below a block, im2col runs of 128): every
// variant, the output-channels-in-lanes form included, on random geometry.
TEST(ConvFast, MlasOrdersEveryVariantEqualsReferenceBitForBit) {
  every_variant_equals_reference(20261130, 160, 1, 2, 40, 100, true);
}

// Memory whose last float is followed by an unreadable page, so that a kernel
// reading past the end of the caller's input faults instead of passing.
class GuardedFloats {
 public:
  explicit GuardedFloats(int64_t n) {
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t bytes = static_cast<size_t>(n) * sizeof(float);
    data_pages_ = (bytes + page - 1) / page * page;
    size_ = data_pages_ + page;
    base_ = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(base_, MAP_FAILED);
    EXPECT_EQ(mprotect(static_cast<char*>(base_) + data_pages_, page, PROT_NONE), 0);
    data_ = reinterpret_cast<float*>(static_cast<char*>(base_) + data_pages_ - bytes);
  }
  ~GuardedFloats() { munmap(base_, size_); }
  GuardedFloats(const GuardedFloats&) = delete;
  GuardedFloats& operator=(const GuardedFloats&) = delete;
  float* data() const { return data_; }

 private:
  void* base_ = nullptr;
  size_t size_ = 0, data_pages_ = 0;
  float* data_ = nullptr;
};

// Unpadded stride-1 convolutions (the case a kernel would be tempted to read
// in place, without the padded copy): every tail length of the last block of
// positions (1 to 64 and beyond), an input that ends just before an
// unreadable page (a read past it faults), groups, dilation, batch > 1,
// special values, 1 to 3 threads; bit for bit the reference.
TEST(ConvFast, UnpaddedInputEveryTailEqualsReference) {
  test::SettingsRestore restore;
  const unsigned seed = 20261126;
  std::mt19937 rng(seed);
  const auto& list = cpu::conv_nchw_kernels();
  std::map<std::string, int64_t> runs;
  for (int iter = 0; iter < 160; ++iter) {
    Conv2dParams p;
    apply_profile(p, Profile::pytorch);
    Window2d& w = p.window;
    const bool pointwise = iter % 2 == 0;
    w.kernel_h = pointwise ? 1 : 1 + rng() % 3;
    w.kernel_w = pointwise ? 1 : 1 + rng() % 3;
    w.dilation_h = 1 + rng() % 2;
    w.dilation_w = 1 + rng() % 2;
    p.groups = 1 + rng() % 2;
    p.has_bias = rng() % 2;
    p.result_add = rng() % 3 == 0;
    p.clip = test::fused_clip_case(static_cast<uint32_t>(iter) + 1000u);
    const int64_t IC = p.groups * (1 + rng() % 5), OC = p.groups * (1 + rng() % 13);
    // Output positions 1 .. 160: every tail of a 64-position block.
    const int64_t OW = 1 + iter % 13, OH = 1 + (iter / 13) % 12;
    const int64_t H = OH + (w.kernel_h - 1) * w.dilation_h;
    const int64_t W = OW + (w.kernel_w - 1) * w.dilation_w;
    const Shape xs{int64_t(1 + rng() % 2), IC, H, W};
    const Shape ws{OC, IC / p.groups, w.kernel_h, w.kernel_w};
    const Shape ys = conv2d_output_shape(xs, ws, p);
    const int rare = iter % 3 == 0 ? 0 : 20;
    GuardedFloats xmem(xs[0] * xs[1] * xs[2] * xs[3]);
    const TensorView x = TensorView::contiguous(xmem.data(), DType::f32, xs);
    for (int64_t i = 0; i < x.numel(); ++i) xmem.data()[i] = value(rng, rare);
    Tensor wt(DType::f32, ws), b(DType::f32, {OC}), y0(DType::f32, ys);
    for (Tensor* t : {&wt, &b, &y0})
      for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, rare);
    Tensor want = y0;
    cpu::ConvProblem prob{x, wt, b, want, p};
    reference(prob);
    for (const auto& v : list.variants) {
      if (v.reference || !list.runnable(v) || declines_for_test(v, prob) != nullptr) continue;
      for (int threads = 1; threads <= 3; ++threads) {
        set_num_threads(threads);
        Tensor got = y0;
        prob.y = got;
        run_for_test(v, prob);
        int64_t bad = 0, first = 0;
        for (int64_t i = 0; i < got.numel(); ++i)
          if (!test::same_bits_or_both_nan(got.data<float>()[i], want.data<float>()[i]) &&
              bad++ == 0)
            first = i;
        ASSERT_EQ(bad, 0) << "seed " << seed << " iter " << iter << " "
                          << text(prob, v.name, threads, false) << "; first mismatch at element "
                          << first << ": " << got.data<float>()[first] << " vs "
                          << want.data<float>()[first];
        ++runs[v.name];
      }
    }
  }
  for (const auto& v : list.variants)
    if (!v.reference && list.runnable(v) && !is_narrow(v)) {
      std::printf("  %s: %lld runs\n", v.name, static_cast<long long>(runs[v.name]));
      EXPECT_GT(runs[v.name], 300) << v.name;
    }
}

// Output rows of every width 1 .. 40 (every tail of 8- and 16-lane vectors
// and of 64-position blocks), written through a gapped view: a gap of 1 .. 3
// floats after every plane (and in half the cases after every row: without,
// the planes are dense) holds canaries (a NaN
// payload no kernel computes), the last plane ends at the storage's end. Every
// variant, 1 to 3 threads, three accumulations; the whole storage must equal
// the reference's (outputs bit for bit, the canaries untouched): the AVX2
// kernels store whole vectors plainly and only tails under a mask.
TEST(ConvFast, GappedOutputEveryWidthLeavesTheGapsAlone) {
  test::SettingsRestore restore;
  const unsigned seed = 20261128;
  std::mt19937 rng(seed);
  const float canary = std::bit_cast<float>(0x7fc0c0deu);
  const auto& list = cpu::conv_nchw_kernels();
  std::map<std::string, int64_t> runs;
  for (int iter = 0; iter < 120; ++iter) {
    Conv2dParams p;
    const int form = iter % 3;
    apply_profile(p, form == 1 ? Profile::bm1684 : Profile::pytorch);
    if (form == 2) p.accumulation = Fp32Accumulation::mlas_nchwc8;
    Window2d& w = p.window;
    const bool pointwise = iter % 2 == 0;
    w.kernel_h = w.kernel_w = pointwise ? 1 : 3;
    w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = pointwise ? 0 : 1;
    p.has_bias = rng() % 2;
    p.result_add = rng() % 3 == 0;
    p.clip = test::fused_clip_case(static_cast<uint32_t>(iter) + 2000u);
    const int64_t OW = 1 + iter % 40, OH = 1 + rng() % 3;
    const int64_t IC = form == 2 ? 8 : 1 + rng() % 6, OC = 1 + rng() % 12;
    const Shape xs{1 + int64_t(rng() % 2), IC, OH, OW};
    const Shape ws{OC, IC, w.kernel_h, w.kernel_w};
    const Shape ys = conv2d_output_shape(xs, ws, p);
    ASSERT_EQ(ys[3], OW);
    const int64_t row_gap = iter % 4 < 2 ? 0 : 1 + rng() % 3, plane_gap = 1 + rng() % 3;
    const int64_t y_row = OW + row_gap, y_plane = OH * y_row + plane_gap;
    const int rare = iter % 3 == 0 ? 0 : 20;
    Tensor x(DType::f32, xs), wt(DType::f32, ws), b(DType::f32, {OC});
    for (Tensor* t : {&x, &wt, &b})
      for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, rare);
    // The last plane's last row has no gap after it: the storage ends there.
    Tensor y0(DType::f32, {ys[0] * ys[1] * y_plane - plane_gap - row_gap});
    for (int64_t i = 0; i < y0.numel(); ++i) y0.data<float>()[i] = canary;
    const auto view = [&](Tensor& t) {
      return TensorView(t.view().raw(), DType::f32, ys, {ys[1] * y_plane, y_plane, y_row, 1});
    };
    Tensor want = y0;
    const TensorView want_view = view(want);
    for (int64_t i = 0; i < ys[0] * ys[1]; ++i)  // outputs in place of the canaries
      for (int64_t r = 0; r < OH; ++r)
        for (int64_t c = 0; c < OW; ++c)
          want.data<float>()[i * y_plane + r * y_row + c] = value(rng, rare);
    Tensor y_old = want;  // result_add's old outputs, canaries between
    cpu::ConvProblem prob{x, wt, b, want_view, p};
    reference(prob);
    for (const auto& v : list.variants) {
      if (v.reference || !list.runnable(v)) continue;
      for (int threads = 1; threads <= 3; ++threads) {
        Tensor got = y_old;
        prob.y = view(got);
        if (declines_for_test(v, prob) != nullptr) break;
        set_num_threads(threads);
        run_for_test(v, prob);
        int64_t bad = 0, first = 0;
        for (int64_t i = 0; i < got.numel(); ++i)
          if (std::bit_cast<uint32_t>(got.data<float>()[i]) !=
                  std::bit_cast<uint32_t>(want.data<float>()[i]) &&
              !(std::isnan(want.data<float>()[i]) && std::isnan(got.data<float>()[i]) &&
                std::bit_cast<uint32_t>(want.data<float>()[i]) != 0x7fc0c0deu &&
                std::bit_cast<uint32_t>(got.data<float>()[i]) != 0x7fc0c0deu) &&
              bad++ == 0)
            first = i;
        ASSERT_EQ(bad, 0) << "seed " << seed << " iter " << iter << " "
                          << text(prob, v.name, threads, false) << " y gaps " << row_gap << "/"
                          << plane_gap << "; first mismatch at storage float " << first << ": "
                          << got.data<float>()[first] << " vs " << want.data<float>()[first];
        ++runs[v.name];
      }
    }
  }
  for (const auto& v : list.variants)
    if (!v.reference && list.runnable(v) && !is_narrow(v)) {
      std::printf("  %s: %lld runs\n", v.name, static_cast<long long>(runs[v.name]));
      EXPECT_GT(runs[v.name], 30) << v.name;
    }
}

// Small outputs with larger, padded weights: the fast kernels settle the
// weights' finiteness after the run (a NaN output with a non-finite weight
// is recomputed by the reference). Infinite and NaN weights on taps that
// meet the padding (the fast sum turns NaN, the reference's does not) and on
// the centre tap only (never padded: the fast result stands), finite and
// special inputs, 1 to 3 threads; bit for bit the reference.
TEST(ConvFast, NonFiniteWeightsWithPaddingEqualReference) {
  test::SettingsRestore restore;
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "the ocl form needs AVX2 (NPUKIT_MAX_ISA below avx2)";
  const unsigned seed = 20261128;
  std::mt19937 rng(seed);
  const auto& list = cpu::conv_nchw_kernels();
  const float specials[] = {std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  std::map<std::string, int64_t> runs;
  for (int iter = 0; iter < 60; ++iter) {
    Conv2dParams p;
    apply_profile(p, Profile::pytorch);
    p.window.kernel_h = p.window.kernel_w = 3;
    p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 1;
    p.has_bias = iter % 2 == 0;
    const int64_t IC = 16 + iter % 5, OC = 1 + iter % 9, H = 1 + iter % 4, W = 1 + (iter / 4) % 4;
    const Shape xs{1 + iter % 2, IC, H, W}, ws{OC, IC, 3, 3};
    const Shape ys = conv2d_output_shape(xs, ws, p);
    Tensor x(DType::f32, xs), wt(DType::f32, ws), b(DType::f32, {OC}), y0(DType::f32, ys);
    for (Tensor* t : {&x, &wt, &b, &y0})
      for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, 0);
    if (iter % 4 == 3) x.data<float>()[rng() % x.numel()] = specials[rng() % 3];
    // One or two special weights: on a corner tap (it meets the padding of
    // every output on that side) or on the centre tap (never padded).
    const bool centre = iter % 3 == 0;
    for (int k = 0; k < 1 + iter % 2; ++k) {
      const int64_t oc = rng() % OC, ic = rng() % IC, tap = centre ? 4 : (rng() % 2 ? 0 : 8);
      wt.data<float>()[(oc * IC + ic) * 9 + tap] = specials[rng() % 3];
    }
    Tensor want = y0;
    cpu::ConvProblem prob{x, wt, b, want, p};
    reference(prob);
    for (const auto& v : list.variants) {
      if (v.reference || !list.runnable(v) || declines_for_test(v, prob) != nullptr) continue;
      for (int threads = 1; threads <= 3; ++threads) {
        set_num_threads(threads);
        Tensor got = y0;
        prob.y = got;
        run_for_test(v, prob);
        for (int64_t i = 0; i < got.numel(); ++i)
          ASSERT_TRUE(test::same_bits_or_both_nan(got.data<float>()[i], want.data<float>()[i]))
              << "seed " << seed << " iter " << iter << " " << text(prob, v.name, threads, false)
              << " centre tap " << centre << "; element " << i << ": " << got.data<float>()[i]
              << " vs " << want.data<float>()[i];
        ++runs[v.name];
      }
    }
  }
  // The AVX-512 and AVX2 kernels take every case (they check afterwards).
  for (const char* name :
       {"f32-conv-ocl-avx512", "f32-conv-nchw-avx512", "f32-conv-ocl-avx2", "f32-conv-nchw-avx2"})
    for (const auto& v : list.variants)
      if (std::string(v.name) == name && list.runnable(v)) {
        std::printf("  %s: %lld runs\n", name, static_cast<long long>(runs[name]));
        EXPECT_EQ(runs[name], 180) << name;
      }
}

// conv2d() picks the family's kernels: the same bits at every ISA cap, any
// thread count and with Impl::reference.
TEST(ConvFast, PublicEntryAgreesAcrossIsaLevelsAndImpl) {
  test::SettingsRestore restore;
  std::mt19937 rng(5);
  Tensor x(DType::f32, {2, 6, 13, 19}), w(DType::f32, {10, 3, 3, 3}), b(DType::f32, {10});
  for (Tensor* t : {&x, &w, &b})
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, 30);
  for (int64_t i = 0; i < w.numel(); ++i)
    if (!std::isfinite(w.data<float>()[i])) w.data<float>()[i] = -0.25f;
  Conv2dParams p;
  p.window.kernel_h = p.window.kernel_w = 3;
  p.window.stride_w = 2;
  p.window.pad_top = p.window.pad_left = p.window.pad_right = 1;
  p.groups = 2;
  p.has_bias = true;
  const Shape ys = conv2d_output_shape(x.shape(), w.shape(), p);
  auto run = [&] {
    Tensor y(DType::f32, ys);
    conv2d(x, w, b, y, p);
    return y.to_vector<float>();
  };
  for (const Fp32Accumulation a : {Fp32Accumulation::sequential, Fp32Accumulation::mlas_nchwc16,
                                   Fp32Accumulation::mlas_nchwc8}) {
    p.accumulation = a;
    set_max_isa(host_isa());
    set_impl(Impl::reference);
    const std::vector<float> want = run();
    set_impl(Impl::fast);
    for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512}) {
      if (isa > host_isa()) continue;
      set_max_isa(isa);
      for (int threads = 1; threads <= 3; ++threads) {
        set_num_threads(threads);
        const std::vector<float> got = run();
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_TRUE(test::same_bits_or_both_nan(got[i], want[i]))
              << fp32_accumulation_name(a) << " " << isa_name(isa) << " threads " << threads
              << " element " << i;
      }
    }
  }
}

// conv2d with weights packed ahead (as a planned model does): the public
// entry gives the reference's bits with and without the packing, with a
// packing of other weights' shape (ignored), at every ISA level and 1-3
// threads; bad weights for the packing are refused with an npukit::Error.
void packed_weights_give_the_same_bits(Fp32Accumulation accumulation) {
  test::SettingsRestore restore;
  std::mt19937 rng(7);
  Tensor x(DType::f32, {3, 64, 7, 9}), w(DType::f32, {96, 32, 3, 3}), b(DType::f32, {96});
  for (Tensor* t : {&x, &w, &b})
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, 40);
  for (int64_t i = 0; i < w.numel(); ++i)
    if (!std::isfinite(w.data<float>()[i])) w.data<float>()[i] = 0.5f;
  Conv2dParams p;
  p.window.kernel_h = p.window.kernel_w = 3;
  p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 1;
  p.groups = 2;
  p.has_bias = true;
  p.result_add = true;
  p.clip = {-1.0f, 1.5f};
  p.accumulation = accumulation;
  const Shape ys = conv2d_output_shape(x.shape(), w.shape(), p);
  Tensor y0(DType::f32, ys);
  for (int64_t i = 0; i < y0.numel(); ++i) y0.data<float>()[i] = value(rng, 40);
  const auto packed = conv2d_pack_weights(w, p, ys[2], ys[3]);
  // Packed only where the ocl form may run (3x3: at AVX-512; AVX2 takes 1x1).
  EXPECT_EQ(packed != nullptr, impl() == Impl::fast && max_isa() >= Isa::avx512);
  Tensor other(DType::f32, {96, 32, 1, 1});
  const auto mismatched = conv2d_pack_weights(other, p, 5, 5);
  auto run = [&](const cpu::ConvPackedWeights* pw) {
    Tensor y = y0;
    conv2d(x, w, b, y, p, pw);
    return y.to_vector<float>();
  };
  set_impl(Impl::reference);
  const std::vector<float> want = run(nullptr);
  set_impl(Impl::fast);
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512}) {
    if (isa > host_isa()) continue;
    set_max_isa(isa);
    for (int threads = 1; threads <= 3; ++threads) {
      set_num_threads(threads);
      for (const cpu::ConvPackedWeights* pw :
           {packed.get(), mismatched.get(), static_cast<const cpu::ConvPackedWeights*>(nullptr)}) {
        const std::vector<float> got = run(pw);
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_TRUE(test::same_bits_or_both_nan(got[i], want[i]))
              << fp32_accumulation_name(accumulation) << " " << isa_name(isa) << " threads "
              << threads << " packing "
              << (pw == packed.get() ? "own"
                  : pw               ? "mismatched"
                                     : "none")
              << " element " << i;
      }
    }
  }
  Tensor bad_rank(DType::f32, {96, 32, 9});
  EXPECT_THROW(conv2d_pack_weights(bad_rank, p, 7, 9), Error);
  Conv2dParams bad_groups = p;
  bad_groups.groups = 5;
  try {
    conv2d_pack_weights(w, bad_groups, 7, 9);
    ADD_FAILURE() << "groups 5 accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("conv2d_pack_weights"), std::string::npos) << m;
    EXPECT_NE(m.find("groups"), std::string::npos) << m;
  }
}

// A planned model's packing answers the padded-tap finiteness check
// (conv_weights_finite) when it packs this very tensor; the answer must be the
// tensor's: with an infinite corner weight and result_add (where the kernels
// check before running), conv2d with the packing gives the reference's bits.
TEST(ConvFast, PackedWeightsFinitenessIsTheTensors) {
  test::SettingsRestore restore;
  const unsigned seed = 20261127;
  std::mt19937 rng(seed);
  Tensor x(DType::f32, {1, 16, 7, 7}), w(DType::f32, {64, 16, 3, 3}), b(DType::f32, {64});
  for (Tensor* t : {&x, &w, &b})
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, 0);
  Tensor finite_w = w;  // the same values at another address
  w.data<float>()[(5 * 16 + 3) * 9 + 0] = std::numeric_limits<float>::infinity();
  Conv2dParams p;
  p.window.kernel_h = p.window.kernel_w = 3;
  p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 1;
  p.has_bias = true;
  p.result_add = true;
  p.accumulation = Fp32Accumulation::mlas_nchwc16;
  const Shape ys = conv2d_output_shape(x.shape(), w.shape(), p);
  Tensor y0(DType::f32, ys);
  for (int64_t i = 0; i < y0.numel(); ++i) y0.data<float>()[i] = value(rng, 0);
  const auto packed = cpu::pack_conv_weights(w, 1, 32, p.accumulation);
  const auto packed_finite = cpu::pack_conv_weights(finite_w, 1, 32, p.accumulation);
  Tensor y = y0;
  EXPECT_FALSE(cpu::conv_weights_finite({x, w, b, y, p, packed.get()}));
  EXPECT_TRUE(cpu::conv_weights_finite({x, finite_w, b, y, p, packed_finite.get()}));
  // Another tensor's packing is not asked: w itself is scanned.
  EXPECT_FALSE(cpu::conv_weights_finite({x, w, b, y, p, packed_finite.get()}));
  EXPECT_TRUE(cpu::conv_weights_finite({x, finite_w, b, y, p, packed.get()}));
  const auto planned = conv2d_pack_weights(w, p, ys[2], ys[3]);
  set_impl(Impl::reference);
  Tensor want = y0;
  conv2d(x, w, b, want, p);
  set_impl(Impl::fast);
  int64_t nan = 0;
  for (int64_t i = 0; i < want.numel(); ++i) nan += std::isnan(want.data<float>()[i]);
  EXPECT_EQ(nan, 0) << "the reference skips the padded taps: no 0 * inf";
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512}) {
    if (isa > host_isa()) continue;
    set_max_isa(isa);
    for (int threads = 1; threads <= 3; ++threads) {
      set_num_threads(threads);
      Tensor got = y0;
      conv2d(x, w, b, got, p, planned.get());
      for (int64_t i = 0; i < got.numel(); ++i)
        ASSERT_TRUE(test::same_bits_or_both_nan(got.data<float>()[i], want.data<float>()[i]))
            << "seed " << seed << " " << isa_name(isa) << " threads " << threads << " element " << i
            << ": " << got.data<float>()[i] << " vs " << want.data<float>()[i];
    }
  }
}

// A depthwise layer has nothing to pack, but planning it records whether its
// weights are finite (conv2d_pack_weights), so conv2d does not scan them on
// every call. The record must be the tensor's: with an infinite weight and
// padding (the fast kernels add 0 * w on padded taps and must decline), conv2d
// with the record, a record of another tensor or none gives the reference's
// bits at every ISA level and 1-3 threads; a depthwise record handed to a
// dense convolution is ignored.
TEST(ConvFast, DepthwisePlanningRecordsFiniteness) {
  test::SettingsRestore restore;
  const unsigned seed = 20261128;
  std::mt19937 rng(seed);
  Tensor x(DType::f32, {1, 16, 7, 7}), w(DType::f32, {16, 1, 3, 3}), b(DType::f32, {16});
  for (Tensor* t : {&x, &w, &b})
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, 0);
  Tensor inf_w = w;
  inf_w.data<float>()[5 * 9] = std::numeric_limits<float>::infinity();  // channel 5's corner
  Conv2dParams p;
  p.window.kernel_h = p.window.kernel_w = 3;
  p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 1;
  p.groups = 16;
  p.has_bias = true;
  p.accumulation = Fp32Accumulation::sequential;
  const Shape ys = conv2d_output_shape(x.shape(), w.shape(), p);
  const auto finite_record = conv2d_pack_weights(w, p, ys[2], ys[3]);
  const auto inf_record = conv2d_pack_weights(inf_w, p, ys[2], ys[3]);
  ASSERT_NE(finite_record, nullptr);
  ASSERT_NE(inf_record, nullptr);
  EXPECT_EQ(finite_record->block, 0);
  EXPECT_TRUE(finite_record->finite);
  EXPECT_FALSE(inf_record->finite);
  auto run = [&](const Tensor& wt, const cpu::ConvPackedWeights* pw) {
    Tensor y(DType::f32, ys);
    conv2d(x, wt, b, y, p, pw);
    return y.to_vector<float>();
  };
  set_impl(Impl::reference);
  const std::vector<float> want = run(w, nullptr), want_inf = run(inf_w, nullptr);
  set_impl(Impl::fast);
  int64_t nan = 0;
  for (float v : want_inf) nan += std::isnan(v);
  EXPECT_EQ(nan, 0) << "the reference skips the padded taps: no 0 * inf";
  struct Use {
    const Tensor* w;
    const cpu::ConvPackedWeights* record;
    const std::vector<float>* want;
    const char* what;
  };
  const Use uses[] = {{&w, finite_record.get(), &want, "finite w, its record"},
                      {&w, nullptr, &want, "finite w, no record"},
                      {&inf_w, inf_record.get(), &want_inf, "infinite w, its record"},
                      {&inf_w, finite_record.get(), &want_inf, "infinite w, another's record"},
                      {&inf_w, nullptr, &want_inf, "infinite w, no record"}};
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512}) {
    if (isa > host_isa()) continue;
    set_max_isa(isa);
    for (int threads = 1; threads <= 3; ++threads) {
      set_num_threads(threads);
      for (const Use& u : uses) {
        const std::vector<float> got = run(*u.w, u.record);
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_TRUE(test::same_bits_or_both_nan(got[i], (*u.want)[i]))
              << "seed " << seed << " " << u.what << " " << isa_name(isa) << " threads " << threads
              << " element " << i << ": " << got[i] << " vs " << (*u.want)[i];
      }
    }
  }
  // A dense convolution given the depthwise record runs as without one.
  Tensor dense_w(DType::f32, {8, 16, 3, 3}), dense_b(DType::f32, {8});
  for (Tensor* t : {&dense_w, &dense_b})
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng, 0);
  Conv2dParams dense = p;
  dense.groups = 1;
  const Shape dys = conv2d_output_shape(x.shape(), dense_w.shape(), dense);
  Tensor y_ref(DType::f32, dys), y_rec(DType::f32, dys);
  set_impl(Impl::reference);
  conv2d(x, dense_w, dense_b, y_ref, dense, nullptr);
  set_impl(Impl::fast);
  conv2d(x, dense_w, dense_b, y_rec, dense, finite_record.get());
  for (int64_t i = 0; i < y_ref.numel(); ++i)
    ASSERT_TRUE(test::same_bits_or_both_nan(y_rec.data<float>()[i], y_ref.data<float>()[i]))
        << "dense conv with a depthwise record, element " << i;
}

TEST(ConvFast, PackedWeightsGiveTheSameBits) {
  for (const Fp32Accumulation a : {Fp32Accumulation::sequential, Fp32Accumulation::mlas_nchwc16,
                                   Fp32Accumulation::mlas_nchwc8})
    packed_weights_give_the_same_bits(a);
}

// The output-channels-in-lanes form's chain-outer tasks (mlas orders with
// several chains: each chain runs over a task's tiles before the next, the
// totals kept per tile between calls): network-like 3x3 layers with 2 to 5
// chains, planes with one and with several tasks per channel block, a partial
// last block, residual first or after, special values, 1 to 3 threads, at
// every ISA level of the form; bit for bit the reference.
TEST(ConvFast, OclChainOuterTasksEqualReference) {
  test::SettingsRestore restore;
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "the ocl form needs AVX2 (NPUKIT_MAX_ISA below avx2)";
  const unsigned seed = 20261128;
  std::mt19937 rng(seed);
  struct Case {
    int64_t ic, oc, h, w;
  };
  const Case cases[] = {{64, 96, 7, 7}, {32, 64, 14, 14}, {80, 70, 9, 13}, {48, 16, 17, 5}};
  int64_t runs = 0;
  for (const Case& k : cases)
    for (const Fp32Accumulation a : {Fp32Accumulation::mlas_nchwc16, Fp32Accumulation::mlas_nchwc8})
      for (int residual = 0; residual < 3; ++residual) {
        Conv2dParams p;
        p.window.kernel_h = p.window.kernel_w = 3;
        p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 1;
        p.has_bias = residual != 1;
        p.result_add = residual > 0;
        p.residual_first = residual == 2;
        if (residual == 0) p.clip = {0.0f, std::numeric_limits<float>::infinity()};  // a fused Relu
        p.accumulation = a;
        Tensor x(DType::f32, {1, k.ic, k.h, k.w}), w(DType::f32, {k.oc, k.ic, 3, 3}),
            b(DType::f32, {k.oc});
        // Special values in x, b and the old outputs; finite weights (with
        // padded taps the form declines a non-finite one: NonFiniteWeights...).
        for (Tensor* t : {&x, &w, &b})
          for (int64_t i = 0; i < t->numel(); ++i)
            t->data<float>()[i] = value(rng, t == &w ? 0 : 50);
        Tensor y0(DType::f32, conv2d_output_shape(x.shape(), w.shape(), p));
        for (int64_t i = 0; i < y0.numel(); ++i) y0.data<float>()[i] = value(rng, 50);
        Tensor want = y0;
        cpu::ConvProblem prob{x, w, b, want, p};
        reference(prob);
        ASSERT_EQ(cpu::conv_ocl_declines_exactness(prob), nullptr);
        for (const cpu::OclKernel* kernel : {&cpu::kOclAvx512, &cpu::kOclAvx2}) {
          const Isa isa = kernel == &cpu::kOclAvx512 ? Isa::avx512 : Isa::avx2;
          if (isa > max_isa()) continue;
          ASSERT_TRUE(kernel->resumes);
          for (int threads = 1; threads <= 3; ++threads) {
            set_num_threads(threads);
            Tensor got = y0;
            prob.y = got;
            cpu::run_conv_ocl_exact(prob, *kernel);
            for (int64_t i = 0; i < got.numel(); ++i)
              ASSERT_TRUE(test::same_bits_or_both_nan(got.data<float>()[i], want.data<float>()[i]))
                  << "seed " << seed << " " << text(prob, isa_name(isa), threads, false)
                  << " element " << i << ": " << got.data<float>()[i] << " vs "
                  << want.data<float>()[i];
            ++runs;
          }
        }
      }
  std::printf("ocl chain-outer: seed %u, %lld runs\n", seed, static_cast<long long>(runs));
  const int64_t kernels = max_isa() >= Isa::avx512 ? 2 : 1;
  EXPECT_EQ(runs, kernels * 4 * 2 * 3 * 3);  // every case, accumulation, residual, thread count
}

}  // namespace
}  // namespace test_conv_fast
}  // namespace npukit
