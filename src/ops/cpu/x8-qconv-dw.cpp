// Depthwise integer convolution (one input and one output channel per group,
// as MobileNet's): per (image, channel) the plane of x - x_zp is copied once
// into an int16 buffer with zero borders (a padding tap contributes 0), then
// each output row is computed a vector of columns at a time with all KH*KW
// taps summed in a register, exactly in int32 (|sum| <= K * 255 * 255,
// checked by the caller). Under stride 1 the padded plane is one flat row:
// output (oh, ow) sits at column oh * Wp + ow of a single output "row" whose
// taps are the same offsets kh*dh*Wp + kw*dw, so one row call covers the
// plane (full vectors on 7x7 and 14x14 planes); the Wp - OW columns between
// output rows are computed from in-plane values and dropped. ONNX Runtime's depthwise kernel sums
// exactly too, under either accumulation.
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "npukit/parallel.hpp"
#include "ops/cpu/qconv_gemm.hpp"
#include "ops/quantized_common.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace npukit::qconv {

void dw_row_portable(const DwRow& r, int32_t* acc) {
  for (int64_t t = 0; t < r.n; ++t) {
    int32_t s = 0;
    for (int64_t kh = 0; kh < r.kh; ++kh)
      for (int64_t kw = 0; kw < r.kw; ++kw)
        s += int32_t{r.row[kh * r.dh * r.wp + kw * r.dw + t * r.sw]} * r.w[kh * r.kw + kw];
    acc[t] = s;
  }
}

// dst[h * Wp + w] = x - zp for the H x W interior. s8 codes are read as u8
// codes x ^ 0x80 with zero point zp + 128 (the same difference), so one
// 16-wide SSE2 loop serves both.
void dw_fill_portable(const uint8_t* src, int64_t sh, int64_t sw, int64_t H, int64_t W, int32_t zp,
                      uint8_t flip, int16_t* dst, int64_t Wp) {
  const int32_t z = zp + (flip ? 128 : 0);
  for (int64_t h = 0; h < H; ++h) {
    const uint8_t* s = src + h * sh;
    int16_t* d = dst + h * Wp;
    int64_t w = 0;
#if defined(__SSE2__)
    if (sw == 1) {
      const __m128i f = _mm_set1_epi8(static_cast<char>(flip)), zero = _mm_setzero_si128();
      const __m128i zv = _mm_set1_epi16(static_cast<int16_t>(z));
      for (; w + 16 <= W; w += 16) {
        const __m128i v =
            _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + w)), f);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + w),
                         _mm_sub_epi16(_mm_unpacklo_epi8(v, zero), zv));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + w + 8),
                         _mm_sub_epi16(_mm_unpackhi_epi8(v, zero), zv));
      }
      // Then 8 at a time, the last 8 ending at W and overlapping columns
      // already written with the same values (14-wide planes: 0-7 and 6-13).
      while (W >= 8 && w < W) {
        w = std::min(w, W - 8);
        const __m128i v =
            _mm_xor_si128(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s + w)), f);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + w),
                         _mm_sub_epi16(_mm_unpacklo_epi8(v, zero), zv));
        w += 8;
      }
    }
#endif
    for (; w < W; ++w) d[w] = static_cast<int16_t>((s[w * sw] ^ flip) - z);
  }
}

namespace {

// Zeroes what the fill does not write: the pad rows, and the left pad and
// right pad plus slack of the interior rows (a padding tap contributes 0).
void zero_borders(int16_t* plane, int64_t Hrows, int64_t Wp, int64_t top, int64_t left, int64_t H,
                  int64_t W) {
  for (int64_t h = 0; h < Hrows; ++h) {
    int16_t* row = plane + h * Wp;
    if (h < top || h >= top + H) {
      std::memset(row, 0, static_cast<size_t>(Wp) * sizeof(int16_t));
    } else {
      std::memset(row, 0, static_cast<size_t>(left) * sizeof(int16_t));
      std::memset(row + left + W, 0, static_cast<size_t>(Wp - left - W) * sizeof(int16_t));
    }
  }
}

}  // namespace

namespace {

// Channel c's weights minus their zero point, row-major (KH * KW <= 64).
void channel_weights(const QConvProblem& p, int64_t c, int32_t* wv) {
  const int64_t KH = p.w.dim(2), KW = p.w.dim(3);
  const int32_t wz = p.wq.zero_point_at(c);
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw)
      wv[kh * KW + kw] =
          detail::code_at(p.w.raw(), p.w.dtype(),
                          c * p.w.stride(0) + kh * p.w.stride(2) + kw * p.w.stride(3)) -
          wz;
}

// How channel c's sums become codes.
RowStore row_store_for(const QConvProblem& p, int64_t c, bool y_s8) {
  RowStore st;
  st.offset = p.bias.raw() ? static_cast<const int32_t*>(p.bias.raw())[c * p.bias.stride(0)] : 0;
  st.requantize = p.requantize;
  st.multiplier = p.multiplier(c);  // as the reference
  st.y_zp = p.y_zp;
  st.y_s8 = y_s8;
  return st;
}

}  // namespace

void run_depthwise(const QConvProblem& p, DwRowFn row_fn, StoreFn store, DwFillFn fill) {
  const int64_t N = p.x.dim(0), C = p.x.dim(1), H = p.x.dim(2), W = p.x.dim(3);
  const int64_t KH = p.w.dim(2), KW = p.w.dim(3), OH = p.y.dim(2), OW = p.y.dim(3);
  const Window2d& win = p.window;
  const int64_t sh = win.stride_h, sw = win.stride_w, dh = win.dilation_h, dw = win.dilation_w;
  // Wide enough for every tap of every output column, plus two vectors of
  // slack (a kernel may read a whole vector of taps past the last column);
  // the flat plane (stride 1) keeps its slack past its last row instead.
  const bool flat = sh == 1 && sw == 1;
  const int64_t Wp = std::max(W + win.pad_left + win.pad_right, (OW - 1) * sw + (KW - 1) * dw + 1) +
                     (flat ? 0 : 64 * sw);
  const int64_t Hrows =
      std::max(H + win.pad_top + win.pad_bottom, (OH - 1) * sh + (KH - 1) * dh + 1);
  const int64_t slack = flat ? 128 : 0;
  // Flat: one output row of (OH - 1) * Wp + OW columns.
  const int64_t flat_n = (OH - 1) * Wp + OW;
  const bool y_s8 = p.y.dtype() == DType::s8;
  const int64_t esize = dtype_size(p.y.dtype());
  parallel_for(N * C, [&](int64_t task) {
    const int64_t n = task / C, c = task % C;
    thread_local std::vector<int16_t> plane;
    thread_local std::vector<int32_t> acc;
    // The fill writes only the interior, so the zero borders of this
    // thread's previous plane still hold when the geometry and buffer are the
    // same (every channel of a layer): zero them only when either changed.
    thread_local std::array<int64_t, 6> bordered{};
    thread_local const int16_t* bordered_at = nullptr;
    plane.resize(static_cast<size_t>(Hrows * Wp + slack));
    acc.resize(static_cast<size_t>(OH * Wp));
    const std::array<int64_t, 6> geometry{Hrows, Wp, win.pad_top, win.pad_left, H, W};
    if (bordered_at != plane.data() || bordered != geometry) {
      zero_borders(plane.data(), Hrows, Wp, win.pad_top, win.pad_left, H, W);
      std::fill(plane.end() - slack, plane.end(), int16_t{0});
      bordered = geometry;
      bordered_at = plane.data();
    }
    int16_t* interior = plane.data() + win.pad_top * Wp + win.pad_left;
    const int64_t xo = n * p.x.stride(0) + c * p.x.stride(1);
    fill(static_cast<const uint8_t*>(p.x.raw()) + xo, p.x.stride(2), p.x.stride(3), H, W, p.x_zp,
         p.x.dtype() == DType::s8 ? 0x80 : 0, interior, Wp);
    int32_t wv[64];  // KH * KW <= 64 (the kernel list declines larger windows)
    channel_weights(p, c, wv);
    const RowStore st = row_store_for(p, c, y_s8);
    DwRow r{nullptr, Wp, KH, KW, dh, dw, sw, wv, OW};
    const bool one_store = p.y.stride(2) == OW;
    char* y0 = static_cast<char*>(p.y.raw()) + esize * (n * p.y.stride(0) + c * p.y.stride(1));
    if (flat) {
      r.row = plane.data();
      r.n = flat_n;
      row_fn(r, acc.data());
      if (one_store) {
        // Drop the in-between columns (forward moves: row oh goes from oh*Wp to oh*OW).
        int32_t* a = acc.data();
        for (int64_t oh = 1; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) a[oh * OW + ow] = a[oh * Wp + ow];
        store(acc.data(), OH * OW, st, y0);
      } else {
        for (int64_t oh = 0; oh < OH; ++oh)
          store(acc.data() + oh * Wp, OW, st, y0 + esize * oh * p.y.stride(2));
      }
      return;
    }
    // All rows first, then one store for the channel when its output rows are
    // contiguous (small MobileNet planes: one call instead of OH short ones).
    for (int64_t oh = 0; oh < OH; ++oh) {
      r.row = plane.data() + oh * sh * Wp;
      int32_t* a = acc.data() + oh * OW;
      row_fn(r, a);
      if (one_store) continue;
      store(a, OW, st, y0 + esize * oh * p.y.stride(2));
    }
    if (one_store) store(acc.data(), OH * OW, st, y0);
  });
}

}  // namespace npukit::qconv
