// The simulator's conv2d, depthwise2d and matmul keep their operands in
// per-thread buffers reused from one instruction to the next
// (src/npu/operand_scratch.hpp). A buffer holds the previous instruction's
// bytes: without result_add the output must not depend on them. Each test
// fills every slot with NaN bits first and compares with the operator core
// run on fresh zeroed tensors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "npu/operand_scratch.hpp"
#include "npu_test_util.hpp"
#include "npukit/npukit.hpp"

namespace npukit::npu::test {
namespace test_npu_operand_scratch {
namespace {

using face::operand_scratch;
using face::Slot;

constexpr unsigned kSeed = 20261127;
constexpr size_t kPoisonBytes = 1 << 20;

void poison_every_slot() {
  for (Slot s : {Slot::input, Slot::weight_raw, Slot::weight, Slot::output})
    std::memset(operand_scratch(s, kPoisonBytes), 0xff, kPoisonBytes);  // NaN words
}

std::vector<float> random_floats(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

int64_t differing_words(const std::vector<uint32_t>& got, const Tensor& want) {
  int64_t bad = 0;
  for (int64_t i = 0; i < want.numel(); ++i)
    bad += got[static_cast<size_t>(i)] == bits(want.data<float>()[i]) ? 0 : 1;
  return bad;
}

class NpuOperandScratch : public OkkTest {};

TEST_F(NpuOperandScratch, BuffersAreAlignedReusedAndGrow) {
  void* a = operand_scratch(Slot::output, 1000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(operand_scratch(Slot::output, 500), a) << "a smaller request reuses the buffer";
  EXPECT_NE(operand_scratch(Slot::input, 500), a) << "slots are distinct";
  void* b = operand_scratch(Slot::output, 100000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 64, 0u);
  std::memset(b, 1, 100000);  // the whole request is usable (ASan checks)
  face::release_operand_scratch();
  void* c = operand_scratch(Slot::output, 64);
  std::memset(c, 1, 64);
}

TEST_F(NpuOperandScratch, Conv2dWithoutResultAddIgnoresStaleBuffers) {
  std::mt19937 rng(kSeed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 12; ++trial) {
    const int n = pick(1, 2), ic = pick(1, 6), oc = pick(1, 70), h = pick(3, 8), w = pick(3, 8);
    const int k = pick(1, 3);
    const dim4 xs{n, ic, h, w};
    Tensor x(DType::f32, {n, ic, h, w}), wt(DType::f32, {oc, ic, k, k});
    const std::vector<float> xv = random_floats(rng, static_cast<size_t>(x.numel()));
    std::memcpy(x.data<float>(), xv.data(), xv.size() * 4);
    put_f32(0, xs, xv);
    // 2IC pairs (ceil(ic/2), oc, k, k), compact: channel oc on NPU oc % 64.
    const int icn = (ic + 1) / 2;
    const dim4 ws{icn, oc, k, k};
    dim4 wst;
    okk_compact_stride(&wst, 0, &ws);
    std::vector<uint32_t> pairs(static_cast<size_t>(icn) * oc * k * k * 2, bits(std::nanf("")));
    for (int j = 0; j < icn; ++j)
      for (int o = 0; o < oc; ++o)
        for (int t = 0; t < k * k; ++t)
          for (int e = 0; e < 2 && 2 * j + e < ic; ++e) {
            const float v = random_floats(rng, 1)[0];
            wt.data<float>()[(int64_t{o} * ic + 2 * j + e) * k * k + t] = v;
            pairs[((static_cast<size_t>(j) * oc + o) * k * k + t) * 2 + e] = bits(v);
          }
    // Pairs as 64-bit elements: two words per element, strides in pairs.
    const dim4 wws{icn, oc, k, 2 * k};
    const dim4 wwst{2 * wst.n, 2 * wst.c, 2 * wst.h, 1};
    put(262144, wws, pairs, &wwst);
    poison_every_slot();
    const int oh = h - k + 1, ow = w - k + 1;
    okk_bdc_conv2d(393216, 0, 262144, 0, &xs, oc, k, k, nullptr, nullptr, false, false, nullptr,
                   nullptr, nullptr);
    Tensor y(DType::f32, {n, oc, oh, ow});
    Conv2dParams cp;
    cp.window.kernel_h = cp.window.kernel_w = k;
    apply_profile(cp, Profile::bm1684);
    conv2d(x, wt, Tensor(), y, cp);
    EXPECT_EQ(differing_words(get(393216, {n, oc, oh, ow}), y), 0)
        << "seed " << kSeed << " trial " << trial << ": N" << n << " IC" << ic << " OC" << oc
        << " H" << h << " W" << w << " K" << k;
  }
}

TEST_F(NpuOperandScratch, DepthwiseIgnoresStaleBuffers) {
  std::mt19937 rng(kSeed + 1);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 12; ++trial) {
    const int n = pick(1, 2), c = pick(1, 70), h = pick(3, 8), w = pick(3, 8), k = pick(1, 3);
    const dim4 xs{n, c, h, w}, ws{1, c, k, k};
    const std::vector<float> xv = random_floats(rng, static_cast<size_t>(n) * c * h * w);
    const std::vector<float> wv = random_floats(rng, static_cast<size_t>(c) * k * k);
    put_f32(0, xs, xv);
    dim4 wst;
    okk_compact_stride(&wst, 0, &ws);
    put_f32(262144, ws, wv, &wst);
    poison_every_slot();
    const int oh = h - k + 1, ow = w - k + 1;
    okk_bdc_depthwise2d(393216, 0, 262144, 0, &xs, k, k, false, nullptr, nullptr, nullptr);
    Tensor x(DType::f32, {n, c, h, w}), wt(DType::f32, {c, 1, k, k}), y(DType::f32, {n, c, oh, ow});
    std::memcpy(x.data<float>(), xv.data(), xv.size() * 4);
    std::memcpy(wt.data<float>(), wv.data(), wv.size() * 4);
    Depthwise2dParams dp;
    dp.window.kernel_h = dp.window.kernel_w = k;
    apply_profile(dp, Profile::bm1684);
    depthwise2d(x, wt, Tensor(), y, dp);
    EXPECT_EQ(differing_words(get(393216, {n, c, oh, ow}), y), 0)
        << "seed " << kSeed + 1 << " trial " << trial << ": N" << n << " C" << c << " H" << h
        << " W" << w << " K" << k;
  }
}

TEST_F(NpuOperandScratch, MatmulWithoutResultAddIgnoresStaleBuffers) {
  std::mt19937 rng(kSeed + 2);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 12; ++trial) {
    const int rows = pick(1, 9), inner = pick(1, 40), cols = pick(1, 40);
    const int lcpc = pick(1, inner), rcpc = pick(1, cols);
    const std::vector<float> av = random_floats(rng, static_cast<size_t>(rows) * inner);
    const std::vector<float> bv = random_floats(rng, static_cast<size_t>(inner) * cols);
    const uint64_t ag = machine().allocate(av.size() * 4), bg = machine().allocate(bv.size() * 4);
    std::memcpy(machine().global(ag, av.size() * 4), av.data(), av.size() * 4);
    std::memcpy(machine().global(bg, bv.size() * 4), bv.data(), bv.size() * 4);
    okk_gdma_32bit_matrix_S2L(0, ag, rows, inner, lcpc, inner);
    okk_gdma_32bit_matrix_S2L(131072, bg, inner, cols, rcpc, cols);
    poison_every_slot();
    okk_bdc_matmul(262144, 0, 131072, 0, rows, inner, cols, lcpc, rcpc, false, false);
    const uint64_t out = machine().allocate(static_cast<size_t>(rows) * cols * 4);
    okk_gdma_32bit_matrix_L2S(out, 262144, rows, cols, rcpc, cols);
    std::vector<uint32_t> got(static_cast<size_t>(rows) * cols);
    std::memcpy(got.data(), machine().global(out, got.size() * 4), got.size() * 4);
    Tensor a(DType::f32, {rows, inner}), b(DType::f32, {inner, cols}), y(DType::f32, {rows, cols});
    std::memcpy(a.data<float>(), av.data(), av.size() * 4);
    std::memcpy(b.data<float>(), bv.data(), bv.size() * 4);
    MatmulParams mp;
    apply_profile(mp, Profile::bm1684);
    matmul(a, b, Tensor(), y, mp);
    EXPECT_EQ(differing_words(got, y), 0)
        << "seed " << kSeed + 2 << " trial " << trial << ": " << rows << "x" << inner << "x" << cols
        << " cpc " << lcpc << "/" << rcpc;
  }
}

}  // namespace
}  // namespace test_npu_operand_scratch
}  // namespace npukit::npu::test
