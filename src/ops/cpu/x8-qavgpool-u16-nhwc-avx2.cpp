// QLinearAveragePool / bm_pool_quantized average on NHWC with 16-bit window
// sums and the final step in registers, AVX2 (x8_qavgpool_u16_nhwc_avx2): the
// twin of x8-qavgpool-u16-avx512.cpp's NHWC kernel for hosts without AVX-512
// (Zen 3). Same cases (qavg_u16_declines) and the same final step per lane;
// the proofs that its integer forms equal the reference are at final16 and
// round_rule in that file. 32 channels per step; the channel tail goes through
// a zeroed 32-byte copy (AVX2 has no byte masks).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {
namespace {

// Per-call constants of the final step, broadcast once.
struct Final {
  enum Kind { float_mean, int_float_mean, requant, int_mean, bm_shift } kind = float_mean;
  bool area = false;      // the divisor is kernel_area
  bool pow2_rcp = false;  // float_mean, area, ys == 1, taps a power of 2
  bool ys_one = false, zp_inside = false;
  Rounding rounding = Rounding::half_to_even;
  int rshift = 0;
  __m256i lo, hi, y_zp, sum_m;
  __m256 flo, fhi, zpf, div_area, rcp, ys, pow2, rlo, rhi;
};

Final make_final(const QAvgPlan& P) {
  Final F;
  F.area = P.divisor == AvgDivisor::kernel_area;
  F.rounding = P.rounding;
  F.zp_inside = P.zp_inside;
  F.ys_one = P.y_scale == 1.0f;
  const auto taps = static_cast<int32_t>(P.taps);
  F.pow2_rcp = F.area && F.ys_one && (taps & (taps - 1)) == 0;
  F.kind = P.bm_shift                              ? Final::bm_shift
           : P.arith == QAvgArith::int_mean        ? Final::int_mean
           : P.arith == QAvgArith::int_sum_requant ? Final::requant
                                                   : Final::float_mean;
  if (F.kind == Final::float_mean && P.sum_m == 1 && P.x_scale == P.y_scale &&
      P.y_scale >= 0x1p-60f && P.y_scale <= 0x1p60f)
    F.kind = Final::int_float_mean;
  F.rshift = P.bm_rshift;
  const int32_t lo = P.bm_shift && P.bm_relu && P.lo < 0 ? 0 : P.lo;  // ReLU after saturation
  F.lo = _mm256_set1_epi32(lo);
  F.hi = _mm256_set1_epi32(P.hi);
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
// multiplier (see lane_consts).
inline __m256i final8(const Final& F, __m256i s, __m256 r) {
  switch (F.kind) {
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

// A window's constants for final8: the integer added to its biased sum and r
// (lane_consts of x8-qavgpool-u16-avx512.cpp).
struct LaneConsts {
  int32_t offset = 0;
  float r = 1;
};
LaneConsts lane_consts(const Final& F, const QAvgPlan& P, bool s8, int32_t valid, int32_t clipped) {
  const auto taps = static_cast<int32_t>(P.taps);
  const int32_t d = F.area ? taps : P.divisor == AvgDivisor::clipped_window ? clipped : valid;
  LaneConsts c;
  c.offset = -(s8 ? 128 : 0) * valid;  // the taps' bias
  switch (F.kind) {
    case Final::bm_shift:
      break;
    case Final::int_mean:
      c.r = static_cast<float>(d > 0 ? d : 0);
      break;
    case Final::int_float_mean:
      c.offset += -P.x_zp * valid + P.y_zp * d;
      c.r = static_cast<float>(d);
      break;
    case Final::requant:
      c.offset -= P.x_zp * valid;
      c.r = d > 0 ? P.scale_ratio / static_cast<float>(d) : 0.0f;  // 0: y_zp
      break;
    case Final::float_mean:
      c.offset -= P.x_zp * valid;
      c.r = static_cast<float>(valid > 0 ? valid : 1);
      break;
  }
  return c;
}

// Low byte of each int32 lane (codes), in lane order, as the low 8 bytes.
inline __m128i narrow8(__m256i v) {
  const __m256i pick =
      _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
      _mm256_shuffle_epi8(v, pick), _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1)));
}

// Codes of the 16 windows whose biased sums are the u16 lanes of `sums`,
// stored to y[0, n) (n <= 16).
template <class T>
inline void store16(const Final& F, __m256i sums, __m256i off, __m256 r, T* y, int64_t n) {
  const __m256i s0 = _mm256_add_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(sums)), off);
  const __m256i s1 =
      _mm256_add_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(sums, 1)), off);
  const __m128i codes = _mm_unpacklo_epi64(narrow8(final8(F, s0, r)), narrow8(final8(F, s1, r)));
  if (n >= 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y), codes);
  } else if (n > 0) {
    alignas(16) uint8_t buf[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(buf), codes);
    std::memcpy(y, buf, static_cast<size_t>(n));
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

// Per output pixel, its valid taps' channel runs added in 16-bit lanes, 32
// channels at a time (s8 biased by +128), then the final step. Integer sums
// are exact in any order (at most 257 taps: 255 * 257 < 2^16).
template <class T>
void nhwc(const QAvgPoolProblem& pr) {
  const QAvgPlan& P = pr.plan;
  const TensorView &x = pr.x, &y = pr.y;
  const Final F = make_final(P);
  constexpr bool s8 = std::is_signed_v<T>;
  const int64_t OH = P.h.out, OW = P.w.out, C = P.C;
  const int64_t sN = x.stride(0), sH = x.stride(2), sW = x.stride(3);
  const __m256i bias = _mm256_set1_epi8(s8 ? -128 : 0);
  for_chunks(P.N * OH, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / OH, oh = row % OH;
      const int32_t vh = P.h.valid[static_cast<size_t>(oh)];
      const int32_t ch = P.h.clipped[static_cast<size_t>(oh)];
      const T* xn =
          static_cast<const T*>(x.raw()) + n * sN + P.h.first[static_cast<size_t>(oh)] * sH;
      T* yrow = static_cast<T*>(y.raw()) + n * y.stride(0) + oh * y.stride(2);
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int32_t vw = P.w.valid[static_cast<size_t>(ow)];
        const LaneConsts u =
            lane_consts(F, P, s8, vh * vw, ch * P.w.clipped[static_cast<size_t>(ow)]);
        const __m256i off = _mm256_set1_epi32(u.offset);
        const __m256 r = _mm256_set1_ps(u.r);
        const T* xw = xn + P.w.first[static_cast<size_t>(ow)] * sW;
        T* yp = yrow + ow * y.stride(3);
        for (int64_t c = 0; c < C; c += 32) {
          const int64_t len = std::min<int64_t>(32, C - c);
          __m256i lo = _mm256_setzero_si256(), hi = lo;
          for (int32_t rr = 0; rr < vh; ++rr)
            for (int32_t q = 0; q < vw; ++q) {
              const T* p = xw + rr * sH + q * sW + c;
              __m256i b;
              if (len == 32) {
                b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
              } else {
                alignas(32) uint8_t buf[32] = {};
                std::memcpy(buf, p, static_cast<size_t>(len));
                b = _mm256_load_si256(reinterpret_cast<const __m256i*>(buf));
              }
              b = _mm256_xor_si256(b, bias);  // lanes past len: biased 0, never stored
              lo = _mm256_add_epi16(lo, _mm256_cvtepu8_epi16(_mm256_castsi256_si128(b)));
              hi = _mm256_add_epi16(hi, _mm256_cvtepu8_epi16(_mm256_extracti128_si256(b, 1)));
            }
          store16(F, lo, off, r, yp + c, len);
          if (len > 16) store16(F, hi, off, r, yp + c + 16, len - 16);
        }
      }
    }
  });
}

}  // namespace

void x8_qavgpool_u16_nhwc_avx2(const QAvgPoolProblem& p) {
  if (p.plan.dtype == DType::s8)
    nhwc<int8_t>(p);
  else
    nhwc<uint8_t>(p);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
