// The fp32 unary family's kernel list: the reference, threaded over the
// outermost axis (each element is independent, so any split gives its bits).
#include "npukit/parallel.hpp"
#include "ops/cpu/unary_kernels.hpp"

namespace npukit::cpu {

namespace {

void run_reference(const UnaryProblem& u) {
  ref::unary_f32(u.op, u.x, u.y, u.params);
}

}  // namespace

const KernelList<UnaryProblem>& unary_kernels() {
  static const KernelList<UnaryProblem> list{
      "unary",
      {
          {"f32-unary-reference", Isa::portable, "always", nullptr, run_reference, true},
      }};
  return list;
}

}  // namespace npukit::cpu
