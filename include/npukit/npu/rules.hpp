// Hardware-rule checks of the NPU faces. A violated rule names the running
// kernel, the function, the parameter, its value and what the rule allows.
// Rules come in two classes (docs/npu-simulator.md, "Rule classes"):
// - errors (the vendor's simulator rejects the call, or the documentation
//   calls it undefined): by default the process exits with status 255 as the
//   vendor's simulator does; tests turn them into exceptions
//   (NPUKIT_OKK_THROW=1 or set_violation_mode);
// - warnings (a documented limit the vendor's simulator accepts, or a read of
//   never-written local memory): printed once per kernel, function and
//   parameter, and the call goes on computing what the vendor's simulator
//   computes. Strict mode (NPUKIT_OKK_STRICT=1 or set_strict_rules) makes them
//   errors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npukit/error.hpp"

namespace npukit::npu {

enum class ViolationMode : uint8_t { exit_255, throw_error };

// Without a call to set_violation_mode the mode comes from NPUKIT_OKK_THROW
// (1 = throw_error).
void set_violation_mode(ViolationMode mode);
ViolationMode violation_mode();

// The exception thrown in throw_error mode; what() is the full message.
class RuleViolation : public Error {
 public:
  RuleViolation(std::string kernel, std::string function, std::string parameter, std::string value,
                std::string allowed);
  const std::string& kernel() const noexcept { return kernel_; }

 private:
  std::string kernel_;
};

// Strict mode: warnings become errors. Without a call to set_strict_rules the
// setting comes from NPUKIT_OKK_STRICT (1 = strict); reset_strict_rules()
// returns to the environment.
void set_strict_rules(bool strict);
void reset_strict_rules();
bool strict_rules();

// Does a warning of (running kernel, function, parameter) still have to be
// reported (not printed before, or strict mode)? Lets hot loops skip
// building the message of a warning already printed.
bool warning_due(const char* function, const char* parameter);
// Reports a warning (an error in strict mode): stderr line
// "npukit NPU rule warning: kernel 'k': fn: parameter ... (allowed: ...)".
void warning(const std::string& function, const std::string& parameter, const std::string& value,
             const std::string& allowed);
// Full messages of the warnings printed so far (tests), and forgetting them
// (they then print again).
std::vector<std::string> warnings_printed();
void clear_warnings();

[[noreturn]] void violation(const std::string& function, const std::string& parameter,
                            const std::string& value, const std::string& allowed);

inline void rule(bool ok, const char* function, const char* parameter, const std::string& value,
                 const std::string& allowed) {
  if (!ok) violation(function, parameter, value, allowed);
}
void rule_range(const char* function, const char* parameter, int64_t value, int64_t lo, int64_t hi);
// A warning when value is outside [lo, hi].
void warn_range(const char* function, const char* parameter, int64_t value, int64_t lo, int64_t hi);
// A documented range [lo, hi] whose upper bound the vendor's simulator does
// not enforce: below lo an error, above hi a warning, above hard_hi (what the
// simulation can represent) an error.
void rule_range_warn_above(const char* function, const char* parameter, int64_t value, int64_t lo,
                           int64_t hi, int64_t hard_hi);
void rule_divisible(const char* function, const char* parameter, uint64_t value, uint64_t by);

}  // namespace npukit::npu
