// Kernel lists of QLinearAdd ("qadd") and QuantizeLinear ("quantize"): the
// per-call constants, the portable loops (the reference's scalar arithmetic
// on contiguous buffers) and the declines.
#include "ops/cpu/x8-qelementwise.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "npukit/parallel.hpp"
#include "ops/quantized_common.hpp"

namespace npukit {

namespace qelem {

AddConsts add_consts(const QAddProblem& q) {
  const QLinearAddParams& p = q.p;
  const detail::CodeRange r = detail::code_range(q.c.dtype());
  AddConsts k{};
  k.fma_form = p.arith == QAddArith::ort_x86_fma;
  k.a_scale = p.a_scale, k.b_scale = p.b_scale, k.c_scale = p.c_scale;
  k.a_zp = p.a_zero_point, k.b_zp = p.b_zero_point, k.c_zp = p.c_zero_point;
  // The same expressions as ref::qlinear_add.
  k.ra = p.a_scale / p.c_scale, k.rb = p.b_scale / p.c_scale;
  k.k = static_cast<float>(p.c_zero_point) - std::fma(k.ra, static_cast<float>(p.a_zero_point),
                                                      k.rb * static_cast<float>(p.b_zero_point));
  k.lo = static_cast<float>(k.fma_form ? r.lo : r.lo - p.c_zero_point);
  k.hi = static_cast<float>(k.fma_form ? r.hi : r.hi - p.c_zero_point);
  k.s8 = q.c.dtype() == DType::s8;
  return k;
}

void add_portable(const void* a, const void* b, void* c, int64_t n, const AddConsts& k) {
  for (int64_t i = 0; i < n; ++i) {
    const int32_t av = k.s8 ? int32_t{static_cast<const int8_t*>(a)[i]}
                            : int32_t{static_cast<const uint8_t*>(a)[i]};
    const int32_t bv = k.s8 ? int32_t{static_cast<const int8_t*>(b)[i]}
                            : int32_t{static_cast<const uint8_t*>(b)[i]};
    float v;
    if (k.fma_form) {
      v = std::fma(static_cast<float>(av), k.ra, std::fma(static_cast<float>(bv), k.rb, k.k));
    } else {
      const float va = k.a_scale * static_cast<float>(av - k.a_zp);
      const float vb = k.b_scale * static_cast<float>(bv - k.b_zp);
      v = (va + vb) / k.c_scale;
    }
    v = v < k.lo ? k.lo : v > k.hi ? k.hi : v;
    const int32_t out =
        static_cast<int32_t>(round_to_int(v, Rounding::half_to_even)) + (k.fma_form ? 0 : k.c_zp);
    if (k.s8)
      static_cast<int8_t*>(c)[i] = static_cast<int8_t>(out);
    else
      static_cast<uint8_t*>(c)[i] = static_cast<uint8_t>(out);
  }
}

void quantize_portable(const float* x, void* y, int64_t n, const QuantizeConsts& k) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = k.reciprocal ? x[i] * k.inv : x[i] / k.scale;
    const float c = std::isnan(v) ? k.lo : v < k.lo ? k.lo : v > k.hi ? k.hi : v;
    const int32_t out = static_cast<int32_t>(round_to_int(c, Rounding::half_to_even)) + k.zp;
    if (k.s8)
      static_cast<int8_t*>(y)[i] = static_cast<int8_t>(out);
    else
      static_cast<uint8_t*>(y)[i] = static_cast<uint8_t>(out);
  }
}

}  // namespace qelem

namespace {

// Elements are handed out in near-equal ranges of whole 64-element units
// (disjoint outputs), a whole number per thread, at most 8 per thread, each
// of at least 8192 elements; a call of fewer than 16384 runs on one thread.
// (Chunks of 16384 left 5 on two threads for a 56x56x24 QLinearAdd.)
constexpr int64_t kUnit = 64, kMinUnits = 8192 / kUnit;

// Calls f(begin, count) over [0, n) in such ranges.
template <typename F>
void for_ranges(int64_t n, const F& f) {
  if (n <= 0) return;
  const int64_t units = (n + kUnit - 1) / kUnit, threads = std::max(1, num_threads());
  const int64_t most = std::min(8 * threads, units / kMinUnits);
  const int64_t parts = most < 2 ? 1 : std::max<int64_t>(2, most / threads * threads);
  // The longer ranges (one unit more) first: threads taking them in turn end together.
  const int64_t share = units / parts, longer = units % parts;
  const auto begin_of = [&](int64_t t) { return (t * share + std::min(t, longer)) * kUnit; };
  parallel_for(parts, [&](int64_t t) {
    const int64_t i = begin_of(t);
    f(i, std::min(begin_of(t + 1), n) - i);
  });
}

// Whether t's elements fill numel() consecutive slots in some axis order
// (contiguous, or the runner's channels-last int8 views).
bool is_dense(const TensorView& t) {
  std::vector<std::pair<int64_t, int64_t>> axes;  // (stride, dim) of axes longer than 1
  for (int i = 0; i < t.rank(); ++i)
    if (t.dim(i) > 1) axes.emplace_back(t.stride(i), t.dim(i));
  std::sort(axes.begin(), axes.end());
  int64_t next = 1;
  for (const auto& [stride, dim] : axes) {
    if (stride != next) return false;
    next = stride * dim;
  }
  return true;
}

// The same element order in memory for all three: an element-wise add over the flat bytes.
bool same_dense_layout(const QAddProblem& q) {
  if (q.a.is_contiguous() && q.b.is_contiguous() && q.c.is_contiguous()) return true;
  for (int i = 0; i < q.c.rank(); ++i)
    if (q.c.dim(i) > 1 && (q.a.stride(i) != q.c.stride(i) || q.b.stride(i) != q.c.stride(i)))
      return false;
  return is_dense(q.c);
}

const char* declines_add(const QAddProblem& q) {
  if (q.p.rounding != Rounding::half_to_even) return "rounding is not half_to_even";
  if (q.a.shape() != q.b.shape()) return "broadcasting";
  // Scales whose products could overflow make inf - inf = NaN, which the
  // reference reports as an error: leave those calls to it.
  const qelem::AddConsts k = qelem::add_consts(q);
  if (!std::isfinite(k.ra) || !std::isfinite(k.rb) || !std::isfinite(k.k) ||
      !std::isfinite(q.p.a_scale * 256.0f) || !std::isfinite(q.p.b_scale * 256.0f))
    return "scales out of the finite range";
  if (!same_dense_layout(q)) return "strided operands (not one dense layout for A, B and C)";
  return nullptr;
}

template <void (*F)(const void*, const void*, void*, int64_t, const qelem::AddConsts&)>
void run_add(const QAddProblem& q) {
  const qelem::AddConsts k = qelem::add_consts(q);
  const int64_t n = q.c.numel();
  const auto* a = static_cast<const char*>(q.a.raw());
  const auto* b = static_cast<const char*>(q.b.raw());
  auto* c = static_cast<char*>(q.c.raw());
  for_ranges(n, [&](int64_t i, int64_t m) { F(a + i, b + i, c + i, m, k); });
}

void add_reference(const QAddProblem& q) {
  ref::qlinear_add(q.a, q.b, q.c, q.p);
}

const char* declines_quantize(const QuantizeProblem& q) {
  if (q.p.rounding != Rounding::half_to_even) return "rounding is not half_to_even";
  if (q.p.q.per_axis()) return "per-axis quantization";
  if (!q.x.is_contiguous() || !q.y.is_contiguous()) return "strided operands";
  return nullptr;
}

template <void (*F)(const float*, void*, int64_t, const qelem::QuantizeConsts&)>
void run_quantize(const QuantizeProblem& q) {
  const detail::CodeRange r = detail::code_range(q.y.dtype());
  qelem::QuantizeConsts k{};
  k.reciprocal = q.p.multiply_by_reciprocal;
  k.scale = q.p.q.scale_at(0);
  k.inv = 1.0f / k.scale;  // as ref::quantize_linear
  k.zp = q.p.q.zero_point_at(0);
  k.lo = static_cast<float>(r.lo - k.zp), k.hi = static_cast<float>(r.hi - k.zp);
  k.s8 = q.y.dtype() == DType::s8;
  const int64_t n = q.x.numel();
  const float* x = static_cast<const float*>(q.x.raw());
  auto* y = static_cast<char*>(q.y.raw());
  for_ranges(n, [&](int64_t i, int64_t m) { F(x + i, y + i, m, k); });
}

void quantize_reference(const QuantizeProblem& q) {
  ref::quantize_linear(q.x, q.y, q.p);
}

}  // namespace

const KernelList<QAddProblem>& qadd_kernels() {
  static const KernelList<QAddProblem> list{
      "qadd",
      {
          {"x8-qadd-avx512", Isa::avx512, "same shapes, one dense layout", declines_add,
           run_add<qelem::add_avx512>},
          {"x8-qadd-avx2", Isa::avx2, "same shapes, one dense layout", declines_add,
           run_add<qelem::add_avx2>},
          {"x8-qadd-portable", Isa::portable, "same shapes, one dense layout", declines_add,
           run_add<qelem::add_portable>},
          {"x8-qadd-reference", Isa::portable, "always (the specification)", nullptr, add_reference,
           true},
      }};
  return list;
}

const KernelList<QuantizeProblem>& quantize_kernels() {
  static const KernelList<QuantizeProblem> list{
      "quantize",
      {
          {"f32-x8-quantize-avx512", Isa::avx512, "per tensor, contiguous", declines_quantize,
           run_quantize<qelem::quantize_avx512>},
          {"f32-x8-quantize-avx2", Isa::avx2, "per tensor, contiguous", declines_quantize,
           run_quantize<qelem::quantize_avx2>},
          {"f32-x8-quantize-portable", Isa::portable, "per tensor, contiguous", declines_quantize,
           run_quantize<qelem::quantize_portable>},
          {"f32-x8-quantize-reference", Isa::portable, "always (the specification)", nullptr,
           quantize_reference, true},
      }};
  return list;
}

}  // namespace npukit
