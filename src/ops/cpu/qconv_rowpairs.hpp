// Few-input-channel integer convolutions (a first layer's 1-2 channels) in
// the channels-last form with a window row's taps as int16 pairs (AVX2) or
// u8 quads (VNNI): in a padded channels-last copy of x' a window row's C * KW
// codes (dilation 1 across) are contiguous, so one broadcast dword holds two
// taps (or four), and a row of a 3x3 window on one channel is 2 pairs (1
// quad), not 3 taps each padded to a channel quad (x8-qconv-gemm-nhwc-*: one
// byte of each quad used, 16 lanes computed for 8 output channels). Output
// channels in the lanes, 8 per vector; sums exact in int32 (vpmaddwd of u8 x'
// and s8 w' as int16, or vpdpbusd of u8 x' and s8 w').
#pragma once

#include <cstdint>
#include <vector>

#include "ops/cpu/qconv_problem.hpp"

namespace npukit::qconv {

inline constexpr int64_t kRowPairsLanes = 8;     // output channels per group (one AVX2 vector)
inline constexpr int64_t kRowPairsMaxBytes = 8;  // C * KW at most: 4 pairs per window row

// What one call needs besides x and y: w' per 8-channel group in units of
// `unit` codes (2: int16 pairs for vpmaddwd, 4: s8 quads for vpdpbusd; 32
// bytes per unit and group either way), [group][kh][unit][8 lanes][unit
// codes] (0 past C * KW and OC), and per channel (padded to whole groups)
// bias - x_zp' * sum(w') and the multiplier.
struct RowPairsPlan {
  int64_t C = 0, KH = 0, KW = 0, OC = 0, groups = 0, unit = 2, row_units = 0;
  int32_t x_zp = 0;          // x_zp' (the padding's code)
  uint8_t flip = 0;          // x' = x ^ flip (0x80 for s8)
  std::vector<int16_t> w16;  // unit 2
  std::vector<int8_t> w8;    // unit 4
  std::vector<int32_t> offset;
  std::vector<float> multiplier;
};

// Why the row-pairs kernels decline p (null: they accept it).
const char* rowpairs_declines(const QConvProblem& p);
RowPairsPlan rowpairs_plan(const QConvProblem& p, int64_t unit);
void run_rowpairs_avx2(const QConvProblem& p);        // declared for every build
void run_rowquads_avx512vnni(const QConvProblem& p);  // declared for every build

}  // namespace npukit::qconv
