// QLinearAveragePool / bm_pool_quantized average with 16-bit window sums and
// the final step in registers (x8_qavgpool_u16_{nchw,nhwc}_avx512): window
// sums of 32-64 outputs stay in one register from the first tap to the stored
// codes, with no int32 sum buffer or per-block tail call in between. The final
// step per lane is either the vector tail of x8-qavgpool-body.inc operation
// for operation, or an integer-exact form of it whose proof is at final16 and
// round_rule; the codes are the reference's bit for bit. qavg_u16_declines
// names the cases they cover.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool-u16-final.hpp"
#include "ops/cpu/qavgpool-u16-row-classes.hpp"
#include "ops/cpu/qavgpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu {
namespace {

// Per-call constants of the final step, broadcast once.
struct Final : U16Final {
  __m512i lo, hi, y_zp, x_zp, taps, sum_m, bias;
  __m512i lo16, hi16;  // idiv32's clamp (int_float_mean, int_mean)
  __m512 flo, fhi, zpf, div_area, rcp, ys, pow2, ratio, rlo, rhi;
  __m512 below;  // float_checked: the plan's fmean_check_below
};

Final make_final(const QAvgPlan& P) {
  Final F;
  static_cast<U16Final&>(F) = u16_final(P);
  const auto taps = static_cast<int32_t>(P.taps);
  F.lo = _mm512_set1_epi32(F.lo_code);
  F.hi = _mm512_set1_epi32(P.hi);
  F.lo16 = _mm512_set1_epi16(static_cast<short>(P.lo));
  F.hi16 = _mm512_set1_epi16(static_cast<short>(P.hi));
  F.y_zp = _mm512_set1_epi32(P.y_zp);
  F.x_zp = _mm512_set1_epi32(P.x_zp);
  F.taps = _mm512_set1_epi32(taps);
  F.sum_m = _mm512_set1_epi32(P.sum_m);
  F.bias = _mm512_set1_epi32(F.s8 ? 128 : 0);
  const auto flo = static_cast<float>(P.lo), fhi = static_cast<float>(P.hi);
  const auto zpf = static_cast<float>(P.y_zp);
  F.flo = _mm512_set1_ps(flo);
  F.fhi = _mm512_set1_ps(fhi);
  F.zpf = _mm512_set1_ps(zpf);
  F.rlo = _mm512_set1_ps(flo - zpf);  // exact: small integers
  F.rhi = _mm512_set1_ps(fhi - zpf);
  F.div_area = _mm512_set1_ps(static_cast<float>(taps));
  F.rcp = _mm512_set1_ps(1.0f / static_cast<float>(taps));  // used only when exact (pow2)
  F.ys = _mm512_set1_ps(P.y_scale);
  F.pow2 = _mm512_set1_ps(P.sum_pow2);
  F.ratio = _mm512_set1_ps(P.scale_ratio);
  F.below = _mm512_set1_ps(P.fmean_check_below);
  return F;
}

// Round half to even of values already clamped to the code range.
inline __m512i round_even(__m512 v) {
  return _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// x = fl(t / d) rounded to an integer under rule R, for integers t, d with
// 1 <= d <= 257 and |t / d| <= 510. Exact: t/d is either a multiple of 1/2
// (then x is exact) or at least 1/(2d) >= 1/514 from every multiple of 1/2,
// while x and x +- 0.5 err by at most 2^-15 (|x| < 2^9): so x lies on the
// same side of every integer and half-integer as t/d, and each rule's
// rounding of x is that of t/d.
inline __m512i round_rule(Rounding R, __m512 x) {
  const __m512 half = _mm512_set1_ps(0.5f);
  constexpr int kFloor = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
  constexpr int kCeil = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;
  switch (R) {
    case Rounding::half_to_even:
      return round_even(x);
    case Rounding::toward_zero:
      return _mm512_cvttps_epi32(x);
    case Rounding::floor:
      return _mm512_cvt_roundps_epi32(x, kFloor);
    case Rounding::ceil:
      return _mm512_cvt_roundps_epi32(x, kCeil);
    case Rounding::half_up:
      return _mm512_cvt_roundps_epi32(_mm512_add_ps(x, half), kFloor);
    case Rounding::half_down:
      return _mm512_cvt_roundps_epi32(_mm512_sub_ps(x, half), kCeil);
    case Rounding::half_away_from_zero: {  // trunc(x + copysign(0.5, x))
      const __m512 sign = _mm512_and_ps(x, _mm512_set1_ps(-0.0f));
      return _mm512_cvttps_epi32(_mm512_add_ps(x, _mm512_or_ps(half, sign)));
    }
    case Rounding::half_toward_zero: {  // x >= 0: ceil(x - 0.5), else floor(x + 0.5)
      const __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
      const __m512i up = _mm512_cvt_roundps_epi32(_mm512_sub_ps(x, half), kCeil);
      const __m512i down = _mm512_cvt_roundps_epi32(_mm512_add_ps(x, half), kFloor);
      return _mm512_mask_mov_epi32(up, neg, down);
    }
  }
  return round_even(x);
}

// Codes of 16 outputs from s, the biased code sums plus the lane's integer
// offset (lane_consts: the bias and zero point terms), and r, the lane's
// divisor or multiplier. Forms:
// - float_mean, general: the vector tail of x8-qavgpool-body.inc per lane
//   (the reference's fp32 operations; s = sum - x_zp*valid, r = valid).
// - int_float_mean (x_scale == y_scale == 2^j, |j| <= 60): the reference's
//   v is fl(fl(t'/d) + y_zp) with t' = sum - x_zp*valid (the scalings by 2^j
//   are exact), rounded half to even. |t'| <= 255*valid <= 255*d bounds
//   |t'/d| by 255: fl errs by at most 2^-17 and the sum (magnitude <= 510) by
//   at most 2^-15, less than 1/(2d) >= 1/514, the distance from t'/d to any
//   half-integer it is not equal to. So the code is the round-half-even of
//   (t' + y_zp*d) / d (s here, r = d), clamped: round_rule.
// - int_mean: round(sum / d) under the plan's rule (s = sum, r = d; r = 0:
//   empty window, y_zp), round_rule; requant: the reference's fp32 product
//   (s = sum - x_zp*valid, r = ratio / d); bm_shift: its integer shift.
// - float_checked: v' = fl(fl(D * c) + y_zp) (s = D = sum - x_zp*valid, r =
//   c, the divisor's multiplier) rounded, when |v' - rint(v')| is below the
//   plan's bound; the other lanes are set in *redo (their code here is
//   rint(v') clamped, which the caller replaces: qavgpool-fmean-check.cpp).
// Clamping before rounding equals the reference's round-then-clamp (integer
// bounds, monotone rounding).
inline __m512i final16(const Final& F, __m512i s, __m512 r, __mmask16* redo = nullptr) {
  switch (F.kind) {
    case Final::float_checked: {
      const __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(s), r), F.zpf);
      const __m512 rv = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __m512 dist = _mm512_abs_ps(_mm512_sub_ps(v, rv));
      *redo = _mm512_cmp_ps_mask(dist, F.below, _CMP_NLT_UQ);
      return _mm512_min_epi32(_mm512_max_epi32(_mm512_cvtps_epi32(rv), F.lo), F.hi);
    }
    case Final::bm_shift: {
      // (s + 2^(r-1)) >> r as ((s >> (r-1)) + 1) >> 1 (no int32 overflow).
      __m512i v = s;
      if (F.rshift > 0)
        v = _mm512_srai_epi32(_mm512_add_epi32(_mm512_sra_epi32(s, _mm_cvtsi32_si128(F.rshift - 1)),
                                               _mm512_set1_epi32(1)),
                              1);
      return _mm512_min_epi32(_mm512_max_epi32(v, F.lo), F.hi);
    }
    case Final::int_mean: {
      const __mmask16 empty = _mm512_cmp_ps_mask(r, _mm512_setzero_ps(), _CMP_EQ_OQ);
      const __m512 d = _mm512_mask_mov_ps(r, empty, _mm512_set1_ps(1.0f));
      const __m512i q = round_rule(F.rounding, _mm512_div_ps(_mm512_cvtepi32_ps(s), d));
      return _mm512_mask_mov_epi32(_mm512_min_epi32(_mm512_max_epi32(q, F.lo), F.hi), empty,
                                   F.y_zp);
    }
    case Final::int_float_mean: {
      const __m512i q = round_even(_mm512_div_ps(_mm512_cvtepi32_ps(s), r));
      return _mm512_min_epi32(_mm512_max_epi32(q, F.lo), F.hi);
    }
    case Final::requant: {
      const __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(s), r);
      if (F.zp_inside)
        return round_even(_mm512_min_ps(_mm512_max_ps(_mm512_add_ps(v, F.zpf), F.flo), F.fhi));
      return _mm512_add_epi32(round_even(_mm512_min_ps(_mm512_max_ps(v, F.rlo), F.rhi)), F.y_zp);
    }
    case Final::float_mean:
      break;
  }
  // exact_float_sum: the reference's fp32 sum is float(sum_m * acc) * 2^k.
  const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_mullo_epi32(F.sum_m, s)), F.pow2);
  __m512 v;
  if (F.area) {
    if (F.pow2_rcp)
      v = _mm512_mul_ps(f, F.rcp);  // x / 2^j == x * 2^-j exactly
    else if (F.ys_one)
      v = _mm512_div_ps(f, F.div_area);
    else
      v = _mm512_div_ps(_mm512_div_ps(f, F.div_area), F.ys);
  } else {
    v = _mm512_div_ps(_mm512_div_ps(f, r), F.ys);
  }
  v = _mm512_add_ps(v, F.zpf);
  return round_even(_mm512_min_ps(_mm512_max_ps(v, F.flo), F.fhi));
}

// Codes of the 16 outputs whose biased 16-bit sums are in `half` (redo:
// final16's).
inline __m128i codes16(const Final& F, __m256i half, __m512i offset, __m512 r,
                       __mmask16* redo = nullptr) {
  const __m512i s = _mm512_add_epi32(_mm512_maskz_cvtepu16_epi32(0xffff, half), offset);
  return _mm512_cvtepi32_epi8(final16(F, s, r, redo));
}

// Stores the codes of outputs [0, n) (n <= 32) whose biased 16-bit sums are in
// sum16, with lane constants from the tables off/r (Uniform: u in every lane).
// Returns the stored lanes whose code the caller must redo (float_checked).
template <bool Uniform>
inline __mmask32 store32(const Final& F, __m512i sum16, const int32_t* off, const float* r,
                         LaneConsts u, int64_t n, void* y) {
  __mmask16 redo_lo = 0, redo_hi = 0;
  // maskz forms: GCC 12 warns about the undefined operand of the plain ones.
  const __m256i lo_half = _mm512_maskz_extracti64x4_epi64(0xff, sum16, 0);
  const __m512i uoff = _mm512_set1_epi32(u.offset);
  const __m512 ur = _mm512_set1_ps(u.r);
  const __m128i lo =
      Uniform ? codes16(F, lo_half, uoff, ur, &redo_lo)
              : codes16(F, lo_half, _mm512_loadu_si512(off), _mm512_loadu_ps(r), &redo_lo);
  if (n <= 16) {
    const auto m = n >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << n) - 1);
    _mm_mask_storeu_epi8(y, m, lo);
    return redo_lo & m;
  }
  const __m256i hi_half = _mm512_maskz_extracti64x4_epi64(0xff, sum16, 1);
  const __m128i hi = Uniform ? codes16(F, hi_half, uoff, ur, &redo_hi)
                             : codes16(F, hi_half, _mm512_loadu_si512(off + 16),
                                       _mm512_loadu_ps(r + 16), &redo_hi);
  const __m256i both = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
  const __mmask32 m = n >= 32 ? ~__mmask32(0) : (__mmask32(1) << n) - 1;
  _mm256_mask_storeu_epi8(y, m, both);
  return (redo_lo | (__mmask32{redo_hi} << 16)) & m;
}

// The reference's codes of the outputs (oh, o + j) of a plane for the set
// bits j of redo (float_checked lanes the check left undecided: rare).
template <class T>
__attribute__((noinline)) void redo_lanes(const Final& F, __mmask32 redo, const T* plane,
                                          int64_t sH, int64_t sW, int64_t oh, int64_t o, T* y,
                                          int64_t ysW) {
  for (uint32_t m = redo; m != 0; m &= m - 1) {
    const int j = __builtin_ctz(m);
    y[j * ysW] = static_cast<T>(qavg_fmean_redo(*F.plan, plane, sH, sW, oh, o + j));
  }
}

// Integer final step in 16-bit lanes (int_float_mean and int_mean, the
// scale-1 ONNX Runtime, TFLite and MiCo rows): the code is R(t / d) for the
// integer t = s + offset (final16's forms), clamped. With K even and
// K*d >= -offset, n = t + K*d is in [0, 2^15), R(t / d) = R'(n / d) - K (every
// rule is invariant under adding an even integer; the sign-dependent rules
// take the sign of t, i.e. n < K*d), and floor(n / d) is the high half of
// n*m shifted right by sh, m = ceil(2^(16+sh) / d): with e = m*d - 2^(16+sh),
// n*m / 2^(16+sh) = n/d + n*e / (d*2^(16+sh)) and n_max*e < 2^(16+sh) keeps
// that below the next multiple of 1/d (idiv_lane checks it per lane). d = 1
// lanes take q = n. Whole 32-bit float conversions and a division per 16
// outputs become a dozen 32-lane integer operations.
struct IdivLane {
  uint16_t a = 0, m = 0, sh = 0, d = 1, k = 0, kd = 0;
};

// False when a lane does not fit (then the call keeps final16).
bool idiv_lane(int32_t offset, int32_t d, int32_t valid, IdivLane& L) {
  if (d < 1 || valid < 0) return false;
  int32_t k = offset < 0 ? (-offset + d - 1) / d : 0;
  k += k & 1;
  const int64_t a = int64_t{offset} + int64_t{k} * d, n_max = 255 * int64_t{valid} + a;
  if (a < 0 || n_max > 32767 || int64_t{k} * d > 32767) return false;
  L.a = static_cast<uint16_t>(a);
  L.d = static_cast<uint16_t>(d);
  L.k = static_cast<uint16_t>(k);
  L.kd = static_cast<uint16_t>(k * d);
  return d == 1 || magic16(d, n_max, L.m, L.sh);  // d == 1: q = n (the m = 0 lanes)
}

// Codes of 32 outputs from their biased 16-bit sums s and 32 lanes of each
// IdivLane field (tables a, m, sh, d, k, kd at t, t + 32, ..., t + 160).
inline __m256i idiv32(const Final& F, __m512i s, const uint16_t* t) {
  const __m512i a = _mm512_loadu_si512(t), m = _mm512_loadu_si512(t + 32),
                sh = _mm512_loadu_si512(t + 64), d = _mm512_loadu_si512(t + 96),
                k = _mm512_loadu_si512(t + 128), kd = _mm512_loadu_si512(t + 160);
  const __m512i n = _mm512_add_epi16(s, a);
  const __mmask32 one = _mm512_cmpeq_epi16_mask(m, _mm512_setzero_si512());
  __m512i q = _mm512_mask_mov_epi16(_mm512_srlv_epi16(_mm512_mulhi_epu16(n, m), sh), one, n);
  const __m512i r = _mm512_sub_epi16(n, _mm512_mullo_epi16(q, d)), r2 = _mm512_add_epi16(r, r);
  const __mmask32 gt = _mm512_cmpgt_epu16_mask(r2, d), eq = _mm512_cmpeq_epi16_mask(r2, d);
  const __mmask32 neg = _mm512_cmplt_epu16_mask(n, kd);
  __mmask32 up = 0;
  switch (F.kind == Final::int_float_mean ? Rounding::half_to_even : F.rounding) {
    case Rounding::half_to_even:
      up = gt | (eq & _mm512_test_epi16_mask(q, _mm512_set1_epi16(1)));
      break;
    case Rounding::floor:
      break;
    case Rounding::ceil:
      up = _mm512_test_epi16_mask(r, r);
      break;
    case Rounding::toward_zero:
      up = neg & _mm512_test_epi16_mask(r, r);
      break;
    case Rounding::half_up:
      up = gt | eq;
      break;
    case Rounding::half_down:
      up = gt;
      break;
    case Rounding::half_away_from_zero:
      up = gt | (eq & ~neg);
      break;
    case Rounding::half_toward_zero:
      up = gt | (eq & neg);
      break;
  }
  q = _mm512_sub_epi16(_mm512_mask_add_epi16(q, up, q, _mm512_set1_epi16(1)), k);
  return _mm512_maskz_cvtepi16_epi8(~__mmask32(0),
                                    _mm512_min_epi16(_mm512_max_epi16(q, F.lo16), F.hi16));
}

// idiv32 for a row class whose lanes share one divisor d and one K, rounding
// half to even: with h = floor(d/2) folded into the lane's offset (ah = a + h,
// a = offset + K*d as in idiv_lane, from the table ah), q1 =
// floor((n + h) / d) rounds half up and q2 = floor((n + h - 1) / d) half down;
// they differ only on ties (d even), where q1 = q2 + 1 and the even one of
// the two is q2 + ((q1 - q2) & q2). d odd has no ties (q1 alone). The magic
// (m, sh) holds for numerators up to n_max + h (idiv_uniform checks it).
// pow2: d = 2^sh, floor(n / d) is n >> sh (no multiply).
struct IdivUniformRegs {
  bool odd, pow2;
  __m512i m, k;
  __m128i sh;
  explicit IdivUniformRegs(const IdivUniform& U)
      : odd(U.odd),
        pow2(U.pow2),
        m(_mm512_set1_epi16(U.m)),
        k(_mm512_set1_epi16(U.k)),
        sh(_mm_cvtsi32_si128(U.sh)) {}
};

inline __m256i idiv32_uniform(const Final& F, const IdivUniformRegs& U, __m512i s, __m512i ah) {
  const __m512i nh = _mm512_add_epi16(s, ah);
  __m512i q;
  if (U.pow2) {  // d >= 2, even
    q = _mm512_srl_epi16(nh, U.sh);
    const __m512i q2 = _mm512_srl_epi16(_mm512_sub_epi16(nh, _mm512_set1_epi16(1)), U.sh);
    q = _mm512_add_epi16(q2, _mm512_and_si512(_mm512_sub_epi16(q, q2), q2));
  } else {
    q = _mm512_srl_epi16(_mm512_mulhi_epu16(nh, U.m), U.sh);
    if (!U.odd) {
      const __m512i q2 = _mm512_srl_epi16(
          _mm512_mulhi_epu16(_mm512_sub_epi16(nh, _mm512_set1_epi16(1)), U.m), U.sh);
      q = _mm512_add_epi16(q2, _mm512_and_si512(_mm512_sub_epi16(q, q2), q2));
    }
  }
  q = _mm512_sub_epi16(q, U.k);
  return _mm512_maskz_cvtepi16_epi8(~__mmask32(0),
                                    _mm512_min_epi16(_mm512_max_epi16(q, F.lo16), F.hi16));
}

// idiv32_uniform with a divisor per lane (the valid-count divisors of
// border columns), rounding half to even: per lane ah = a + h, (m, sh) and e
// = 1 for even d, 0 for odd d (then q2 == q1: odd divisors have no ties);
// d == 1 lanes take m = 65535, sh = 0 and ah = a + 1: floor((n + 1) *
// 65535 / 65536) == n for n + 1 <= 65536. Tables field-major per block of 32
// lanes (ah, m, sh, e); K is the class's.
constexpr int64_t kLaneFields = 4;

bool lane_even(int32_t offset, int32_t d, int32_t valid, int32_t k, uint16_t* f) {
  if (d < 1) return false;
  const int32_t h = d / 2, ah = offset + k * d + (d == 1 ? 1 : h);
  if (ah < 0 || 255 * valid + ah > 32767) return false;
  uint16_t m = 65535, sh = 0;
  if (d > 1 && !magic16(d, 255 * valid + ah, m, sh)) return false;
  f[0] = static_cast<uint16_t>(ah), f[32] = m, f[64] = sh, f[96] = d % 2 == 0 ? 1 : 0;
  return true;
}

// The four fields as registers; dup: lanes 16-31 repeat lanes 0-15 (two
// narrow rows in one register).
template <bool Dup = false>
inline __m512i lane_field(const uint16_t* t) {
  const __m512i v = _mm512_loadu_si512(t);
  return Dup ? _mm512_shuffle_i64x2(v, v, 0x44) : v;
}

template <bool Dup = false>
inline __m256i idiv32_lanes(const Final& F, __m512i s, const uint16_t* t, __m512i k) {
  const __m512i nh = _mm512_add_epi16(s, lane_field<Dup>(t));
  const __m512i m = lane_field<Dup>(t + 32), sh = lane_field<Dup>(t + 64);
  const __m512i q1 = _mm512_srlv_epi16(_mm512_mulhi_epu16(nh, m), sh);
  const __m512i q2 =
      _mm512_srlv_epi16(_mm512_mulhi_epu16(_mm512_sub_epi16(nh, lane_field<Dup>(t + 96)), m), sh);
  __m512i q = _mm512_add_epi16(q2, _mm512_and_si512(_mm512_sub_epi16(q1, q2), q2));
  q = _mm512_sub_epi16(q, k);
  return _mm512_maskz_cvtepi16_epi8(~__mmask32(0),
                                    _mm512_min_epi16(_mm512_max_epi16(q, F.lo16), F.hi16));
}

// Splits `count` items into chunks for the threads (each output is computed
// by one thread in a fixed order, whatever the split).
template <class F>
void for_chunks(int64_t count, const F& body) {
  const int64_t parts = std::min<int64_t>(count, std::max(1, num_threads()) * int64_t{8});
  const int64_t size = (count + parts - 1) / parts;
  if (parts <= 1 || num_threads() <= 1) return body(int64_t{0}, count);
  parallel_for((count + size - 1) / size,
               [&](int64_t chunk) { body(chunk * size, std::min(count, (chunk + 1) * size)); });
}

// One load of a row block: 64 bytes from column a, keeping the columns in
// [0, W) (mask m; padding adds 0 to a sum). Built once per call: the masks
// depend on the output block and the tap only.
struct RowLoad {
  int64_t a = 0;
  __mmask64 m = 0;
};

RowLoad row_load(int64_t a, int64_t W) {
  const int64_t lo = std::max<int64_t>(0, -a), hi = std::min<int64_t>(64, W - a);
  RowLoad l;
  l.a = a;
  if (hi > lo) {
    const uint64_t upto = hi >= 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
    l.m = upto & ~((uint64_t{1} << lo) - 1);
  }
  return l;
}

// s8 codes biased by +128 into u8; masked-off bytes stay 0.
template <class T>
inline __m512i load_codes(const T* row, const RowLoad& l) {
  const __m512i v = _mm512_maskz_loadu_epi8(l.m, row + l.a);
  if constexpr (std::is_signed_v<T>)
    return _mm512_maskz_mov_epi8(l.m, _mm512_xor_si512(v, _mm512_set1_epi8(-128)));
  return v;
}

// Biased window sums of the 32 outputs of one row block in 16-bit lanes from
// its loads. Stride 2: load k holds the tap pairs (2k, 2k + 1) of every output
// (bytes 2j, 2j + 1 for output j), added by vpmaddubsw (codes times 1); an odd
// window's last tap is the even byte of its load (the low byte of each 16-bit
// lane). Stride 1: load k holds tap k of outputs j = byte j, widened.
template <class T>
inline __m512i row_sums(const T* row, const RowLoad* loads, int64_t sw, int64_t KW) {
  __m512i sum = _mm512_setzero_si512();
  if (sw == 2) {
    const __m512i ones = _mm512_set1_epi8(1);
    int64_t k = 0;
    for (; k + 2 <= KW; k += 2)
      sum = _mm512_add_epi16(sum, _mm512_maddubs_epi16(load_codes(row, loads[k / 2]), ones));
    if (k < KW)
      sum = _mm512_add_epi16(
          sum, _mm512_and_si512(load_codes(row, loads[k / 2]), _mm512_set1_epi16(0xff)));
    return sum;
  }
  for (int64_t k = 0; k < KW; ++k) {
    const __m512i v = load_codes(row, loads[k]);
    sum = _mm512_add_epi16(sum, _mm512_maskz_cvtepu8_epi16(
                                    ~__mmask32(0), _mm512_maskz_extracti64x4_epi64(0xff, v, 0)));
  }
  return sum;
}

// One plane, NCHW, stride_w 1 or 2, at most 257 taps (255 * 257 < 2^16): per
// output row and 32 outputs, the 16-bit sums of its valid input rows in one
// register, then the final step and the store. No buffer between the loads
// and the stored codes. Integer sums are exact in any order.
// Idiv: the final step is idiv32 with the tables itab (kIdivFields * 32 per
// row class and block of 32 outputs), else final16 through otab / rtab.
constexpr int64_t kIdivFields = 6;

template <bool Idiv, class T>
void plane_rows(const Final& F, const QAvgPlan& P, const T* xp, int64_t sH, const RowLoad* loads,
                int64_t loads_per_block, const int32_t* otab, const float* rtab,
                const uint16_t* itab, const int32_t* row_class, T* yp, int64_t ysH) {
  const int64_t OH = P.h.out, OW = P.w.out, KW = P.w.kernel, sw = P.w.stride;
  const int64_t OWp = (OW + 31) / 32 * 32;
  for (int64_t oh = 0; oh < OH; ++oh) {
    const T* row0 = xp + P.h.first[static_cast<size_t>(oh)] * sH;
    const int32_t vh = P.h.valid[static_cast<size_t>(oh)];
    const int32_t* orow = otab + row_class[oh] * OWp;
    const float* rrow = rtab + row_class[oh] * OWp;
    for (int64_t o = 0; o < OW; o += 32) {
      const RowLoad* bl = loads + o / 32 * loads_per_block;
      __m512i sum = _mm512_setzero_si512();
      for (int32_t r = 0; r < vh; ++r)
        sum = _mm512_add_epi16(sum, row_sums(row0 + r * sH, bl, sw, KW));
      if constexpr (Idiv) {
        const __m256i codes = idiv32(F, sum, itab + (row_class[oh] * OWp + o) * kIdivFields);
        const int64_t n = OW - o;
        _mm256_mask_storeu_epi8(yp + oh * ysH + o,
                                n >= 32 ? ~__mmask32(0) : (__mmask32(1) << n) - 1, codes);
      } else {
        const __mmask32 redo =
            store32<false>(F, sum, orow + o, rrow + o, LaneConsts{}, OW - o, yp + oh * ysH + o);
        if (redo) redo_lanes(F, redo, xp, sH, int64_t{1}, oh, o, yp + oh * ysH + o, int64_t{1});
      }
    }
  }
}

// Stride 2 with one or two loads per window row (KW <= 4; Odd: the last load
// adds single taps), unrolled, with idiv32's final step. Stores of whole
// 32-byte registers when y's plane is contiguous: the excess lands in outputs
// of later rows that this plane's loop writes afterwards.
struct S2Plane {
  int64_t i0 = 0, i1 = 0;  // interior rows: all KH window rows on the input
  // Interior rows may use plain 64-byte loads: every window lies in [0, W)
  // (bytes past it feed only unstored lanes), and the plane's last interior
  // load ends inside x (checked per plane against x_end).
  bool plain = false;
  const uint8_t* x_end = nullptr;
  // Interior rows before it may store whole registers when y's rows are
  // contiguous (the same for every plane: computed once per call).
  int64_t spill_end = 0;
};

template <bool Odd>
inline __m512i s2_add(__m512i sum, __m512i v) {
  return _mm512_add_epi16(sum, Odd ? _mm512_and_si512(v, _mm512_set1_epi16(0xff))
                                   : _mm512_maddubs_epi16(v, _mm512_set1_epi8(1)));
}

// load_codes, or a plain load where every byte read is in x (Plain).
template <bool Plain, class T>
inline __m512i codes_at(const T* row, const RowLoad& l) {
  if constexpr (!Plain) return load_codes(row, l);
  const __m512i v = _mm512_loadu_si512(row + l.a);
  if constexpr (std::is_signed_v<T>) return _mm512_xor_si512(v, _mm512_set1_epi8(-128));
  return v;
}

// The interior rows [i0, i1) (all KH window rows on the input, one row
// class) with the loop constants hoisted; the class's final step is Mode
// (kUniform: idiv32_uniform with lane offsets ah; kLanes: idiv32_lanes with
// tables lt and K = lk; kGeneral: idiv32 with tables it); spill: every block
// may store a whole register (the excess stays in later rows).
enum IdivMode { kGeneral, kUniform, kLanes };

template <IdivMode Mode>
inline __m256i idiv_codes(const Final& F, __m512i sum, const IdivUniformRegs& U, const uint16_t* ah,
                          const uint16_t* lt, __m512i lk, const uint16_t* it, int64_t o) {
  if constexpr (Mode == kUniform) return idiv32_uniform(F, U, sum, _mm512_loadu_si512(ah + o));
  if constexpr (Mode == kLanes) return idiv32_lanes(F, sum, lt + o * kLaneFields, lk);
  return idiv32(F, sum, it + o * kIdivFields);
}

template <int NL, bool Odd, int KH, bool Plain, IdivMode Mode, class T>
void s2_interior(const Final& F, const IdivUniformRegs& U, const uint16_t* ah, const uint16_t* lt,
                 int16_t lane_k, const uint16_t* it, const T* row0, int64_t step, int64_t sH,
                 int64_t kh_runtime, const RowLoad* loads, int64_t i0, int64_t i1, T* yp,
                 int64_t ysH, int64_t OW, bool spill) {
  const int64_t kh = KH > 0 ? KH : kh_runtime;
  const __m512i lk = _mm512_set1_epi16(lane_k);
  if (Mode == kUniform && OW <= 32) {
    // One block: its loads and lane offsets in registers (the byte stores
    // would otherwise force reloading them every row).
    const RowLoad l0 = loads[0], l1 = loads[NL - 1];
    const __m512i ah0 = _mm512_loadu_si512(ah);
    const __mmask32 tail = OW >= 32 ? ~__mmask32(0) : (__mmask32(1) << OW) - 1;
    for (int64_t oh = i0; oh < i1; ++oh, row0 += step) {
      __m512i sum = _mm512_setzero_si512();
      for (int64_t r = 0; r < kh; ++r) {
        sum = s2_add<(Odd && NL == 1)>(sum, codes_at<Plain>(row0 + r * sH, l0));
        if constexpr (NL == 2) sum = s2_add<Odd>(sum, codes_at<Plain>(row0 + r * sH, l1));
      }
      const __m256i codes = idiv32_uniform(F, U, sum, ah0);
      T* out = yp + oh * ysH;
      if (spill)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), codes);
      else
        _mm256_mask_storeu_epi8(out, tail, codes);
    }
    return;
  }
  for (int64_t oh = i0; oh < i1; ++oh, row0 += step) {
    for (int64_t o = 0; o < OW; o += 32) {
      const RowLoad l0 = loads[o / 32 * NL], l1 = loads[o / 32 * NL + NL - 1];
      __m512i sum = _mm512_setzero_si512();
      for (int64_t r = 0; r < kh; ++r) {
        sum = s2_add<(Odd && NL == 1)>(sum, codes_at<Plain>(row0 + r * sH, l0));
        if constexpr (NL == 2) sum = s2_add<Odd>(sum, codes_at<Plain>(row0 + r * sH, l1));
      }
      const __m256i codes = idiv_codes<Mode>(F, sum, U, ah, lt, lk, it, o);
      T* out = yp + oh * ysH + o;
      if (spill || OW - o >= 32)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), codes);
      else
        _mm256_mask_storeu_epi8(out, (__mmask32(1) << (OW - o)) - 1, codes);
    }
  }
}

template <int NL, bool Odd, int KH, class T>
void plane_s2(const Final& F, const QAvgPlan& P, const S2Plane& G, const T* xp, int64_t sH,
              const RowLoad* loads, const uint16_t* itab, const IdivUniform* uni,
              const uint16_t* aht, const uint16_t* ltab, const int16_t* lane_k,
              const int32_t* row_class, T* yp, int64_t ysH) {
  const int64_t OH = P.h.out, OW = P.w.out, OWp = (OW + 31) / 32 * 32;
  const bool spill_rows = ysH == OW;
  auto store = [&](int64_t oh, int64_t o, __m256i codes) {
    T* out = yp + oh * ysH + o;
    const int64_t n = OW - o;
    if (n >= 32 || (spill_rows && oh * OW + o + 32 <= OH * OW))
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), codes);
    else
      _mm256_mask_storeu_epi8(out, (__mmask32(1) << n) - 1, codes);
  };
  auto rows = [&](int64_t oh0, int64_t oh1) {
    for (int64_t oh = oh0; oh < oh1; ++oh) {
      const T* row0 = xp + P.h.first[static_cast<size_t>(oh)] * sH;
      const int32_t vh = P.h.valid[static_cast<size_t>(oh)];
      const uint16_t* trow = itab + row_class[oh] * OWp * kIdivFields;
      const IdivUniform& u = uni[row_class[oh]];
      const IdivUniformRegs U(u);
      for (int64_t o = 0; o < OW; o += 32) {
        const RowLoad* bl = loads + o / 32 * NL;
        __m512i sum = _mm512_setzero_si512();
        for (int32_t r = 0; r < vh; ++r)
          for (int k = 0; k < NL; ++k) {
            const __m512i v = load_codes(row0 + r * sH, bl[k]);
            sum = Odd && k == NL - 1 ? s2_add<true>(sum, v) : s2_add<false>(sum, v);
          }
        const int16_t lk = lane_k[row_class[oh]];
        store(oh, o,
              u.ok ? idiv32_uniform(F, U, sum, _mm512_loadu_si512(aht + row_class[oh] * OWp + o))
              : lk >= 0 ? idiv32_lanes(F, sum, ltab + (row_class[oh] * OWp + o) * kLaneFields,
                                       _mm512_set1_epi16(lk))
                        : idiv32(F, sum, trow + o * kIdivFields));
      }
    }
  };
  const int64_t i0 = G.i0, i1 = G.i1;
  rows(0, i0);
  const int c = i0 < i1 ? row_class[i0] : 0;
  if (i0 < i1) {
    const int64_t step = P.h.stride * sH, kh = P.h.kernel;
    const T* row0 = xp + P.h.first[static_cast<size_t>(i0)] * sH;
    const IdivUniformRegs U(uni[c]);
    const uint16_t *ah = aht + c * OWp, *it = itab + c * OWp * kIdivFields;
    const bool plain = G.plain && reinterpret_cast<const uint8_t*>(
                                      row0 + (i1 - 1 - i0) * step + (kh - 1) * sH +
                                      loads[(OWp / 32 - 1) * NL + NL - 1].a + 64) <= G.x_end;
    const int64_t spill_end =
        spill_rows ? G.spill_end : i0;  // rows before it store whole registers
    const uint16_t* lt = ltab + c * OWp * kLaneFields;
    const int16_t lk = lane_k[c];
    auto run = [&](int64_t a, int64_t b, bool spill) {
      const T* r0 = row0 + (a - i0) * step;
#define NPUKIT_S2_RUN(P_, M_)                                                                    \
  s2_interior<NL, Odd, KH, P_, M_>(F, U, ah, lt, lk, it, r0, step, sH, kh, loads, a, b, yp, ysH, \
                                   OW, spill)
      if (plain && uni[c].ok)
        NPUKIT_S2_RUN(true, kUniform);
      else if (plain && lk >= 0)
        NPUKIT_S2_RUN(true, kLanes);
      else if (plain)
        NPUKIT_S2_RUN(true, kGeneral);
      else if (uni[c].ok)
        NPUKIT_S2_RUN(false, kUniform);
      else if (lk >= 0)
        NPUKIT_S2_RUN(false, kLanes);
      else
        NPUKIT_S2_RUN(false, kGeneral);
#undef NPUKIT_S2_RUN
    };
    run(i0, spill_end, true);
    run(spill_end, i1, false);
  } else {
    rows(i0, i1);
  }
  rows(std::max(i0, i1), OH);
}

// Narrow rows (stride_w 1, OW + KW - 1 <= 16): per output row, the vertical
// sum of its valid input rows over the 16 columns its windows touch (one
// masked 16-byte load per row, columns outside [0, W) read as 0), then tap k
// of output j is lane j + k of that sum: KW - 1 in-register lane shifts
// instead of KW loads per row, and no 32-lane block that is mostly unused.
// Idiv: the final step of plane_rows<true> (idiv32 / idiv32_uniform) on the
// low 16 lanes.
template <bool Idiv, class T>
void plane_narrow(const Final& F, const QAvgPlan& P, const T* xp, int64_t sH, __mmask16 m,
                  const int32_t* otab, const float* rtab, const uint16_t* itab,
                  const IdivUniform* uni, const uint16_t* aht, const uint16_t* ltab,
                  const int16_t* lane_k, const int32_t* row_class, T* yp, int64_t ysH) {
  const int64_t OH = P.h.out, OW = P.w.out, KW = P.w.kernel, s0 = P.w.start;
  const int64_t OWp = (OW + 31) / 32 * 32;
  const __m128i bias = _mm_set1_epi8(std::is_signed_v<T> ? -128 : 0);
  const __m256i lane = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __mmask16 out = static_cast<__mmask16>((1u << OW) - 1);
  alignas(64) static constexpr uint16_t kLane32[32] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                                       11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                                       22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
  const __m512i lane32 = _mm512_load_si512(kLane32);
  // Each input row widened once into wide[], between zero rows for the
  // window rows above and below the image (they add 0, like the padding):
  // then an output row's vertical sum is KH adds, and with stride_h 1 two
  // consecutive rows' sums are KH adds of 512-bit loads (rows r, r + 1).
  // Planes whose window rows do not fit kNarrowRows add their valid rows.
  constexpr int64_t kNarrowRows = 64;
  alignas(64) __m256i wide[kNarrowRows];
  const int64_t KH = P.h.kernel, top = std::max<int64_t>(0, -P.h.start);
  const int64_t rows = std::max(P.H, P.h.start + (OH - 1) * P.h.stride + KH) + top;
  const bool once = rows <= kNarrowRows, pairs1 = once && P.h.stride == 1;
  auto widen = [&](const T* row) {
    return _mm256_cvtepu8_epi16(
        _mm_maskz_mov_epi8(m, _mm_xor_si128(_mm_maskz_loadu_epi8(m, row), bias)));
  };
  if (once) {
    for (int64_t h = 0; h < rows; ++h)
      wide[h] =
          h >= top && h - top < P.H ? widen(xp + (h - top) * sH + s0) : _mm256_setzero_si256();
  }
  const __m256i* wbase = wide + top + P.h.start;  // window row 0 of output row 0
  auto vsum = [&](int64_t oh) {
    __m256i v = _mm256_setzero_si256();
    if (once) {
      const __m256i* w = wbase + oh * P.h.stride;
      for (int64_t k = 0; k < KH; ++k) v = _mm256_add_epi16(v, w[k]);
      return v;
    }
    const int64_t first = P.h.first[static_cast<size_t>(oh)];
    const int32_t vh = P.h.valid[static_cast<size_t>(oh)];
    for (int32_t r = 0; r < vh; ++r) v = _mm256_add_epi16(v, widen(xp + (first + r) * sH + s0));
    return v;
  };
  // Rows oh (lanes 0-15) and oh + 1 (16-31).
  auto vsum2 = [&](int64_t oh) {
    if (pairs1) {
      const __m256i* w = wbase + oh;
      __m512i v = _mm512_setzero_si512();
      for (int64_t k = 0; k < KH; ++k)
        v = _mm512_add_epi16(v, _mm512_loadu_si512(reinterpret_cast<const void*>(w + k)));
      return v;
    }
    return _mm512_inserti64x4(_mm512_castsi256_si512(vsum(oh)), vsum(oh + 1), 1);
  };
  for (int64_t oh = 0; oh < OH; ++oh) {
    {
      // Two rows of one class in one register: row oh in lanes 0-15, oh + 1
      // in 16-31 (a tap shift crosses into the other half only in lanes that
      // are never stored); Idiv: one final step for both (uniform classes).
      const int c = row_class[oh];
      if (oh + 1 < OH && row_class[oh + 1] == c && (!Idiv || uni[c].ok || lane_k[c] >= 0)) {
        const __m512i v2 = vsum2(oh);
        __m512i sum2 = v2;
        for (int64_t k = 1; k < KW; ++k)
          sum2 = _mm512_add_epi16(
              sum2, _mm512_permutexvar_epi16(
                        _mm512_add_epi16(lane32, _mm512_set1_epi16(static_cast<short>(k))), v2));
        if constexpr (Idiv) {
          const __m256i codes = uni[c].ok
                                    ? idiv32_uniform(F, IdivUniformRegs(uni[c]), sum2,
                                                     lane_field<true>(aht + c * OWp))
                                    : idiv32_lanes<true>(F, sum2, ltab + c * OWp * kLaneFields,
                                                         _mm512_set1_epi16(lane_k[c]));
          _mm_mask_storeu_epi8(yp + oh * ysH, out, _mm256_castsi256_si128(codes));
          _mm_mask_storeu_epi8(yp + (oh + 1) * ysH, out, _mm256_extracti128_si256(codes, 1));
        } else {
          const __m512i off = _mm512_loadu_si512(otab + c * OWp);
          const __m512 rr = _mm512_loadu_ps(rtab + c * OWp);
          __mmask16 redo0 = 0, redo1 = 0;
          const __m128i c0 =
              codes16(F, _mm512_maskz_extracti64x4_epi64(0xff, sum2, 0), off, rr, &redo0);
          const __m128i c1 =
              codes16(F, _mm512_maskz_extracti64x4_epi64(0xff, sum2, 1), off, rr, &redo1);
          _mm_mask_storeu_epi8(yp + oh * ysH, out, c0);
          _mm_mask_storeu_epi8(yp + (oh + 1) * ysH, out, c1);
          if ((redo0 | redo1) & out) {
            redo_lanes(F, redo0 & out, xp, sH, int64_t{1}, oh, 0, yp + oh * ysH, 1);
            redo_lanes(F, redo1 & out, xp, sH, int64_t{1}, oh + 1, 0, yp + (oh + 1) * ysH, 1);
          }
        }
        ++oh;
        continue;
      }
    }
    const __m256i v = vsum(oh);
    __m256i sum = v;
    for (int64_t k = 1; k < KW; ++k)  // lanes past 15 - k are never stored
      sum = _mm256_add_epi16(
          sum, _mm256_permutexvar_epi16(
                   _mm256_add_epi16(lane, _mm256_set1_epi16(static_cast<short>(k))), v));
    const int64_t cls = row_class[oh] * OWp;
    __m128i codes;
    if constexpr (Idiv) {
      const IdivUniform& u = uni[row_class[oh]];
      const __m512i s = _mm512_inserti64x4(_mm512_setzero_si512(), sum, 0);
      const int16_t lk = lane_k[row_class[oh]];
      codes = _mm256_castsi256_si128(
          u.ok      ? idiv32_uniform(F, IdivUniformRegs(u), s, _mm512_loadu_si512(aht + cls))
          : lk >= 0 ? idiv32_lanes(F, s, ltab + cls * kLaneFields, _mm512_set1_epi16(lk))
                    : idiv32(F, s, itab + cls * kIdivFields));
    } else {
      __mmask16 redo = 0;
      codes = codes16(F, sum, _mm512_loadu_si512(otab + cls), _mm512_loadu_ps(rtab + cls), &redo);
      _mm_mask_storeu_epi8(yp + oh * ysH, out, codes);
      if (redo & out) redo_lanes(F, redo & out, xp, sH, int64_t{1}, oh, 0, yp + oh * ysH, 1);
      continue;
    }
    _mm_mask_storeu_epi8(yp + oh * ysH, out, codes);
  }
}

// The loads of every block of 32 outputs (stride 2: one per tap pair).
std::vector<RowLoad> row_loads(const QAvgPlan& P, int64_t per_block) {
  const int64_t sw = P.w.stride;
  std::vector<RowLoad> loads;
  for (int64_t o = 0; o < P.w.out; o += 32)
    for (int64_t l = 0; l < per_block; ++l) {
      RowLoad rl = row_load(P.w.start + sw * o + (sw == 2 ? 2 * l : l), P.W);
      if (sw == 1) rl.m &= 0xffffffffu;  // 32 outputs read 32 bytes
      loads.push_back(rl);
    }
  return loads;
}

// The integer final steps' tables per row class (OWp lanes each):
// idiv32's (itab, field-major per block of 32 lanes; `idiv` false when a
// lane does not fit), idiv32_uniform's for classes whose stored lanes share
// one divisor (uni[c].ok, lane offsets a + h in aht), and idiv32_lanes's for
// the other classes when every lane fits (ltab, lane_k[c] >= 0).
struct IdivTables {
  bool idiv = false;
  std::vector<uint16_t> itab;
  std::vector<IdivUniform> uni;
  std::vector<uint16_t> aht;
  std::vector<uint16_t> ltab;
  std::vector<int16_t> lane_k;  // -1: idiv32
};

bool fill_idiv_lanes(const QAvgPlan& P, const RowClasses& rc, int64_t OWp, IdivTables& t) {
  const int64_t OW = P.w.out;
  t.itab.assign(rc.keys.size() * static_cast<size_t>(OWp * kIdivFields), 0);
  for (size_t c = 0; c < rc.keys.size(); ++c)
    for (int64_t o = 0; o < OWp; ++o) {
      const auto i = static_cast<size_t>(o);
      const int32_t valid = o < OW ? rc.keys[c].first * P.w.valid[i] : 1;
      const size_t at = c * static_cast<size_t>(OWp) + i;
      IdivLane L;
      if (!idiv_lane(rc.otab[at], static_cast<int32_t>(rc.rtab[at]), valid, L)) return false;
      uint16_t* f =
          t.itab.data() + (c * static_cast<size_t>(OWp) + i / 32 * 32) * kIdivFields + i % 32;
      const uint16_t fields[kIdivFields] = {L.a, L.m, L.sh, L.d, L.k, L.kd};
      for (int64_t k = 0; k < kIdivFields; ++k) f[k * 32] = fields[k];
    }
  return true;
}

// Class c uniform: idiv32_uniform with the class's largest K.
void fill_uniform_class(const QAvgPlan& P, const RowClasses& rc, int64_t OWp, size_t c,
                        IdivTables& t) {
  const int64_t OW = P.w.out;
  const uint16_t* t0 = t.itab.data() + c * static_cast<size_t>(OWp) * kIdivFields;
  const int32_t d = t0[96], h = d / 2;
  bool same = true;
  int32_t k = 0;
  for (int64_t o = 0; o < OW; ++o) {
    const uint16_t* f = t0 + (o / 32 * 32) * kIdivFields + o % 32;
    same = same && f[96] == d;
    k = std::max<int32_t>(k, f[128]);
  }
  int32_t nh_max = 0;
  for (int64_t o = 0; o < OWp && same; ++o) {
    const size_t at = c * static_cast<size_t>(OWp) + static_cast<size_t>(o);
    const int32_t ah = o < OW ? rc.otab[at] + k * d + h : 0;  // >= h: k >= the lane's K
    const int32_t valid = o < OW ? rc.keys[c].first * P.w.valid[static_cast<size_t>(o)] : 0;
    nh_max = std::max(nh_max, 255 * valid + ah);
    t.aht[at] = static_cast<uint16_t>(std::min(ah, 65535));
  }
  if (same) t.uni[c] = idiv_uniform(d, k, nh_max);
}

// Class c not uniform: idiv32_lanes when every lane fits.
void fill_lanes_class(const QAvgPlan& P, const RowClasses& rc, int64_t OWp, size_t c,
                      IdivTables& t) {
  const int64_t OW = P.w.out;
  const uint16_t* t0 = t.itab.data() + c * static_cast<size_t>(OWp) * kIdivFields;
  int32_t k = 0;
  for (int64_t o = 0; o < OW; ++o)
    k = std::max<int32_t>(k, t0[(o / 32 * 32) * kIdivFields + o % 32 + 128]);
  bool ok = true;
  for (int64_t o = 0; o < OWp && ok; ++o) {
    const size_t at = c * static_cast<size_t>(OWp) + static_cast<size_t>(o);
    uint16_t* f = t.ltab.data() +
                  (c * static_cast<size_t>(OWp) + static_cast<size_t>(o / 32 * 32)) * kLaneFields +
                  o % 32;
    if (o < OW)
      ok = lane_even(rc.otab[at], static_cast<int32_t>(rc.rtab[at]),
                     rc.keys[c].first * P.w.valid[static_cast<size_t>(o)], k, f);
    else
      f[0] = 0, f[32] = 65535, f[64] = 0, f[96] = 0;  // never stored
  }
  if (ok) t.lane_k[c] = static_cast<int16_t>(k);
}

IdivTables idiv_tables(const Final& F, const QAvgPlan& P, const RowClasses& rc, int64_t OWp) {
  IdivTables t;
  const size_t classes = rc.keys.size();
  t.uni.resize(classes);
  t.aht.resize(classes * static_cast<size_t>(OWp));
  t.ltab.resize(classes * static_cast<size_t>(OWp * kLaneFields));
  t.lane_k.assign(classes, -1);
  t.idiv = (F.kind == Final::int_float_mean || F.kind == Final::int_mean) &&
           fill_idiv_lanes(P, rc, OWp, t);
  const bool even_rule = F.kind == Final::int_float_mean || F.rounding == Rounding::half_to_even;
  if (!t.idiv || !even_rule) return t;
  for (size_t c = 0; c < classes; ++c) {
    fill_uniform_class(P, rc, OWp, c, t);
    if (!t.uni[c].ok) fill_lanes_class(P, rc, OWp, c, t);
  }
  return t;
}

// Stride-2 planes (plane_s2): the interior rows and whether their loads may
// be plain.
S2Plane s2_plane(const QAvgPlan& P, const TensorView& x, const std::vector<RowLoad>& loads,
                 int64_t OWp) {
  const int64_t OH = P.h.out, OW = P.w.out;
  S2Plane G;
  for (G.i0 = 0; G.i0 < OH && P.h.valid[static_cast<size_t>(G.i0)] != P.h.kernel;) ++G.i0;
  for (G.i1 = G.i0; G.i1 < OH && P.h.valid[static_cast<size_t>(G.i1)] == P.h.kernel;) ++G.i1;
  int64_t end = 1;
  for (int d = 0; d < 4; ++d) end += (x.dim(d) - 1) * x.stride(d);
  G.x_end = static_cast<const uint8_t*>(x.raw()) + end;
  // The stored lanes' taps of every load lie in [0, W) (the last block's
  // last load reaches the last output's last tap).
  const int64_t a0 = loads.empty() ? -1 : loads.front().a;
  G.plain = P.w.stride == 2 && a0 >= 0 && P.w.start + 2 * (OW - 1) + P.w.kernel <= P.W;
  for (G.spill_end = G.i0; G.spill_end < G.i1 && G.spill_end * OW + OWp <= OH * OW;) ++G.spill_end;
  return G;
}

template <class T>
void nchw(const QAvgPoolProblem& pr) {
  const QAvgPlan& P = pr.plan;
  const TensorView &x = pr.x, &y = pr.y;
  const Final F = make_final(P);
  const int64_t OW = P.w.out, KW = P.w.kernel, sw = P.w.stride;
  const int64_t OWp = (OW + 31) / 32 * 32;
  const int64_t sN = x.stride(0), sC = x.stride(1), sH = x.stride(2);
  const int64_t per_block = sw == 2 ? (KW + 1) / 2 : KW;
  const std::vector<RowLoad> loads = row_loads(P, per_block);
  // Narrow rows: columns s0 + i, i < 16, of which those in [0, W) are read.
  const bool narrow = sw == 1 && OW + KW - 1 <= 16;
  __mmask16 narrow_mask = 0;
  for (int64_t i = 0; i < 16; ++i)
    if (P.w.start + i >= 0 && P.w.start + i < P.W) narrow_mask |= static_cast<__mmask16>(1u << i);
  const RowClasses rc = row_classes(
      P, OWp, [&](int32_t valid, int32_t clipped) { return lane_consts(F, valid, clipped); });
  const IdivTables t = idiv_tables(F, P, rc, OWp);
  const bool idiv = t.idiv;
  const S2Plane G = s2_plane(P, x, loads, OWp);
  const int32_t *otab = rc.otab.data(), *row_class = rc.row_class.data();
  const float* rtab = rc.rtab.data();
  const uint16_t *itab = t.itab.data(), *aht = t.aht.data(), *ltab = t.ltab.data();
  const IdivUniform* uni = t.uni.data();
  const int16_t* lane_k = t.lane_k.data();
  auto s2 = [&](const T* xp, T* yp) {
    const RowLoad* l = loads.data();
    const int64_t ys = y.stride(2);
    const int64_t KH = P.h.kernel;
    if (KW == 1)
      plane_s2<1, true, 0>(F, P, G, xp, sH, l, itab, uni, aht, ltab, lane_k, row_class, yp, ys);
    else if (KW == 2 && KH == 2)
      plane_s2<1, false, 2>(F, P, G, xp, sH, l, itab, uni, aht, ltab, lane_k, row_class, yp, ys);
    else if (KW == 2)
      plane_s2<1, false, 0>(F, P, G, xp, sH, l, itab, uni, aht, ltab, lane_k, row_class, yp, ys);
    else if (KW == 3 && KH == 3)
      plane_s2<2, true, 3>(F, P, G, xp, sH, l, itab, uni, aht, ltab, lane_k, row_class, yp, ys);
    else if (KW == 3)
      plane_s2<2, true, 0>(F, P, G, xp, sH, l, itab, uni, aht, ltab, lane_k, row_class, yp, ys);
    else
      plane_s2<2, false, 0>(F, P, G, xp, sH, l, itab, uni, aht, ltab, lane_k, row_class, yp, ys);
  };
  for_chunks(P.N * P.C, [&](int64_t begin, int64_t end) {
    for (int64_t nc = begin; nc < end; ++nc) {
      const int64_t n = nc / P.C, c = nc % P.C;
      const T* xp = static_cast<const T*>(x.raw()) + n * sN + c * sC;
      T* yp = static_cast<T*>(y.raw()) + n * y.stride(0) + c * y.stride(1);
      const int64_t ys = y.stride(2);
      if (narrow && idiv)
        plane_narrow<true>(F, P, xp, sH, narrow_mask, otab, rtab, itab, uni, aht, ltab, lane_k,
                           row_class, yp, ys);
      else if (narrow)
        plane_narrow<false>(F, P, xp, sH, narrow_mask, otab, rtab, itab, uni, aht, ltab, lane_k,
                            row_class, yp, ys);
      else if (idiv && sw == 2 && KW <= 4)
        s2(xp, yp);
      else if (idiv)
        plane_rows<true>(F, P, xp, sH, loads.data(), per_block, otab, rtab, itab, row_class, yp,
                         ys);
      else
        plane_rows<false>(F, P, xp, sH, loads.data(), per_block, otab, rtab, itab, row_class, yp,
                          ys);
    }
  });
}

// NHWC lane shim of x8-qavgpool-u16-nhwc.inc: 64 channels per block (masked
// loads), and per pixel idiv32_uniform when its lanes (channels) share a
// divisor that fits, else final16 (store32).
constexpr int64_t kChannels = 64;

struct Sums {
  __m512i lo, hi;
};
inline Sums zero_sums() {
  return Sums{_mm512_setzero_si512(), _mm512_setzero_si512()};
}

template <class T>
inline void add_taps(Sums& s, const T* p, int64_t len) {
  const __mmask64 m = len == 64 ? ~__mmask64(0) : (__mmask64(1) << len) - 1;
  const __m512i b = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, p),
                                     _mm512_set1_epi8(std::is_signed_v<T> ? -128 : 0));
  s.lo = _mm512_add_epi16(
      s.lo, _mm512_maskz_cvtepu8_epi16(~__mmask32(0), _mm512_maskz_extracti64x4_epi64(0xff, b, 0)));
  s.hi = _mm512_add_epi16(
      s.hi, _mm512_maskz_cvtepu8_epi16(~__mmask32(0), _mm512_maskz_extracti64x4_epi64(0xff, b, 1)));
}

struct PixelCtx {
  bool fast = false;  // idiv32_uniform with U and ah
  IdivUniformRegs U;
  __m512i ah;
  LaneConsts u;  // final16's, otherwise
};

// idiv32_uniform per pixel for the distinct (valid, clipped) pairs of each
// axis (ah < 0: final16).
class PixelSetup {
 public:
  PixelSetup(const Final& F, const QAvgPlan& P) {
    const bool idiv = F.kind == Final::int_float_mean ||
                      (F.kind == Final::int_mean && F.rounding == Rounding::half_to_even);
    const auto hkeys = classes_of(P.h, hcls_), wkeys = classes_of(P.w, wcls_);
    nw_ = wkeys.size();
    pix_.resize(hkeys.size() * nw_);
    pix_ah_.assign(pix_.size(), -1);
    for (size_t i = 0; i < hkeys.size() && idiv; ++i)
      for (size_t j = 0; j < nw_; ++j) {
        const int32_t v = hkeys[i].first * wkeys[j].first, cl = hkeys[i].second * wkeys[j].second;
        const LaneConsts u = lane_consts(F, v, cl);
        const auto d = static_cast<int32_t>(u.r);
        IdivLane L;
        if (!idiv_lane(u.offset, d, v, L) || d < 2) continue;
        const size_t at = i * nw_ + j;
        pix_[at] = idiv_uniform(d, L.k, 255 * v + L.a + d / 2);
        if (pix_[at].ok) pix_ah_[at] = L.a + d / 2;
      }
  }

  PixelCtx pixel(const Final& F, const QAvgPlan&, int64_t oh, int64_t ow, int32_t valid,
                 int32_t clipped) const {
    const size_t at = static_cast<size_t>(hcls_[static_cast<size_t>(oh)]) * nw_ +
                      static_cast<size_t>(wcls_[static_cast<size_t>(ow)]);
    return PixelCtx{pix_ah_[at] >= 0, IdivUniformRegs(pix_[at]),
                    _mm512_set1_epi16(static_cast<int16_t>(std::max(pix_ah_[at], 0))),
                    lane_consts(F, valid, clipped)};
  }

 private:
  static std::vector<std::pair<int32_t, int32_t>> classes_of(const QAvgAxis& a,
                                                             std::vector<int32_t>& cls) {
    std::vector<std::pair<int32_t, int32_t>> keys;
    cls.resize(a.valid.size());
    for (size_t i = 0; i < a.valid.size(); ++i) {
      const std::pair<int32_t, int32_t> key{a.valid[i], a.clipped[i]};
      auto it = std::find(keys.begin(), keys.end(), key);
      if (it == keys.end()) it = keys.insert(keys.end(), key);
      cls[i] = static_cast<int32_t>(it - keys.begin());
    }
    return keys;
  }
  std::vector<int32_t> hcls_, wcls_;
  size_t nw_ = 0;
  std::vector<IdivUniform> pix_;
  std::vector<int32_t> pix_ah_;
};

template <class T>
inline uint64_t finish(const Final& F, const PixelCtx& px, const Sums& s, int64_t len, T* y) {
  if (px.fast) {
    const __m512i both =
        _mm512_inserti64x4(_mm512_castsi256_si512(idiv32_uniform(F, px.U, s.lo, px.ah)),
                           idiv32_uniform(F, px.U, s.hi, px.ah), 1);
    if (len >= 64)
      _mm512_storeu_si512(y, both);
    else
      _mm512_mask_storeu_epi8(y, (__mmask64(1) << len) - 1, both);
    return 0;
  }
  uint64_t redo = store32<true>(F, s.lo, nullptr, nullptr, px.u, len, y);
  if (len > 32)
    redo |= uint64_t{store32<true>(F, s.hi, nullptr, nullptr, px.u, len - 32, y + 32)} << 32;
  return redo;
}

#include "ops/cpu/x8-qavgpool-u16-nhwc.inc"

}  // namespace

void x8_qavgpool_u16_nchw_avx512(const QAvgPoolProblem& p) {
  if (p.plan.dtype == DType::s8)
    nchw<int8_t>(p);
  else
    nchw<uint8_t>(p);
}

void x8_qavgpool_u16_nhwc_avx512(const QAvgPoolProblem& p) {
  if (p.plan.dtype == DType::s8)
    nhwc<int8_t>(p);
  else
    nhwc<uint8_t>(p);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
