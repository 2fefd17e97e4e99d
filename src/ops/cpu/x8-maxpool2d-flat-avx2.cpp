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

}  // namespace

void max_pool2d_x8_same_avx2(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::s8)
    same<int8_t>(pr);
  else
    same<uint8_t>(pr);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
