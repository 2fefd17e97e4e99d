// Driver of the fp32 Gemm family: packs each block of columns of b (k-major)
// on the thread that computes it, threads over column blocks.
#include <algorithm>
#include <vector>

#include "gemm_fast.hpp"
#include "npukit/parallel.hpp"

namespace npukit::cpu {

namespace {

using Block = void (*)(const GemmProblem&, const float*, int64_t, int64_t, int64_t);

constexpr int64_t kPackChunk = 64;  // k steps packed at a time (64 x 16 floats: 4 KB)

void run_blocks(const GemmProblem& p, Block block, int64_t lanes) {
  const int64_t M = p.a.dim(0), K = p.a.dim(1), N = p.b.dim(1);
  const int64_t blocks = (N + lanes - 1) / lanes;
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, M * K * lanes));
  const bool k_contiguous = p.b.stride(0) == 1 && p.b.stride(1) != 1;
  const auto* b = static_cast<const float*>(p.b.raw());
  const int64_t b_col = p.b.stride(1), b_row = p.b.stride(0);
  const bool n_contiguous = b_col == 1 && K > 0;
  parallel_ranges(blocks, grain, [&](int64_t begin, int64_t end) {
    std::vector<float> packed;  // lanes past `cols` read its zeros
    for (int64_t blk = begin; blk < end; ++blk) {
      const int64_t n0 = blk * lanes, cols = std::min(lanes, N - n0);
      // Rows of b contiguous along n (a constant FC weight that the ONNX
      // planner transposed once): a full block is read in place.
      if (n_contiguous && cols == lanes) {
        block(p, b + n0, b_row, n0, cols);
        continue;
      }
      // Read b along its contiguous axis: a transposed b (ONNX Gemm's FC
      // weights, transB = 1) is contiguous along k, one column per row. In
      // chunks of k so that the part of `packed` being written stays in L1
      // (a whole block, K * 64 bytes, does not for K = 1280: the column-at-a-time
      // pass cost 20x the arithmetic of a one-row Gemm).
      if (packed.empty()) packed.assign(static_cast<size_t>(K * lanes), 0.0f);
      if (k_contiguous)
        for (int64_t k0 = 0; k0 < K; k0 += kPackChunk) {
          const int64_t k1 = std::min(K, k0 + kPackChunk);
          for (int64_t l = 0; l < cols; ++l) {
            const float* column = b + (n0 + l) * b_col;
            float* dst = packed.data() + l;
            for (int64_t k = k0; k < k1; ++k) dst[k * lanes] = column[k];
          }
        }
      else
        for (int64_t k = 0; k < K; ++k)
          for (int64_t l = 0; l < cols; ++l)
            packed[static_cast<size_t>(k * lanes + l)] = p.b.at2<float>(k, n0 + l);
      block(p, packed.data(), lanes, n0, cols);
    }
  });
}

void run_avx512(const GemmProblem& p) {
  const int64_t M = p.a.dim(0), K = p.a.dim(1), N = p.b.dim(1);
  if (p.b.stride(1) != 1 || N < kGemmWideColumns) return run_blocks(p, f32_gemm_block_avx512, 16);
  // Rows of b contiguous: wide strips read in place, the last columns as before.
  const int64_t strips = N / kGemmWideColumns;
  const int64_t grain =
      std::max<int64_t>(1, 65536 / std::max<int64_t>(1, M * K * kGemmWideColumns));
  parallel_for(strips, grain, [&](int64_t s) { f32_gemm_wide_avx512(p, s * kGemmWideColumns); });
  const int64_t done = strips * kGemmWideColumns;
  if (done == N) return;
  GemmProblem rest = p;
  auto columns = [&](const TensorView& v) {
    return TensorView(static_cast<float*>(v.raw()) + done * v.stride(1), v.dtype(),
                      {v.dim(0), N - done}, {v.stride(0), v.stride(1)});
  };
  rest.b = columns(p.b);
  rest.y = columns(p.y);
  if (!p.c.empty()) rest.c = columns(p.c);
  run_blocks(rest, f32_gemm_block_avx512, 16);
}
void run_avx2(const GemmProblem& p) {
  run_blocks(p, f32_gemm_block_avx2, 8);
}
void run_reference(const GemmProblem& p) {
  if (p.mlas_k_block)
    ref::gemm_f32_mlas(p.a, p.b, p.c, p.y, p.beta, p.mlas_k_block);
  else
    ref::gemm_f32(p.a, p.b, p.c, p.y, p.alpha, p.beta);
}

const char* declines_mlas(const GemmProblem& p) {
  return p.mlas_k_block ? "MLAS's order (mlas_k_block: f32-gemm-mlas-* take it)" : nullptr;
}

// f32-gemm-mlas-*: column groups of kGemmMlasVectors vectors, threaded; one
// row (a classifier: bound by reading b) streams b's rows over one range of
// columns per thread instead.
const char* declines_mlas_kernel(const GemmProblem& p) {
  if (!p.mlas_k_block) return "the k-order sum (mlas_k_block = 0)";
  if (p.b.stride(1) != 1) return "b's rows not contiguous";
  if (p.y.stride(1) != 1) return "output rows not contiguous";
  return nullptr;
}
using Columns = void (*)(const GemmProblem&, int64_t, int64_t);
template <int64_t kLanes>
void run_mlas(const GemmProblem& p, Columns columns, Columns rows) {
  const int64_t M = p.a.dim(0), K = p.a.dim(1), N = p.b.dim(1);
  if (M == 1) {
    const int64_t threads = std::max(1, num_threads());
    const int64_t share = (N + threads - 1) / threads;
    const int64_t width = std::min(
        kGemmMlasRowColumns, std::max<int64_t>(kLanes, (share + kLanes - 1) / kLanes * kLanes));
    const int64_t ranges = (N + width - 1) / width;
    parallel_for(ranges, 1, [&](int64_t r) { rows(p, r * width, std::min(width, N - r * width)); });
    return;
  }
  constexpr int64_t width = kLanes * kGemmMlasVectors;
  const int64_t groups = (N + width - 1) / width;
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, M * K * width));
  parallel_for(groups, grain,
               [&](int64_t g) { columns(p, g * width, std::min(width, N - g * width)); });
}
void run_mlas_avx512(const GemmProblem& p) {
  run_mlas<16>(p, f32_gemm_mlas_avx512, f32_gemm_mlas_rows_avx512);
}
void run_mlas_avx2(const GemmProblem& p) {
  run_mlas<8>(p, f32_gemm_mlas_avx2, f32_gemm_mlas_rows_avx2);
}

// The avx512 block stores straight into y's rows.
const char* declines_avx512(const GemmProblem& p) {
  if (const char* why = declines_mlas(p)) return why;
  return p.y.stride(1) == 1 ? nullptr : "output rows not contiguous";
}

}  // namespace

const KernelList<GemmProblem>& gemm_kernels() {
  static const KernelList<GemmProblem> list{
      "gemm",
      {{"f32-gemm-avx512", Isa::avx512, "the k-order sum, output rows contiguous", declines_avx512,
        run_avx512},
       {"f32-gemm-avx2", Isa::avx2, "the k-order sum (mlas_k_block = 0)", declines_mlas, run_avx2},
       {"f32-gemm-mlas-avx512", Isa::avx512,
        "mlas_k_block (ONNX Runtime's SGEMM order), rows of b and y contiguous (one row: b's rows "
        "streamed)",
        declines_mlas_kernel, run_mlas_avx512},
       {"f32-gemm-mlas-avx2", Isa::avx2, "as f32-gemm-mlas-avx512", declines_mlas_kernel,
        run_mlas_avx2},
       {"f32-gemm-reference", Isa::portable, "always", nullptr, run_reference, true}}};
  return list;
}

}  // namespace npukit::cpu
