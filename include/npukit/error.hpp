// One error type for every face: it names the function, the parameter, the
// offending value and what would have been allowed.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace npukit {

class Error : public std::invalid_argument {
 public:
  Error(std::string function, std::string parameter, std::string value, std::string allowed);

  const std::string& function() const noexcept { return function_; }
  const std::string& parameter() const noexcept { return parameter_; }
  const std::string& value() const noexcept { return value_; }
  const std::string& allowed() const noexcept { return allowed_; }

 private:
  std::string function_, parameter_, value_, allowed_;
};

// "[lo, hi]" with "inf" for an open end; used in messages.
std::string range_text(int64_t lo, int64_t hi);

[[noreturn]] void fail(const std::string& function, const std::string& parameter,
                       const std::string& value, const std::string& allowed);

// Throws unless lo <= value <= hi.
void check_range(const char* function, const char* parameter, int64_t value, int64_t lo,
                 int64_t hi);

// Throws unless cond; value and allowed are only formatted on failure.
inline void check(bool cond, const char* function, const char* parameter, const std::string& value,
                  const std::string& allowed) {
  if (!cond) fail(function, parameter, value, allowed);
}

}  // namespace npukit
