// s8/u8 max pooling with stride 1 and an output the size of the input (the
// 1x512x14x14 k3s1p1 of issue #9), on NCHW planes small enough that per-row or
// per-plane set-up would dominate: several planes per pass.
//
// The window max is separable: max over the window = max over its rows of the
// max over its columns. A row pass writes, for every input position, the max
// of its row taps (a scratch buffer), then a column pass takes the max of the
// scratch at its column taps. Taps past the plane's edge are left out by
// 64-bit (AVX-512) or byte (AVX2) masks per vector; they are periodic in the
// flat position, so one table per call covers a "group" of vectors:
//   stream: x and y are whole NCHW tensors without gaps: all planes are one
//           byte stream, cut into groups of L vectors, L a multiple of
//           lcm(H*W, lanes) / lanes (a group holds whole planes);
//   planes: otherwise each plane is a group of ceil(H*W / lanes) vectors.
// Padding enters only through its value: every same-size window holds its
// centre, so with PadValue::neg_inf padding never wins; with PadValue::zero
// (s8) a window that touches padding takes max(window, 0).
// Integer max is exact in any order: only the set of taps and the padding
// value must match the reference's (ref::max_pool2d_int).
#pragma once

#include <cstdint>
#include <vector>

#include "pool2d_plan.hpp"

namespace npukit::cpu {

struct X8SamePlan {
  int64_t lanes = 0;               // bytes per vector of the ISA
  int64_t HW = 0;                  // plane size
  bool stream = false;             // groups cut from the whole tensor (else one plane each)
  int64_t L = 0;                   // vectors per group
  int64_t group_bytes = 0;         // stream: lanes * L; planes: H*W
  int64_t groups = 0;              // stream: ceil(total / group_bytes); planes: N*C
  int64_t total = 0;               // stream: bytes of the tensor
  std::vector<int64_t> row_taps;   // input offsets of the row taps other than the centre
  std::vector<int64_t> col_taps;   // scratch offsets of the column taps other than the centre
  int64_t row_lo = 0, row_hi = 0;  // min(0, row_taps), max(0, row_taps)
  int64_t col_lo = 0, col_hi = 0;  // the same for col_taps
  bool zero_pad = false;           // s8 with PadValue::zero: windows touching padding max with 0
  // Mask bits, lane-ordered over one group (L * lanes bits each, in 64-bit
  // words): row_taps.size() masks, then col_taps.size(), then (zero_pad) the
  // lanes whose window touches padding. Bit set = the tap is on the plane.
  int64_t words = 0;  // per mask
  std::vector<uint64_t> bits;
  int64_t masks() const {
    return static_cast<int64_t>(row_taps.size() + col_taps.size()) + (zero_pad ? 1 : 0);
  }
  const uint64_t* mask_bits(int64_t m) const { return bits.data() + m * words; }
};

// nullptr when the kernel takes the problem at `lanes` bytes per vector.
const char* x8_same_declines(const Pool2dProblem& pr, int64_t lanes);
X8SamePlan make_x8_same_plan(const Pool2dProblem& pr, int64_t lanes);

// The AVX-512 kernel's column pass in registers on hosts with AVX-512 VBMI
// (x8-maxpool2d-same-avx512vbmi.cpp): plans whose column taps are one above
// and one below within 64 bytes (3-row windows on planes up to 64 wide).
// allow(false) makes the AVX-512 kernel use its plain path (tests run both).
bool x8_same_vbmi_plan(const X8SamePlan& pl);
bool x8_same_vbmi_usable();  // the host has VBMI and it is allowed
void x8_same_allow_vbmi(bool allow);
void max_pool2d_x8_same_portable(const Pool2dProblem& pr);
#if defined(__x86_64__)
// Group kernels of x8-maxpool2d-same.inc (masks: one 64-bit word per vector).
using X8SameGroup512 = void (*)(const X8SamePlan&, const unsigned long long*, const uint8_t*,
                                uint8_t*, int64_t, uint8_t*);
X8SameGroup512 x8_same_group_vbmi(bool is_signed, bool two_row_taps);
void max_pool2d_x8_same_avx2(const Pool2dProblem& pr);
void max_pool2d_x8_same_avx512(const Pool2dProblem& pr);
#endif

}  // namespace npukit::cpu
