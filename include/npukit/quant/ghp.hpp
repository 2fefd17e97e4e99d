// Fixed-point arithmetic of the GHP-FPGA CNN accelerator (seed 000).
//
// The accelerator requantizes every result with one post-processing unit
// (PPU): Y_q = 2^-n1 * m1 * acc + Y_z, where acc is an integer accumulator
// (for QLinearAveragePool acc = sum(X_q) - N*X_z) and M = m1 * 2^-n1 is the
// real multiplier (X_S / (N*Y_S) for an average pool). Two semantics exist:
//
//  ghp_rtl     what the RTL computes (ppu.v): prod = acc * m1 (62-bit),
//              t = prod >>> (n1-1) kept in a 10-bit register that WRAPS,
//              r = (t >>> 1) + (t & 1)  (round half up), clamp to [-256, 255],
//              + Y_z, clamp to [0, 255].
//  ghp_golden  what the project's Python golden model computes:
//              sign(p) * round_half_away(|p| / 2^n1), saturate to 9 bits,
//              + Y_z, clamp to [0, 255].
//
// Both agree whenever prod / 2^(n1-1) fits the 10-bit register and no tie is
// negative; the wrap is the RTL's observable difference (see docs/ghp-isa.md).
#pragma once

#include <cstdint>
#include <string>

#include "npukit/profile.hpp"

namespace npukit::ghp {

// Widths of the hardware (ppu.v, the pool engine and the instruction table).
inline constexpr int kM1Bits = 26;                         // m1 port of the PPU, unsigned
inline constexpr int64_t kM1Min = int64_t{1} << 25;        // normalized m1 lower bound
inline constexpr int64_t kM1Max = (int64_t{1} << 26) - 1;  // largest m1 the port holds
inline constexpr int kN1FieldBits = 8;                     // the instruction stores n1 - 1
inline constexpr int kN1Min = 1;                           // field n1 - 1 >= 0
inline constexpr int kN1MaxField = 256;                    // field n1 - 1 <= 255
inline constexpr int kN1MaxRtl = 64;                       // the PPU shift port is 6 bits
inline constexpr int kAccBits = 35;                        // multiplier input adder_c[34:0]
inline constexpr int kShiftRegisterBits = 10;              // t = prod >>> (n1-1), wraps
inline constexpr int kPoolSumBits = 14;                    // pool engine's window-sum register

// M ~= m1 * 2^-n1.
struct Multiplier {
  int64_t m1 = 0;
  int n1 = 0;
  int n1_field() const { return n1 - 1; }  // what the instruction stores
  double value() const;                    // m1 * 2^-n1, exact in double
};

// What to do when round_half_even(M_doubled / 2) lands on 2^26, one past the
// 26-bit m1 port (the hardware's compiler does not guard it; the RTL would
// see m1 = 0 and output Y_z everywhere).
enum class M1Edge : uint8_t {
  renormalize,  // m1 = 2^25, n1 - 1: the same value, representable (default)
  reject,       // throw npukit::Error naming m1 and M
};

// The compiler's algorithm, unchecked: double M (k times) until it is >= 2^26,
// n1 = k - 1, m1 = round_half_even(M_doubled / 2). m1 may be exactly 2^26 and
// n1 may be out of range; M must be finite and > 0 (else throws).
Multiplier compiler_decompose(double M);

// compiler_decompose plus the hardware's limits: m1 in [2^25, 2^26 - 1],
// n1 - 1 in [0, 255] (so M in [2^-231, 2^25)). Throws npukit::Error naming M,
// its value and the limit.
Multiplier decompose_multiplier(double M, M1Edge edge = M1Edge::renormalize);

// How the PPU rounds and wraps: semantics as data.
enum class PostRounding : uint8_t {
  rtl_wrap10_half_up,  // ghp_rtl
  golden_half_away,    // ghp_golden
};
const char* post_rounding_name(PostRounding r);

struct PostProc {
  int64_t m1 = 1024;
  int n1 = 10;
  int y_zp = 0;  // [0, 255]
  PostRounding rounding = PostRounding::rtl_wrap10_half_up;
};

// Fills `rounding` for ghp_rtl or ghp_golden; other profiles are rejected.
PostRounding post_rounding_for(Profile profile);
PostProc post_proc(Profile profile, const Multiplier& m, int y_zp);

// Throws unless m1 in [0, 2^26 - 1], n1 in [1, 64] and y_zp in [0, 255].
void check_post_proc(const PostProc& p, const char* function);

// --- one accumulator, no checks (call check_post_proc once) -------------------
// The multiplier's product: acc wrapped to the 35-bit port times m1 (62-bit, exact).
int64_t rtl_product(int64_t acc, int64_t m1);
// The RTL's 10-bit register: t = (acc35 * m1) >>> (n1 - 1), two's-complement wrapped.
int rtl_shift_register(int64_t acc, int64_t m1, int n1);
// ghp_rtl: r = (t >>> 1) + (t & 1), clamp [-256, 255] (before the zero point).
int rtl_round(int64_t acc, int64_t m1, int n1);
// ghp_golden: sign(p) * round_half_away(|p| / 2^n1), clamp [-256, 255].
int golden_round(int64_t acc, int64_t m1, int n1);
// The same on a finished 62-bit product (the PPU's second mode sums two
// products m1*a + m2*b in a 37-bit adder and feeds the sum to the shifter).
int rtl_shift_product(int64_t prod, int n1);
int rtl_round_product(int64_t prod, int n1);
int golden_round_product(int64_t prod, int n1);
uint8_t requantize_product(int64_t prod, int n1, int y_zp, PostRounding rounding);
// Either one, then + y_zp and clamp to [0, 255].
uint8_t requantize(int64_t acc, const PostProc& p);
uint8_t rtl_requantize(int64_t acc, int64_t m1, int n1, int y_zp);
uint8_t golden_requantize(int64_t acc, int64_t m1, int n1, int y_zp);

// Two's-complement wrap of v to `bits` bits (1..63).
int64_t wrap_signed(int64_t v, int bits);

}  // namespace npukit::ghp
