// Plan of the k3s2p1 kernel (qavgpool-k3s2.hpp): which calls it takes and
// the per-lane fields of its final step.
#include "ops/cpu/qavgpool-k3s2.hpp"

#include <algorithm>
#include <utility>

namespace npukit::cpu {

namespace {

const char* k3s2_declines(const QAvgPoolProblem& p) {
  const QAvgPlan& P = p.plan;
  if (P.unsupported) return P.unsupported;
  if (P.bm_shift) return "bm_pool_quantized's shift";
  if (!qavg_int_float_mean(P) && !qavg_checked_float(P))
    return "not ONNX Runtime's final step with x_scale == y_scale == 2^j or the checked float tail";
  if (P.h.kernel != 3 || P.w.kernel != 3 || P.h.stride != 2 || P.w.stride != 2)
    return "not a 3x3 window with stride 2";
  if (P.h.start != -1 || P.w.start != -1)
    return "not one pixel of padding before the first row and column";
  if (P.h.out < 1 || P.w.out < 1) return "no output";
  if (2 * P.h.out > P.H || 2 * P.w.out > P.W) return "a window past the last row or column";
  if (p.x.stride(3) != 1 || p.y.stride(3) != 1) return "x or y not unit-stride along W";
  return nullptr;
}

struct Lane {
  int32_t d = 0, c0 = 0, valid = 0;
};

}  // namespace

const char* k3s2_build(const QAvgPoolProblem& p, K3s2Plan* K) {
  if (const char* why = k3s2_declines(p)) return why;
  const QAvgPlan& P = p.plan;
  const int64_t OW = P.w.out, blocks = (OW + 63) / 64 * 2, L = blocks * 32;
  if (qavg_checked_float(P)) {
    if (!K) return nullptr;
    K->checked = true;
    K->offsets.assign(static_cast<size_t>(2 * L), 0);
    K->multipliers.assign(static_cast<size_t>(2 * L), 0.0f);
    for (int c = 0; c < 2; ++c) {
      const size_t row = std::min<size_t>(static_cast<size_t>(c), P.h.valid.size() - 1);
      for (int64_t j = 0; j < OW; ++j) {
        const auto i = static_cast<size_t>(c * L + j);
        const int32_t valid = P.h.valid[row] * P.w.valid[static_cast<size_t>(j)];
        const int64_t d = avg_divisor(P.divisor, P.taps, valid,
                                      P.h.clipped[row] * P.w.clipped[static_cast<size_t>(j)]);
        K->offsets[i] = -P.x_zp * valid;
        K->multipliers[i] = fmean_check_multiplier(P, d);
      }
    }
    K->OH = P.h.out, K->OW = OW, K->blocks = blocks;
    return nullptr;
  }
  // Row class 0: output row 0; class 1: every other row (all three window
  // rows on the input: 2 * OH <= H).
  std::vector<Lane> lanes(static_cast<size_t>(2 * OW));
  int64_t k = 0;
  for (int c = 0; c < 2; ++c) {
    const size_t row = std::min<size_t>(static_cast<size_t>(c), P.h.valid.size() - 1);
    const int32_t vh = P.h.valid[row], ch = P.h.clipped[row];
    for (int64_t j = 0; j < OW; ++j) {
      Lane& l = lanes[static_cast<size_t>(c * OW + j)];
      l.valid = vh * P.w.valid[static_cast<size_t>(j)];
      l.d = static_cast<int32_t>(
          avg_divisor(P.divisor, P.taps, l.valid, ch * P.w.clipped[static_cast<size_t>(j)]));
      if (l.d < 3) return "a divisor below 3 (no 16-bit multiplier with shift 1)";
      l.c0 = P.y_zp * l.d - P.x_zp * l.valid;
      const int64_t tmin = int64_t{P.lo} * l.valid + l.c0;
      if (tmin < 0) k = std::max(k, (-tmin + l.d - 1) / l.d);
    }
  }
  k += k & 1;  // even: half to even commutes with adding K
  std::vector<uint16_t> fields(static_cast<size_t>(2 * 3 * L), 0);
  bool any_even = false;
  for (int c = 0; c < 2; ++c)
    for (int64_t j = 0; j < OW; ++j) {
      const Lane& l = lanes[static_cast<size_t>(c * OW + j)];
      const int64_t A = l.c0 + k * l.d + l.d / 2, xmax = int64_t{P.hi} * l.valid + A;
      const int64_t m = ((int64_t{1} << 17) + l.d - 1) / l.d;
      if (xmax > 32767) return "window sums too large for 16-bit lanes";
      if (xmax * (m * l.d - (int64_t{1} << 17)) >= (int64_t{1} << 17))
        return "no 16-bit multiplier divides every window sum exactly";
      const bool e = l.d % 2 == 0;
      any_even = any_even || e;
      uint16_t* f = fields.data() + c * 3 * L + j;
      f[0] = static_cast<uint16_t>(A);
      f[L] = static_cast<uint16_t>(m);
      f[2 * L] = e ? 1 : 0;
    }
  if (!K) return nullptr;
  K->OH = P.h.out;
  K->OW = OW;
  K->blocks = blocks;
  K->K = static_cast<int>(k);
  K->any_even = any_even;
  K->fields = std::move(fields);
  return nullptr;
}

const char* k3s2_avx2_declines(const QAvgPoolProblem& p) {
  if (const char* why = k3s2_build(p, nullptr)) return why;
  if (p.plan.w.out < 16) return "rows of fewer than 16 outputs (the u16 kernels take them)";
  return nullptr;
}

}  // namespace npukit::cpu
