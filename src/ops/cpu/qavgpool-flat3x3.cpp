// Plan of the flat k3s1p1 kernel (qavgpool-flat3x3.hpp): the call's
// conditions and the per-chunk masks and final-step fields of one period.
#include "ops/cpu/qavgpool-flat3x3.hpp"

#include <algorithm>
#include <bit>
#include <numeric>

#include "ops/cpu/qavgpool-rows16.hpp"

namespace npukit::cpu {

namespace {

// x (or y) is N x C x H x W with no gap between rows, planes and images.
bool dense_nchw(const TensorView& t, int64_t C, int64_t H, int64_t W, int64_t N) {
  return t.stride(3) == 1 && t.stride(2) == W && t.stride(1) == H * W &&
         (N == 1 || t.stride(0) == C * H * W);
}

// The geometry of one plane position q: its neighbours on the input.
struct Neighbours {
  bool left, right, up, down;
};
Neighbours neighbours(int64_t q, int64_t H, int64_t W) {
  const int64_t r = q / W, col = q % W;
  return {col > 0, col + 1 < W, r > 0, r + 1 < H};
}

// The per-chunk tables (qavgpool-flat3x3.hpp) from the neighbours of each
// position and rows16's lane fields (one output row per class).
void fill_chunks(Flat3x3Plan& F, const Rows16Plan& R, int64_t H) {
  const int64_t HW = H * F.W;
  F.byte_masks.assign(static_cast<size_t>(3 * F.cpp), 0);
  F.lane_masks.assign(static_cast<size_t>(4 * F.cpp), 0);
  F.field_storage.assign(static_cast<size_t>(192 * F.cpp + 32), 0);
  auto* fields = const_cast<uint16_t*>(F.fields());
  F.weight_storage.assign(static_cast<size_t>(128 * F.cpp + 64), 0);
  auto* weights = const_cast<uint8_t*>(F.weights());
  if (F.W % 2 == 0) F.row_word_storage.assign(static_cast<size_t>(64 * F.cpp + 32), 0);
  auto* row_words = const_cast<uint16_t*>(F.row_words());
  for (int64_t c = 0; c < F.cpp; ++c) {
    uint64_t* b = F.byte_masks.data() + 3 * c;
    uint32_t* l = F.lane_masks.data() + 4 * c;
    for (int64_t k = 0; k < 64; ++k) {
      const int64_t q = (64 * c + k) % HW, row = q / F.W, col = q % F.W;
      const Neighbours at = neighbours(q, H, F.W), next = neighbours((q + 1) % HW, H, F.W);
      const bool even = k % 2 == 0;
      const uint64_t bit = uint64_t{1} << k;
      if (even ? at.left : true) b[0] |= bit;
      if (even ? next.left : true) b[1] |= bit;
      if (at.right) b[2] |= bit;
      weights[128 * c + k] = (b[0] & bit) != 0;
      weights[128 * c + 64 + k] = !even && at.right;
      const int parity = even ? 0 : 1;
      const int64_t i = k / 2;
      if (even && F.W % 2 == 0) {
        row_words[64 * c + i] = at.up ? 0xffff : 0;
        row_words[64 * c + 32 + i] = at.down ? 0xffff : 0;
      }
      if (at.up) l[2 * parity] |= uint32_t{1} << i;
      if (at.down) l[2 * parity + 1] |= uint32_t{1} << i;
      const uint16_t* src = R.lanes.data() + int64_t{R.group_class[static_cast<size_t>(row)]} * 48;
      for (int f = 0; f < 3; ++f) fields[192 * c + 96 * parity + 32 * f + i] = src[16 * f + col];
    }
  }
}

// Everything flat3x3_build reads: the plan's arithmetic and geometry (its
// axes' tap counts included) and the tensors' strides.
struct Flat3x3Key {
  DType dtype = DType::u8;
  QAvgArith arith = QAvgArith::float_mean;
  AvgDivisor divisor = AvgDivisor::valid_count;
  Rounding rounding = Rounding::half_to_even;
  const char* unsupported = nullptr;
  bool bm_shift = false, exact_float_sum = false, vector_tail = false;
  int32_t lo = 0, hi = 0, x_zp = 0, y_zp = 0, sum_m = 0;
  float x_scale = 0, y_scale = 0;
  int64_t dims[5] = {};            // N, C, H, W, taps
  int64_t axes[2][4] = {};         // out, kernel, stride, start of h and w
  int64_t strides[8] = {};         // x's, then y's
  std::vector<int32_t> counts[4];  // h.valid, h.clipped, w.valid, w.clipped

  static Flat3x3Key of(const QAvgPoolProblem& p) {
    const QAvgPlan& P = p.plan;
    Flat3x3Key k;
    k.dtype = P.dtype, k.arith = P.arith, k.divisor = P.divisor, k.rounding = P.rounding;
    k.unsupported = P.unsupported, k.bm_shift = P.bm_shift;
    k.exact_float_sum = P.exact_float_sum, k.vector_tail = P.vector_tail;
    k.lo = P.lo, k.hi = P.hi, k.x_zp = P.x_zp, k.y_zp = P.y_zp, k.sum_m = P.sum_m;
    k.x_scale = P.x_scale, k.y_scale = P.y_scale;
    k.fill_numbers(p);
    k.counts[0] = P.h.valid, k.counts[1] = P.h.clipped;
    k.counts[2] = P.w.valid, k.counts[3] = P.w.clipped;
    return k;
  }
  void fill_numbers(const QAvgPoolProblem& p) {
    const QAvgPlan& P = p.plan;
    const int64_t d[5] = {P.N, P.C, P.H, P.W, P.taps};
    std::copy(d, d + 5, dims);
    const QAvgAxis* ax[2] = {&P.h, &P.w};
    for (int a = 0; a < 2; ++a) {
      axes[a][0] = ax[a]->out, axes[a][1] = ax[a]->kernel;
      axes[a][2] = ax[a]->stride, axes[a][3] = ax[a]->start;
    }
    for (int i = 0; i < 4; ++i) strides[i] = p.x.stride(i), strides[4 + i] = p.y.stride(i);
  }
  // Compares without building a key (no allocation on a hit).
  bool same(const QAvgPoolProblem& p) const {
    const QAvgPlan& P = p.plan;
    Flat3x3Key n;
    n.fill_numbers(p);
    return dtype == P.dtype && arith == P.arith && divisor == P.divisor && rounding == P.rounding &&
           unsupported == P.unsupported && bm_shift == P.bm_shift &&
           exact_float_sum == P.exact_float_sum && vector_tail == P.vector_tail && lo == P.lo &&
           hi == P.hi && x_zp == P.x_zp && y_zp == P.y_zp && sum_m == P.sum_m &&
           std::bit_cast<uint32_t>(x_scale) == std::bit_cast<uint32_t>(P.x_scale) &&
           std::bit_cast<uint32_t>(y_scale) == std::bit_cast<uint32_t>(P.y_scale) &&
           std::equal(dims, dims + 5, n.dims) &&
           std::equal(&axes[0][0], &axes[0][0] + 8, &n.axes[0][0]) &&
           std::equal(strides, strides + 8, n.strides) && counts[0] == P.h.valid &&
           counts[1] == P.h.clipped && counts[2] == P.w.valid && counts[3] == P.w.clipped;
  }
};

}  // namespace

const char* flat3x3_build(const QAvgPoolProblem& p, Flat3x3Plan* F) {
  const QAvgPlan& P = p.plan;
  // rows16's final step, one output row per class (16 lanes, lane j = column j).
  Rows16Plan R;
  if (const char* why = rows16_build(p, 1, false, F ? &R : nullptr)) return why;
  if (P.h.kernel != 3 || P.w.kernel != 3 || P.h.stride != 1 || P.w.stride != 1)
    return "not a 3x3 window with stride 1";
  if (P.h.start != -1 || P.w.start != -1 || P.h.out != P.H || P.w.out != P.W)
    return "not one pixel of padding on every side";
  const int64_t N = P.N, C = P.C, H = P.H, W = P.W;
  if (!dense_nchw(p.x, C, H, W, N) || !dense_nchw(p.y, C, H, W, N))
    return "x or y not a dense NCHW tensor";
  const int64_t plane = H * W, period = std::lcm(plane, int64_t{64});
  if (period > 262144)
    return "a period of more than 262144 positions (odd planes of more than 4096)";
  // The tables cost about as much as the flat stream saves over rows16 on
  // some 90 planes of 14x14 (measured with per-call tables; session 11).
  if (N * C < 64) return "fewer than 64 planes (the per-call tables would cost more)";
  if (!F) return nullptr;
  F->W = W;
  F->cpp = period / 64;
  F->positions = N * C * plane;
  F->any_even = R.any_even;
  F->clamp_free = R.clamp_free;
  F->sh = R.sh;
  F->K = R.K;
  fill_chunks(*F, R, H);
  return nullptr;
}

std::shared_ptr<const Flat3x3Plan> flat3x3_plan(const QAvgPoolProblem& p, const char** why) {
  thread_local Flat3x3Key last_key;
  thread_local const char* last_why = nullptr;
  thread_local std::shared_ptr<const Flat3x3Plan> last;
  thread_local bool filled = false;
  if (!filled || !last_key.same(p)) {
    auto F = std::make_shared<Flat3x3Plan>();
    last_why = flat3x3_build(p, F.get());
    last = last_why ? nullptr : std::move(F);
    last_key = Flat3x3Key::of(p);
    filled = true;
  }
  *why = last_why;
  return last;
}

}  // namespace npukit::cpu
