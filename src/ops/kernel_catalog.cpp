// Every kernel family's list, for `npukit info --kernels`, the tests and the
// benchmarks. A new family adds one line here.
#include "npukit/kernels.hpp"
#include "ops/cpu/conv_nchw.hpp"
#include "ops/cpu/dwconv.hpp"
#include "ops/cpu/elementwise_fast.hpp"
#include "ops/cpu/gemm_fast.hpp"

namespace npukit {

std::vector<KernelInfo> list_kernels() {
  std::vector<KernelInfo> all;
  auto add = [&](const std::vector<KernelInfo>& family) {
    all.insert(all.end(), family.begin(), family.end());
  };
  add(cpu::conv_nchw_kernels().info());
  add(cpu::dwconv_kernels().info());
  add(cpu::relu_kernels().info());
  add(cpu::clip_kernels().info());
  add(cpu::binary_kernels().info());
  add(cpu::gemm_kernels().info());
  return all;
}

}  // namespace npukit
