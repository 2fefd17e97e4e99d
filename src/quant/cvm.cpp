#include "npukit/quant/cvm.hpp"

#include <cmath>

#include "real_text.hpp"

namespace npukit {

double CvmFloat::value() const {
  return std::ldexp(static_cast<double>(frac), exp);
}

CvmFloat cvm_float(double r, int bits) {
  constexpr const char* fn = "npukit::cvm_float";
  check(std::isfinite(r) && r >= 0.0, fn, "r", detail::real_text(r), "a finite value >= 0");
  check_range(fn, "bits", bits, 1, 32);
  if (r == 0.0) return {};
  const int64_t alpha = std::max<int64_t>((int64_t{1} << (bits - 1)) - 1, 1);
  int budget = bits - 1;
  int exp = 0;
  // Every step below multiplies by a power of two, which is exact in double
  // (r is at least 2^-1074 and the doublings stop below 2^31).
  while (r >= 1.0) r /= 2.0, ++exp;
  while (r < 1.0) r *= 2.0, --exp;  // now r in [1, 2)
  while (budget > 1 && r != std::floor(r)) r *= 2.0, --exp, --budget;
  const int64_t frac = round_to_int(r, Rounding::half_to_even);  // Python 3 round()
  return {std::min(frac, alpha), exp};
}

namespace detail {

void cvm_range_error(const char* function, const char* parameter, int64_t value) {
  fail(function, parameter, std::to_string(value), range_text(1, 32));
}

}  // namespace detail

}  // namespace npukit
