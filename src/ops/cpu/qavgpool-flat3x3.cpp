// Plan of the flat k3s1p1 kernel (qavgpool-flat3x3.hpp): the call's
// conditions, and the per-position masks and final-step fields laid out by
// chunk of the flat stream.
#include "ops/cpu/qavgpool-flat3x3.hpp"

#include <algorithm>
#include <numeric>

#include "ops/cpu/qavgpool-rows16.hpp"

namespace npukit::cpu {

namespace {

// x (or y) is N x C x H x W with no gap between rows, planes and images.
bool dense_nchw(const TensorView& t, int64_t C, int64_t H, int64_t W, int64_t N) {
  return t.stride(3) == 1 && t.stride(2) == W && t.stride(1) == H * W &&
         (N == 1 || t.stride(0) == C * H * W);
}

// Sets bits [a, b) of w.
void set_bits(uint64_t* w, int64_t a, int64_t b) {
  while (a < b) {
    const int64_t s = a % 64, n = std::min(b - a, 64 - s);
    w[a / 64] |= (n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1) << s;
    a += n;
  }
}

}  // namespace

const char* flat3x3_build(const QAvgPoolProblem& p, Flat3x3Plan* F) {
  const QAvgPlan& P = p.plan;
  // rows16's final step, one output row per class (16 lanes, lane j = column j).
  Rows16Plan R;
  if (const char* why = rows16_build(p, 1, false, &R)) return why;
  if (P.h.kernel != 3 || P.w.kernel != 3 || P.h.stride != 1 || P.w.stride != 1)
    return "not a 3x3 window with stride 1";
  if (P.h.start != -1 || P.w.start != -1 || P.h.out != P.H || P.w.out != P.W)
    return "not one pixel of padding on every side";
  const int64_t N = P.N, C = P.C, H = P.H, W = P.W;
  if (!dense_nchw(p.x, C, H, W, N) || !dense_nchw(p.y, C, H, W, N))
    return "x or y not a dense NCHW tensor";
  const int64_t plane = H * W, period = std::lcm(plane, int64_t{32});
  if (period / 32 > 8192) return "more than 8192 distinct chunks (odd planes of more than 8192)";
  // The tables cost about as much as the flat stream saves over rows16 on
  // some 90 planes of 14x14 (measured): fewer planes go to rows16.
  if (N * C < 64) return "fewer than 64 planes (the per-call tables would cost more)";
  if (!F) return nullptr;
  F->W = W;
  F->cpp = period / 32;
  F->positions = N * C * plane;
  F->any_even = R.any_even;
  F->sh = R.sh;
  F->K = R.K;
  // The fields of one plane, extended periodically by 32 positions so that
  // chunk c reads its lanes at plane offset (32 * c) % plane; the neighbour
  // flags of the same positions as bits (64 spare bits for the extraction).
  const int64_t ext = plane + 32;
  F->ext = ext;
  F->fields.assign(static_cast<size_t>(3 * ext), 0);
  const int64_t words = ext / 64 + 2;
  std::vector<uint64_t> bits(static_cast<size_t>(4 * words), 0);
  uint64_t *left = bits.data(), *right = left + words, *up = right + words, *down = up + words;
  // By row of the extended table (plane row oh): its fields are
  // its class's first W lanes; it has left and right neighbours but at its
  // ends, upper ones but on row 0, lower ones but on row H - 1.
  const uint16_t* lanes = R.lanes.data();
  for (int64_t oh = 0, q = 0; q < ext; oh = oh + 1 == H ? 0 : oh + 1, q += W) {
    const int64_t n = std::min(W, ext - q);
    const uint16_t* src = lanes + static_cast<int64_t>(R.group_class[static_cast<size_t>(oh)]) * 48;
    for (int k = 0; k < 3; ++k)
      std::copy(src + 16 * k, src + 16 * k + n, F->fields.data() + k * ext + q);
    set_bits(left, q + 1, q + n);
    set_bits(right, q, std::min(q + n, q + W - 1));
    if (oh > 0) set_bits(up, q, q + n);
    if (oh + 1 < H) set_bits(down, q, q + n);
  }
  F->masks.assign(static_cast<size_t>(4 * F->cpp), 0);
  for (int64_t c = 0, o = 0; c < F->cpp; ++c) {
    for (int k = 0; k < 4; ++k) {
      const uint64_t* b = bits.data() + k * words + o / 64;
      const uint64_t lo = b[0] >> (o % 64), hi = o % 64 ? b[1] << (64 - o % 64) : 0;
      F->masks[static_cast<size_t>(4 * c + k)] = static_cast<uint32_t>(lo | hi);
    }
    for (o += 32; o >= plane;) o -= plane;  // (32 * c) % plane without a division
  }
  return nullptr;
}

}  // namespace npukit::cpu
