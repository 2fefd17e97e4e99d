// ONNX Runtime's float path of QLinearAveragePool on NHWC, AVX2: the twin of
// x8-qavgpool-fmean-nhwc-avx512.cpp for hosts without AVX-512 (Zen 3). One
// lane per channel; every lane performs the reference's fp32 operations for
// its output in the reference's order: fsum = +0, then fsum + x_scale *
// float(x - x_zp) per valid tap in row-major (kh, kw) order, then fsum / div
// / y_scale + y_zp, clamped, rounded half to even (cvtps under the default
// rounding mode, which the plan's vector_tail guarantees). No FMA, no
// reassociation. 32 channels per step (four independent add chains); the
// channel tail goes through 8-byte scratch words (AVX2 has no byte masks).
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

// Up to 8 codes (n < 8: the rest read as code 0) as 8 int32 lanes.
template <class T>
inline __m256i widen8(const T* p, int64_t n) {
  __m128i b;
  if (n >= 8) {
    b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  } else {
    uint64_t w = 0;
    if (n > 0) std::memcpy(&w, p, static_cast<size_t>(n));
    b = _mm_cvtsi64_si128(static_cast<long long>(w));
  }
  return std::is_signed_v<T> ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
}

// Low byte of each int32 lane (values already within the code range), in
// lane order, as the low 8 bytes.
inline __m128i narrow8(__m256i v) {
  const __m256i pick =
      _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i b = _mm256_shuffle_epi8(v, pick);
  return _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1)));
}

template <class T>
inline void store8(T* p, __m128i codes, int64_t n) {
  if (n >= 8) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), codes);
  } else if (n > 0) {
    const auto w = static_cast<uint64_t>(_mm_cvtsi128_si64(codes));
    std::memcpy(p, &w, static_cast<size_t>(n));
  }
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
  const __m256 xs = _mm256_set1_ps(P.x_scale), ys = _mm256_set1_ps(P.y_scale);
  const __m256 zpf = _mm256_set1_ps(static_cast<float>(P.y_zp));
  const __m256 flo = _mm256_set1_ps(static_cast<float>(P.lo));
  const __m256 fhi = _mm256_set1_ps(static_cast<float>(P.hi));
  const __m256 rcp = _mm256_set1_ps(1.0f / static_cast<float>(taps));  // exact when pow2
  const __m256i xzp = _mm256_set1_epi32(P.x_zp);
  // x_scale * float(code - x_zp) of up to 8 channels.
  auto deq = [&](const T* p, int64_t n) {
    return _mm256_mul_ps(xs, _mm256_cvtepi32_ps(_mm256_sub_epi32(widen8(p, n), xzp)));
  };
  // The reference's final step of 8 sums with divisor d.
  auto final8 = [&](__m256 fsum, __m256 d) {
    __m256 v;
    if (pow2)
      v = _mm256_mul_ps(fsum, rcp);
    else if (area && ys_one)
      v = _mm256_div_ps(fsum, d);
    else
      v = _mm256_div_ps(_mm256_div_ps(fsum, d), ys);
    v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, zpf), flo), fhi);
    return narrow8(_mm256_cvtps_epi32(v));
  };
  parallel_for(P.N * OH, [&](int64_t row) {
    const int64_t n = row / OH, oh = row % OH;
    const int32_t vh = P.h.valid[static_cast<size_t>(oh)];
    const T* xn = static_cast<const T*>(x.raw()) + n * sN + P.h.first[static_cast<size_t>(oh)] * sH;
    T* yrow = static_cast<T*>(y.raw()) + n * ysN + oh * ysH;
    for (int64_t ow = 0; ow < OW; ++ow) {
      const int32_t vw = P.w.valid[static_cast<size_t>(ow)];
      const __m256 d = _mm256_set1_ps(static_cast<float>(area ? taps : vh * vw));
      const T* xw = xn + P.w.first[static_cast<size_t>(ow)] * sW;
      T* yp = yrow + ow * ysW;
      int64_t c = 0;
      for (; c + 32 <= C; c += 32) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int32_t r = 0; r < vh; ++r)
          for (int32_t q = 0; q < vw; ++q) {
            const T* p = xw + r * sH + q * sW + c;
            a0 = _mm256_add_ps(a0, deq(p, 8));
            a1 = _mm256_add_ps(a1, deq(p + 8, 8));
            a2 = _mm256_add_ps(a2, deq(p + 16, 8));
            a3 = _mm256_add_ps(a3, deq(p + 24, 8));
          }
        store8(yp + c, final8(a0, d), 8);
        store8(yp + c + 8, final8(a1, d), 8);
        store8(yp + c + 16, final8(a2, d), 8);
        store8(yp + c + 24, final8(a3, d), 8);
      }
      for (; c < C; c += 8) {  // 1-31 channels, 8 at a time, the last partial
        const int64_t len = std::min<int64_t>(8, C - c);
        __m256 a = _mm256_setzero_ps();
        for (int32_t r = 0; r < vh; ++r)
          for (int32_t q = 0; q < vw; ++q) a = _mm256_add_ps(a, deq(xw + r * sH + q * sW + c, len));
        store8(yp + c, final8(a, d), len);
      }
    }
  });
}

}  // namespace

void x8_qavgpool_fmean_nhwc_avx2(const QAvgPoolProblem& p) {
  if (p.plan.dtype == DType::s8)
    run<int8_t>(p);
  else
    run<uint8_t>(p);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
