// Driver of the fp32 Gemm family: packs each block of columns of b (k-major)
// on the thread that computes it, threads over column blocks.
#include <algorithm>
#include <vector>

#include "gemm_fast.hpp"
#include "npukit/parallel.hpp"

namespace npukit::cpu {

namespace {

using Block = void (*)(const GemmProblem&, const float*, int64_t, int64_t);

void run_blocks(const GemmProblem& p, Block block, int64_t lanes) {
  const int64_t M = p.a.dim(0), K = p.a.dim(1), N = p.b.dim(1);
  const int64_t blocks = (N + lanes - 1) / lanes;
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, M * K * lanes));
  const bool k_contiguous = p.b.stride(0) == 1 && p.b.stride(1) != 1;
  parallel_ranges(blocks, grain, [&](int64_t begin, int64_t end) {
    std::vector<float> packed(static_cast<size_t>(K * lanes), 0.0f);
    for (int64_t blk = begin; blk < end; ++blk) {
      const int64_t n0 = blk * lanes, cols = std::min(lanes, N - n0);
      // Read b along its contiguous axis: a transposed b (ONNX Gemm's FC
      // weights, transB = 1) is contiguous along k, one column per row.
      if (k_contiguous)
        for (int64_t l = 0; l < cols; ++l)
          for (int64_t k = 0; k < K; ++k)
            packed[static_cast<size_t>(k * lanes + l)] = p.b.at2<float>(k, n0 + l);
      else
        for (int64_t k = 0; k < K; ++k)
          for (int64_t l = 0; l < cols; ++l)
            packed[static_cast<size_t>(k * lanes + l)] = p.b.at2<float>(k, n0 + l);
      block(p, packed.data(), n0, cols);
    }
  });
}

void run_avx512(const GemmProblem& p) {
  run_blocks(p, f32_gemm_block_avx512, 16);
}
void run_avx2(const GemmProblem& p) {
  run_blocks(p, f32_gemm_block_avx2, 8);
}
void run_reference(const GemmProblem& p) {
  ref::gemm_f32(p.a, p.b, p.c, p.y, p.alpha, p.beta);
}

// The avx512 block stores straight into y's rows.
const char* declines_avx512(const GemmProblem& p) {
  return p.y.stride(1) == 1 ? nullptr : "output rows not contiguous";
}

}  // namespace

const KernelList<GemmProblem>& gemm_kernels() {
  static const KernelList<GemmProblem> list{
      "gemm",
      {{"f32-gemm-avx512", Isa::avx512, "output rows contiguous", declines_avx512, run_avx512},
       {"f32-gemm-avx2", Isa::avx2, "always", nullptr, run_avx2},
       {"f32-gemm-reference", Isa::portable, "always", nullptr, run_reference, true}}};
  return list;
}

}  // namespace npukit::cpu
