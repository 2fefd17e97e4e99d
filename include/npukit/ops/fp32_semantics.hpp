// fp32 summation semantics shared by the NN operators: in what order products
// are accumulated and whether denormals are flushed. Every operator keeps the
// plain sequential order by default; a profile (bm1684) selects the pattern of
// a real machine.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace npukit {

enum class Fp32Accumulation : uint8_t {
  // One accumulator, taps in order, then the rest (the ONNX/PyTorch-like
  // reference order; averages divide the sum).
  sequential,
  // The BM1684 C-model pattern (docs/npu-simulator.md, "Same numbers as the vendor's C-model"):
  // accumulators start at
  // +0 and alternate by step parity, A[t % 2] (pool, depthwise: full-window
  // tap t; matmul: k), or four accumulators L[(s % 2)*2 + ic % 2] over steps
  // s = tap*ceil(IC/2) + ic/2 (conv2d, input channels paired as in 2IC
  // weights); padded taps take part as the value 0; the result is A0 + A1 or
  // (L0 + L2) + (L1 + L3). Averages multiply each tap by R = 1/(kh*kw).
  interleaved,
  // ONNX Runtime 1.30's fp32 convolution on x86 (MLAS; docs/semantics.md,
  // "fp32 convolution under onnxruntime"), for an NCHWc block B of 16 (hosts
  // with AVX-512F) or 8 (AVX2): each product is added by one FMA (a single
  // rounding) into chains that start at +0, and the chains' sums are added
  // to the output one by one (out = chain + out), then + bias. The chains of
  // one output of a group with ICG input channels and K = KH*KW taps:
  //   depthwise (ICG = OC/groups = 1), groups % B = 0: one over (kh, kw);
  //   groups = 1 and ICG < B:  one per input channel, over its taps (kh, kw);
  //   ICG % B != 0 (or groups > 1 with OC/groups % B != 0): runs of 128
  //                            steps of the (ic, kh, kw) order;
  //   K = 1:                   runs of 128 input channels;
  //   else:                    one per block of B input channels, over
  //                            (kh, kw, ic within the block).
  // Padded and inserted taps are skipped when their weight is not finite,
  // else they add fma(+0, w, acc). conv2d and depthwise convolution only.
  mlas_nchwc16,
  mlas_nchwc8,
};

const char* fp32_accumulation_name(Fp32Accumulation a);

// B of an mlas_nchwc accumulation, or 0 for the others.
inline int64_t mlas_nchwc_block(Fp32Accumulation a) {
  return a == Fp32Accumulation::mlas_nchwc16 ? 16 : a == Fp32Accumulation::mlas_nchwc8 ? 8 : 0;
}

// Flush-to-zero of one value: a denormal becomes a zero of the same sign (as
// x86's FTZ on results and DAZ on inputs do). Every other value is unchanged.
inline float flush_denormal(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if ((bits & 0x7f800000u) == 0 && (bits & 0x007fffffu) != 0)
    return std::bit_cast<float>(bits & 0x80000000u);
  return x;
}

// x86's NaN rules for one SSE/AVX arithmetic instruction (addss, mulss, their
// packed forms; Intel SDM vol. 1, 4.8.3.5), which C++ `+` and `*` leave to the
// compiler's operand order: a NaN operand comes out quieted, the FIRST one
// when both are NaN; an invalid operation (inf - inf, inf * 0) gives the
// default NaN 0xffc00000. Every fp32 reference states its operand order
// through these (docs/semantics.md, "NaN payloads"), so its bits do not
// depend on the compiler or the CPU.
inline float x86_default_nan() {
  return std::bit_cast<float>(0xffc00000u);
}

inline float quiet_nan(float a) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(a) | 0x00400000u);
}

// The NaN x86 returns for a op b when the result r is NaN.
inline float x86_nan_of(float a, float b) {
  if (std::isnan(a)) return quiet_nan(a);
  if (std::isnan(b)) return quiet_nan(b);
  return x86_default_nan();
}

// The branch is taken only for NaN results, so the usual case stays one add.
inline float x86_add(float a, float b) {
  const float r = a + b;
  return std::isnan(r) ? x86_nan_of(a, b) : r;
}

inline float x86_mul(float a, float b) {
  const float r = a * b;
  return std::isnan(r) ? x86_nan_of(a, b) : r;
}

// Arithmetic with optional flushing of every operand and result, so that a
// kernel states each rounding step once: ftz.mul(a, b) is one rounded product.
struct Fp32Arith {
  bool flush = false;
  float in(float x) const { return flush ? flush_denormal(x) : x; }
  float out(float x) const { return flush ? flush_denormal(x) : x; }
  // a is the first operand of the x86 instruction: its NaN wins over b's.
  float add(float a, float b) const { return out(x86_add(in(a), in(b))); }
  float mul(float a, float b) const {
    if (!flush) return x86_mul(a, b);
    a = in(a);
    b = in(b);
    const float r = x86_mul(a, b);
    // x86 FTZ judges tininess after rounding to 24 bits with an unbounded
    // exponent: an exact product in [2^-126 - 2^-150, 2^-126 - 2^-151) rounds
    // to 2^-126 in the float format but is still flushed (e.g. 0x3f7fffff *
    // 0x00800000 gives +0 under FTZ). Sums of floats never fall there (they
    // are multiples of 2^-149). The product is exact in double.
    if ((r == 0x1p-126f || r == -0x1p-126f) &&
        std::fabs(static_cast<double>(a) * static_cast<double>(b)) < 0x1p-126 - 0x1p-151)
      return r > 0 ? 0.0f : -0.0f;
    return out(r);
  }
};

}  // namespace npukit
