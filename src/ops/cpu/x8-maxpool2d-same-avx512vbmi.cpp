// The AVX-512 VBMI group kernel of x8-maxpool2d-same (x8-maxpool2d-same.hpp),
// called by x8-maxpool2d-same-avx512 on VBMI hosts, for windows with one column tap above and one
// below within a vector (3-row windows on planes up to 64 wide, 14x14 k3s1p1
// among them): the row maxima of the previous, current and next vectors stay
// in registers and each column tap is one two-register byte permute
// (vpermt2b), so the column pass needs no scratch stores and reloads.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "last_plan.hpp"
#include "x8-maxpool2d-same.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512vbmi-begin.inc"

namespace npukit::cpu {
namespace {

#include "ops/cpu/x8-maxpool2d-same-avx512-lanes.inc"

// The group kernel of x8-maxpool2d-same.inc with the column pass in
// registers: col_taps = {-up, +down}, 0 < up, down <= 64.
template <class T, int NR>
void group_vbmi(const X8SamePlan& pl, const Avx512Lanes::M* masks, const uint8_t* x, uint8_t* y,
                int64_t n, uint8_t*) {
  using L = Avx512Lanes;
  const int64_t Lv = pl.L, vectors = (n + 63) / 64;
  const int64_t nr = NR >= 0 ? NR : static_cast<int64_t>(pl.row_taps.size());
  int64_t rt[NR > 0 ? NR : 1];
  const int64_t* rtp = pl.row_taps.data();
  if constexpr (NR > 0) {
    for (int t = 0; t < NR; ++t) rt[t] = rtp[t];
    rtp = rt;
  }
  const int64_t up = -pl.col_taps[0], down = pl.col_taps[1];
  // Lane i of the tap above: byte 64 - up + i of (prev, cur); below: byte
  // down + i of (cur, next).
  alignas(64) uint8_t above[64], below[64];
  for (int i = 0; i < 64; ++i) {
    above[i] = static_cast<uint8_t>(64 - up + i);
    below[i] = static_cast<uint8_t>(down + i);
  }
  const __m512i idx_above = _mm512_load_si512(above), idx_below = _mm512_load_si512(below);
  const L::M* m_above = masks + nr * Lv;
  const L::M* m_below = m_above + Lv;
  const L::M* m_edge = m_below + Lv;
  const bool zero_pad = pl.zero_pad;
  auto row = [&](int64_t j) {
    const uint8_t* p = x + 64 * j;
    __m512i acc = L::load(p);
    for (int64_t t = 0; t < nr; ++t)
      acc = L::template max_masked<T>(acc, masks[t * Lv + j], L::load(p + rtp[t]));
    return acc;
  };
  // Vectors before the first and after the last feed only lanes whose tap
  // is off the plane (masked out): zeros.
  __m512i prev = _mm512_setzero_si512(), cur = row(0);
  for (int64_t j = 0; j < vectors; ++j) {
    const __m512i next = j + 1 < vectors ? row(j + 1) : _mm512_setzero_si512();
    __m512i acc =
        L::template max_masked<T>(cur, m_above[j], _mm512_permutex2var_epi8(prev, idx_above, cur));
    acc =
        L::template max_masked<T>(acc, m_below[j], _mm512_permutex2var_epi8(cur, idx_below, next));
    if (zero_pad) acc = L::template max_masked<T>(acc, m_edge[j], _mm512_setzero_si512());
    if (64 * (j + 1) <= n)
      L::store(y + 64 * j, acc);
    else
      L::store_part(y + 64 * j, acc, n - 64 * j);
    prev = cur;
    cur = next;
  }
}

}  // namespace

X8SameGroup512 x8_same_group_vbmi(bool is_signed, bool two_row_taps) {
  if (is_signed) return two_row_taps ? &group_vbmi<int8_t, 2> : &group_vbmi<int8_t, -1>;
  return two_row_taps ? &group_vbmi<uint8_t, 2> : &group_vbmi<uint8_t, -1>;
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
