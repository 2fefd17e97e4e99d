// Speed of every runnable kernel of the integer convolution list
// (qconv_kernels()) on layers of ResNet-18 and MobileNet-v2 at batch 1,
// u8 activations x s8 per-channel weights, weights packed once (as the ONNX
// runner does), 1 thread. Counter: GMAC/s (multiply-adds of the layer per
// second). Third argument: 0 NCHW x and y, 1 channels-last x and y (the
// runner's int8 layout). The machine is shared: compare kernels within one run.
#include <benchmark/benchmark.h>

#include <random>

#include "npukit/kernels.hpp"
#include "npukit/ops/quantized.hpp"
#include "npukit/parallel.hpp"
#include "ops/cpu/qconv_problem.hpp"

namespace {

using namespace npukit;

struct Layer {
  const char* name;
  int64_t c, h, w, oc, k, stride, pad, groups;
};
constexpr Layer kLayers[] = {
    {"resnet_conv1_7x7s2", 3, 224, 224, 64, 7, 2, 3, 1},
    {"resnet_l1_3x3", 64, 56, 56, 64, 3, 1, 1, 1},
    {"resnet_l3_3x3s2", 128, 28, 28, 256, 3, 2, 1, 1},
    {"resnet_l4_3x3", 512, 7, 7, 512, 3, 1, 1, 1},
    {"mnv2_expand_1x1", 24, 56, 56, 144, 1, 1, 0, 1},
    {"mnv2_dw_3x3", 144, 56, 56, 144, 3, 1, 1, 144},
    {"mnv2_dw_3x3s2", 144, 56, 56, 144, 3, 2, 1, 144},
    {"mnv2_project_1x1", 144, 56, 56, 24, 1, 1, 0, 1},
    {"mnv2_dw_3x3_14", 384, 14, 14, 384, 3, 1, 1, 384},
    {"mnv2_expand_1x1_7", 160, 7, 7, 960, 1, 1, 0, 1},
    {"mnv2_dw_3x3_112", 32, 112, 112, 32, 3, 1, 1, 32},
    {"resnet_l3_3x3", 256, 14, 14, 256, 3, 1, 1, 1},
    {"mnv2_expand_1x1_112", 16, 112, 112, 96, 1, 1, 0, 1},
    {"mnv2_expand_1x1_14", 96, 14, 14, 576, 1, 1, 0, 1},
    {"mnv2_project_1x1_14", 576, 14, 14, 96, 1, 1, 0, 1},
    {"mnv2_project_1x1_7", 960, 7, 7, 160, 1, 1, 0, 1},
    {"mnv2_expand_1x1_28", 32, 28, 28, 192, 1, 1, 0, 1},
    {"mnv2_expand_1x1_14_64", 64, 14, 14, 384, 1, 1, 0, 1},
    {"mnv2_project_1x1_28", 192, 28, 28, 32, 1, 1, 0, 1},
    {"mnv2_project_1x1_14_384", 384, 14, 14, 64, 1, 1, 0, 1},
    {"mnv2_project_1x1_7_320", 960, 7, 7, 320, 1, 1, 0, 1},
    {"fmnist_conv2_3x3", 8, 14, 14, 16, 3, 1, 1, 1},  // the bundled int8 model's second layer
};

void run(benchmark::State& state) {
  const auto& list = qconv_kernels();
  const auto& v = list.variants[static_cast<size_t>(state.range(0))];
  const Layer& L = kLayers[state.range(1)];
  if (!KernelList<QConvProblem>::runnable(v) || v.isa > host_isa()) {
    state.SkipWithError("not runnable here");
    return;
  }
  std::mt19937 rng(1);
  const Layout layout = state.range(2) ? Layout::nhwc : Layout::nchw;
  Tensor x(DType::u8, {1, L.c, L.h, L.w}, layout), w(DType::s8, {L.oc, L.c / L.groups, L.k, L.k});
  auto* xb = static_cast<uint8_t*>(x.view().raw());  // (any layout: the buffer)
  for (int64_t i = 0; i < x.numel(); ++i) xb[i] = static_cast<uint8_t>(rng());
  for (int64_t i = 0; i < w.numel(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>(rng());
  Tensor bias(DType::s32, {L.oc});
  QLinearConvParams p;
  p.window.kernel_h = p.window.kernel_w = L.k;
  p.window.stride_h = p.window.stride_w = L.stride;
  p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = L.pad;
  p.groups = L.groups;
  p.x_scale = 0.02f, p.y_scale = 0.5f, p.x_zero_point = 128;
  p.w.scale.assign(static_cast<size_t>(L.oc), 0.01f);
  p.w.zero_point = {0};
  p.has_bias = true;
  Tensor y(DType::u8, qlinear_conv_output_shape(x.shape(), w.shape(), p), layout);
  QConvProblem q = qlinear_conv_problem(x, w, bias, y, p);
  const auto pk = pack_qlinear_conv_weights(w, p, DType::u8);
  q.packed = pk.get();
  if (v.declines && v.declines(q)) {
    state.SkipWithError(v.declines(q));
    return;
  }
  const int saved = num_threads();
  set_num_threads(1);
  for (auto _ : state) v.run(q);
  set_num_threads(saved);
  const double macs = static_cast<double>(y.numel() * (L.c / L.groups) * L.k * L.k);
  state.counters["GMAC/s"] = benchmark::Counter(
      macs * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(std::string(v.name) + " " + L.name + (state.range(2) ? " nhwc" : " nchw"));
}

void args(benchmark::internal::Benchmark* b) {
  const int64_t variants = static_cast<int64_t>(qconv_kernels().variants.size());
  for (int64_t l = 0; l < static_cast<int64_t>(std::size(kLayers)); ++l)
    for (int64_t v = 0; v < variants; ++v)
      for (int64_t layout = 0; layout < 2; ++layout) b->Args({v, l, layout});
}

BENCHMARK(run)->Apply(args)->Unit(benchmark::kMillisecond)->MinTime(0.05);

}  // namespace
