// Simulation speed of one okk_bdc_conv2d of 1x64x56x56 -> 64 channels, 3x3,
// pad 1 (116 M multiply-adds; the vendor's C-model needs 0.10-0.32 s), and
// the same arithmetic called directly on the operator core.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "npukit/compat/okk.h"
#include "npukit/npu/launch.hpp"
#include "npukit/npu/machine.hpp"
#include "npukit/ops/conv2d.hpp"

namespace {

void fill_local(local_addr_t addr, const dim4& shape, const dim4* stride, size_t words,
                unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(words);
  for (float& x : v) x = d(rng);
  const uint64_t g = npukit::npu::machine().allocate(words * 4);
  std::memcpy(npukit::npu::machine().global(g, words * 4), v.data(), words * 4);
  okk_gdma_32bit_cpy_S2L(addr, g, &shape, stride, nullptr);
}

void BM_OkkConv2d_1x64x56x56_oc64_3x3(benchmark::State& state) {
  npukit::npu::select_machine(npukit::npu::bm1684_config());
  npukit::npu::begin_launch("bench");
  const dim4 in{1, 64, 56, 56};
  fill_local(0, in, nullptr, 64 * 56 * 56, 1);
  // 2IC weights: (32 pairs, 64 OC, 3, 3), compact on the OC NPUs: one OC per NPU.
  const dim4 wshape{32, 64, 1, 18};
  const dim4 wstride{18, 18, 18, 1};
  fill_local(200 * 1024, wshape, &wstride, 32 * 64 * 18, 2);
  const dim4 kstride{9, 9, 3, 1};
  const Padding pad{1, 1, 1, 1};
  for (auto _ : state) {
    okk_bdc_conv2d(100 * 1024, 0, 200 * 1024, 0, &in, 64, 3, 3, nullptr, &kstride, false, false,
                   &pad, nullptr, nullptr);
  }
  npukit::npu::end_launch();
  state.counters["MAC/s"] =
      benchmark::Counter(64.0 * 64 * 56 * 56 * 9 * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_OkkConv2d_1x64x56x56_oc64_3x3)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CoreConv2dBm1684_1x64x56x56_oc64_3x3(benchmark::State& state) {
  using namespace npukit;
  Tensor x(DType::f32, {1, 64, 56, 56}), w(DType::f32, {64, 64, 3, 3}),
      y(DType::f32, {1, 64, 56, 56});
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (Tensor* t : {&x, &w})
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = d(rng);
  Conv2dParams p;
  p.window.kernel_h = p.window.kernel_w = 3;
  p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 1;
  apply_profile(p, Profile::bm1684);
  for (auto _ : state) conv2d(x, w, Tensor(), y, p);
  state.counters["MAC/s"] =
      benchmark::Counter(64.0 * 64 * 56 * 56 * 9 * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CoreConv2dBm1684_1x64x56x56_oc64_3x3)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
