// pool2d speed per level of the "pool2d" kernel family (each ISA cap this
// host runs, which selects that level's kernel, and Impl::reference) on the
// shapes of issue #9, NCHW and NHWC, f32 / u8 / s8, 1 and 2 threads. Bytes/s counts input + output
// bytes, so it compares directly with the machine's copy bandwidth (the copy_* cases: memcpy of the
// same input + output volume). Names:
//   pool2d/<case>/<dtype>[ort]/<layout>/<avx512|avx2|portable|reference>/threads:<n>
// (f32ort: profile onnxruntime's semantics)
// e.g. --benchmark_filter='pool2d/.*k3s2p1.*/f32/nchw/' --benchmark_min_time=0.05
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "npukit/kernels.hpp"
#include "npukit/ops/pool2d.hpp"
#include "npukit/parallel.hpp"

namespace {

using namespace npukit;

struct BenchCase {
  const char* name;
  Shape shape;
  PoolMode mode;
  AvgDivisor divisor;
  int64_t k, s, pad;  // k 0: global
};

const BenchCase kCases[] = {
    {"1x64x112x112_k3s2p1_avg_valid",
     {1, 64, 112, 112},
     PoolMode::avg,
     AvgDivisor::valid_count,
     3,
     2,
     1},
    {"1x64x112x112_k3s2p1_avg_area",
     {1, 64, 112, 112},
     PoolMode::avg,
     AvgDivisor::kernel_area,
     3,
     2,
     1},
    {"1x64x112x112_k3s2p1_max", {1, 64, 112, 112}, PoolMode::max, AvgDivisor::kernel_area, 3, 2, 1},
    {"1x256x56x56_k2s2_max", {1, 256, 56, 56}, PoolMode::max, AvgDivisor::kernel_area, 2, 2, 0},
    {"1x256x56x56_k2s2_avg", {1, 256, 56, 56}, PoolMode::avg, AvgDivisor::kernel_area, 2, 2, 0},
    {"1x512x14x14_k3s1p1_max", {1, 512, 14, 14}, PoolMode::max, AvgDivisor::kernel_area, 3, 1, 1},
    {"1x512x14x14_k3s1p1_avg_valid",
     {1, 512, 14, 14},
     PoolMode::avg,
     AvgDivisor::valid_count,
     3,
     1,
     1},
    {"1x2048x7x7_global_avg", {1, 2048, 7, 7}, PoolMode::avg, AvgDivisor::kernel_area, 0, 1, 0},
    {"1x2048x7x7_global_max", {1, 2048, 7, 7}, PoolMode::max, AvgDivisor::kernel_area, 0, 1, 0},
    {"8x256x56x56_k2s2_max", {8, 256, 56, 56}, PoolMode::max, AvgDivisor::kernel_area, 2, 2, 0},
    {"1x128x56x56_k2s2_max", {1, 128, 56, 56}, PoolMode::max, AvgDivisor::kernel_area, 2, 2, 0},
};

Pool2dParams params_of(const BenchCase& c) {
  Pool2dParams p = c.k == 0 ? global_pool2d_params(c.shape, c.mode) : Pool2dParams{};
  p.mode = c.mode;
  p.divisor = c.divisor;
  if (c.k != 0) {
    p.window.kernel_h = p.window.kernel_w = c.k;
    p.window.stride_h = p.window.stride_w = c.s;
    p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = c.pad;
  }
  return p;
}

void fill(const Tensor& t) {
  std::mt19937 g(1);
  const int64_t count = t.numel();
  if (t.dtype() == DType::f32) {
    std::uniform_real_distribution<float> d(-2.0f, 2.0f);
    for (int64_t i = 0; i < count; ++i) t.data<float>()[i] = d(g);
  } else {
    auto* p = static_cast<uint8_t*>(t.view().raw());
    for (int64_t i = 0; i < count; ++i) p[i] = static_cast<uint8_t>(g());
  }
}

// level: an Isa, or -1 for Impl::reference.
// ort: the semantics of profile onnxruntime (MLAS's orders, its NCHWc order
// when the channels fill this host's NCHWc block).
void run_kernel(benchmark::State& state, const BenchCase& c, DType dt, Layout layout, int level,
                int threads, bool ort) {
  Pool2dParams p = params_of(c);
  if (ort && c.k == 0) apply_global_profile(p, Profile::onnxruntime);
  if (ort && c.k != 0) {
    p.count_include_pad = c.divisor != AvgDivisor::valid_count;
    p.opset = 13;
    apply_profile(p, Profile::onnxruntime);
  }
  Tensor x(dt, c.shape, layout), y(dt, pool2d_output_shape(c.shape, p), layout);
  fill(x);
  set_num_threads(threads);
  set_impl(level < 0 ? Impl::reference : Impl::fast);
  set_max_isa(level < 0 ? host_isa() : static_cast<Isa>(level));
  for (auto _ : state) {
    pool2d(x, y, p);
    benchmark::ClobberMemory();
  }
  set_num_threads(0);
  set_impl(Impl::fast);
  set_max_isa(host_isa());
  state.SetBytesProcessed(state.iterations() * (x.numel() + y.numel()) *
                          static_cast<int64_t>(dtype_size(dt)));
}

// memcpy of the same input + output volume: the bandwidth yardstick.
void run_copy(benchmark::State& state, int64_t bytes) {
  std::vector<uint8_t> a(static_cast<size_t>(bytes / 2), 1), b(a.size());
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), a.size());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

const int kRegistered = [] {
  for (const BenchCase& c : kCases) {
    for (DType dt : {DType::f32, DType::u8, DType::s8}) {
      if (dt != DType::f32 && c.mode != PoolMode::max) continue;
      for (bool ort : {false, true}) {
        if (ort && dt != DType::f32) continue;
        for (Layout layout : {Layout::nchw, Layout::nhwc}) {
          for (int level = static_cast<int>(host_isa()); level >= -1; --level) {
            if (level == static_cast<int>(Isa::avx512_vnni)) continue;  // no VNNI pool kernels
            const char* label = level < 0 ? "reference" : isa_name(static_cast<Isa>(level));
            for (int threads : {1, 2}) {
              const std::string name = std::string("pool2d/") + c.name + "/" + dtype_name(dt) +
                                       (ort ? "ort" : "") + "/" + layout_name(layout) + "/" +
                                       label + "/threads:" + std::to_string(threads);
              benchmark::RegisterBenchmark(name.c_str(), [&c, dt, layout, level, threads,
                                                          ort](benchmark::State& s) {
                run_kernel(s, c, dt, layout, level, threads, ort);
              })->UseRealTime();
            }
          }
        }
      }
    }
  }
  for (int64_t mb : {1, 4, 16})
    benchmark::RegisterBenchmark(("pool2d/copy_" + std::to_string(mb) + "MB").c_str(),
                                 [mb](benchmark::State& s) { run_copy(s, mb << 20); });
  return 0;
}();

}  // namespace
