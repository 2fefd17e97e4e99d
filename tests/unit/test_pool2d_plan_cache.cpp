// The per-thread plan caches of the pool2d kernels (cpu::shared_pool2d_plan,
// the 3x3 sweep's table and the stride-2 plan, pool2d_plan.hpp /
// f32-pool2d-nchw-sweep.inc / f32-pool2d-s2.hpp):
// the kernel list's decline check and the run share one plan, and calls of
// one geometry reuse it. A reused plan must give the reference's result bit
// for bit, also when the next call changes only the semantics (mode, divisor,
// pad value, loop) or only one geometry field (the pad split, an output
// stride), and when threads call with different geometries at once.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "npukit/kernels.hpp"
#include "npukit/ops/pool2d.hpp"
#include "npukit/parallel.hpp"
#include "ops/cpu/pool2d_plan.hpp"

namespace npukit {
namespace test_pool2d_plan_cache {
namespace {

using cpu::Pool2dProblem;

struct Geometry {
  const char* name;
  DType dtype;
  Shape shape;
  int kernel, stride, pad_left, pad_top;  // pad_right / pad_bottom: 2 * pad - left / top
  bool gapped_y;                          // output rows two elements longer than the row
};

// Pairs of near twins (indices 2i, 2i + 1) that differ in one part of the
// cache key: the output strides, the pad split (same shapes).
const Geometry kGeometries[] = {
    {"14x14 k3s1p1", DType::f32, {1, 19, 14, 14}, 3, 1, 1, 1, false},
    {"14x14 k3s1p1 gapped y", DType::f32, {1, 19, 14, 14}, 3, 1, 1, 1, true},
    {"9x13 k3s1 pads l0 t2", DType::f32, {2, 5, 9, 13}, 3, 1, 0, 2, false},
    {"9x13 k3s1 pads l2 t0", DType::f32, {2, 5, 9, 13}, 3, 1, 2, 0, false},
    {"7x20 k3s1p1", DType::f32, {1, 3, 7, 20}, 3, 1, 1, 1, false},
    {"40x40 k2s2", DType::f32, {1, 4, 40, 40}, 2, 2, 0, 0, false},
    {"40x40 k3s2p1", DType::f32, {1, 4, 40, 40}, 3, 2, 1, 1, false},
    {"14x14 k3s1p1 u8", DType::u8, {1, 19, 14, 14}, 3, 1, 1, 1, false},
};

Pool2dParams params_for(const Geometry& geo, std::mt19937& g) {
  Pool2dParams p;
  Window2d& w = p.window;
  w.kernel_h = w.kernel_w = geo.kernel;
  w.stride_h = w.stride_w = geo.stride;
  const int pad = geo.kernel / 2 * (geo.stride == 1 ? 1 : 0) + (geo.kernel == 3 && geo.stride == 2);
  w.pad_left = geo.pad_left, w.pad_right = 2 * pad - geo.pad_left;
  w.pad_top = geo.pad_top, w.pad_bottom = 2 * pad - geo.pad_top;
  if (geo.dtype != DType::f32) {
    p.mode = PoolMode::max;
    p.pad_value = g() % 2 ? PadValue::zero : PadValue::neg_inf;
    return p;
  }
  p.mode = static_cast<PoolMode>(g() % 3);
  p.divisor = static_cast<AvgDivisor>(g() % 3);
  p.pad_value = static_cast<PadValue>(g() % 3);
  p.nan = static_cast<MaxNaN>(g() % 2);
  p.accumulation = g() % 4 == 0 ? Fp32Accumulation::interleaved : Fp32Accumulation::sequential;
  p.flush_denormals = g() % 4 == 0;
  const int loop = static_cast<int>(g() % 6);
  if (loop == 0) p.loop = PoolLoop::mlas_nchwc;
  if (loop == 1) p.loop = PoolLoop::mlas;  // (MLAS has no clipped_window divisor)
  if (loop == 1 && p.divisor == AvgDivisor::clipped_window) p.divisor = AvgDivisor::valid_count;
  return p;
}

float value(std::mt19937& g) {
  static const uint32_t specials[] = {0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
                                      0xffc00001, 0x00000001, 0x807fffff, 0x7f7fffff};
  if (g() % 8 == 0) return std::bit_cast<float>(specials[g() % 8]);
  return std::uniform_real_distribution<float>(-4.0f, 4.0f)(g);
}

std::string describe(const Geometry& geo, const Pool2dParams& p, int threads) {
  std::ostringstream s;
  s << geo.name << " " << pool_mode_name(p.mode) << " " << avg_divisor_name(p.divisor)
    << " pad=" << pad_value_name(p.pad_value) << " " << fp32_accumulation_name(p.accumulation)
    << (p.flush_denormals ? " ftz" : "") << " loop=" << pool_loop_name(p.loop)
    << " threads=" << threads;
  return s.str();
}

// One call through the kernel list (the public pool2d's path) against the
// reference; returns the chosen kernel's name, or "" after a mismatch.
std::string check_call(const Geometry& geo, const Pool2dParams& p, int threads, std::mt19937& g) {
  const Shape ys = pool2d_output_shape(geo.shape, p);
  Tensor x(geo.dtype, geo.shape), ref(geo.dtype, ys);
  const size_t es = dtype_size(geo.dtype);
  for (int64_t i = 0; i < x.view().numel(); ++i) {
    uint8_t* e = static_cast<uint8_t*>(x.view().raw()) + static_cast<size_t>(i) * es;
    if (geo.dtype == DType::f32) {
      const float v = value(g);
      std::memcpy(e, &v, 4);
    } else {
      *e = static_cast<uint8_t>(g());
    }
  }
  // The output, dense or with two spare elements after every row.
  const int64_t row = ys[3] + (geo.gapped_y ? 2 : 0);
  const Shape st = {ys[1] * ys[2] * row, ys[2] * row, row, 1};
  std::vector<uint8_t> ybuf(static_cast<size_t>(ys[0] * st[0]) * es, 0xa5);
  const TensorView y(ybuf.data(), geo.dtype, ys, st);
  const Pool2dProblem want_problem{x.view(), ref.view(), p};
  set_num_threads(1);
  pool2d_kernels().variants.back().run(want_problem);
  set_num_threads(threads);
  const Pool2dProblem pr{x.view(), y, p};
  const auto& chosen = pool2d_kernels().choose(pr);
  chosen.run(pr);
  for (int64_t n = 0; n < ys[0]; ++n)
    for (int64_t c = 0; c < ys[1]; ++c)
      for (int64_t h = 0; h < ys[2]; ++h)
        for (int64_t w = 0; w < ys[3]; ++w) {
          const uint8_t* got = static_cast<const uint8_t*>(y.raw()) +
                               (n * st[0] + c * st[1] + h * st[2] + w * st[3]) * es;
          const uint8_t* want = static_cast<const uint8_t*>(ref.view().raw()) +
                                (((n * ys[1] + c) * ys[2] + h) * ys[3] + w) * es;
          if (std::memcmp(got, want, es) == 0) continue;
          ADD_FAILURE() << "kernel " << chosen.name << " differs at (" << n << "," << c << "," << h
                        << "," << w << "): " << describe(geo, p, threads);
          return "";
        }
  return chosen.name;
}

struct SettingsGuard {
  ~SettingsGuard() { set_num_threads(0); }
};

// Random walks over near-twin geometries and semantics, so that most calls
// meet a cached plan built for a different problem. (Checked to fail when the
// cache key ignores the output strides.)
TEST(Pool2dPlanCache, ReusedPlansMatchTheReference) {
  SettingsGuard guard;
  const uint32_t seed = 20261127;
  std::mt19937 g(seed);
  std::map<std::string, int> runs;
  for (int i = 0; i < 300; ++i) {
    // A geometry, its twin (index ^ 1) with the same semantics, then again.
    const size_t at = g() % std::size(kGeometries);
    const Geometry &geo = kGeometries[at], &twin = kGeometries[at ^ 1];
    const Pool2dParams p = params_for(geo, g);
    for (const Geometry* one : {&geo, &twin, &geo}) {
      const Pool2dParams q = one->dtype == geo.dtype ? p : params_for(*one, g);
      const int threads = 1 + static_cast<int>(g() % 3);
      const std::string name = check_call(*one, q, threads, g);
      ASSERT_FALSE(name.empty()) << "seed " << seed << ", walk " << i;
      ++runs[name];
    }
  }
  // The sweep must have run from reused plans when this host runs it.
  int sweep = 0;
  for (const auto& [name, n] : runs) {
    std::printf("ReusedPlansMatchTheReference: seed %u, %s ran %d calls\n", seed, name.c_str(), n);
    if (name.find("sweep3x3") != std::string::npos) sweep += n;
  }
  if (max_isa() >= Isa::avx2 && impl() != Impl::reference) {
    EXPECT_GT(sweep, 150);
  }
}

// Threads with different geometries at once: each thread keeps its own plans.
TEST(Pool2dPlanCache, ThreadsWithDifferentGeometries) {
  SettingsGuard guard;
  set_num_threads(1);
  const uint32_t seed = 20261128;
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 g(seed + static_cast<uint32_t>(t));
      for (int i = 0; i < 40; ++i) {
        const Geometry& geo = kGeometries[(t * 3 + i % 2) % std::size(kGeometries)];
        const Pool2dParams p = params_for(geo, g);
        const Shape ys = pool2d_output_shape(geo.shape, p);
        Tensor x(geo.dtype, geo.shape), y(geo.dtype, ys), ref(geo.dtype, ys);
        // Random bytes: for f32 every class of value, NaN payloads included.
        const int64_t x_bytes = x.view().numel() * static_cast<int64_t>(dtype_size(geo.dtype));
        for (int64_t e = 0; e < x_bytes; ++e)
          static_cast<uint8_t*>(x.view().raw())[e] = static_cast<uint8_t>(g());
        pool2d_kernels().variants.back().run(Pool2dProblem{x.view(), ref.view(), p});
        pool2d(x.view(), y.view(), p);
        const size_t bytes = static_cast<size_t>(y.view().numel()) * dtype_size(geo.dtype);
        if (std::memcmp(y.view().raw(), ref.view().raw(), bytes) != 0) {
          failures[static_cast<size_t>(t)] = describe(geo, p, 1) + ", call " + std::to_string(i);
          return;
        }
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t)
    EXPECT_EQ(failures[static_cast<size_t>(t)], "") << "seed " << seed + t << ", thread " << t;
}

// The stride-2 kernel's own plan (cpu::shared_s2_plan) on one geometry while
// only the semantics change from call to call: every field of its key (mode,
// divisor, pad value, NaN rule, loop) in turn, each call against the
// reference. (Checked to fail when the key ignores the divisor.)
TEST(Pool2dPlanCache, StrideTwoPlanFollowsTheSemantics) {
  SettingsGuard guard;
  const uint32_t seed = 20261205;
  std::mt19937 g(seed);
  const Geometry geo = {"40x40 k3s2p1", DType::f32, {1, 4, 40, 40}, 3, 2, 1, 1, false};
  std::map<std::string, int> runs;
  for (int i = 0; i < 120; ++i) {
    Pool2dParams p = params_for(geo, g);
    p.accumulation = Fp32Accumulation::sequential;  // what the stride-2 kernel takes
    p.flush_denormals = false;
    if (p.loop == PoolLoop::mlas) p.loop = PoolLoop::taps;
    if (p.mode == PoolMode::sum) p.mode = i % 2 ? PoolMode::avg : PoolMode::max;
    const std::string name = check_call(geo, p, 1 + i % 2, g);
    ASSERT_FALSE(name.empty()) << "seed " << seed << ", call " << i;
    ++runs[name];
  }
  std::printf("StrideTwoPlanFollowsTheSemantics: seed %u, stride-2 kernels ran %d calls\n", seed,
              runs["f32-pool2d-stride2-nchw-avx512"] + runs["f32-pool2d-stride2-nchw-avx2"]);
  if (max_isa() >= Isa::avx2 && impl() != Impl::reference) {
    EXPECT_EQ(runs["f32-pool2d-stride2-nchw-avx512"] + runs["f32-pool2d-stride2-nchw-avx2"], 120);
  }
}

}  // namespace
}  // namespace test_pool2d_plan_cache
}  // namespace npukit
