// The fp32 layers that dominate resnet18 and mobilenet_v2 (batch 1, 224x224)
// on every kernel of their family that this host runs: dense 3x3 and 1x1
// convolutions (conv2d family) and depthwise 3x3 (dwconv family), 1 and 2
// threads. Arguments: layer index, kernel index in the family's list,
// threads, order (0 sequential, 1 mlas_nchwc16: ONNX Runtime's FMA chains).
// Counters: GFLOP/s (a multiply and an add per tap). The machine is shared:
// compare kernels by the "min" aggregate of repetitions
// (--benchmark_repetitions=9 --benchmark_report_aggregates_only=true).
#include <benchmark/benchmark.h>
#include <immintrin.h>

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
    // mobilenet_v2's depthwise layers on small planes (per-plane costs dominate).
    {"mobilenet.dw3x3_576_14", 576, 14, 576, 3, 1, 576},
    {"mobilenet.dw3x3s2_576_14", 576, 14, 576, 3, 2, 576},
    {"mobilenet.dw3x3_960_7", 960, 7, 960, 3, 1, 960},
    {"mobilenet.dw3x3s2_144_56", 144, 56, 144, 3, 2, 144},
    {"mobilenet.dw3x3_192_28", 192, 28, 192, 3, 1, 192},
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
  // Fourth argument 1: ONNX Runtime's order (mlas_nchwc16, FMA), else sequential.
  if (state.range(3) != 0) p.accumulation = Fp32Accumulation::mlas_nchwc16;
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
      cpu::DwconvProblem d{x, w, b, y, p.window, 1, true, false, p.accumulation};
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
          w, p.groups, (v.isa == Isa::avx512 ? cpu::kOclAvx512 : cpu::kOclAvx2).channels,
          p.accumulation);
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

// The ceiling these kernels are measured against: 24 independent
// accumulators in registers, each step 4 x vectors times 6 broadcast weights,
// as one rounded product and one rounded addition (what every exact fp32
// kernel here executes) or as one FMA (what ONNX Runtime's MLAS executes).
// On the Zen 5 VM of 2026-11-26: mul + add 93 GFLOP/s, FMA 117 GFLOP/s per
// core, so an exact kernel can reach at most 0.8x of an FMA kernel's speed.
template <bool kFma>
__attribute__((target("avx512f"), noinline)) float peak_steps(int64_t steps, const float* wm) {
  __m512 x[4], acc[4][6];
  for (int v = 0; v < 4; ++v) x[v] = _mm512_set1_ps(1.0f + 0.001f * static_cast<float>(v));
  for (int v = 0; v < 4; ++v)
    for (int r = 0; r < 6; ++r) acc[v][r] = _mm512_set1_ps(static_cast<float>(v * 6 + r));
  for (int64_t e = 0; e < steps; ++e) {
    for (int r = 0; r < 6; ++r) {
      const __m512 w = _mm512_set1_ps(wm[r]);
      for (int v = 0; v < 4; ++v)
        acc[v][r] = kFma ? _mm512_fmadd_ps(x[v], w, acc[v][r])
                         : _mm512_add_ps(acc[v][r], _mm512_mul_ps(x[v], w));
    }
    // Opaque to the compiler: no product is hoisted out of the loop.
    __asm__ volatile("" : "+v"(x[0]), "+v"(x[1]), "+v"(x[2]), "+v"(x[3]), "+r"(wm));
  }
  __m512 s = _mm512_setzero_ps();
  for (int v = 0; v < 4; ++v)
    for (int r = 0; r < 6; ++r) s = _mm512_add_ps(s, acc[v][r]);
  float lanes[16];
  _mm512_storeu_ps(lanes, s);
  return lanes[0] + lanes[15];
}

// Argument: 0 mul + add, 1 FMA. Counter GFLOP/s (2 per lane and step).
void BM_Avx512Peak(benchmark::State& state) {
  if (host_isa() < Isa::avx512) {
    state.SkipWithError("no AVX-512 here");
    return;
  }
  const bool fma = state.range(0) != 0;
  static const float w[6] = {0.5f, 0.25f, 0.125f, 0.75f, 0.375f, 0.625f};
  constexpr int64_t kSteps = 1 << 16;
  for (auto _ : state)
    benchmark::DoNotOptimize(fma ? peak_steps<true>(kSteps, w) : peak_steps<false>(kSteps, w));
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * 16 * 24 * kSteps * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate, benchmark::Counter::OneK::kIs1000);
  state.SetLabel(fma ? "fma" : "mul + add");
}
BENCHMARK(BM_Avx512Peak)->Arg(0)->Arg(1);

void layer_args(benchmark::internal::Benchmark* b) {
  for (int64_t l = 0; l < static_cast<int64_t>(std::size(kLayers)); ++l)
    for (int64_t v = 0; v < static_cast<int64_t>(cpu::conv_nchw_kernels().variants.size()); ++v)
      for (int64_t t : {1, 2})
        for (int64_t order : {0, 1}) b->Args({l, v, t, order});
}

BENCHMARK(BM_Layer)
    ->Apply(layer_args)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->ComputeStatistics("min", [](const std::vector<double>& v) {
      return *std::min_element(v.begin(), v.end());
    });

}  // namespace
