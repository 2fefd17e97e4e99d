// Fast fp32 matrix multiplication, bit for bit ref::matmul_f32: rows of a are
// the positions, columns of b the SIMD lanes, and the accumulators of the
// reference (one, or A[k % 2] for the interleaved pattern) the chains.
#include "dot_chains.hpp"
#include "npukit/ops/matmul.hpp"

namespace npukit::cpu {

bool matmul_f32(const TensorView& a, const TensorView& b, const float* bias, int64_t bias_stride,
                const TensorView& y, const MatmulParams& p) {
  if (p.flush_denormals && !dot_chains_can_flush()) return false;
  const int64_t M = a.dim(0), K = a.dim(1), N = b.dim(1);
  const bool two = p.accumulation == Fp32Accumulation::interleaved;
  std::vector<float> rows(static_cast<size_t>(M * K));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k) rows[static_cast<size_t>(m * K + k)] = a.at2<float>(m, k);
  DotChains d;
  d.src = rows.data();
  d.flush_denormals = p.flush_denormals;
  for (int64_t m = 0; m < M; ++m) d.base.push_back(m * K);
  for (int64_t parity = 0; parity < (two ? 2 : 1); ++parity) {
    for (int64_t k = parity; k < K; k += two ? 2 : 1) d.offset.push_back(k);
    d.chain_end.push_back(static_cast<int64_t>(d.offset.size()));
  }
  d.pack_columns(N, [&](int64_t e, int64_t col) {
    return b.at2<float>(d.offset[static_cast<size_t>(e)], col);
  });
  // The plain sequential reference adds the old output first (out + acc).
  const bool old_first = !two && !p.flush_denormals;
  run_dot_chains(d, [&](const DotTile& t) {
    for (int64_t i = 0; i < t.positions; ++i) {
      for (int64_t l = 0; l < t.cols; ++l) {
        const int64_t n = t.col0 + l;
        float r = two ? t.sums[0][i][l] + t.sums[1][i][l] : t.sums[0][i][l];
        if (bias) r = r + bias[n * bias_stride];
        float& out = y.at2<float>(t.p0 + i, n);
        out = !p.result_add ? r : old_first ? out + r : r + out;
      }
    }
  });
  return true;
}

}  // namespace npukit::cpu
