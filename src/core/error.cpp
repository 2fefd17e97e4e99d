#include "npukit/error.hpp"

#include <limits>

namespace npukit {

namespace {
std::string compose(const std::string& function, const std::string& parameter,
                    const std::string& value, const std::string& allowed) {
  std::string s = function + ": parameter '" + parameter + "' = " + value +
                  " is not allowed (allowed: " + allowed + ")";
  // A NUL (from a file's names or strings) would cut the message short in C and Python.
  std::string out;
  for (char c : s) out += c == '\0' ? std::string("\\0") : std::string(1, c);
  return out;
}
}  // namespace

Error::Error(std::string function, std::string parameter, std::string value, std::string allowed)
    : std::invalid_argument(compose(function, parameter, value, allowed)),
      function_(std::move(function)),
      parameter_(std::move(parameter)),
      value_(std::move(value)),
      allowed_(std::move(allowed)) {}

std::string range_text(int64_t lo, int64_t hi) {
  auto end = [](int64_t v) {
    if (v == std::numeric_limits<int64_t>::max()) return std::string("inf");
    if (v == std::numeric_limits<int64_t>::min()) return std::string("-inf");
    return std::to_string(v);
  };
  std::string out = "[";
  out.append(end(lo)).append(", ").append(end(hi)).append("]");
  return out;
}

void fail(const std::string& function, const std::string& parameter, const std::string& value,
          const std::string& allowed) {
  throw Error(function, parameter, value, allowed);
}

void check_range(const char* function, const char* parameter, int64_t value, int64_t lo,
                 int64_t hi) {
  if (value < lo || value > hi)
    fail(function, parameter, std::to_string(value), range_text(lo, hi));
}

}  // namespace npukit
