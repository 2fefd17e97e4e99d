// Shortest round-trip text of a real number for error messages ("0.1", "1e-12").
#pragma once

#include <charconv>
#include <string>

namespace npukit::detail {

inline std::string real_text(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

}  // namespace npukit::detail
