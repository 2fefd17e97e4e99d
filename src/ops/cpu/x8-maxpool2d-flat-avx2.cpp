// AVX2 s8/u8 max pooling over flat NCHW planes (x8-maxpool2d-flat.hpp), for
// hosts without AVX-512 (Zen 3). AVX2 has no byte-masked loads or stores, so:
// the per-tap masks are whole byte vectors (a per-call table, 0xff where the
// output reads the input), planes whose reads would leave x's data are first
// copied into a buffer with margins, and partial stores go through the stack.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "npukit/parallel.hpp"
#include "x8-maxpool2d-flat.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

// The whole file (lambdas included) is compiled for AVX2 and dispatched at run
// time.
#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {

namespace {

constexpr int64_t kLanes = 32;

// One byte per output of a 32-output chunk.
struct alignas(32) ByteMask {
  uint8_t b[kLanes];
};

template <class T>
inline __m256i vmax(__m256i a, __m256i b) {
  return std::is_signed_v<T> ? _mm256_max_epi8(a, b) : _mm256_max_epu8(a, b);
}

inline __m256i load(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// The first n (< 32) bytes of v to p.
inline void store_n(void* p, __m256i v, int64_t n) {
  alignas(32) uint8_t tmp[kLanes];
  _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), v);
  std::memcpy(p, tmp, static_cast<size_t>(n));
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

// One plane whose reads xp[lo, hi) all lie in readable memory; arguments by
// value (byte stores may alias anything). masks[t * chunks + j]: the bytes of
// outputs 32j.. that read the input at tap t (0xff), the others take `pad`.
template <class T>
void same_plane(const T* xp, T* yp, int64_t HW, int64_t taps, int64_t chunks, const ByteMask* masks,
                const int64_t* offset, T low, T pad) {
  const __m256i vlow = _mm256_set1_epi8(static_cast<char>(low));
  const __m256i vpad = _mm256_set1_epi8(static_cast<char>(pad));
  for (int64_t j = 0; j < chunks; ++j) {
    __m256i acc = vlow;
    for (int64_t t = 0; t < taps; ++t) {
      const __m256i v = load(xp + kLanes * j + offset[t]);
      acc = vmax<T>(acc, _mm256_blendv_epi8(vpad, v, load(masks[t * chunks + j].b)));
    }
    if (kLanes * (j + 1) <= HW)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(yp + kLanes * j), acc);
    else
      store_n(yp + kLanes * j, acc, HW - kLanes * j);
  }
}

template <class T>
void same(const Pool2dProblem& pr) {
  const TensorView &x = pr.x, &y = pr.y;
  const Window2d& w = pr.p.window;
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3), HW = H * W;
  const int64_t KH = w.kernel_h, KW = w.kernel_w, taps = KH * KW;
  const int64_t chunks = (HW + kLanes - 1) / kLanes;
  std::vector<ByteMask> masks(static_cast<size_t>(taps * chunks), ByteMask{});
  std::vector<int64_t> offset(static_cast<size_t>(taps));
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw) {
      const int64_t t = kh * KW + kw, dh = kh - w.pad_top, dw = kw - w.pad_left;
      offset[static_cast<size_t>(t)] = dh * W + dw;
      auto* m = reinterpret_cast<uint8_t*>(masks.data() + t * chunks);  // the tap's chunks
      for (int64_t h = std::max<int64_t>(0, -dh); h < std::min(H, H - dh); ++h)
        for (int64_t c = std::max<int64_t>(0, -dw); c < std::min(W, W - dw); ++c)
          m[h * W + c] = 0xff;
    }
  const T low = std::numeric_limits<T>::lowest();
  const T pad = pr.p.pad_value == PadValue::zero ? T(0) : low;
  const int64_t sN = x.stride(0), sC = x.stride(1), ysN = y.stride(0), ysC = y.stride(1);
  // x's data span, and the span of a plane's full-vector reads around its start.
  const T* xbegin = static_cast<const T*>(x.raw());
  const T* xend = xbegin + (x.dim(0) - 1) * sN + (C - 1) * sC + HW;
  const int64_t lo = std::min<int64_t>(0, *std::min_element(offset.begin(), offset.end()));
  const int64_t hi =
      kLanes * chunks + std::max<int64_t>(0, *std::max_element(offset.begin(), offset.end()));
  const int64_t span = xend - xbegin;
  for_planes(x.dim(0) * C, [&](int64_t begin, int64_t end) {
    std::vector<T> margin;  // a copy of a plane at x's ends (lanes off the plane are masked)
    int64_t n = begin / C, c = begin % C;  // advanced without divisions
    for (int64_t nc = begin; nc < end; ++nc, c = c + 1 == C ? 0 : c + 1, n += c == 0) {
      const T* xp = xbegin + n * sN + c * sC;
      T* yp = static_cast<T*>(y.raw()) + n * ysN + c * ysC;
      if ((xp - xbegin) + lo < 0 || (xp - xbegin) + hi > span) {
        margin.assign(static_cast<size_t>(hi - lo), T(0));
        std::memcpy(margin.data() - lo, xp, static_cast<size_t>(HW));
        xp = margin.data() - lo;
      }
      same_plane<T>(xp, yp, HW, taps, chunks, masks.data(), offset.data(), low, pad);
    }
  });
}

template <class T>
inline __m128i vmax128(__m128i a, __m128i b) {
  return std::is_signed_v<T> ? _mm_max_epi8(a, b) : _mm_max_epu8(a, b);
}

// The maximum of a plane's codes: `full` whole vectors from xp, and `tail`
// (the last HW % 32 codes, lanes past the plane holding the lowest value).
template <class T>
T plane_max(const T* xp, int64_t full, __m256i tail) {
  __m256i acc = tail;
  for (int64_t j = 0; j < full; ++j) acc = vmax<T>(acc, load(xp + kLanes * j));
  const __m128i a = vmax128<T>(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  // Flipped bits (s8: all but the sign) turn the maximum into the unsigned
  // minimum, which phminposuw finds among 16-bit words holding one byte each.
  const int flip = std::is_signed_v<T> ? 0x7f : 0xff;
  const __m128i f = _mm_xor_si128(a, _mm_set1_epi8(static_cast<char>(flip)));
  const __m128i words = _mm_min_epu8(f, _mm_srli_epi16(f, 8));  // high bytes become 0
  const int m = _mm_cvtsi128_si32(_mm_minpos_epu16(words)) & 0xff;
  return static_cast<T>(m ^ flip);
}

template <class T>
void global(const Pool2dProblem& pr) {
  const TensorView &x = pr.x, &y = pr.y;
  const int64_t C = x.dim(1), HW = x.dim(2) * x.dim(3);
  const T low = std::numeric_limits<T>::lowest();
  const int64_t sN = x.stride(0), sC = x.stride(1), ysN = y.stride(0), ysC = y.stride(1);
  const T* xbegin = static_cast<const T*>(x.raw());
  const T* xend = xbegin + (x.dim(0) - 1) * sN + (C - 1) * sC + HW;
  const int64_t full = HW / kLanes, rest = HW % kLanes;
  const __m256i vlow = _mm256_set1_epi8(static_cast<char>(low));
  // Lanes below `rest` (signed bytes: rest <= 31).
  const __m256i in_tail = _mm256_cmpgt_epi8(
      _mm256_set1_epi8(static_cast<char>(rest)),
      _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                       22, 23, 24, 25, 26, 27, 28, 29, 30, 31));
  for_planes(x.dim(0) * C, [&](int64_t begin, int64_t end) {
    int64_t n = begin / C, c = begin % C;  // advanced without divisions
    for (int64_t nc = begin; nc < end; ++nc, c = c + 1 == C ? 0 : c + 1, n += c == 0) {
      const T* xp = xbegin + n * sN + c * sC;
      const T* tp = xp + kLanes * full;
      __m256i tail = vlow;
      if (rest != 0 && (tp - xbegin) + kLanes <= xend - xbegin) {
        tail = _mm256_blendv_epi8(vlow, load(tp), in_tail);
      } else if (rest != 0) {  // the plane ends at x's end: no whole-vector read
        alignas(32) T tmp[kLanes];
        std::fill(tmp, tmp + kLanes, low);
        std::memcpy(tmp, tp, static_cast<size_t>(rest));
        tail = load(tmp);
      }
      static_cast<T*>(y.raw())[n * ysN + c * ysC] = plane_max<T>(xp, full, tail);
    }
  });
}

}  // namespace

void max_pool2d_x8_same_avx2(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::s8)
    same<int8_t>(pr);
  else
    same<uint8_t>(pr);
}

void max_pool2d_x8_global_avx2(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::s8)
    global<int8_t>(pr);
  else
    global<uint8_t>(pr);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
