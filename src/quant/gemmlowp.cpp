#include "npukit/quant/gemmlowp.hpp"

#include <string>

namespace npukit::detail {

void rounding_divide_by_pot_error(int exponent) {
  fail("npukit::rounding_divide_by_pot", "exponent", std::to_string(exponent), range_text(0, 31));
}

}  // namespace npukit::detail
