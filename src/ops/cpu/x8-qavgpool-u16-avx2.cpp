// QLinearAveragePool / bm_pool_quantized average with 16-bit window sums and
// the final step in registers, AVX2, for hosts without AVX-512 (Zen 3):
// x8_qavgpool_u16_nhwc_avx2 (x8-qavgpool-u16-nhwc.inc over this file's lane
// shim, like the AVX-512 NHWC kernel) and x8_qavgpool_u16_nchw_avx2 (rows copied into a
// zero-bordered buffer first: AVX2 has no byte masks). Same cases (qavg_u16_declines) and the same
// final step per lane; the proofs that its integer forms equal the reference are at final16 and
// round_rule in that file, the checked float tail's in qavgpool-fmean-check.cpp. NHWC: 32 channels
// per step, the channel tail through a zeroed 32-byte copy.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool-u16-final.hpp"
#include "ops/cpu/qavgpool-u16-row-classes.hpp"
#include "ops/cpu/qavgpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {
namespace {

// Per-call constants of the final step, broadcast once.
struct Final : U16Final {
  __m256i lo, hi, y_zp, sum_m;
  __m256i lo16, hi16;  // idiv16_uniform's clamp (int_float_mean, int_mean)
  __m256 flo, fhi, zpf, div_area, rcp, ys, pow2, rlo, rhi;
  __m256 below;  // float_checked: the plan's fmean_check_below
};

Final make_final(const QAvgPlan& P) {
  Final F;
  static_cast<U16Final&>(F) = u16_final(P);
  const auto taps = static_cast<int32_t>(P.taps);
  F.lo = _mm256_set1_epi32(F.lo_code);
  F.hi = _mm256_set1_epi32(P.hi);
  F.lo16 = _mm256_set1_epi16(static_cast<short>(P.lo));
  F.hi16 = _mm256_set1_epi16(static_cast<short>(P.hi));
  F.y_zp = _mm256_set1_epi32(P.y_zp);
  F.sum_m = _mm256_set1_epi32(P.sum_m);
  const auto flo = static_cast<float>(P.lo), fhi = static_cast<float>(P.hi);
  const auto zpf = static_cast<float>(P.y_zp);
  F.flo = _mm256_set1_ps(flo);
  F.fhi = _mm256_set1_ps(fhi);
  F.zpf = _mm256_set1_ps(zpf);
  F.rlo = _mm256_set1_ps(flo - zpf);  // exact: small integers
  F.rhi = _mm256_set1_ps(fhi - zpf);
  F.div_area = _mm256_set1_ps(static_cast<float>(taps));
  F.rcp = _mm256_set1_ps(1.0f / static_cast<float>(taps));  // used only when exact (pow2)
  F.ys = _mm256_set1_ps(P.y_scale);
  F.pow2 = _mm256_set1_ps(P.sum_pow2);
  F.below = _mm256_set1_ps(P.fmean_check_below);
  return F;
}

// Round half to even under the default rounding mode (the plan's
// vector_tail, or values that are already integers).
inline __m256i round_even(__m256 v) {
  return _mm256_cvtps_epi32(v);
}

// v rounded by _mm256_round_ps mode M, then converted (exact: integral).
template <int M>
inline __m256i round_mode(__m256 v) {
  return _mm256_cvttps_epi32(_mm256_round_ps(v, M | _MM_FROUND_NO_EXC));
}

// round_rule of x8-qavgpool-u16-avx512.cpp (the same operations per lane).
inline __m256i round_rule(Rounding R, __m256 x) {
  const __m256 half = _mm256_set1_ps(0.5f);
  switch (R) {
    case Rounding::half_to_even:
      return _mm256_cvttps_epi32(_mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    case Rounding::toward_zero:
      return _mm256_cvttps_epi32(x);
    case Rounding::floor:
      return round_mode<_MM_FROUND_TO_NEG_INF>(x);
    case Rounding::ceil:
      return round_mode<_MM_FROUND_TO_POS_INF>(x);
    case Rounding::half_up:
      return round_mode<_MM_FROUND_TO_NEG_INF>(_mm256_add_ps(x, half));
    case Rounding::half_down:
      return round_mode<_MM_FROUND_TO_POS_INF>(_mm256_sub_ps(x, half));
    case Rounding::half_away_from_zero: {  // trunc(x + copysign(0.5, x))
      const __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.0f));
      return _mm256_cvttps_epi32(_mm256_add_ps(x, _mm256_or_ps(half, sign)));
    }
    case Rounding::half_toward_zero: {  // x >= 0: ceil(x - 0.5), else floor(x + 0.5)
      const __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
      const __m256i up = round_mode<_MM_FROUND_TO_POS_INF>(_mm256_sub_ps(x, half));
      const __m256i down = round_mode<_MM_FROUND_TO_NEG_INF>(_mm256_add_ps(x, half));
      return _mm256_blendv_epi8(up, down, _mm256_castps_si256(neg));
    }
  }
  return round_even(x);
}

inline __m256i clamp(__m256i v, __m256i lo, __m256i hi) {
  return _mm256_min_epi32(_mm256_max_epi32(v, lo), hi);
}

// final16 of x8-qavgpool-u16-avx512.cpp on 8 lanes: codes (int32) from s,
// the lane's biased sum plus its integer offset, and r, its divisor or
// multiplier (see lane_consts). float_checked: the lanes left undecided are
// set in *redo (bit per lane).
inline __m256i final8(const Final& F, __m256i s, __m256 r, int* redo) {
  switch (F.kind) {
    case Final::float_checked: {
      const __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(s), r), F.zpf);
      const __m256 rv = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __m256 dist = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_sub_ps(v, rv));
      *redo = _mm256_movemask_ps(_mm256_cmp_ps(dist, F.below, _CMP_NLT_UQ));
      return clamp(_mm256_cvttps_epi32(rv), F.lo, F.hi);
    }
    case Final::bm_shift: {
      __m256i v = s;
      if (F.rshift > 0)
        v = _mm256_srai_epi32(_mm256_add_epi32(_mm256_sra_epi32(s, _mm_cvtsi32_si128(F.rshift - 1)),
                                               _mm256_set1_epi32(1)),
                              1);
      return clamp(v, F.lo, F.hi);
    }
    case Final::int_mean: {
      const __m256 empty = _mm256_cmp_ps(r, _mm256_setzero_ps(), _CMP_EQ_OQ);
      const __m256 d = _mm256_blendv_ps(r, _mm256_set1_ps(1.0f), empty);
      const __m256i q = round_rule(F.rounding, _mm256_div_ps(_mm256_cvtepi32_ps(s), d));
      return _mm256_blendv_epi8(clamp(q, F.lo, F.hi), F.y_zp, _mm256_castps_si256(empty));
    }
    case Final::int_float_mean:
      return clamp(round_even(_mm256_div_ps(_mm256_cvtepi32_ps(s), r)), F.lo, F.hi);
    case Final::requant: {
      const __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(s), r);
      if (F.zp_inside)
        return round_even(_mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, F.zpf), F.flo), F.fhi));
      return _mm256_add_epi32(round_even(_mm256_min_ps(_mm256_max_ps(v, F.rlo), F.rhi)), F.y_zp);
    }
    case Final::float_mean:
      break;
  }
  // exact_float_sum: the reference's fp32 sum is float(sum_m * acc) * 2^k.
  const __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_mullo_epi32(F.sum_m, s)), F.pow2);
  __m256 v;
  if (F.area) {
    if (F.pow2_rcp)
      v = _mm256_mul_ps(f, F.rcp);  // x / 2^j == x * 2^-j exactly
    else if (F.ys_one)
      v = _mm256_div_ps(f, F.div_area);
    else
      v = _mm256_div_ps(_mm256_div_ps(f, F.div_area), F.ys);
  } else {
    v = _mm256_div_ps(_mm256_div_ps(f, r), F.ys);
  }
  v = _mm256_add_ps(v, F.zpf);
  return round_even(_mm256_min_ps(_mm256_max_ps(v, F.flo), F.fhi));
}

// Low byte of each int32 lane (codes), in lane order, as the low 8 bytes.
inline __m128i narrow8(__m256i v) {
  const __m256i pick =
      _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
      _mm256_shuffle_epi8(v, pick), _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1)));
}

#include "ops/cpu/x8-store-codes16-avx2.inc"

// Codes of the 16 windows whose biased sums are the u16 lanes of `sums`
// (lane constants off0/r0 for lanes 0-7, off1/r1 for 8-15), stored to y[0, n)
// (n <= 16). Returns the stored lanes the caller must redo (float_checked).
template <class T>
inline uint32_t store16(const Final& F, __m256i sums, __m256i off0, __m256 r0, __m256i off1,
                        __m256 r1, T* y, int64_t n) {
  const __m256i s0 = _mm256_add_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(sums)), off0);
  const __m256i s1 =
      _mm256_add_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(sums, 1)), off1);
  int redo0 = 0, redo1 = 0;
  const __m128i codes =
      _mm_unpacklo_epi64(narrow8(final8(F, s0, r0, &redo0)), narrow8(final8(F, s1, r1, &redo1)));
  store_codes16(reinterpret_cast<uint8_t*>(y), codes, n);
  const uint32_t redo = static_cast<uint32_t>(redo0) | static_cast<uint32_t>(redo1) << 8;
  return n >= 16 ? redo : redo & ((1u << n) - 1);
}

// idiv32_uniform of x8-qavgpool-u16-avx512.cpp on 16 lanes (the proof is
// there): codes of a row class whose stored lanes share one divisor d, from
// the biased 16-bit sums s and the lanes' a + h (ah); round half to even.
struct IdivRegs {
  bool odd, pow2;
  __m256i m, k;
  __m128i sh;
  explicit IdivRegs(const IdivUniform& U)
      : odd(U.odd),
        pow2(U.pow2),
        m(_mm256_set1_epi16(U.m)),
        k(_mm256_set1_epi16(U.k)),
        sh(_mm_cvtsi32_si128(U.sh)) {}
};

template <class T>
inline __m128i idiv16_uniform(const Final& F, const IdivRegs& U, __m256i s, __m256i ah) {
  const __m256i nh = _mm256_add_epi16(s, ah), one = _mm256_set1_epi16(1);
  __m256i q;
  if (U.pow2) {  // d >= 2, even
    q = _mm256_srl_epi16(nh, U.sh);
    const __m256i q2 = _mm256_srl_epi16(_mm256_sub_epi16(nh, one), U.sh);
    q = _mm256_add_epi16(q2, _mm256_and_si256(_mm256_sub_epi16(q, q2), q2));
  } else {
    q = _mm256_srl_epi16(_mm256_mulhi_epu16(nh, U.m), U.sh);
    if (!U.odd) {
      const __m256i q2 = _mm256_srl_epi16(_mm256_mulhi_epu16(_mm256_sub_epi16(nh, one), U.m), U.sh);
      q = _mm256_add_epi16(q2, _mm256_and_si256(_mm256_sub_epi16(q, q2), q2));
    }
  }
  q = _mm256_min_epi16(_mm256_max_epi16(_mm256_sub_epi16(q, U.k), F.lo16), F.hi16);
  const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
  // Clamped to the dtype's range: either saturation keeps the codes.
  return std::is_signed_v<T> ? _mm_packs_epi16(lo, hi) : _mm_packus_epi16(lo, hi);
}

// The reference's codes of the outputs of the set bits j of redo (rare,
// NCHW): output j is (oh, ow0 + j*dw) of the plane at plane + j*dc.
template <class T>
__attribute__((noinline)) void redo_lanes(const QAvgPlan& P, uint32_t redo, const T* plane,
                                          int64_t dc, int64_t sH, int64_t sW, int64_t oh,
                                          int64_t ow0, int64_t dw, T* y, int64_t ys) {
  for (uint32_t m = redo; m != 0; m &= m - 1) {
    const int j = __builtin_ctz(m);
    y[j * ys] = static_cast<T>(qavg_fmean_redo(P, plane + j * dc, sH, sW, oh, ow0 + j * dw));
  }
}

// Splits `count` items into chunks for the threads (each output is computed
// by one thread in a fixed order, whatever the split).
template <class B>
void for_chunks(int64_t count, const B& body) {
  const int64_t parts = std::min<int64_t>(count, std::max(1, num_threads()) * int64_t{8});
  const int64_t size = (count + parts - 1) / parts;
  if (parts <= 1 || num_threads() <= 1) return body(int64_t{0}, count);
  parallel_for((count + size - 1) / size,
               [&](int64_t chunk) { body(chunk * size, std::min(count, (chunk + 1) * size)); });
}

// NHWC lane shim of x8-qavgpool-u16-nhwc.inc: 32 channels per block (the
// channel tail through a zeroed 32-byte copy: AVX2 has no byte masks), and
// final8 (store16) per 16 channels.
constexpr int64_t kChannels = 32;

struct Sums {
  __m256i lo, hi;
};
inline Sums zero_sums() {
  return Sums{_mm256_setzero_si256(), _mm256_setzero_si256()};
}

template <class T>
inline void add_taps(Sums& s, const T* p, int64_t len) {
  __m256i b;
  if (len == 32) {
    b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  } else {
    alignas(32) uint8_t buf[32] = {};
    std::memcpy(buf, p, static_cast<size_t>(len));
    b = _mm256_load_si256(reinterpret_cast<const __m256i*>(buf));
  }
  // Lanes past len: biased 0, never stored.
  b = _mm256_xor_si256(b, _mm256_set1_epi8(std::is_signed_v<T> ? -128 : 0));
  s.lo = _mm256_add_epi16(s.lo, _mm256_cvtepu8_epi16(_mm256_castsi256_si128(b)));
  s.hi = _mm256_add_epi16(s.hi, _mm256_cvtepu8_epi16(_mm256_extracti128_si256(b, 1)));
}

struct PixelCtx {
  __m256i off;
  __m256 r;
};

struct PixelSetup {
  PixelSetup(const Final&, const QAvgPlan&) {}
  PixelCtx pixel(const Final& F, const QAvgPlan&, int64_t, int64_t, int32_t valid,
                 int32_t clipped) const {
    const LaneConsts u = lane_consts(F, valid, clipped);
    return PixelCtx{_mm256_set1_epi32(u.offset), _mm256_set1_ps(u.r)};
  }
};

template <class T>
inline uint64_t finish(const Final& F, const PixelCtx& px, const Sums& s, int64_t len, T* y) {
  uint64_t redo = store16(F, s.lo, px.off, px.r, px.off, px.r, y, len);
  if (len > 16)
    redo |= uint64_t{store16(F, s.hi, px.off, px.r, px.off, px.r, y + 16, len - 16)} << 16;
  return redo;
}

#include "ops/cpu/x8-qavgpool-u16-nhwc.inc"

// NCHW, stride_w 1 or 2, at most 257 taps: each input row of a plane is
// first copied into a zero-bordered row of the thread's buffer (s8 biased by
// +128; columns outside [0, W) read 0, which adds nothing), at buffer column
// b = input column - w.start, so that tap k of output o is column o*sw + k
// and every load is a plain one. Then per output row and 16 outputs, the
// 16-bit sums of its valid rows (stride 2: one vpmaddubsw per tap pair, the
// odd window's last tap the low byte of each pair), and the final step with
// the lane constants of the row's class (its valid/clipped row counts).
struct NchwGeometry {
  int64_t sw = 1, KW = 1, OW = 0, OWp = 0;  // OWp: OW rounded up to 16
  int64_t lead = 0;                         // buffer column of input column 0 (max(0, -w.start))
  int64_t shift = 0;  // buffer column of output 0's first tap (lead + w.start)
  int64_t width = 0;  // buffer columns per row (every load inside its row)
};

template <class T>
inline void fill_row(const T* src, int64_t W, uint8_t* dst) {
  const __m256i bias = _mm256_set1_epi8(std::is_signed_v<T> ? -128 : 0);
  int64_t c = 0;
  for (; c + 32 <= W; c += 32)
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(dst + c),
        _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + c)), bias));
  if (c == W) return;
  if (W >= 32) {  // the last 32 codes again (overlapping stores of the same bytes)
    c = W - 32;
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(dst + c),
        _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + c)), bias));
    return;
  }
  const __m128i b16 = _mm256_castsi256_si128(bias);
  if (W >= 16) {
    for (int64_t at : {int64_t{0}, W - 16})
      _mm_storeu_si128(
          reinterpret_cast<__m128i*>(dst + at),
          _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + at)), b16));
    return;
  }
  if (W >= 8) {
    for (int64_t at : {int64_t{0}, W - 8})
      _mm_storel_epi64(
          reinterpret_cast<__m128i*>(dst + at),
          _mm_xor_si128(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + at)), b16));
    return;
  }
  for (; c < W; ++c)
    dst[c] = static_cast<uint8_t>(static_cast<uint8_t>(src[c]) ^ (std::is_signed_v<T> ? 0x80 : 0));
}

// Biased 16-bit sums of 16 outputs (their first tap at row + 0) over one row.
template <int SW>
inline __m256i row_sum16(const uint8_t* row, int64_t KW) {
  __m256i sum = _mm256_setzero_si256();
  if constexpr (SW == 2) {
    const __m256i ones = _mm256_set1_epi8(1);
    int64_t k = 0;
    for (; k + 2 <= KW; k += 2)
      sum = _mm256_add_epi16(
          sum, _mm256_maddubs_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + k)),
                                    ones));
    if (k < KW)
      sum = _mm256_add_epi16(
          sum, _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + k)),
                                _mm256_set1_epi16(0xff)));
  } else {
    for (int64_t k = 0; k < KW; ++k)
      sum = _mm256_add_epi16(
          sum, _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + k))));
  }
  return sum;
}

// Per row class (distinct valid/clipped row counts): final8's lane constants
// (otab, rtab) and, when its stored lanes share one divisor, idiv16_uniform's
// (uni[c].ok, lane offsets aht); OWp lanes per class.
struct NchwTables {
  std::vector<int32_t> row_class, otab;
  std::vector<float> rtab;
  std::vector<IdivUniform> uni;
  std::vector<uint16_t> aht;
};

template <int SW, class T>
void nchw_plane(const Final& F, const QAvgPlan& P, const NchwGeometry& G, const T* xp, int64_t sH,
                uint8_t* buf, const NchwTables& tab, T* yp, int64_t ysH) {
  const int32_t* otab = tab.otab.data();
  const float* rtab = tab.rtab.data();
  for (int64_t h = 0; h < P.H; ++h) fill_row(xp + h * sH, P.W, buf + h * G.width + G.lead);
  for (int64_t oh = 0; oh < P.h.out; ++oh) {
    const uint8_t* row0 = buf + P.h.first[static_cast<size_t>(oh)] * G.width + G.shift;
    const int32_t vh = P.h.valid[static_cast<size_t>(oh)];
    const int32_t c = tab.row_class[static_cast<size_t>(oh)];
    const int64_t cls = c * G.OWp;
    T* yrow = yp + oh * ysH;
    const IdivUniform& u = tab.uni[static_cast<size_t>(c)];
    if (u.ok) {  // integer final step in 16-bit lanes
      const IdivRegs U(u);
      const uint16_t* ah = tab.aht.data() + cls;
      for (int64_t o = 0; o < G.OW; o += 16) {
        __m256i sum = _mm256_setzero_si256();
        for (int32_t r = 0; r < vh; ++r)
          sum = _mm256_add_epi16(sum, row_sum16<SW>(row0 + r * G.width + o * SW, G.KW));
        const bool spill = ysH == G.OW && oh * G.OW + o + 16 <= P.h.out * G.OW;
        store_codes16(reinterpret_cast<uint8_t*>(yrow + o),
                      idiv16_uniform<T>(
                          F, U, sum, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ah + o))),
                      spill ? 16 : G.OW - o);
      }
      continue;
    }
    for (int64_t o = 0; o < G.OW; o += 16) {
      __m256i sum = _mm256_setzero_si256();
      for (int32_t r = 0; r < vh; ++r)
        sum = _mm256_add_epi16(sum, row_sum16<SW>(row0 + r * G.width + o * SW, G.KW));
      const int32_t* off = otab + cls + o;
      const float* rr = rtab + cls + o;
      // A whole 16-byte store when its excess lands on outputs of this plane
      // that later blocks write (y rows contiguous): no partial store.
      const int64_t n = G.OW - o;
      const bool spill = ysH == G.OW && oh * G.OW + o + 16 <= P.h.out * G.OW;
      const uint32_t redo =
          store16(F, sum, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(off)),
                  _mm256_loadu_ps(rr),
                  _mm256_loadu_si256(reinterpret_cast<const __m256i*>(off + 8)),
                  _mm256_loadu_ps(rr + 8), yrow + o, spill ? 16 : n) &
          (n >= 16 ? 0xffffu : (1u << n) - 1);
      if (redo) redo_lanes(P, redo, xp, 0, sH, 1, oh, o, 1, yrow + o, 1);
    }
  }
}

// 2x2 windows, stride 2, every window on the input (no padding, no
// overhang), one row class with one divisor: the pair sums of the two input
// rows straight from x (vpmaddubsw; s8 biased as fill_row does), no row copy,
// then idiv16_uniform. A 32-byte load that would end past the tensor reads a
// zero-padded copy; its bytes past the row feed only lanes never stored.
template <class T>
void plane_2x2s2(const Final& F, const IdivRegs& U, const uint16_t* ah, const QAvgPlan& P,
                 const T* xp, int64_t sH, const uint8_t* x_end, T* yp, int64_t ysH) {
  const __m256i bias = _mm256_set1_epi8(std::is_signed_v<T> ? -128 : 0);
  const __m256i ones = _mm256_set1_epi8(1);
  auto pairs = [&](const T* p) {
    const auto* b = reinterpret_cast<const uint8_t*>(p);
    __m256i v;
    if (b + 32 <= x_end) {
      v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    } else {
      alignas(32) uint8_t buf[32] = {};
      std::memcpy(buf, b, static_cast<size_t>(x_end - b));
      v = _mm256_load_si256(reinterpret_cast<const __m256i*>(buf));
    }
    return _mm256_maddubs_epi16(_mm256_xor_si256(v, bias), ones);
  };
  const int64_t OH = P.h.out, OW = P.w.out;
  for (int64_t oh = 0; oh < OH; ++oh) {
    const T* r0 = xp + P.h.first[static_cast<size_t>(oh)] * sH;
    T* out = yp + oh * ysH;
    for (int64_t o = 0; o < OW; o += 16) {
      const __m256i sum = _mm256_add_epi16(pairs(r0 + 2 * o), pairs(r0 + sH + 2 * o));
      const __m128i codes = idiv16_uniform<T>(
          F, U, sum, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ah + o)));
      const bool spill = ysH == OW && oh * OW + o + 16 <= OH * OW;
      store_codes16(reinterpret_cast<uint8_t*>(out + o), codes, spill ? 16 : OW - o);
    }
  }
}

// Classes whose stored lanes share one divisor d >= 2 take idiv16_uniform
// (as the AVX-512 kernel's uniform classes): K the largest even lane
// multiple that makes offset + K*d >= 0, ah = offset + K*d + d/2.
void fill_uniform_classes(const Final& F, const QAvgPlan& P, const NchwGeometry& G,
                          const std::vector<std::pair<int32_t, int32_t>>& classes,
                          NchwTables& tab) {
  const std::vector<int32_t>& otab = tab.otab;
  const std::vector<float>& rtab = tab.rtab;
  const bool idiv = F.kind == Final::int_float_mean ||
                    (F.kind == Final::int_mean && F.rounding == Rounding::half_to_even);
  tab.uni.assign(classes.size(), IdivUniform{});
  tab.aht.assign(classes.size() * static_cast<size_t>(G.OWp), 0);
  for (size_t c = 0; c < classes.size() && idiv; ++c) {
    const size_t base = c * static_cast<size_t>(G.OWp);
    const float d_f = rtab[base];
    const auto d = static_cast<int32_t>(d_f);
    bool ok = d >= 2 && static_cast<float>(d) == d_f;
    int64_t k = 0;
    for (int64_t o = 0; o < G.OW && ok; ++o) {
      const int64_t off = otab[base + static_cast<size_t>(o)];
      ok = rtab[base + static_cast<size_t>(o)] == d_f;
      int64_t kl = off < 0 ? (-off + d - 1) / d : 0;
      kl += kl & 1;
      k = std::max(k, kl);
    }
    int64_t nh_max = 0;
    for (int64_t o = 0; o < G.OWp && ok; ++o) {
      const size_t at = base + static_cast<size_t>(o);
      const int64_t ah = o < G.OW ? otab[at] + k * d + d / 2 : 0;
      const int64_t valid = o < G.OW ? classes[c].first * P.w.valid[static_cast<size_t>(o)] : 0;
      nh_max = std::max(nh_max, 255 * valid + ah);
      ok = ah >= 0 && nh_max <= 32767;
      tab.aht[at] = static_cast<uint16_t>(ok ? ah : 0);
    }
    if (ok) tab.uni[c] = idiv_uniform(d, static_cast<int32_t>(k), static_cast<int32_t>(nh_max));
  }
}

template <class T>
void nchw(const QAvgPoolProblem& pr) {
  const QAvgPlan& P = pr.plan;
  const TensorView &x = pr.x, &y = pr.y;
  const Final F = make_final(P);
  NchwGeometry G;
  G.sw = P.w.stride;
  G.KW = P.w.kernel;
  G.OW = P.w.out;
  G.OWp = (G.OW + 15) / 16 * 16;
  G.lead = std::max<int64_t>(0, -P.w.start);
  G.shift = G.lead + P.w.start;
  // The last block's loads end before column shift + (OWp - 16)*sw + KW + 32.
  G.width = std::max(G.lead + P.W, G.shift + (G.OWp - 16) * G.sw + G.KW + 32);
  NchwTables tab;
  RowClasses rc = row_classes(
      P, G.OWp, [&](int32_t valid, int32_t clipped) { return lane_consts(F, valid, clipped); });
  const auto& classes = rc.keys;
  tab.row_class = std::move(rc.row_class);
  tab.otab = std::move(rc.otab);
  tab.rtab = std::move(rc.rtab);
  fill_uniform_classes(F, P, G, classes, tab);
  const int64_t sN = x.stride(0), sC = x.stride(1), sH = x.stride(2);
  const bool direct_2x2 = x.stride(0) >= 0 && x.stride(1) >= 0 && sH >= P.W && G.sw == 2 &&
                          G.KW == 2 && P.h.stride == 2 && P.h.kernel == 2 && P.w.start == 0 &&
                          P.h.start == 0 && 2 * G.OW <= P.W && 2 * P.h.out <= P.H &&
                          tab.uni.size() == 1 && tab.uni[0].ok;
  int64_t end_byte = 1;
  for (int d = 0; d < 4; ++d) end_byte += (x.dim(d) - 1) * x.stride(d);
  const uint8_t* x_end = static_cast<const uint8_t*>(x.raw()) + end_byte;
  for_chunks(P.N * P.C, [&](int64_t begin, int64_t end) {
    std::vector<uint8_t> buf(direct_2x2 ? 0 : static_cast<size_t>(P.H * G.width), 0);  // borders 0
    for (int64_t nc = begin; nc < end; ++nc) {
      const int64_t n = nc / P.C, c = nc % P.C;
      const T* xp = static_cast<const T*>(x.raw()) + n * sN + c * sC;
      T* yp = static_cast<T*>(y.raw()) + n * y.stride(0) + c * y.stride(1);
      if (direct_2x2)
        plane_2x2s2(F, IdivRegs(tab.uni[0]), tab.aht.data(), P, xp, sH, x_end, yp, y.stride(2));
      else if (G.sw == 2)
        nchw_plane<2>(F, P, G, xp, sH, buf.data(), tab, yp, y.stride(2));
      else
        nchw_plane<1>(F, P, G, xp, sH, buf.data(), tab, yp, y.stride(2));
    }
  });
}

}  // namespace

void x8_qavgpool_u16_nchw_avx2(const QAvgPoolProblem& p) {
  if (p.plan.dtype == DType::s8)
    nchw<int8_t>(p);
  else
    nchw<uint8_t>(p);
}

void x8_qavgpool_u16_nhwc_avx2(const QAvgPoolProblem& p) {
  if (p.plan.dtype == DType::s8)
    nhwc<int8_t>(p);
  else
    nhwc<uint8_t>(p);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
