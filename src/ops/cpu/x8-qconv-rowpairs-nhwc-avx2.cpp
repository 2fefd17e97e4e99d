// AVX2 row-pairs convolution (qconv_rowpairs.hpp): per image, the rows a run
// of output rows reads are copied as int16 x' (x_zp' in the padding) into a
// per-thread scratch of a few KB; then per block of 4 pixels of an output
// row and 8 output channels, each window row's pairs are broadcast dwords of
// that copy (no mask or shift: the codes are already int16) against 8 lanes
// of int16 weight pairs, vpmaddwd summing two exact products per lane. The
// requantization is the channels-last GEMM's: float(acc) * m clamped above,
// rounded to nearest even, clamped below by saturating packs; 4 pixels' 8
// codes leave as one 32-byte vector.
#include "ops/cpu/qconv_rowpairs.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "npukit/parallel.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::qconv {

namespace {

constexpr int kPixels = 4;  // per block: 4 accumulators, one 32-byte store of 8 channels

inline __m256i bcast(const uint16_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

// Where a block's codes go and what the requantization needs.
struct RowPairsOut {
  const RowPairsPlan* s;
  int64_t row_step = 0;    // int16 elements between the window's rows (dilation_h rows)
  int64_t pixel_step = 0;  // int16 elements between adjacent output pixels (stride_w pixels)
  __m256 fhi;
  __m256i yzp16;
  bool y_s8 = false;
};

// P pixels (from x, the first's window top-left) x the 8 channels of group g:
// 8 codes per pixel, pixel-major, in the first 8 * P bytes of out.
template <int P>
inline __m256i block(const RowPairsOut& o, const uint16_t* x, int64_t g) {
  const RowPairsPlan& s = *o.s;
  const int64_t rp = s.row_pairs;
  __m256i acc[kPixels];
  const __m256i off =
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.offset.data() + g * kRowPairsLanes));
  for (int r = 0; r < P; ++r) acc[r] = off;
  const int16_t* w = s.w.data() + g * s.KH * rp * kRowPairsLanes * 2;
  for (int64_t kh = 0; kh < s.KH; ++kh, x += o.row_step)
    for (int64_t i = 0; i < rp; ++i, w += kRowPairsLanes * 2) {
      const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
      for (int r = 0; r < P; ++r)
        acc[r] =
            _mm256_add_epi32(acc[r], _mm256_madd_epi16(bcast(x + r * o.pixel_step + 2 * i), wv));
    }
  const __m256 m = _mm256_loadu_ps(s.multiplier.data() + g * kRowPairsLanes);
  __m256i q[kPixels];
  for (int r = 0; r < P; ++r) {
    const __m256 v = _mm256_min_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(acc[r]), m), o.fhi);
    q[r] = _mm256_cvttps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  for (int r = P; r < kPixels; ++r) q[r] = q[0];
  // Packs per 128-bit lane: dword k of 0-3 holds pixel k's channels 0-3, of
  // 4-7 its channels 4-7; the permutation puts each pixel's 8 codes together.
  const __m256i ab = _mm256_adds_epi16(_mm256_packs_epi32(q[0], q[1]), o.yzp16);
  const __m256i cd = _mm256_adds_epi16(_mm256_packs_epi32(q[2], q[3]), o.yzp16);
  const __m256i bytes = o.y_s8 ? _mm256_packs_epi16(ab, cd) : _mm256_packus_epi16(ab, cd);
  return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// Output rows [oh0, oh1) of image n.
void rows(const QConvProblem& p, const RowPairsPlan& s, int64_t n, int64_t oh0, int64_t oh1) {
  const Window2d& win = p.window;
  const int64_t C = s.C, H = p.x.dim(2), W = p.x.dim(3), OW = p.y.dim(3);
  const int64_t Wp = W + win.pad_left + win.pad_right, L = Wp * C;
  const int64_t first = oh0 * win.stride_h;  // padded row of scratch row 0
  const int64_t R = (oh1 - 1 - oh0) * win.stride_h + (s.KH - 1) * win.dilation_h + 1;
  thread_local std::vector<uint16_t> xs;
  // One int16 past the last row: a window row's last pair may end one code
  // past the row (its weight is 0).
  xs.resize(static_cast<size_t>(R * L + 2));
  const auto xz = static_cast<uint16_t>(s.x_zp);
  const auto* xb = static_cast<const uint8_t*>(p.x.raw()) + n * p.x.stride(0);
  for (int64_t j = 0; j < R; ++j) {
    uint16_t* d = xs.data() + j * L;
    const int64_t h = first + j - win.pad_top;
    if (h < 0 || h >= H) {
      std::fill(d, d + L, xz);
      continue;
    }
    std::fill(d, d + win.pad_left * C, xz);
    std::fill(d + (win.pad_left + W) * C, d + L, xz);
    d += win.pad_left * C;
    const uint8_t* src = xb + h * p.x.stride(2);
    if (C == 1 && p.x.stride(3) == 1)
      for (int64_t w = 0; w < W; ++w) d[w] = static_cast<uint16_t>(src[w] ^ s.flip);
    else
      for (int64_t w = 0; w < W; ++w)
        for (int64_t c = 0; c < C; ++c)
          d[w * C + c] = static_cast<uint16_t>(src[w * p.x.stride(3) + c * p.x.stride(1)] ^ s.flip);
  }
  xs[static_cast<size_t>(R * L)] = xs[static_cast<size_t>(R * L + 1)] = 0;

  RowPairsOut o;
  o.s = &s;
  o.row_step = win.dilation_h * L;
  o.pixel_step = win.stride_w * C;
  const bool y_s8 = p.y.dtype() == DType::s8;
  o.y_s8 = y_s8;
  o.fhi = _mm256_set1_ps(static_cast<float>((y_s8 ? 127 : 255) - p.y_zp));
  o.yzp16 = _mm256_set1_epi16(static_cast<int16_t>(p.y_zp));
  const int64_t ys3 = p.y.stride(3);
  // 4 pixels' 8 channels are 32 consecutive bytes of y.
  const bool whole = s.OC == kRowPairsLanes && (OW == 1 || ys3 == kRowPairsLanes);
  auto* yb = static_cast<uint8_t*>(p.y.raw()) + n * p.y.stride(0);
  alignas(32) uint8_t tmp[32];
  for (int64_t oh = oh0; oh < oh1; ++oh) {
    const uint16_t* xrow = xs.data() + (oh - oh0) * win.stride_h * L;
    uint8_t* yrow = yb + oh * p.y.stride(2);
    for (int64_t ow = 0; ow < OW; ow += kPixels) {
      const int P = static_cast<int>(std::min<int64_t>(kPixels, OW - ow));
      const uint16_t* x = xrow + ow * o.pixel_step;
      for (int64_t g = 0; g < s.groups; ++g) {
        const __m256i codes = P == 4   ? block<4>(o, x, g)
                              : P == 3 ? block<3>(o, x, g)
                              : P == 2 ? block<2>(o, x, g)
                                       : block<1>(o, x, g);
        uint8_t* y = yrow + ow * ys3 + g * kRowPairsLanes;
        if (whole && P == kPixels) {
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(y), codes);
          continue;
        }
        _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), codes);
        const auto lanes = static_cast<size_t>(std::min(kRowPairsLanes, s.OC - g * kRowPairsLanes));
        for (int r = 0; r < P; ++r) std::memcpy(y + r * ys3, tmp + r * kRowPairsLanes, lanes);
      }
    }
  }
}

}  // namespace

void run_rowpairs_avx2(const QConvProblem& p) {
  const RowPairsPlan s = rowpairs_plan(p);
  const int64_t N = p.y.dim(0), OH = p.y.dim(2);
  // Ranges of the (image, output row) sequence; each run of one image's rows
  // copies its input rows once. Every output is computed by one range.
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, p.y.dim(3) * s.groups));
  parallel_ranges(N * OH, grain, [&](int64_t begin, int64_t end) {
    for (int64_t at = begin; at < end;) {
      const int64_t n = at / OH, oh0 = at % OH, oh1 = std::min(OH, oh0 + (end - at));
      rows(p, s, n, oh0, oh1);
      at += oh1 - oh0;
    }
  });
}

}  // namespace npukit::qconv

#include "ops/cpu/isa-end.inc"

#else  // not x86-64: never listed as runnable

namespace npukit::qconv {
void run_rowpairs_avx2(const QConvProblem& p) {
  qconv_reference(p);
}
}  // namespace npukit::qconv

#endif
