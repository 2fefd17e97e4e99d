// Reference integer matrix product of one 2-D slice under
// IntAccumulation::mlas_u8s8_int16_pairs: raw u8 x s8 codes along k, products
// 2j and 2j+1 summed with int16 saturation, zero points removed after with
// MLAS's row and column sums.
#include "npukit/ops/quantized.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::ref {

void matmul_accumulate_mlas_pairs(const TensorView& a, const TensorView& b, const TensorView& acc,
                                  int32_t a_zp, const std::vector<int32_t>& b_zp) {
  const int64_t M = a.dim(0), K = a.dim(1), N = b.dim(1);
  auto a_at = [&](int64_t i, int64_t k) {
    return detail::code_at(a.raw(), a.dtype(), i * a.stride(0) + k * a.stride(1));
  };
  auto b_at = [&](int64_t k, int64_t j) {
    return detail::code_at(b.raw(), b.dtype(), k * b.stride(0) + j * b.stride(1));
  };
  for (int64_t i = 0; i < M; ++i) {
    int64_t a_sum = 0;
    for (int64_t k = 0; k < K; ++k) a_sum += a_at(i, k);
    for (int64_t j = 0; j < N; ++j) {
      detail::Int16PairSum s;
      int64_t b_sum = 0;
      for (int64_t k = 0; k < K; ++k) {
        s.add(a_at(i, k) * b_at(k, j));  // |u8 * s8| <= 32640: exact in int32
        b_sum += b_at(k, j);
      }
      const int64_t bz = b_zp[static_cast<size_t>(j)];
      acc.at2<int32_t>(i, j) =
          detail::wrap_int32(s.total() - a_zp * b_sum - bz * a_sum + K * a_zp * bz);
    }
  }
}

}  // namespace npukit::ref
