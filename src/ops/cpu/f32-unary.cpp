// The fp32 unary family's kernel list. Fast variants take contiguous x and
// y and split them into blocks over the threads; each element is computed
// on its own, so any split gives the reference's bits.
#include <algorithm>

#include "npukit/parallel.hpp"
#include "ops/cpu/unary_kernels.hpp"

namespace npukit::cpu {

bool unary_has_simd(UnaryOp op) {
  return op == UnaryOp::sigmoid || op == UnaryOp::tanh || op == UnaryOp::hard_sigmoid ||
         op == UnaryOp::hard_swish;
}

namespace {

constexpr int64_t kBlock = 16384;  // elements per task: big enough to amortise a task

const char* declines_portable(const UnaryProblem& u) {
  if (!u.x.is_contiguous() || !u.y.is_contiguous()) return "x or y not contiguous";
  return nullptr;
}
const char* declines_simd(const UnaryProblem& u) {
  if (!unary_has_simd(u.op)) return "op not vectorised (sigmoid, tanh, hard_sigmoid, hard_swish)";
  return declines_portable(u);
}

template <void (*body)(UnaryOp, const UnaryParams&, const float*, float*, int64_t)>
void run_blocks(const UnaryProblem& u) {
  const auto* x = static_cast<const float*>(u.x.raw());
  auto* y = static_cast<float*>(u.y.raw());
  const int64_t n = u.x.numel();
  parallel_for((n + kBlock - 1) / kBlock, 1, [&](int64_t b) {
    const int64_t lo = b * kBlock;
    body(u.op, u.params, x + lo, y + lo, std::min(kBlock, n - lo));
  });
}

void scalar_body(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = ref::unary_scalar(op, x[i], p);
}

void run_reference(const UnaryProblem& u) {
  ref::unary_f32(u.op, u.x, u.y, u.params);
}

}  // namespace

const KernelList<UnaryProblem>& unary_kernels() {
  static const KernelList<UnaryProblem> list{
      "unary",
      {
          {"f32-unary-contiguous-avx512", Isa::avx512,
           "sigmoid/tanh/hard_sigmoid/hard_swish, contiguous", declines_simd,
           run_blocks<f32_unary_avx512>},
          {"f32-unary-contiguous-avx2", Isa::avx2,
           "sigmoid/tanh/hard_sigmoid/hard_swish, contiguous", declines_simd,
           run_blocks<f32_unary_avx2>},
          {"f32-unary-contiguous-portable", Isa::portable, "contiguous x and y", declines_portable,
           run_blocks<scalar_body>},
          {"f32-unary-reference", Isa::portable, "always", nullptr, run_reference, true},
      }};
  return list;
}

}  // namespace npukit::cpu
