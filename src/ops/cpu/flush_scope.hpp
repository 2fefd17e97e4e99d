// FTZ and DAZ for the calling thread while a FlushScope lives: the flushing
// the BM1684 C-model runs under (x86 MXCSR bits 15 and 6). Fast kernels set it
// on each worker for the duration of its work, so their SIMD arithmetic
// flushes exactly as the reference's Fp32Arith does.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define NPUKIT_HAS_MXCSR 1
#endif

namespace npukit::cpu {

#ifdef NPUKIT_HAS_MXCSR
class FlushScope {
 public:
  explicit FlushScope(bool on) : saved_(_mm_getcsr()) {
    _mm_setcsr(on ? (saved_ | 0x8040u) : (saved_ & ~0x8040u));
  }
  ~FlushScope() { _mm_setcsr(saved_); }
  FlushScope(const FlushScope&) = delete;
  FlushScope& operator=(const FlushScope&) = delete;

 private:
  unsigned saved_;
};
inline constexpr bool kCanFlush = true;
#else
struct FlushScope {
  explicit FlushScope(bool) {}
};
inline constexpr bool kCanFlush = false;
#endif

}  // namespace npukit::cpu
