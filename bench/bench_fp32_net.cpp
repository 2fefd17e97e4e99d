// The fp32 layers that dominate resnet18 and mobilenet_v2 (batch 1, 224x224)
// on every kernel of their family that this host runs: dense 3x3 and 1x1
// convolutions (conv2d family) and depthwise 3x3 (dwconv family), 1 and 2
// threads. Arguments: layer index, kernel index in the family's list,
// threads. Counters: GFLOP/s (a multiply and an add per tap). The machine is
// shared: compare kernels by the "min" aggregate of repetitions
// (--benchmark_repetitions=9 --benchmark_report_aggregates_only=true).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "npukit/npukit.hpp"
#include "ops/cpu/conv_nchw.hpp"
#include "ops/cpu/dwconv.hpp"

namespace {

using namespace npukit;

struct Layer {
  const char* name;
  int64_t c, h, oc, k, stride, groups;
  int64_t n = 1;  // batch
};
// Shapes from torchvision's resnet18 and mobilenet_v2 at 224x224.
const Layer kLayers[] = {
    {"resnet.conv1_7x7s2_3to64_224", 3, 224, 64, 7, 2, 1},
    {"resnet.3x3_64_56", 64, 56, 64, 3, 1, 1},
    {"resnet.3x3_256_14", 256, 14, 256, 3, 1, 1},
    {"resnet.3x3_512_7", 512, 7, 512, 3, 1, 1},
    {"mobilenet.1x1_16to96_112", 16, 112, 96, 1, 1, 1},
    {"mobilenet.1x1_960to160_7", 960, 7, 160, 1, 1, 1},
    {"mobilenet.dw3x3s2_96_112", 96, 112, 96, 3, 2, 96},
    {"mobilenet.dw3x3_144_56", 144, 56, 144, 3, 1, 144},
    {"mobilenet.1x1_384to64_14", 384, 14, 64, 1, 1, 1},
    {"mobilenet.1x1_160to960_7", 160, 7, 960, 1, 1, 1},
    {"fashion.3x3_8to16_14", 8, 14, 16, 3, 1, 1},
    {"resnet.3x3_128_28", 128, 28, 128, 3, 1, 1},
    {"mobilenet.1x1_32to192_28", 32, 28, 192, 1, 1, 1},
    {"mobilenet.1x1_192to32_28", 192, 28, 32, 1, 1, 1},
    // The bundled model's second conv on its 1,000-image batch (the main job).
    {"fashion.3x3_8to16_14_batch1000", 8, 14, 16, 3, 1, 1, 1000},
};

Tensor random(const Shape& s, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  Tensor t(DType::f32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

void BM_Layer(benchmark::State& state) {
  const Layer& L = kLayers[state.range(0)];
  const auto variant = static_cast<size_t>(state.range(1));
  set_num_threads(static_cast<int>(state.range(2)));
  Conv2dParams p;
  p.window.kernel_h = p.window.kernel_w = L.k;
  p.window.stride_h = p.window.stride_w = L.stride;
  p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = L.k / 2;
  p.groups = L.groups;
  p.has_bias = true;
  const Tensor x = random({L.n, L.c, L.h, L.h}, 1), w = random({L.oc, L.c / L.groups, L.k, L.k}, 2),
               b = random({L.oc}, 3);
  Tensor y(DType::f32, conv2d_output_shape(x.shape(), w.shape(), p));
  const bool depthwise = L.groups > 1;
  const char* name = nullptr;
  bool runs = false;
  if (depthwise) {
    const auto& list = cpu::dwconv_kernels();
    if (variant < list.variants.size()) {
      const auto& v = list.variants[variant];
      cpu::DwconvProblem d{x, w, b, y, p.window, 1, true, false};
      runs = list.runnable(v) && (v.declines == nullptr || v.declines(d) == nullptr);
      name = v.name;
      if (runs)
        for (auto _ : state) v.run(d);
    }
  } else {
    const auto& list = cpu::conv_nchw_kernels();
    if (variant < list.variants.size()) {
      const auto& v = list.variants[variant];
      cpu::ConvProblem c{x, w, b, y, p};
      // The output-channels-in-lanes form on every layer it computes exactly
      // (its variant declines where it is not the faster one).
      const bool ocl = std::string(v.name).find("-ocl-") != std::string::npos;
      runs = list.runnable(v) && (ocl ? cpu::conv_ocl_declines_exactness(c) == nullptr
                                      : v.declines == nullptr || v.declines(c) == nullptr);
      name = v.name;
      // Packed once, as a planned model does.
      const auto packed = cpu::pack_conv_weights(
          w, p.groups, (v.isa == Isa::avx512 ? cpu::kOclAvx512 : cpu::kOclAvx2).channels);
      if (ocl) c.packed = packed.get();
      if (runs && ocl)
        for (auto _ : state)
          cpu::run_conv_ocl_exact(c, v.isa == Isa::avx512 ? cpu::kOclAvx512 : cpu::kOclAvx2);
      else if (runs)
        for (auto _ : state) v.run(c);
    }
  }
  set_num_threads(0);
  if (!runs) {
    state.SkipWithError("kernel not runnable here or declines");
    return;
  }
  const double flops = 2.0 * static_cast<double>(y.numel()) * (L.c / L.groups) * L.k * L.k;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate, benchmark::Counter::OneK::kIs1000);
  state.SetLabel(std::string(L.name) + " " + name);
}

void layer_args(benchmark::internal::Benchmark* b) {
  for (int64_t l = 0; l < static_cast<int64_t>(std::size(kLayers)); ++l)
    for (int64_t v = 0; v < static_cast<int64_t>(cpu::conv_nchw_kernels().variants.size()); ++v)
      for (int64_t t : {1, 2}) b->Args({l, v, t});
}

BENCHMARK(BM_Layer)
    ->Apply(layer_args)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->ComputeStatistics("min", [](const std::vector<double>& v) {
      return *std::min_element(v.begin(), v.end());
    });

}  // namespace
