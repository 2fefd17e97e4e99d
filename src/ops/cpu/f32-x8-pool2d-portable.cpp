// pool2d kernels in plain C++ (any CPU): the same drivers over small arrays
// of lanes, written as loops the compiler may vectorize for the baseline ISA.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "npukit/ops/fp32_semantics.hpp"

#define NPUKIT_POOL_TARGET
#define NPUKIT_POOL_NS portable

namespace npukit::cpu::portable {
namespace {

struct Simd {
  static constexpr int V = 8, VB = 16;
  struct F {
    float v[V];
  };
  struct B {
    uint8_t v[VB];
  };

  static F zero() { return set1(0.0f); }
  static F set1(float x) {
    F r;
    for (float& e : r.v) e = x;
    return r;
  }
  template <int LK>
  struct FLoad {
    int64_t ls;
    int n;
    FLoad(int64_t ls_, int n_) : ls(LK == 0 ? ls_ : LK), n(n_) {}
    F operator()(const float* p) const {
      F r = zero();
      for (int i = 0; i < n; ++i) r.v[i] = p[i * ls];
      return r;
    }
  };
  static void transpose(const float* src, int64_t ss, float* dst, int64_t ds) {
    for (int i = 0; i < V; ++i)
      for (int j = 0; j < V; ++j) dst[i * ds + j] = src[j * ss + i];
  }
  static F loadu(const float* p) { return from(p); }
  static F load_even(const float* p) {
    F r;
    for (int i = 0; i < V; ++i) r.v[i] = p[2 * i];
    return r;
  }
  static F load_odd(const float* p) {
    F r;
    for (int i = 0; i < V; ++i) r.v[i] = p[2 * i + 1];
    return r;
  }
  // Lanes 0, 2, .., 2V-2 / 1, 3, .., 2V-1 of the 2V lanes a then b (stride-2 taps).
  static F even(F a, F b) {
    F r;
    for (int i = 0; i < V; ++i) r.v[i] = i < V / 2 ? a.v[2 * i] : b.v[2 * i - V];
    return r;
  }
  static F odd(F a, F b) {
    F r;
    for (int i = 0; i < V; ++i) r.v[i] = i < V / 2 ? a.v[2 * i + 1] : b.v[2 * i + 1 - V];
    return r;
  }
  // Arbitrary lane masks: bit i = lane i. load_m: masked-off lanes +0, never read.
  using M = uint32_t;
  static M lane_mask(uint32_t bits) { return bits; }
  static F load_m(M m, const float* p) {
    F r = zero();
    for (int i = 0; i < V; ++i)
      if (m >> i & 1) r.v[i] = p[i];
    return r;
  }
  static F select(M m, F a, F b) {
    for (int i = 0; i < V; ++i)
      if (m >> i & 1) b.v[i] = a.v[i];
    return b;
  }
  static void store(float* p, int64_t ys, F v, int n) {
    for (int i = 0; i < n; ++i) p[i * ys] = v.v[i];
  }
  static void store_m(M m, float* p, F v) {  // masked-off elements are not written
    for (int i = 0; i < V; ++i)
      if (m >> i & 1) p[i] = v.v[i];
  }
  // x86's rule whatever the compiler does with `+` (it may swap operands): a
  // NaN a wins (quieted), else a NaN b, else inf - inf is the default NaN.
  static F add(F a, F b) {
    for (int i = 0; i < V; ++i) a.v[i] = x86_rule(a.v[i], b.v[i], a.v[i] + b.v[i]);
    return a;
  }
  static float x86_rule(float x, float y, float r) {
    return std::isnan(x)   ? quiet(x)
           : std::isnan(y) ? quiet(y)
           : std::isnan(r) ? std::bit_cast<float>(0xffc00000u)
                           : r;
  }
  static float add1(float a, float b) { return x86_rule(a, b, a + b); }
  static float quiet(float x) {
    return std::bit_cast<float>(std::bit_cast<uint32_t>(x) | 0x00400000u);
  }
  static F mul(F a, F b) {  // the same rule (sum pooling's coeff may be NaN)
    for (int i = 0; i < V; ++i) a.v[i] = x86_rule(a.v[i], b.v[i], a.v[i] * b.v[i]);
    return a;
  }
  static F div(F a, F b) {
    for (int i = 0; i < V; ++i) a.v[i] /= b.v[i];
    return a;
  }
  static F max(F a, F b) {
    for (int i = 0; i < V; ++i) a.v[i] = a.v[i] > b.v[i] ? a.v[i] : b.v[i];
    return a;
  }
  static F nan_to(F m, F v) {
    for (int i = 0; i < V; ++i) m.v[i] = std::isnan(v.v[i]) ? v.v[i] : m.v[i];
    return m;
  }
  static F flush(F v) {
    for (float& e : v.v) e = flush_denormal(e);
    return v;
  }
  static bool any_abs_eq(F v, float c) {
    bool any = false;
    for (float e : v.v) any = any || std::fabs(e) == c;
    return any;
  }
  static void to(float* a, F v) { std::memcpy(a, v.v, sizeof v.v); }
  static F from(const float* a) {
    F r;
    std::memcpy(r.v, a, sizeof r.v);
    return r;
  }

  static B set1_8(uint8_t x) {
    B r;
    for (uint8_t& e : r.v) e = x;
    return r;
  }
  template <int LK>
  struct BLoad {
    int64_t ls;
    int n;
    BLoad(int64_t ls_, int n_) : ls(LK == 0 ? ls_ : LK), n(n_) {}
    B operator()(const uint8_t* p) const {
      B r = set1_8(0);
      for (int i = 0; i < n; ++i) r.v[i] = p[i * ls];
      return r;
    }
  };
  static void store8(uint8_t* p, int64_t ys, B v, int n) {
    for (int i = 0; i < n; ++i) p[i * ys] = v.v[i];
  }
  template <class T>
  static B max8(B a, B b) {
    for (int i = 0; i < VB; ++i) {
      const T x = static_cast<T>(a.v[i]), y = static_cast<T>(b.v[i]);
      a.v[i] = static_cast<uint8_t>(x > y ? x : y);
    }
    return a;
  }
};

}  // namespace
}  // namespace npukit::cpu::portable

#include "pool2d_core.inc"

namespace npukit::cpu {

void pool2d_f32_portable(const Pool2dProblem& pr) {
  portable::f32_pool2d<portable::Simd>(pr);
}
void max_pool2d_x8_portable(const Pool2dProblem& pr) {
  portable::x8_max_pool2d<portable::Simd>(pr);
}

}  // namespace npukit::cpu
