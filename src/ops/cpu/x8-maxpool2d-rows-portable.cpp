// Separable s8/u8 max pooling (x8-maxpool2d-rows.hpp) in plain C++ (any
// CPU): 16-byte blocks as arrays, loops the compiler may vectorize.
#include <cstdint>
#include <cstring>

#define NPUKIT_X8ROWS_TARGET
#define NPUKIT_X8ROWS_NS x8rows_portable

namespace npukit::cpu::x8rows_portable {
namespace {

struct Simd {
  static constexpr int VB = 16;
  struct B {
    uint8_t v[VB];
  };
  static B set1(uint8_t x) {
    B r;
    std::memset(r.v, x, VB);
    return r;
  }
  static B load(const uint8_t* p) {
    B r;
    std::memcpy(r.v, p, VB);
    return r;
  }
  static B load_n(const uint8_t* p, int n) {
    B r = set1(0);
    std::memcpy(r.v, p, static_cast<size_t>(n));
    return r;
  }
  static B load_n_fill(const uint8_t* p, int n, uint8_t f) {
    B r = set1(f);
    std::memcpy(r.v, p, static_cast<size_t>(n));
    return r;
  }
  template <class T>
  static T reduce_max(B v) {
    T m = static_cast<T>(v.v[0]);
    for (int i = 1; i < VB; ++i) m = static_cast<T>(v.v[i]) > m ? static_cast<T>(v.v[i]) : m;
    return m;
  }
  static void store(uint8_t* p, B v) { std::memcpy(p, v.v, VB); }
  static void store_n(uint8_t* p, B v, int n) { std::memcpy(p, v.v, static_cast<size_t>(n)); }
  template <class T>
  static B max(B a, B b) {
    for (int i = 0; i < VB; ++i) {
      const T x = static_cast<T>(a.v[i]), y = static_cast<T>(b.v[i]);
      a.v[i] = static_cast<uint8_t>(x > y ? x : y);
    }
    return a;
  }
  static void deinterleave(const uint8_t* p, uint8_t* even, uint8_t* odd) {
    for (int i = 0; i < VB; ++i) {
      even[i] = p[2 * i];
      odd[i] = p[2 * i + 1];
    }
  }
};

}  // namespace
}  // namespace npukit::cpu::x8rows_portable

#include "x8-maxpool2d-rows.inc"

namespace npukit::cpu {

void max_pool2d_x8_rows_portable(const Pool2dProblem& pr) {
  if (!x8rows_portable::x8_rows<x8rows_portable::Simd>(pr)) max_pool2d_x8_portable(pr);
}

}  // namespace npukit::cpu
