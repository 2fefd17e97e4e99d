// AVX-512 s8/u8 max pooling over flat NCHW planes (x8-maxpool2d-flat.hpp).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "npukit/parallel.hpp"
#include "x8-maxpool2d-flat.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

// The whole file (lambdas included) is compiled for AVX-512 and dispatched at
// run time.
#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu {

namespace {

template <class T>
inline __m512i vmax(__m512i a, __m512i b) {
  return std::is_signed_v<T> ? _mm512_max_epi8(a, b) : _mm512_max_epu8(a, b);
}

// Planes [begin, end) of N*C in chunks for the threads (each plane is written
// by one thread; max is exact in any order).
template <class F>
void for_planes(int64_t count, const F& body) {
  const int64_t parts = std::min<int64_t>(count, std::max(1, num_threads()) * int64_t{4});
  const int64_t size = (count + parts - 1) / parts;
  parallel_for((count + size - 1) / size,
               [&](int64_t chunk) { body(chunk * size, std::min(count, (chunk + 1) * size)); });
}

// One plane; every argument by value, so that the byte stores (which may alias
// anything) do not force the loop's bounds and pointers back to memory.
// Safe: every full-vector read of the plane stays inside x's data, so plain
// loads and a blend replace the merge-masked loads (slower on AMD).
template <class T, bool Safe>
void same_plane(const T* xp, T* yp, int64_t HW, int64_t taps, int64_t chunks, const uint64_t* masks,
                const int64_t* offset, T low, T pad) {
  const __m512i vlow = _mm512_set1_epi8(static_cast<char>(low));
  const __m512i vpad = _mm512_set1_epi8(static_cast<char>(pad));
  for (int64_t j = 0; j < chunks; ++j) {
    __m512i acc = vlow;
    for (int64_t t = 0; t < taps; ++t) {
      // Outputs whose tap t is padding take `pad`.
      const __mmask64 m = masks[t * chunks + j];
      const T* src = xp + 64 * j + offset[t];
      const __m512i v = Safe ? _mm512_mask_blend_epi8(m, vpad, _mm512_loadu_si512(src))
                             : _mm512_mask_loadu_epi8(vpad, m, src);  // cannot fault
      acc = vmax<T>(acc, v);
    }
    if (64 * (j + 1) <= HW)
      _mm512_storeu_si512(yp + 64 * j, acc);
    else
      _mm512_mask_storeu_epi8(yp + 64 * j, (uint64_t{1} << (HW - 64 * j)) - 1, acc);
  }
}

template <class T>
void same(const Pool2dProblem& pr) {
  const TensorView &x = pr.x, &y = pr.y;
  const Window2d& w = pr.p.window;
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3), HW = H * W;
  const int64_t KH = w.kernel_h, KW = w.kernel_w, taps = KH * KW, chunks = (HW + 63) / 64;
  // masks[t * chunks + j]: which outputs 64j + b read the input at tap t.
  std::vector<uint64_t> masks(static_cast<size_t>(taps * chunks), 0);
  std::vector<int64_t> offset(static_cast<size_t>(taps));
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw) {
      const int64_t t = kh * KW + kw, dh = kh - w.pad_top, dw = kw - w.pad_left;
      offset[static_cast<size_t>(t)] = dh * W + dw;
      uint64_t* m = masks.data() + t * chunks;
      for (int64_t h = std::max<int64_t>(0, -dh); h < std::min(H, H - dh); ++h)
        for (int64_t c = std::max<int64_t>(0, -dw); c < std::min(W, W - dw); ++c) {
          const int64_t i = h * W + c;
          m[i / 64] |= uint64_t{1} << (i % 64);
        }
    }
  const T low = std::numeric_limits<T>::lowest();
  const T pad = pr.p.pad_value == PadValue::zero ? T(0) : low;
  const int64_t sN = x.stride(0), sC = x.stride(1), ysN = y.stride(0), ysC = y.stride(1);
  // x's data span, and the span of a plane's full-vector reads around its start.
  const T* xbegin = static_cast<const T*>(x.raw());
  const T* xend = xbegin + (x.dim(0) - 1) * sN + (C - 1) * sC + HW;
  const int64_t lo = *std::min_element(offset.begin(), offset.end());
  const int64_t hi = 64 * chunks + *std::max_element(offset.begin(), offset.end());
  for_planes(x.dim(0) * C, [&](int64_t begin, int64_t end) {
    int64_t n = begin / C, c = begin % C;  // advanced without divisions
    for (int64_t nc = begin; nc < end; ++nc, c = c + 1 == C ? 0 : c + 1, n += c == 0) {
      const T* xp = static_cast<const T*>(x.raw()) + n * sN + c * sC;
      T* yp = static_cast<T*>(y.raw()) + n * ysN + c * ysC;
      if (xp + lo >= xbegin && xp + hi <= xend)
        same_plane<T, true>(xp, yp, HW, taps, chunks, masks.data(), offset.data(), low, pad);
      else
        same_plane<T, false>(xp, yp, HW, taps, chunks, masks.data(), offset.data(), low, pad);
    }
  });
}

}  // namespace

void max_pool2d_x8_same_avx512(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::s8)
    same<int8_t>(pr);
  else
    same<uint8_t>(pr);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
