// AVX-512 VNNI kernel of the column-quad depthwise convolution
// (qconv_dw_cols.hpp). Per chunk of 64, 32 or 16 channels (zmm, ymm, xmm:
// one body over the lane shims below): the scratch row of column quads is
// built by byte then word unpacks of the 4 window rows' codes (4 vectors per
// input column), then per output pixel KW x 4 vpdpbusd with the chunk's
// weights in registers, and the requantization of the quad kernel
// (float(acc) * m, one min, rounded to even, lower clamp and y_zp by
// saturating packs, which also restore the channel order).
#include "ops/cpu/qconv_dw_cols.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "ops/cpu/isa-avx512vnni-begin.inc"

#include "ops/cpu/x8-qconv-dw-lanes-avx512vnni.inc"

namespace npukit::qconv {

namespace {

using namespace dw_vnni;

// The 4 column-quad vectors of rows a, b, c, d (byte k of each dword = row k).
template <int N>
inline void interleave(typename Lanes<N>::I a, typename Lanes<N>::I b, typename Lanes<N>::I c,
                       typename Lanes<N>::I d, uint8_t* t) {
  using V = Lanes<N>;
  const auto ab_lo = V::lo8(a, b), ab_hi = V::hi8(a, b);
  const auto cd_lo = V::lo8(c, d), cd_hi = V::hi8(c, d);
  V::store(t, V::lo16(ab_lo, cd_lo));
  V::store(t + N, V::hi16(ab_lo, cd_lo));
  V::store(t + 2 * N, V::lo16(ab_hi, cd_hi));
  V::store(t + 3 * N, V::hi16(ab_hi, cd_hi));
}

// Scratch columns [j0, j1) (padded input columns) of the chunk from c0: 4 * N
// bytes each.
template <int N, bool Flip>
void build(const DwColsRow& r, int64_t c0, int64_t j0, int64_t j1, uint8_t* t) {
  using V = Lanes<N>;
  const int64_t n = std::min<int64_t>(N, r.C - c0);
  const auto flip = V::set1_8(0x80), xz = V::set1_8(r.xz);
  const uint8_t* row[kDwColsMaxRows];
  for (int k = 0; k < kDwColsMaxRows; ++k) row[k] = r.row[k] + c0;
  for (int64_t j = j0; j < j1; ++j, t += 4 * N) {
    const int64_t iw = j - r.pad_left;
    if (iw < 0 || iw >= r.W) {
      interleave<N>(xz, xz, xz, xz, t);  // (rows past KH meet w' = 0)
      continue;
    }
    auto at = [&](int k) {
      const auto v = V::load(n, row[k] + iw * r.row_step[k]);
      return Flip ? V::bxor(v, flip) : v;
    };
    interleave<N>(at(0), at(1), at(2), at(3), t);
  }
}

// Outputs [ow0, ow1) of the chunk from c0 into output row y0 with weights
// w0, from scratch columns from j0.
template <int N, int KW>
void compute(const DwColsRow& r, const int8_t* w0, uint8_t* y0, int64_t c0, int64_t j0,
             const uint8_t* t) {
  using V = Lanes<N>;
  typename V::I w[KW][4];
  const int8_t* wc = w0 + 4 * KW * c0;
  for (int kw = 0; kw < KW; ++kw)
    for (int j = 0; j < 4; ++j) w[kw][j] = V::loadu(wc + (kw * 4 + j) * N);
  const int32_t* off = r.offset + c0;
  const float* mult = r.multiplier + c0;
  const int64_t n = std::min<int64_t>(N, r.C - c0);
  const Requant<N> q(r.y_zp, r.y_s8);
  const int64_t col_step = 4 * N * r.stride_w, tap_step = 4 * N * r.dilation_w;
  const uint8_t* col = t + (r.ow0 * r.stride_w - j0) * 4 * N;
  uint8_t* y = y0 + r.ow0 * r.y_step + c0;
  for (int64_t ow = r.ow0; ow < r.ow1; ++ow, col += col_step, y += r.y_step) {
    typename V::I acc[4];
    for (int j = 0; j < 4; ++j) acc[j] = V::loadu(off + j * (N / 4));
    for (int kw = 0; kw < KW; ++kw)
      for (int j = 0; j < 4; ++j)
        acc[j] = V::dot(acc[j], V::loadu(col + kw * tap_step + j * N), w[kw][j]);
    store_codes<N>(q, acc, mult, y, n);
  }
}

template <int N>
void chunk(const DwColsRow& r, int64_t c0, std::vector<uint8_t>& scratch) {
  const int64_t j0 = r.ow0 * r.stride_w;
  const int64_t j1 = (r.ow1 - 1) * r.stride_w + (r.KW - 1) * r.dilation_w + 1;
  scratch.resize(static_cast<size_t>((j1 - j0) * 4 * N));
  if (r.flip)
    build<N, true>(r, c0, j0, j1, scratch.data());
  else
    build<N, false>(r, c0, j0, j1, scratch.data());
  for (int second = 0; second < (r.y2 ? 2 : 1); ++second) {
    const int8_t* w = second ? r.w2 : r.w;
    uint8_t* y = second ? r.y2 : r.y;
    switch (r.KW) {
      case 1:
        compute<N, 1>(r, w, y, c0, j0, scratch.data());
        break;
      case 2:
        compute<N, 2>(r, w, y, c0, j0, scratch.data());
        break;
      case 3:
        compute<N, 3>(r, w, y, c0, j0, scratch.data());
        break;
      default:
        compute<N, 4>(r, w, y, c0, j0, scratch.data());
        break;
    }
  }
}

}  // namespace

void dw_cols_avx512vnni(const DwColsRow& r) {
  thread_local std::vector<uint8_t> scratch;  // per thread: tasks run concurrently
  for (int64_t c0 = 0; c0 < r.Cp; c0 += dw_cols_chunk(r.Cp, c0)) {
    switch (dw_cols_chunk(r.Cp, c0)) {
      case 64:
        chunk<64>(r, c0, scratch);
        break;
      case 32:
        chunk<32>(r, c0, scratch);
        break;
      default:
        chunk<16>(r, c0, scratch);
        break;
    }
  }
}

}  // namespace npukit::qconv

#include "ops/cpu/isa-end.inc"

#else  // not x86-64: never listed as runnable

#include <stdexcept>

namespace npukit::qconv {
void dw_cols_avx512vnni(const DwColsRow&) {
  throw std::logic_error("dw_cols_avx512vnni: called on a host without x86-64");
}
}  // namespace npukit::qconv

#endif
