// fp32 pooling of NCHW planes with K x K windows at stride 2 (K = 2, 3: the
// k3s2p1 and k2s2 pools of CNN stems and downsampling), whole planes per
// task. Lanes are consecutive outputs of a row; each window row is loaded
// once per vector (two loads, an even/odd deinterleave, and for K = 3 the
// third tap as the even lanes shifted by one with the next even element
// broadcast in: no third and fourth load; when the columns start at an odd
// element the loads start one further on and tap 0 is the shifted one, so
// that they stay on cache-line boundaries), and with K = 3 the window row two
// output rows share is loaded and deinterleaved once. Per output the taps,
// their order and every operation are the reference's (src/ops/reference/
// pool2d.cpp) for the semantics accepted below, except that a division by
// 2^k is a multiply by 2^-k (the same bits); the left border output whose
// tap 0 is padding rides in lane 0 of the first vector, other border outputs
// run one at a time. Large calls prefetch ahead (kS2StreamBytes below).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "pool2d_plan.hpp"

namespace npukit::cpu {

// The accumulations this kernel runs (the others decline).
enum class S2Acc : uint8_t {
  max_nchwc,  // MLAS's NCHWc max: `m > v ? m : v` from -FLT_MAX, input taps only
  max,        // PoolLoop::taps max: `v > m ? v : m` (+ NaN propagation), padding = pad value
  sum,        // sequential sum from +0 of the input taps, then one division
};

// Per call: the window rows of every output row, the vector columns and the
// border outputs that run alone.
struct S2Plan {
  int64_t K = 0, OH = 0, OW = 0;
  S2Acc acc = S2Acc::sum;
  bool propagate = false;     // S2Acc::max with MaxNaN::propagate
  bool zero_div_nan = false;  // MLAS's NCHWc average: 0/0 when no tap counts
  float start = 0, pad = 0;
  AvgDivisor div_kind = AvgDivisor::kernel_area;  // border outputs' divisor
  AxisTaps h, w;
  std::vector<Tap> row_kind;       // [oh][kh] (input, padding or outside)
  std::vector<int64_t> row_index;  // [oh][kh] input row when input, else 0
  // Output rows [ia, ib): window rows 2*(oh - ia) + first_row + kh, all input.
  int64_t ia = 0, ib = 0, first_row = 0;
  // Vector columns: outputs [c0, c1) read columns 2*(ow - c0) + first_col + kw;
  // with `lead`, output c0's tap 0 is padding (its element is never read).
  int64_t c0 = 0, c1 = 0, first_col = 0;
  bool lead = false;
  std::vector<int64_t> border_ow;  // outputs outside [c0, c1), one at a time
  // Divisors per output row of the vector columns (lane 0 of the first
  // vector: lead_div), 0 for max.
  std::vector<int64_t> div, lead_div;
  // Bytes ahead of each interior output row's window rows whose cache lines
  // the kernel asks for (0: none; see f32_s2_prefetch_ahead).
  int64_t prefetch_ahead = 0;
};

// Calls moving at least kS2StreamBytes (input + output) do not stay in a
// 32 MB last-level cache between calls and stream from memory, where the
// hardware prefetchers fell behind the plane-by-plane walk: asking for the
// lines kS2PrefetchAhead bytes ahead took 8x256x56x56 k2s2 from 820 to 480-530
// us on Zen 5 (a plain read of the input and write of the output: 440-460).
// On cache-resident calls the same requests cost 10-20% (1 to 5 images of
// 256x56x56: 20 MB and less), so they are made only above the threshold.
constexpr int64_t kS2StreamBytes = int64_t{24} << 20;
constexpr int64_t kS2PrefetchAhead = int64_t{16} << 10;
int64_t f32_s2_prefetch_ahead(const Pool2dProblem& pr);

// Why the kernel with `lanes` outputs per vector does not take `pr`, or nullptr.
const char* f32_s2_declines(const Pool2dProblem& pr, int64_t lanes);
// The 16-lane kernel also leaves 2x2 windows to the 8-lane one: with no third
// tap to save, 8 lanes and 4 vectors in flight were 5-20% faster on Zen 5
// (1x256x56x56 and 8x256x56x56 k2s2, same process, alternated calls).
const char* f32_s2_avx512_declines(const Pool2dProblem& pr);
S2Plan make_s2_plan(const Pool2dProblem& pr);
// make_s2_plan(pr), built once per geometry, semantics and thread (each thread
// keeps its last plan, as shared_pool2d_plan does): building it took 0.5-0.9
// us per call on 1x128x56x56 k2s2 and 1x64x112x112 k3s2p1, 2-3% of the call.
std::shared_ptr<const S2Plan> shared_s2_plan(const Pool2dProblem& pr);

#if defined(__x86_64__)
void pool2d_f32_s2_avx512(const Pool2dProblem& pr);
void pool2d_f32_s2_avx2(const Pool2dProblem& pr);
#endif

}  // namespace npukit::cpu
