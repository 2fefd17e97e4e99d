// GHP-FPGA fixed point: the compiler's multiplier decomposition and the
// post-processing unit's requantization, one accumulator at a time.
#include "npukit/quant/ghp.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "npukit/error.hpp"
#include "npukit/quant/rounding.hpp"

namespace npukit::ghp {

namespace {

std::string real_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

int clamp_int(int64_t v, int64_t lo, int64_t hi) {
  return static_cast<int>(v < lo ? lo : (v > hi ? hi : v));
}

}  // namespace

double Multiplier::value() const {
  return std::ldexp(static_cast<double>(m1), -n1);
}

Multiplier compiler_decompose(double M) {
  constexpr const char* fn = "npukit::ghp::compiler_decompose";
  check(std::isfinite(M) && M > 0, fn, "M", real_text(M), "a finite value > 0");
  // Doubling is exact in binary floating point, so this equals the Python loop.
  constexpr double kTarget = 67108864.0;  // 2^26
  double doubled = M;
  int k = 0;
  while (doubled < kTarget) {
    doubled *= 2;
    ++k;
  }
  // doubled / 2 is exact; Python's round() ties to even.
  return {round_to_int(doubled / 2, Rounding::half_to_even), k - 1};
}

Multiplier decompose_multiplier(double M, M1Edge edge) {
  constexpr const char* fn = "npukit::ghp::decompose_multiplier";
  check(std::isfinite(M) && M > 0, fn, "M", real_text(M), "a finite value > 0");
  check(M < 33554432.0, fn, "M", real_text(M),
        "M < 2^25 (larger M gives n1 < 1: the instruction stores n1 - 1 unsigned)");
  check(M >= std::ldexp(1.0, -231), fn, "M", real_text(M),
        "M >= 2^-231 (smaller M gives n1 > 256: n1 - 1 must fit the 8-bit field)");
  Multiplier r = compiler_decompose(M);
  if (r.m1 == kM1Max + 1) {
    // round_half_even(M_doubled / 2) reached 2^26, one bit past the m1 port.
    if (edge == M1Edge::reject)
      fail(fn, "m1", std::to_string(r.m1) + " (2^26, from M = " + real_text(M) + ")",
           range_text(kM1Min, kM1Max) + " (26-bit m1; the RTL would read 0)");
    r.m1 = kM1Min;
    r.n1 -= 1;
    check(r.n1 >= kN1Min, fn, "M", real_text(M),
          "M < 2^25 - 2^-2 (this M rounds to m1 = 2^26 at n1 = 1 and cannot be renormalized)");
  }
  return r;
}

const char* post_rounding_name(PostRounding r) {
  switch (r) {
    case PostRounding::rtl_wrap10_half_up:
      return "rtl_wrap10_half_up";
    case PostRounding::golden_half_away:
      return "golden_half_away";
  }
  return "invalid";
}

PostRounding post_rounding_for(Profile profile) {
  switch (profile) {
    case Profile::ghp_rtl:
      return PostRounding::rtl_wrap10_half_up;
    case Profile::ghp_golden:
      return PostRounding::golden_half_away;
    default:
      fail("npukit::ghp::post_rounding_for", "profile", profile_name(profile),
           "ghp_rtl or ghp_golden");
  }
}

PostProc post_proc(Profile profile, const Multiplier& m, int y_zp) {
  return {m.m1, m.n1, y_zp, post_rounding_for(profile)};
}

void check_post_proc(const PostProc& p, const char* function) {
  check_range(function, "m1", p.m1, 0, kM1Max);
  check_range(function, "n1", p.n1, kN1Min, kN1MaxRtl);
  check_range(function, "y_zp", p.y_zp, 0, 255);
}

int64_t wrap_signed(int64_t v, int bits) {
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  const uint64_t sign = uint64_t{1} << (bits - 1);
  const uint64_t u = static_cast<uint64_t>(v) & mask;
  return static_cast<int64_t>(u ^ sign) - static_cast<int64_t>(sign);
}

int rtl_shift_product(int64_t prod, int n1) {
  return static_cast<int>(wrap_signed(prod >> (n1 - 1), kShiftRegisterBits));
}

int rtl_round_product(int64_t prod, int n1) {
  const int t = rtl_shift_product(prod, n1);
  return clamp_int((t >> 1) + (t & 1), -256, 255);
}

int golden_round_product(int64_t prod, int n1) {
  // sign(p) * round(|p| / 2^n1) with ties away from zero, saturated to 9 bits.
  return static_cast<int>(
      saturate(shift_round(prod, n1, Rounding::half_away_from_zero), -256, 255));
}

int64_t rtl_product(int64_t acc, int64_t m1) {
  // The multiplier reads adder_c[34:0]; |acc35| <= 2^34 and m1 < 2^27 keep the
  // product below 2^61 (the 62-bit result never wraps).
  return wrap_signed(acc, kAccBits) * m1;
}

int rtl_shift_register(int64_t acc, int64_t m1, int n1) {
  return rtl_shift_product(rtl_product(acc, m1), n1);
}

int rtl_round(int64_t acc, int64_t m1, int n1) {
  return rtl_round_product(rtl_product(acc, m1), n1);
}

int golden_round(int64_t acc, int64_t m1, int n1) {
  return golden_round_product(acc * m1, n1);
}

namespace {
uint8_t add_zero_point(int r, int y_zp) {
  return static_cast<uint8_t>(clamp_int(r + y_zp, 0, 255));
}
}  // namespace

uint8_t requantize(int64_t acc, const PostProc& p) {
  const int r = p.rounding == PostRounding::rtl_wrap10_half_up ? rtl_round(acc, p.m1, p.n1)
                                                               : golden_round(acc, p.m1, p.n1);
  return add_zero_point(r, p.y_zp);
}

uint8_t requantize_product(int64_t prod, int n1, int y_zp, PostRounding rounding) {
  const int r = rounding == PostRounding::rtl_wrap10_half_up ? rtl_round_product(prod, n1)
                                                             : golden_round_product(prod, n1);
  return add_zero_point(r, y_zp);
}

uint8_t rtl_requantize(int64_t acc, int64_t m1, int n1, int y_zp) {
  return requantize(acc, {m1, n1, y_zp, PostRounding::rtl_wrap10_half_up});
}

uint8_t golden_requantize(int64_t acc, int64_t m1, int n1, int y_zp) {
  return requantize(acc, {m1, n1, y_zp, PostRounding::golden_half_away});
}

}  // namespace npukit::ghp
