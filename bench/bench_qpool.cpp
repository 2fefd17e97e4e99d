// Quantized average pooling (issue #9 shapes): every variant of the
// "qlinear_average_pool" list that runs here and accepts the problem, plus
// the public call (the dispatcher's choice), with 1 and 2 threads.
//
// Names: qpool/<shape>/<profile>/<dtype>/<layout>/<variant>/threads:<n>.
// bytes_per_second counts input + output bytes once per call.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "npukit/npukit.hpp"
#include "ops/cpu/qavgpool.hpp"

namespace {

using namespace npukit;

struct BenchShape {
  const char* name;
  Shape x;
  int64_t k, s, pad;  // k = 0: global
  bool include_pad;
};

const BenchShape kShapes[] = {
    {"1x64x112x112_k3s2p1_incl", {1, 64, 112, 112}, 3, 2, 1, true},
    {"1x64x112x112_k3s2p1_excl", {1, 64, 112, 112}, 3, 2, 1, false},
    {"1x256x56x56_k2s2", {1, 256, 56, 56}, 2, 2, 0, false},
    {"1x512x14x14_k3s1p1_incl", {1, 512, 14, 14}, 3, 1, 1, true},
    {"1x512x14x14_k3s1p1_excl", {1, 512, 14, 14}, 3, 1, 1, false},
    {"global_1x2048x7x7", {1, 2048, 7, 7}, 0, 1, 0, false},
    {"8x256x56x56_k2s2", {8, 256, 56, 56}, 2, 2, 0, false},
    {"mico_1x128x56x56_k2s2", {1, 128, 56, 56}, 2, 2, 0, false},
};

struct Setup {
  Tensor x, y;
  QLinearAvgPoolParams p;
};

QLinearAvgPoolParams make_params(const BenchShape& s, Profile profile, DType t) {
  QLinearAvgPoolParams p;
  Window2d& w = p.window;
  w.kernel_h = s.k ? s.k : s.x[2];
  w.kernel_w = s.k ? s.k : s.x[3];
  w.stride_h = w.stride_w = s.s;
  w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = s.pad;
  p.count_include_pad = s.include_pad;
  p.x_scale = 0.0235f;
  p.y_scale = profile == Profile::tflite || profile == Profile::mico ? p.x_scale : 0.0198f;
  const bool signed8 = t == DType::s8;
  p.x_zero_point = profile == Profile::mico ? 0 : signed8 ? -3 : 121;
  p.y_zero_point = profile == Profile::tflite || profile == Profile::mico ? p.x_zero_point
                   : signed8                                              ? 5
                                                                          : 117;
  apply_profile(p, profile);
  return p;
}

Setup make_setup(const BenchShape& s, Profile profile, DType t, Layout layout) {
  Setup u;
  u.p = make_params(s, profile, t);
  Tensor dense(t, s.x);
  std::mt19937 g(7);
  auto* d = static_cast<uint8_t*>(dense.view().raw());
  for (int64_t i = 0; i < dense.numel(); ++i) d[i] = static_cast<uint8_t>(g());
  u.x = Tensor(t, s.x, layout);
  copy(dense, u.x);
  u.y = Tensor(t, qlinear_average_pool_output_shape(s.x, u.p), layout);
  return u;
}

void run_case(benchmark::State& state, const BenchShape& s, Profile profile, DType t, Layout layout,
              int variant, int threads) {
  const auto& kernels = cpu::qlinear_average_pool_kernels();
  if (variant >= 0 && !kernels.runnable(kernels.variants[static_cast<size_t>(variant)])) {
    state.SkipWithError("this variant does not run on this host (ISA or NPUKIT_IMPL)");
    return;
  }
  set_num_threads(threads);
  Setup u = make_setup(s, profile, t, layout);
  const auto& list = cpu::qlinear_average_pool_kernels();
  cpu::QAvgPoolProblem prob{u.x, u.y, &u.p, cpu::make_qavg_plan(u.x, u.y, u.p)};
  for (auto _ : state) {
    if (variant < 0) {
      qlinear_average_pool(u.x, u.y, u.p);  // plan + dispatch included
    } else {
      list.variants[static_cast<size_t>(variant)].run(prob);
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * (u.x.numel() + u.y.numel()));
  set_num_threads(0);
}

bool register_all() {
  static uint8_t dummy = 0;
  const auto& list = cpu::qlinear_average_pool_kernels();
  struct P {
    Profile profile;
    const char* name;
  };
  for (const auto& s : kShapes) {
    const bool mico = std::string(s.name).rfind("mico", 0) == 0;
    std::vector<P> profiles;
    if (mico)
      profiles = {{Profile::mico, "mico"}};
    else
      profiles = {{Profile::onnxruntime, "onnxruntime"}, {Profile::pytorch, "pytorch"}};
    if (std::string(s.name) == "1x64x112x112_k3s2p1_incl") {
      profiles.push_back({Profile::ghp_rtl, "ghp_rtl"});
      profiles.push_back({Profile::tflite, "tflite"});
    }
    for (const auto& pr : profiles)
      for (DType t : {DType::u8, DType::s8}) {
        if (pr.profile == Profile::mico && t == DType::u8) continue;
        if (pr.profile == Profile::ghp_rtl && t == DType::s8) continue;
        for (Layout layout : {Layout::nchw, Layout::nhwc}) {
          // Declining depends on shapes, strides and parameters only: plan on
          // views of a dummy byte (never read).
          QLinearAvgPoolParams p = make_params(s, pr.profile, t);
          const TensorView xv = TensorView::contiguous(&dummy, t, s.x, layout);
          const TensorView yv =
              TensorView::contiguous(&dummy, t, qlinear_average_pool_output_shape(s.x, p), layout);
          cpu::QAvgPoolProblem prob{xv, yv, &p, cpu::make_qavg_plan(xv, yv, p)};
          for (int v = -1; v < static_cast<int>(list.variants.size()); ++v) {
            std::string vname = "dispatch";
            if (v >= 0) {
              const auto& kv = list.variants[static_cast<size_t>(v)];
              // runnable() is checked when the case runs: the ISA settings are
              // not initialized yet during static registration.
              if (kv.declines && kv.declines(prob)) continue;
              vname = kv.name;
            }
            for (int threads : {1, 2}) {
              const std::string name = std::string("qpool/") + s.name + "/" + pr.name + "/" +
                                       dtype_name(t) + "/" + layout_name(layout) + "/" + vname +
                                       "/threads:" + std::to_string(threads);
              benchmark::RegisterBenchmark(name.c_str(), [=, &s](benchmark::State& st) {
                run_case(st, s, pr.profile, t, layout, v, threads);
              })->UseRealTime();
            }
          }
        }
      }
  }
  return true;
}

const bool registered = register_all();

}  // namespace
