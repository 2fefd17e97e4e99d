// Hardware-rule checks of the NPU faces. A violated rule names the running
// kernel, the function, the parameter, its value and what the rule allows;
// by default the process then exits with status 255 as the vendor's simulator
// does. Tests turn violations into exceptions (NPUKIT_OKK_THROW=1 or
// set_violation_mode).
#pragma once

#include <cstdint>
#include <string>

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

[[noreturn]] void violation(const std::string& function, const std::string& parameter,
                            const std::string& value, const std::string& allowed);

inline void rule(bool ok, const char* function, const char* parameter, const std::string& value,
                 const std::string& allowed) {
  if (!ok) violation(function, parameter, value, allowed);
}
void rule_range(const char* function, const char* parameter, int64_t value, int64_t lo, int64_t hi);
void rule_divisible(const char* function, const char* parameter, uint64_t value, uint64_t by);

}  // namespace npukit::npu
