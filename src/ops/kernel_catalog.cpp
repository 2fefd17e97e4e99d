// Every kernel family's list, for `npukit info --kernels`, the tests and the
// benchmarks. A new family adds one line here.
#include "cpu/pool2d_plan.hpp"
#include "npukit/kernels.hpp"

namespace npukit {

std::vector<KernelInfo> list_kernels() {
  std::vector<KernelInfo> all;
  auto add = [&](const std::vector<KernelInfo>& family) {
    all.insert(all.end(), family.begin(), family.end());
  };
  add(pool2d_kernels().info());
  return all;
}

}  // namespace npukit
