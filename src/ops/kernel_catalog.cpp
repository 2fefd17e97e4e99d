// Every kernel family's list, for `npukit info --kernels`, the tests and the
// benchmarks. A new family adds one line here.
#include "npukit/kernels.hpp"
#include "ops/cpu/conv_interleaved.hpp"
#include "ops/cpu/conv_nchw.hpp"
#include "ops/cpu/dwconv.hpp"
#include "ops/cpu/elementwise_fast.hpp"
#include "ops/cpu/gemm_fast.hpp"
#include "ops/cpu/pool2d_plan.hpp"
#include "ops/cpu/qavgpool.hpp"
#include "ops/cpu/qconv_problem.hpp"
#include "ops/cpu/unary_kernels.hpp"
#include "ops/cpu/x8-globalpool.hpp"
#include "ops/cpu/x8-qelementwise.hpp"
#include "ops/cpu/x8-qmatmul.hpp"

namespace npukit {

std::vector<KernelInfo> list_kernels() {
  std::vector<KernelInfo> all;
  auto add = [&](const std::vector<KernelInfo>& family) {
    all.insert(all.end(), family.begin(), family.end());
  };
  add(pool2d_kernels().info());
  add(cpu::qlinear_average_pool_kernels().info());
  add(cpu::qlinear_global_average_pool_kernels().info());
  add(cpu::bm_pool_quantized_kernels().info());
  add(qconv_kernels().info());
  add(qadd_kernels().info());
  add(quantize_kernels().info());
  add(qmatmul_kernels().info());
  add(cpu::conv_nchw_kernels().info());
  add(cpu::conv_interleaved_kernels().info());
  add(cpu::dwconv_kernels().info());
  add(cpu::relu_kernels().info());
  add(cpu::clip_kernels().info());
  add(cpu::binary_kernels().info());
  add(cpu::gemm_kernels().info());
  add(cpu::unary_kernels().info());
  return all;
}

}  // namespace npukit
