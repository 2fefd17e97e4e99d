// Drivers of the f32 global pools (f32-globalpool.hpp): when they apply, the
// split into chunks of planes for the threads, for max the scalar loop for
// the planes whose result depends on the order, and the portable kernels.
#include "f32-globalpool.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "npukit/ops/fp32_semantics.hpp"
#include "npukit/parallel.hpp"
#include "ops/reference/x86_float.hpp"

namespace npukit::cpu {

namespace {

using PlanesFn = void (*)(const F32GlobalPlanes&, const F32GlobalMaxRule&, float*, uint32_t*);

// The reference's loop for one plane (ref::pool2d_f32 / pool2d_f32_mlas_nchwc
// with a whole-plane window: every tap is an input element).
float plane_max(const float* p, int64_t hw, const F32GlobalMaxRule& r) {
  const Fp32Arith f{r.flush};
  float acc = r.start;
  for (int64_t e = 0; e < hw; ++e) {
    const float v = f.in(p[e]);
    if (r.nchwc)
      acc = ref::x86_simd_max(acc, v);
    else if (v > acc || (r.propagate && std::isnan(v)))
      acc = v;
  }
  return f.out(acc);
}

F32GlobalMaxRule max_rule(const Pool2dProblem& pr) {
  F32GlobalMaxRule r;
  constexpr float inf = std::numeric_limits<float>::infinity();
  if (effective_pool_loop(pr.p, pr.x.dim(1)) == PoolLoop::mlas_nchwc) {
    r.start = -FLT_MAX;
    r.nchwc = true;
    return r;
  }
  r.start = pr.p.pad_value == PadValue::neg_flt_max ? -FLT_MAX : -inf;
  r.propagate = pr.p.nan == MaxNaN::propagate;
  r.flush = pr.p.flush_denormals;
  return r;
}

// Walks x's planes in chunks of kF32GlobalChunk per image and calls
// chunk(b, yo) with yo the chunk's first output (outputs y.stride(1) apart);
// threads only with at least ~32 KB of input each (waking one costs µs).
template <class Chunk>
void for_each_chunk(const Pool2dProblem& pr, const Chunk& chunk) {
  constexpr int64_t B = kF32GlobalChunk;
  const TensorView &x = pr.x, &y = pr.y;
  const int64_t C = x.dim(1), hw = x.dim(2) * x.dim(3), cs = x.stride(1), ys = y.stride(1);
  const int64_t per_image = (C + B - 1) / B, total = x.dim(0) * per_image;
  const float* xb = x.data<float>();
  float* yb = y.data<float>();
  const auto chunks = [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t n = t / per_image, c0 = t % per_image * B;
      F32GlobalPlanes b;
      b.x = xb + n * x.stride(0) + c0 * cs;
      b.count = std::min(B, C - c0);
      b.hw = hw;
      b.cs = cs;
      chunk(b, yb + n * y.stride(0) + c0 * ys);
    }
  };
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / (B * hw * 4));
  if (num_threads() <= 1 || total < 2 * grain)
    chunks(0, total);
  else
    parallel_ranges(total, grain, chunks);
}

void run_max(const Pool2dProblem& pr, PlanesFn planes) {
  constexpr int64_t B = kF32GlobalChunk;
  const F32GlobalMaxRule rule = max_rule(pr);
  const int64_t ys = pr.y.stride(1);
  for_each_chunk(pr, [&](const F32GlobalPlanes& b, float* yo) {
    float out[B];
    uint32_t redo[B / 32] = {};
    planes(b, rule, out, redo);
    for (int64_t w = 0; w < B / 32; ++w)
      for (uint32_t bits = redo[w]; bits != 0; bits &= bits - 1) {
        const int64_t k = w * 32 + __builtin_ctz(bits);
        out[k] = plane_max(b.x + k * b.cs, b.hw, rule);
      }
    if (ys == 1)
      std::copy(out, out + b.count, yo);
    else
      for (int64_t k = 0; k < b.count; ++k) yo[k * ys] = out[k];
  });
}

using AvgFn = void (*)(const F32GlobalPlanes&, const F32GlobalAvgRule&, float*, int64_t);

void run_avg(const Pool2dProblem& pr, AvgFn planes) {
  F32GlobalAvgRule rule;
  rule.sum = pr.p.mode == PoolMode::sum;
  rule.coeff = pr.p.coeff;
  const int64_t ys = pr.y.stride(1);
  for_each_chunk(pr, [&](const F32GlobalPlanes& b, float* yo) { planes(b, rule, yo, ys); });
}

// Why the problem is not a whole-plane window over gap-free planes, or null.
const char* global_nchw_declines(const Pool2dProblem& pr) {
  const TensorView& x = pr.x;
  if (x.dtype() != DType::f32) return "not f32";
  const Window2d& w = pr.p.window;
  const bool whole = w.kernel_h == x.dim(2) && w.kernel_w == x.dim(3) && w.pad_top == 0 &&
                     w.pad_left == 0 && w.pad_bottom == 0 && w.pad_right == 0 &&
                     (w.dilation_h == 1 || x.dim(2) == 1) && (w.dilation_w == 1 || x.dim(3) == 1) &&
                     w.ins_h == 0 && w.ins_w == 0;
  if (!whole || pr.y.dim(2) != 1 || pr.y.dim(3) != 1)
    return "the window is not exactly the whole plane";
  if (x.stride(3) != 1 || x.stride(2) != x.dim(3)) return "planes are not contiguous (NCHW)";
  return nullptr;
}

}  // namespace

const char* f32_global_max_declines(const Pool2dProblem& pr) {
  if (pr.p.mode != PoolMode::max) return "not max pooling";
  if (const char* why = global_nchw_declines(pr)) return why;
  switch (effective_pool_loop(pr.p, pr.x.dim(1))) {
    case PoolLoop::mlas_nchwc:
      return nullptr;
    case PoolLoop::mlas:
      return "ONNX Runtime's MLAS loop (PoolLoop::mlas)";
    case PoolLoop::taps:
      break;
  }
  if (pr.p.nan == MaxNaN::first_tap) return "MaxNaN::first_tap";
  return nullptr;
}

// Averages and sums: the taps loop and MLAS's NCHWc loop both sum a whole
// plane element by element from +0 and divide by hw (or multiply by coeff).
const char* f32_global_avg_declines(const Pool2dProblem& pr) {
  if (pr.p.mode == PoolMode::max) return "max pooling";
  if (const char* why = global_nchw_declines(pr)) return why;
  if (pr.x.dim(2) * pr.x.dim(3) == 0) return "empty planes";
  const PoolLoop loop = effective_pool_loop(pr.p, pr.x.dim(1));
  if (loop == PoolLoop::mlas) return "ONNX Runtime's MLAS loop (PoolLoop::mlas)";
  if (loop == PoolLoop::mlas_nchwc) return nullptr;
  if (pr.p.accumulation != Fp32Accumulation::sequential) return "not sequential accumulation";
  if (pr.p.flush_denormals) return "flush_denormals (FTZ)";
  if (pr.p.end_pad_crops) return "end_pad_crops";
  return nullptr;
}

// The AVX-512 kernel's planes: odd squares 3x3 .. 15x15, one right after the other.
const char* f32_global_avg_odd_declines(const Pool2dProblem& pr) {
  if (const char* why = f32_global_avg_declines(pr)) return why;
  const int64_t hw = pr.x.dim(2) * pr.x.dim(3);
  if (pr.x.stride(1) != hw) return "gaps between the planes";
  if (!f32_global_avg_odd_size(hw)) return "H*W is not 9, 25, 49, 81, 121, 169 or 225";
  return nullptr;
}

bool f32_global_avg_odd_size(int64_t hw) {
  return hw == 9 || hw == 25 || hw == 49 || hw == 81 || hw == 121 || hw == 169 || hw == 225;
}

// Portable: every plane by the reference's loop, chunks shared by the threads.
void f32_global_max_portable(const F32GlobalPlanes& b, const F32GlobalMaxRule& r, float* out,
                             uint32_t*) {
  for (int64_t k = 0; k < b.count; ++k) out[k] = plane_max(b.x + k * b.cs, b.hw, r);
}

// Portable: the reference's loop plane by plane.
void f32_global_avg_portable(const F32GlobalPlanes& b, const F32GlobalAvgRule& r, float* out,
                             int64_t os) {
  const float div = static_cast<float>(b.hw);
  for (int64_t k = 0; k < b.count; ++k) {
    const float* p = b.x + k * b.cs;
    float acc = 0.0f;
    for (int64_t e = 0; e < b.hw; ++e) acc = x86_add(acc, p[e]);
    out[k * os] = r.sum ? x86_mul(acc, r.coeff) : acc / div;
  }
}

void avg_pool2d_f32_global_portable(const Pool2dProblem& pr) {
  run_avg(pr, f32_global_avg_portable);
}
#if defined(__x86_64__)
void avg_pool2d_f32_global_avx2(const Pool2dProblem& pr) {
  run_avg(pr, f32_global_avg_avx2);
}
void avg_pool2d_f32_global_odd_avx512(const Pool2dProblem& pr) {
  run_avg(pr, f32_global_avg_odd_avx512);
}
#endif

void max_pool2d_f32_global_portable(const Pool2dProblem& pr) {
  run_max(pr, f32_global_max_portable);
}
#if defined(__x86_64__)
void max_pool2d_f32_global_avx2(const Pool2dProblem& pr) {
  run_max(pr, f32_global_max_avx2);
}
void max_pool2d_f32_global_avx512(const Pool2dProblem& pr) {
  run_max(pr, f32_global_max_avx512);
}
#endif

}  // namespace npukit::cpu
