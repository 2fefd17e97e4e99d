// Simulation speed of one okk_bdc_conv2d of 1x64x56x56 -> 64 channels, 3x3,
// pad 1 (115.6 M multiply-adds; the vendor's C-model needs 0.10-0.32 s plus
// about 1 s to start), the same arithmetic called directly on the operator
// core, and the plain reference kernel, each with 1 and 2 threads.
//
// Counters: ms per call (real time), GMAC/s, the fraction of the machine's
// peak (see kPeakMacPerCycle and kClockHz below), and how many times faster
// than the vendor's figures a call is ("x_vendor_*"; "_start" adds the
// vendor's 1 s start-up to its time, ours to npukit's being none in-process).
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "npukit/compat/okk.h"
#include "npukit/npu/launch.hpp"
#include "npukit/npu/machine.hpp"
#include "npukit/ops/conv2d.hpp"
#include "npukit/parallel.hpp"

namespace {

constexpr double kMacs = 64.0 * 64 * 56 * 56 * 9;
// Peak assumption: per core and cycle, two 8-lane vmulps and two 8-lane
// vaddps (AMD Zen 3 has two FP multiply and two FP add pipes; Intel cores
// since Skylake two that do either), i.e. 16 separately rounded
// multiply-adds, at the nominal clock of this machine (TSC 2.45 GHz).
constexpr double kPeakMacPerCycle = 16.0;
constexpr double kClockHz = 2.45e9;

void report(benchmark::State& state, int threads) {
  const double it = static_cast<double>(state.iterations());
  state.counters["GMAC/s"] = benchmark::Counter(kMacs * it / 1e9, benchmark::Counter::kIsRate);
  state.counters["peak_frac"] = benchmark::Counter(
      kMacs * it / (kPeakMacPerCycle * kClockHz * threads), benchmark::Counter::kIsRate);
  // Rates of "seconds of vendor time per second of ours" = speed-up factors.
  state.counters["x_vendor_0.10s"] = benchmark::Counter(0.10 * it, benchmark::Counter::kIsRate);
  state.counters["x_vendor_0.32s"] = benchmark::Counter(0.32 * it, benchmark::Counter::kIsRate);
  state.counters["x_vendor_1.10s_start"] =
      benchmark::Counter(1.10 * it, benchmark::Counter::kIsRate);
}

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

// One okk_bdc_conv2d inside a launch: rules, gathers from simulated local
// memory, the core call, the scatter back and the cost model.
void BM_OkkConv2d_1x64x56x56_oc64_3x3(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  npukit::set_num_threads(threads);
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
  npukit::set_num_threads(0);
  report(state, threads);
}

struct CoreConv {
  npukit::Tensor x{npukit::DType::f32, {1, 64, 56, 56}}, w{npukit::DType::f32, {64, 64, 3, 3}},
      y{npukit::DType::f32, {1, 64, 56, 56}};
  npukit::Conv2dParams p;
  explicit CoreConv(npukit::Profile profile) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (npukit::Tensor* t : {&x, &w})
      for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = d(rng);
    p.window.kernel_h = p.window.kernel_w = 3;
    p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 1;
    npukit::apply_profile(p, profile);
  }
};

// npukit::conv2d under the bm1684 profile (the fast bit-exact kernel).
void BM_CoreConv2dBm1684_1x64x56x56_oc64_3x3(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  npukit::set_num_threads(threads);
  CoreConv c(npukit::Profile::bm1684);
  for (auto _ : state) npukit::conv2d(c.x, c.w, npukit::Tensor(), c.y, c.p);
  npukit::set_num_threads(0);
  report(state, threads);
}

// npukit::conv2d under the pytorch profile (sequential order, same engine).
void BM_CoreConv2dPytorch_1x64x56x56_oc64_3x3(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  npukit::set_num_threads(threads);
  CoreConv c(npukit::Profile::pytorch);
  for (auto _ : state) npukit::conv2d(c.x, c.w, npukit::Tensor(), c.y, c.p);
  npukit::set_num_threads(0);
  report(state, threads);
}

// The plain reference kernel of the bm1684 semantics (the specification).
void BM_RefConv2dBm1684_1x64x56x56_oc64_3x3(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  npukit::set_num_threads(threads);
  CoreConv c(npukit::Profile::bm1684);
  for (auto _ : state) npukit::ref::conv2d_f32_interleaved(c.x, c.w, npukit::Tensor(), c.y, c.p);
  npukit::set_num_threads(0);
  report(state, threads);
}

#define NPUKIT_CONV_BENCH(name)       \
  BENCHMARK(name)                     \
      ->ArgName("threads")            \
      ->Arg(1)                        \
      ->Arg(2)                        \
      ->Unit(benchmark::kMillisecond) \
      ->UseRealTime()                 \
      ->MeasureProcessCPUTime()
NPUKIT_CONV_BENCH(BM_OkkConv2d_1x64x56x56_oc64_3x3);
NPUKIT_CONV_BENCH(BM_CoreConv2dBm1684_1x64x56x56_oc64_3x3);
NPUKIT_CONV_BENCH(BM_CoreConv2dPytorch_1x64x56x56_oc64_3x3);
BENCHMARK(BM_RefConv2dBm1684_1x64x56x56_oc64_3x3)
    ->ArgName("threads")
    ->Arg(1)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

}  // namespace
