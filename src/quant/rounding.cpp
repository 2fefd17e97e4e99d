#include "npukit/quant/rounding.hpp"

#include "real_text.hpp"

namespace npukit {

const std::vector<Rounding>& all_roundings() {
  static const std::vector<Rounding> all = {Rounding::half_to_even,
                                            Rounding::half_up,
                                            Rounding::half_down,
                                            Rounding::half_away_from_zero,
                                            Rounding::half_toward_zero,
                                            Rounding::toward_zero,
                                            Rounding::floor,
                                            Rounding::ceil};
  return all;
}

const char* rounding_name(Rounding r) {
  switch (r) {
    case Rounding::half_to_even:
      return "half_to_even";
    case Rounding::half_up:
      return "half_up";
    case Rounding::half_down:
      return "half_down";
    case Rounding::half_away_from_zero:
      return "half_away_from_zero";
    case Rounding::half_toward_zero:
      return "half_toward_zero";
    case Rounding::toward_zero:
      return "toward_zero";
    case Rounding::floor:
      return "floor";
    case Rounding::ceil:
      return "ceil";
  }
  return "invalid";
}

std::string rounding_names() {
  std::string s;
  for (Rounding r : all_roundings()) s += (s.empty() ? "" : ", ") + std::string(rounding_name(r));
  return s;
}

Rounding rounding_from_name(const std::string& name) {
  for (Rounding r : all_roundings())
    if (name == rounding_name(r)) return r;
  if (name == "truncate") return Rounding::toward_zero;
  fail("npukit::rounding_from_name", "name", "'" + name + "'", rounding_names() + ", truncate");
}

namespace detail {

void div_round_error(int64_t num, int64_t den) {
  if (den == 0) fail("npukit::div_round", "den", "0", "any non-zero int64");
  fail("npukit::div_round", "den", std::to_string(den) + " with num = " + std::to_string(num),
       "a quotient that fits int64 (INT64_MIN / -1 = 2^63 does not)");
}

void shift_round_error(int shift) {
  fail("npukit::shift_round", "shift", std::to_string(shift), range_text(0, 63));
}

void round_to_int_error(double x) {
  fail("npukit::round_to_int", "x", real_text(x), "a finite value in [-2^63, 2^63)");
}

void saturate_error(int64_t lo, int64_t hi) {
  fail("npukit::saturate", "lo", std::to_string(lo) + " (hi = " + std::to_string(hi) + ")",
       "lo <= hi");
}

}  // namespace detail

}  // namespace npukit
