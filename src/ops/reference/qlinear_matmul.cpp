// Reference integer matrix product of one 2-D slice:
// acc[i][j] = sum over k of (a[i][k] - a_zp)(b[k][j] - b_zp[j]).
#include "npukit/ops/quantized.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::ref {

void matmul_accumulate(const TensorView& a, const TensorView& b, const TensorView& acc,
                       int32_t a_zp, const std::vector<int32_t>& b_zp) {
  const int64_t M = a.dim(0), K = a.dim(1), N = b.dim(1);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      int32_t s = 0;  // bounded by K*255*255 <= INT32_MAX (checked by the caller)
      for (int64_t k = 0; k < K; ++k)
        s += (detail::code_at(a.raw(), a.dtype(), i * a.stride(0) + k * a.stride(1)) - a_zp) *
             (detail::code_at(b.raw(), b.dtype(), k * b.stride(0) + j * b.stride(1)) -
              b_zp[static_cast<size_t>(j)]);
      acc.at2<int32_t>(i, j) = s;
    }
}

}  // namespace npukit::ref
