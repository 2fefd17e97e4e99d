// Driver of the fast element-wise families: which calls the array kernels
// take (contiguous, equal shapes, no flushing), threading in large blocks,
// and the three lists.
#include <algorithm>

#include "elementwise_fast.hpp"
#include "npukit/parallel.hpp"

namespace npukit::cpu {

namespace {

const char* declines_arrays(const EwProblem& p) {
  if (p.op == EwOp::relu && p.relu.flush_denormals) return "flushing denormals";
  if (!p.a.is_contiguous() || !p.y.is_contiguous()) return "strided or broadcast operands";
  if (p.a.shape() != p.y.shape()) return "operands of different shapes";
  if (p.op == EwOp::add || p.op == EwOp::mul) {
    if (!p.b.is_contiguous() || p.b.shape() != p.y.shape()) return "strided or broadcast operands";
  }
  return nullptr;
}

void run_arrays(const EwProblem& p, EwKernel kernel) {
  const auto* a = static_cast<const float*>(p.a.raw());
  const auto* b = p.b.empty() ? nullptr : static_cast<const float*>(p.b.raw());
  auto* y = static_cast<float*>(p.y.raw());
  // Element-wise work is memory bound: only large arrays are worth a thread.
  constexpr int64_t kGrain = 1 << 15;
  parallel_ranges(p.y.numel(), kGrain, [&](int64_t begin, int64_t end) {
    kernel(p, {a + begin, b ? b + begin : nullptr, y + begin, end - begin});
  });
}

void run_avx512(const EwProblem& p) {
  run_arrays(p, f32_elementwise_avx512);
}
void run_avx2(const EwProblem& p) {
  run_arrays(p, f32_elementwise_avx2);
}
void run_portable(const EwProblem& p) {
  run_arrays(p, f32_elementwise_portable);
}

void run_reference(const EwProblem& p) {
  switch (p.op) {
    case EwOp::relu:
      return ref::relu_f32(p.a, p.y, p.relu);
    case EwOp::clip:
      return ref::clip_f32(p.a, p.y, p.clip);
    case EwOp::add:
      return ref::binary_f32(BinaryOp::add, p.a, p.b, p.y);
    case EwOp::mul:
      return ref::binary_f32(BinaryOp::mul, p.a, p.b, p.y);
  }
}

constexpr const char* kApplies = "contiguous operands of equal shapes, no flushing";

KernelList<EwProblem> make_list(const char* family, const char* avx512, const char* avx2,
                                const char* portable, const char* reference) {
  return {family,
          {{avx512, Isa::avx512, kApplies, declines_arrays, run_avx512},
           {avx2, Isa::avx2, kApplies, declines_arrays, run_avx2},
           {portable, Isa::portable, kApplies, declines_arrays, run_portable},
           {reference, Isa::portable, "always", nullptr, run_reference, true}}};
}

}  // namespace

const KernelList<EwProblem>& relu_kernels() {
  static const auto list = make_list("relu", "f32-relu-avx512", "f32-relu-avx2",
                                     "f32-relu-portable", "f32-relu-reference");
  return list;
}
const KernelList<EwProblem>& clip_kernels() {
  static const auto list = make_list("clip", "f32-clip-avx512", "f32-clip-avx2",
                                     "f32-clip-portable", "f32-clip-reference");
  return list;
}
const KernelList<EwProblem>& binary_kernels() {
  static const auto list = make_list("binary", "f32-vbinary-avx512", "f32-vbinary-avx2",
                                     "f32-vbinary-portable", "f32-vbinary-reference");
  return list;
}

}  // namespace npukit::cpu
