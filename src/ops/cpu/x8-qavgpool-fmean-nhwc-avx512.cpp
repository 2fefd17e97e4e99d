// ONNX Runtime's float path of QLinearAveragePool (QAvgArith::float_mean with
// scales whose fp32 sums need their order) on NHWC, AVX-512: one lane per
// channel, and every lane performs the reference's fp32 operations for its
// output in the reference's order: fsum = +0, then fsum + x_scale *
// float(x - x_zp) for each valid tap in row-major (kh, kw) order (padding
// taps are not added, as in the reference), then fsum / div / y_scale + y_zp,
// clamped and rounded half to even (the vector tail of x8-qavgpool-body.inc;
// pow2 divisors multiply by the exact reciprocal, division by 1 is skipped:
// both exact). No FMA, no reassociation. 64 channels per step: four
// independent chains hide the add latency.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu {
namespace {

// x_scale * float(code - x_zp) of 16 codes (masked-off lanes: code 0).
template <class T>
inline __m512 dequantize16(const T* p, __mmask16 m, __m512i zp, __m512 xs) {
  const __m128i b = _mm_maskz_loadu_epi8(m, p);
  const __m512i i = std::is_signed_v<T> ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
  return _mm512_mul_ps(xs, _mm512_cvtepi32_ps(_mm512_sub_epi32(i, zp)));
}

// The first n lanes (none for n <= 0).
inline __mmask16 lanes(int64_t n) {
  return n >= 16  ? __mmask16(0xffff)
         : n <= 0 ? __mmask16(0)
                  : static_cast<__mmask16>((1u << n) - 1);
}

template <class T>
void run(const QAvgPoolProblem& pr) {
  const QAvgPlan& P = pr.plan;
  const TensorView &x = pr.x, &y = pr.y;
  const int64_t OH = P.h.out, OW = P.w.out, C = P.C;
  const int64_t sN = x.stride(0), sH = x.stride(2), sW = x.stride(3);
  const int64_t ysN = y.stride(0), ysH = y.stride(2), ysW = y.stride(3);
  const auto taps = static_cast<int32_t>(P.taps);
  const bool area = P.divisor == AvgDivisor::kernel_area;
  const bool ys_one = P.y_scale == 1.0f;
  const bool pow2 = area && ys_one && (taps & (taps - 1)) == 0;
  const __m512 xs = _mm512_set1_ps(P.x_scale), ys = _mm512_set1_ps(P.y_scale);
  const __m512 zpf = _mm512_set1_ps(static_cast<float>(P.y_zp));
  const __m512 flo = _mm512_set1_ps(static_cast<float>(P.lo));
  const __m512 fhi = _mm512_set1_ps(static_cast<float>(P.hi));
  const __m512 rcp = _mm512_set1_ps(1.0f / static_cast<float>(taps));  // exact when pow2
  const __m512i xzp = _mm512_set1_epi32(P.x_zp);
  // The reference's final step of 16 sums with divisor d.
  auto final16 = [&](__m512 fsum, __m512 d) {
    __m512 v;
    if (pow2)
      v = _mm512_mul_ps(fsum, rcp);
    else if (area && ys_one)
      v = _mm512_div_ps(fsum, d);
    else
      v = _mm512_div_ps(_mm512_div_ps(fsum, d), ys);
    v = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(v, zpf), flo), fhi);
    return _mm512_cvtepi32_epi8(
        _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  };
  parallel_for(P.N * OH, [&](int64_t row) {
    const int64_t n = row / OH, oh = row % OH;
    const int32_t vh = P.h.valid[static_cast<size_t>(oh)];
    const T* xn = static_cast<const T*>(x.raw()) + n * sN + P.h.first[static_cast<size_t>(oh)] * sH;
    T* yrow = static_cast<T*>(y.raw()) + n * ysN + oh * ysH;
    for (int64_t ow = 0; ow < OW; ++ow) {
      const int32_t vw = P.w.valid[static_cast<size_t>(ow)];
      const __m512 d = _mm512_set1_ps(static_cast<float>(area ? taps : vh * vw));
      const T* xw = xn + P.w.first[static_cast<size_t>(ow)] * sW;
      T* yp = yrow + ow * ysW;
      for (int64_t c = 0; c < C; c += 64) {
        const __mmask16 m0 = lanes(C - c), m1 = lanes(C - c - 16), m2 = lanes(C - c - 32),
                        m3 = lanes(C - c - 48);
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int32_t r = 0; r < vh; ++r)
          for (int32_t q = 0; q < vw; ++q) {
            const T* p = xw + r * sH + q * sW + c;
            a0 = _mm512_add_ps(a0, dequantize16(p, m0, xzp, xs));
            if (m1) a1 = _mm512_add_ps(a1, dequantize16(p + 16, m1, xzp, xs));
            if (m2) a2 = _mm512_add_ps(a2, dequantize16(p + 32, m2, xzp, xs));
            if (m3) a3 = _mm512_add_ps(a3, dequantize16(p + 48, m3, xzp, xs));
          }
        _mm_mask_storeu_epi8(yp + c, m0, final16(a0, d));
        if (m1) _mm_mask_storeu_epi8(yp + c + 16, m1, final16(a1, d));
        if (m2) _mm_mask_storeu_epi8(yp + c + 32, m2, final16(a2, d));
        if (m3) _mm_mask_storeu_epi8(yp + c + 48, m3, final16(a3, d));
      }
    }
  });
}

}  // namespace

void x8_qavgpool_fmean_nhwc_avx512(const QAvgPoolProblem& p) {
  if (p.plan.dtype == DType::s8)
    run<int8_t>(p);
  else
    run<uint8_t>(p);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
