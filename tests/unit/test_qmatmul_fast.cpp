// QLinearMatMul and MatMulInteger: every kernel of the "qmatmul" list against
// the reference variant on seeded random 2-D slices (M, K, N from 1, odd K,
// strided and transposed operands, u8/s8, per-column b scales and zero
// points, both accumulations, extreme codes), and the public entry points
// (broadcast batches) under Impl::fast vs Impl::reference, with 1-3 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "npukit/kernels.hpp"
#include "npukit/ops/quantized.hpp"
#include "npukit/parallel.hpp"
#include "ops/cpu/x8-qmatmul.hpp"

namespace npukit {
namespace test_qmatmul_fast {
namespace {

std::vector<uint8_t> bytes(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.view().raw());
  return {p, p + t.numel() * static_cast<int64_t>(dtype_size(t.dtype()))};
}

void fill(Tensor& t, std::mt19937& rng, bool extreme) {
  const bool s = t.dtype() == DType::s8;
  auto* p = static_cast<uint8_t*>(t.view().raw());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int v = extreme ? (rng() % 2 ? (s ? -128 : 0) : (s ? 127 : 255))
                          : static_cast<int>(rng() % 256) - (s ? 128 : 0);
    p[i] = static_cast<uint8_t>(v);
  }
}

TEST(QMatMulFast, EveryKernelMatchesTheReferenceOnSlices) {
  const uint32_t seed = 9090;
  std::mt19937 rng(seed);
  const int saved = num_threads();
  auto r = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int it = 0; it < 200; ++it) {
    const int64_t M = r(1, 70), K = r(1, 300), N = r(1, 40);
    const DType ad = r(0, 1) ? DType::u8 : DType::s8, bd = r(0, 1) ? DType::u8 : DType::s8;
    const bool extreme = it % 5 == 0, b_transposed = r(0, 1), per_col = r(0, 1);
    Tensor a(ad, {M, K}), bt(bd, {N, K}), b(bd, {K, N});
    fill(a, rng, extreme);
    fill(b, rng, extreme);
    fill(bt, rng, extreme);
    QMatMulSlice s;
    s.a = a.view();
    // A transposed b: the same (K, N) logical view over an (N, K) buffer.
    s.b = b_transposed ? TensorView(bt.view().raw(), bd, {K, N}, {1, K}) : b.view();
    s.a_zp = static_cast<int32_t>(ad == DType::s8 ? r(-128, 127) : r(0, 255));
    for (int64_t c = 0; c < N; ++c)
      s.bq.zero_point.push_back(static_cast<int32_t>(
          per_col || c == 0 ? (bd == DType::s8 ? r(-128, 127) : r(0, 255)) : s.bq.zero_point[0]));
    s.bq.scale.clear();
    for (int64_t c = 0; c < (per_col ? N : 1); ++c)
      s.bq.scale.push_back(std::uniform_real_distribution<float>(0.005f, 0.05f)(rng));
    s.a_scale = 0.03f;
    s.y_scale = s.a_scale * 0.02f * std::sqrt(float(K)) * 60.0f;
    s.y_zp = static_cast<int32_t>(ad == DType::s8 ? r(-20, 20) : r(100, 150));
    s.accumulation =
        r(0, 1) ? IntAccumulation::mlas_u8s8_int16_pairs : IntAccumulation::exact_int32;
    set_num_threads(1 + it % 3);
    for (const bool requant : {true, false}) {
      s.requantize = requant;
      Tensor want(requant ? ad : DType::s32, {M, N}), got(requant ? ad : DType::s32, {M, N});
      s.y = want.view();
      qmatmul_kernels().variants.back().run(s);
      for (const auto& v : qmatmul_kernels().variants) {
        if (v.reference || !KernelList<QMatMulSlice>::runnable(v)) continue;
        std::memset(got.view().raw(), 0xa5,
                    static_cast<size_t>(got.numel()) * dtype_size(got.dtype()));
        s.y = got.view();
        v.run(s);
        EXPECT_EQ(bytes(got), bytes(want))
            << v.name << " seed " << seed << " case " << it << ": M " << M << " K " << K << " N "
            << N << " a " << dtype_name(ad) << " b " << dtype_name(bd) << " b transposed "
            << b_transposed << " per column " << per_col << " requantize " << requant << " "
            << int_accumulation_name(s.accumulation);
      }
    }
    if (HasFailure()) break;
  }
  set_num_threads(saved);
}

TEST(QMatMulFast, PublicEntryPointsFastEqualReference) {
  const uint32_t seed = 31337;
  std::mt19937 rng(seed);
  const Impl saved = impl();
  for (int it = 0; it < 40; ++it) {
    const int64_t B = 1 + it % 3, M = 1 + rng() % 9, K = 1 + rng() % 70, N = 1 + rng() % 13;
    Tensor a(DType::u8, {B, 1, M, K}), b(DType::s8, {1, 2, K, N});
    fill(a, rng, false);
    fill(b, rng, false);
    QLinearMatMulParams p;
    p.a_scale = 0.02f, p.y_scale = 0.05f * std::sqrt(float(K)), p.a_zero_point = 128;
    p.b.scale = {0.01f};
    p.b.zero_point = {static_cast<int32_t>(rng() % 7) - 3};
    p.accumulation = it % 2 ? IntAccumulation::mlas_u8s8_int16_pairs : IntAccumulation::exact_int32;
    Tensor want(DType::u8, {B, 2, M, N}), got(DType::u8, {B, 2, M, N});
    set_impl(Impl::reference);
    qlinear_matmul(a, b, want, p);
    set_impl(Impl::fast);
    qlinear_matmul(a, b, got, p);
    EXPECT_EQ(bytes(got), bytes(want)) << "seed " << seed << " case " << it;
    // A 2-D b packed in advance (the ONNX runner's path), and a pack made for
    // the other accumulation, which the call must ignore.
    Tensor b2(DType::s8, {K, N});
    fill(b2, rng, false);
    Tensor want2(DType::u8, {B, 1, M, N}), got2(DType::u8, {B, 1, M, N});
    set_impl(Impl::reference);
    qlinear_matmul(a, b2, want2, p);
    set_impl(Impl::fast);
    QLinearMatMulParams other = p;
    other.accumulation =
        it % 2 ? IntAccumulation::exact_int32 : IntAccumulation::mlas_u8s8_int16_pairs;
    for (const auto& pk : {pack_qlinear_matmul_weights(b2, p, DType::u8),
                           pack_qlinear_matmul_weights(b2, other, DType::u8)}) {
      ASSERT_TRUE(pk != nullptr);
      std::memset(got2.view().raw(), 0x5a, static_cast<size_t>(got2.numel()));
      qlinear_matmul(a, b2, got2, p, pk.get());
      EXPECT_EQ(bytes(got2), bytes(want2)) << "packed 2-D b, seed " << seed << " case " << it;
    }
    MatMulIntegerParams ip;
    ip.a_zero_point = 128;
    ip.b_zero_point = p.b.zero_point;
    ip.accumulation = p.accumulation;
    Tensor wi(DType::s32, {B, 2, M, N}), gi(DType::s32, {B, 2, M, N});
    set_impl(Impl::reference);
    matmul_integer(a, b, wi, ip);
    set_impl(Impl::fast);
    matmul_integer(a, b, gi, ip);
    EXPECT_EQ(bytes(gi), bytes(wi)) << "MatMulInteger seed " << seed << " case " << it;
  }
  set_impl(saved);
}

}  // namespace
}  // namespace test_qmatmul_fast
}  // namespace npukit
