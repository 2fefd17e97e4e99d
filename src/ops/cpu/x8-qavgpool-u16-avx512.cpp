// QLinearAveragePool / bm_pool_quantized average with 16-bit window sums and
// the final step in registers (x8_qavgpool_u16_{nchw,nhwc}_avx512): window
// sums of 32-64 outputs stay in one register from the first tap to the stored
// codes, with no int32 sum buffer or per-block tail call in between. The final
// step per lane is the vector tail of x8-qavgpool-body.inc, operation for
// operation (fp32 ones included), so the codes are the reference's bit for bit
// (qavgpool.hpp explains why each form equals the reference's scalar step);
// u16_final_supported names the cases it covers.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl")
// GCC 12 flags the undefined source operand inside its unmasked AVX-512
// intrinsics (cvtepi32_ps, mullo, ...): a false positive.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace npukit::cpu {
namespace {

// Per-call constants of the final step, broadcast once.
struct Final {
  enum Kind { float_mean, requant, int_mean, bm_shift } kind = float_mean;
  bool s8 = false, area = false;  // area: the divisor is kernel_area
  bool pow2_rcp = false;          // float_mean, area, ys == 1, taps a power of 2
  bool ys_one = false, zp_inside = false;
  Rounding rounding = Rounding::half_to_even;
  int rshift = 0;
  AvgDivisor divisor = AvgDivisor::valid_count;
  __m512i lo, hi, y_zp, x_zp, taps, sum_m, bias;
  __m512 flo, fhi, zpf, div_area, rcp, ys, pow2, ratio, rlo, rhi;
};

Final make_final(const QAvgPlan& P) {
  Final F;
  F.s8 = P.dtype == DType::s8;
  F.divisor = P.divisor;
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
  F.rshift = P.bm_rshift;
  const int32_t lo = P.bm_shift && P.bm_relu && P.lo < 0 ? 0 : P.lo;  // ReLU after saturation
  F.lo = _mm512_set1_epi32(lo);
  F.hi = _mm512_set1_epi32(P.hi);
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
  return F;
}

// Round half to even of values already clamped to the code range.
inline __m512i round_even(__m512 v) {
  return _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// int_mean: round(s / d) under the plan's rule, d >= 1, |s| < 2^24 (the Small
// form of div_round_rule: truncated fp32 quotient, then two exact correction
// steps each way put the remainder in [0, d)).
inline __m512i div_round(const Final& F, __m512i s, __m512i d) {
  __m512i q = _mm512_cvttps_epi32(_mm512_div_ps(_mm512_cvtepi32_ps(s), _mm512_cvtepi32_ps(d)));
  __m512i rem = _mm512_sub_epi32(s, _mm512_mullo_epi32(q, d));
  const __m512i one = _mm512_set1_epi32(1), zero = _mm512_setzero_si512();
  for (int step = 0; step < 2; ++step) {
    const __mmask16 neg = _mm512_cmplt_epi32_mask(rem, zero);
    q = _mm512_mask_sub_epi32(q, neg, q, one);
    rem = _mm512_mask_add_epi32(rem, neg, rem, d);
    const __mmask16 over = _mm512_cmpge_epi32_mask(rem, d);
    q = _mm512_mask_add_epi32(q, over, q, one);
    rem = _mm512_mask_sub_epi32(rem, over, rem, d);
  }
  const __m512i twice = _mm512_add_epi32(rem, rem);
  const __mmask16 odd = _mm512_test_epi32_mask(q, one);
  const __mmask16 qneg = _mm512_cmplt_epi32_mask(q, zero);
  const __mmask16 above = _mm512_cmpgt_epi32_mask(twice, d);
  const __mmask16 tie = _mm512_cmpeq_epi32_mask(twice, d);
  const __mmask16 nonzero = _mm512_cmpneq_epi32_mask(rem, zero);
  __mmask16 up = 0;
  switch (F.rounding) {
    case Rounding::floor:
      up = 0;
      break;
    case Rounding::ceil:
      up = nonzero;
      break;
    case Rounding::toward_zero:
      up = nonzero & qneg;
      break;
    case Rounding::half_to_even:
      up = above | (tie & odd);
      break;
    case Rounding::half_up:
      up = above | tie;
      break;
    case Rounding::half_down:
      up = above;
      break;
    case Rounding::half_away_from_zero:
      up = above | (tie & static_cast<__mmask16>(~qneg));
      break;
    case Rounding::half_toward_zero:
      up = above | (tie & qneg);
      break;
  }
  return _mm512_mask_add_epi32(q, up, q, one);
}

// Codes of 16 outputs from their exact code sums s and tap counts (the vector
// tail of x8-qavgpool-body.inc per lane; clamping before rounding equals the
// reference's round-then-clamp: the bounds are integers, rounding monotone).
inline __m512i final16(const Final& F, __m512i s, __m512i valid, __m512i clipped) {
  switch (F.kind) {
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
      const __m512i d = F.area ? F.taps : valid;
      const __mmask16 empty = _mm512_cmple_epi32_mask(d, _mm512_setzero_si512());
      const __m512i q = div_round(F, s, _mm512_mask_mov_epi32(d, empty, _mm512_set1_epi32(1)));
      return _mm512_mask_mov_epi32(_mm512_min_epi32(_mm512_max_epi32(q, F.lo), F.hi), empty,
                                   F.y_zp);
    }
    case Final::requant: {
      const __m512i d = F.area ? F.taps : F.divisor == AvgDivisor::clipped_window ? clipped : valid;
      // ratio / d, and 0 where d == 0 (gives y_zp, the reference's empty window).
      const __mmask16 some = _mm512_cmpgt_epi32_mask(d, _mm512_setzero_si512());
      const __m512 m = _mm512_maskz_div_ps(some, F.ratio, _mm512_cvtepi32_ps(d));
      const __m512i acc = _mm512_sub_epi32(s, _mm512_mullo_epi32(F.x_zp, valid));
      const __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), m);
      if (F.zp_inside)
        return round_even(_mm512_min_ps(_mm512_max_ps(_mm512_add_ps(v, F.zpf), F.flo), F.fhi));
      return _mm512_add_epi32(round_even(_mm512_min_ps(_mm512_max_ps(v, F.rlo), F.rhi)), F.y_zp);
    }
    case Final::float_mean:
      break;
  }
  // exact_float_sum: the reference's fp32 sum is float(sum_m * acc) * 2^k.
  const __m512i acc = _mm512_sub_epi32(s, _mm512_mullo_epi32(F.x_zp, valid));
  const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_mullo_epi32(F.sum_m, acc)), F.pow2);
  __m512 v;
  if (F.area) {
    if (F.pow2_rcp)
      v = _mm512_mul_ps(f, F.rcp);  // x / 2^j == x * 2^-j exactly
    else if (F.ys_one)
      v = _mm512_div_ps(f, F.div_area);
    else
      v = _mm512_div_ps(_mm512_div_ps(f, F.div_area), F.ys);
  } else {
    v = _mm512_div_ps(_mm512_div_ps(f, _mm512_cvtepi32_ps(valid)), F.ys);
  }
  v = _mm512_add_ps(v, F.zpf);
  return round_even(_mm512_min_ps(_mm512_max_ps(v, F.flo), F.fhi));
}

// Codes of the 16 outputs whose biased 16-bit sums are in `half`, with
// valid/clipped tap counts per lane.
inline __m128i codes16(const Final& F, __m256i half, __m512i valid, __m512i clipped) {
  __m512i s = _mm512_maskz_cvtepu16_epi32(0xffff, half);
  if (F.s8) s = _mm512_sub_epi32(s, _mm512_mullo_epi32(F.bias, valid));  // taps were biased by 128
  return _mm512_cvtepi32_epi8(final16(F, s, valid, clipped));
}

// Stores the codes of outputs [0, n) (n <= 32) whose biased 16-bit sums are in
// sum16. Tap counts: vh * vw[i] and ch * cw[i] per lane (Uniform: vh and ch
// themselves in every lane).
// Counts come from registers and read-only tables: a vector load of counts
// just stored as scalars would stall on store forwarding.
template <bool Uniform>
inline void store32(const Final& F, __m512i sum16, int32_t vh, int32_t ch, const int32_t* vw,
                    const int32_t* cw, int64_t n, void* y) {
  const __m512i vh16 = _mm512_set1_epi32(vh), ch16 = _mm512_set1_epi32(ch);
  // maskz forms: GCC 12 warns about the undefined operand of the plain ones.
  const __m256i lo_half = _mm512_maskz_extracti64x4_epi64(0xff, sum16, 0);
  const __m128i lo = Uniform ? codes16(F, lo_half, vh16, ch16)
                             : codes16(F, lo_half, _mm512_mullo_epi32(vh16, _mm512_loadu_si512(vw)),
                                       _mm512_mullo_epi32(ch16, _mm512_loadu_si512(cw)));
  if (n <= 16) {
    _mm_mask_storeu_epi8(y, n >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << n) - 1),
                         lo);
    return;
  }
  const __m256i hi_half = _mm512_maskz_extracti64x4_epi64(0xff, sum16, 1);
  const __m128i hi =
      Uniform ? codes16(F, hi_half, vh16, ch16)
              : codes16(F, hi_half, _mm512_mullo_epi32(vh16, _mm512_loadu_si512(vw + 16)),
                        _mm512_mullo_epi32(ch16, _mm512_loadu_si512(cw + 16)));
  const __m256i both = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
  const __mmask32 m = n >= 32 ? ~__mmask32(0) : (__mmask32(1) << n) - 1;
  _mm256_mask_storeu_epi8(y, m, both);
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

// 2x2 windows at stride 2 lying on the input: one output row from its two
// input rows, vpmaddubsw adding byte pairs (s8 biased by +128 into u8).
template <class T>
void plane_k2s2(const Final& F, const T* xp, int64_t sH, int64_t OH, int64_t OW, const T* xend,
                T* yp, int64_t ysH) {
  const __m512i bias = _mm512_set1_epi8(F.s8 ? -128 : 0);
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t oh = 0; oh < OH; ++oh) {
    const T* r0 = xp + 2 * oh * sH;
    const T* r1 = r0 + sH;
    for (int64_t o = 0; o < OW; o += 32) {
      const int64_t bytes = std::min<int64_t>(64, 2 * (OW - o));
      __m512i a, b;
      if (bytes == 64 || r1 + 2 * o + 64 <= xend) {
        a = _mm512_loadu_si512(r0 + 2 * o);
        b = _mm512_loadu_si512(r1 + 2 * o);
      } else {
        const __mmask64 m = (uint64_t{1} << bytes) - 1;
        a = _mm512_maskz_loadu_epi8(m, r0 + 2 * o);
        b = _mm512_maskz_loadu_epi8(m, r1 + 2 * o);
      }
      const __m512i sum = _mm512_add_epi16(_mm512_maddubs_epi16(_mm512_xor_si512(a, bias), ones),
                                           _mm512_maddubs_epi16(_mm512_xor_si512(b, bias), ones));
      store32<true>(F, sum, 4, 4, nullptr, nullptr, OW - o, yp + oh * ysH + o);
    }
  }
}

// Windows of at most 257 taps (255 * 257 < 2^16) at stride_w 1 or 2, in three
// passes over the plane (a buffer read right after its masked store would
// stall on store forwarding): column sums of every output row's valid input
// rows into its zero-bordered row of col (pitch apart, s8 biased by +128),
// then (stride 2) the even/odd split of col, then per 32 outputs the KW
// column sums of their row and the final step. Exact in any order.
template <class T>
void plane_u16(const Final& F, const QAvgPlan& P, const T* xp, int64_t sH, uint16_t* col,
               int64_t pitch, int64_t off, uint16_t* ev, uint16_t* od, const int32_t* vw,
               const int32_t* cw, T* yp, int64_t ysH) {
  const __m256i bias = _mm256_set1_epi8(F.s8 ? static_cast<char>(0x80) : 0);
  const QAvgAxis& ah = P.h;
  const int64_t OH = ah.out, OW = P.w.out, W = P.W, KW = P.w.kernel, sw = P.w.stride;
  const int64_t b0 = P.w.start + off;  // col index of output 0's tap 0
  for (int64_t oh = 0; oh < OH; ++oh) {
    const auto* src = reinterpret_cast<const uint8_t*>(xp + ah.first[static_cast<size_t>(oh)] * sH);
    const int64_t vh = ah.valid[static_cast<size_t>(oh)];
    uint16_t* dst = col + oh * pitch + off;
    for (int64_t i = 0; i < W; i += 32) {
      const int64_t n = std::min<int64_t>(32, W - i);
      const __mmask32 m = n == 32 ? ~__mmask32(0) : (__mmask32(1) << n) - 1;
      __m512i sum = _mm512_setzero_si512();
      for (int64_t r = 0; r < vh; ++r) {
        const __m256i b = _mm256_xor_si256(_mm256_maskz_loadu_epi8(m, src + r * sH + i), bias);
        sum = _mm512_add_epi16(sum, _mm512_maskz_cvtepu8_epi16(~__mmask32(0), b));
      }
      _mm512_mask_storeu_epi16(dst + i, m, sum);
    }
  }
  if (sw == 2) {
    alignas(64) uint16_t even_index[32];
    for (int i = 0; i < 32; ++i) even_index[i] = static_cast<uint16_t>(2 * i);
    const __m512i even = _mm512_load_si512(even_index);
    const __m512i odd = _mm512_add_epi16(even, _mm512_set1_epi16(1));
    const int64_t halves = OH * pitch / 2 + 32;
    for (int64_t j = 0; j < halves; j += 32) {
      const __m512i a = _mm512_loadu_si512(col + 2 * j), b = _mm512_loadu_si512(col + 2 * j + 32);
      _mm512_storeu_si512(ev + j, _mm512_permutex2var_epi16(a, even, b));
      _mm512_storeu_si512(od + j, _mm512_permutex2var_epi16(a, odd, b));
    }
  }
  for (int64_t oh = 0; oh < OH; ++oh) {
    const int64_t row0 = oh * pitch + b0;
    const int32_t vh = ah.valid[static_cast<size_t>(oh)];
    const int32_t ch = ah.clipped[static_cast<size_t>(oh)];
    for (int64_t o = 0; o < OW; o += 32) {
      __m512i sum = _mm512_setzero_si512();
      for (int64_t k = 0; k < KW; ++k) {
        // Stride 2: position row0 + k + 2o lies in its parity's half at (row0 + k) / 2 + o.
        const uint16_t* p =
            sw == 1 ? col + row0 + k : ((row0 + k) % 2 == 0 ? ev : od) + (row0 + k) / 2;
        sum = _mm512_add_epi16(sum, _mm512_loadu_si512(p + o));
      }
      store32<false>(F, sum, vh, ch, vw + o, cw + o, OW - o, yp + oh * ysH + o);
    }
  }
}

template <class T>
void nchw(const QAvgPoolProblem& pr) {
  const QAvgPlan& P = pr.plan;
  const TensorView &x = pr.x, &y = pr.y;
  const Final F = make_final(P);
  const int64_t OH = P.h.out, OW = P.w.out, KW = P.w.kernel, sw = P.w.stride, W = P.W;
  const int64_t OWp = (OW + 31) / 32 * 32;
  const int64_t pmin = std::min<int64_t>(0, P.w.start);
  const int64_t pmax = std::max<int64_t>(W, P.w.start + (OWp - 1) * sw + KW);
  const int64_t width = pmax - pmin + 32, off = -pmin;  // off: col index of input column 0
  const int64_t pitch = (width + 1) / 2 * 2;
  const int64_t sN = x.stride(0), sC = x.stride(1), sH = x.stride(2);
  const bool k2s2 =
      P.h.kernel == 2 && P.w.kernel == 2 && P.h.stride == 2 && sw == 2 && P.h.start == 0 &&
      P.w.start == 0 && !P.h.any_empty &&
      std::all_of(P.h.valid.begin(), P.h.valid.end(), [](int32_t v) { return v == 2; }) &&
      std::all_of(P.w.valid.begin(), P.w.valid.end(), [](int32_t v) { return v == 2; });
  const T* xend = static_cast<const T*>(x.raw()) + (P.N - 1) * sN + (P.C - 1) * sC +
                  (P.H - 1) * sH + P.W;  // the end of x's data
  // Tap counts along W (padded lanes: 1).
  std::vector<int32_t> vw(static_cast<size_t>(OWp), 1), cw(static_cast<size_t>(OWp), 1);
  for (int64_t o = 0; o < OW; ++o) {
    vw[static_cast<size_t>(o)] = P.w.valid[static_cast<size_t>(o)];
    cw[static_cast<size_t>(o)] = P.w.clipped[static_cast<size_t>(o)];
  }
  for_chunks(P.N * P.C, [&](int64_t begin, int64_t end) {
    // Zero-bordered column sums (slack for whole-vector reads past the end).
    const auto size = static_cast<size_t>(k2s2 ? 0 : OH * pitch + 2 * pitch + 512);
    std::vector<uint16_t> col(size, 0), ev(sw == 2 ? size : 0), od(sw == 2 ? size : 0);
    for (int64_t nc = begin; nc < end; ++nc) {
      const int64_t n = nc / P.C, c = nc % P.C;
      const T* xp = static_cast<const T*>(x.raw()) + n * sN + c * sC;
      T* yp = static_cast<T*>(y.raw()) + n * y.stride(0) + c * y.stride(1);
      if (k2s2)
        plane_k2s2(F, xp, sH, OH, OW, xend, yp, y.stride(2));
      else
        plane_u16(F, P, xp, sH, col.data(), pitch, off, ev.data(), od.data(), vw.data(), cw.data(),
                  yp, y.stride(2));
    }
  });
}

// NHWC: per output pixel, its valid taps' channel runs added in 16-bit lanes,
// 64 channels at a time (s8 biased by +128), then the final step.
template <class T>
void nhwc(const QAvgPoolProblem& pr) {
  const QAvgPlan& P = pr.plan;
  const TensorView &x = pr.x, &y = pr.y;
  const Final F = make_final(P);
  const int64_t OH = P.h.out, OW = P.w.out, C = P.C;
  const int64_t sN = x.stride(0), sH = x.stride(2), sW = x.stride(3);
  const __m512i bias = _mm512_set1_epi8(F.s8 ? -128 : 0);
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
        const int32_t v = vh * vw, cl = ch * P.w.clipped[static_cast<size_t>(ow)];
        const T* xw = xn + P.w.first[static_cast<size_t>(ow)] * sW;
        T* yp = yrow + ow * y.stride(3);
        for (int64_t c = 0; c < C; c += 64) {
          const int64_t len = std::min<int64_t>(64, C - c);
          const __mmask64 m = len == 64 ? ~__mmask64(0) : (__mmask64(1) << len) - 1;
          __m512i lo = _mm512_setzero_si512(), hi = lo;
          for (int32_t r = 0; r < vh; ++r)
            for (int32_t q = 0; q < vw; ++q) {
              const __m512i b =
                  _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, xw + r * sH + q * sW + c), bias);
              lo = _mm512_add_epi16(
                  lo, _mm512_maskz_cvtepu8_epi16(~__mmask32(0),
                                                 _mm512_maskz_extracti64x4_epi64(0xff, b, 0)));
              hi = _mm512_add_epi16(
                  hi, _mm512_maskz_cvtepu8_epi16(~__mmask32(0),
                                                 _mm512_maskz_extracti64x4_epi64(0xff, b, 1)));
            }
          store32<true>(F, lo, v, cl, nullptr, nullptr, len, yp + c);
          if (len > 32) store32<true>(F, hi, v, cl, nullptr, nullptr, len - 32, yp + c + 32);
        }
      }
    }
  });
}

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

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif
#endif
