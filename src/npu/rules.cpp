#include "npukit/npu/rules.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "npukit/npu/launch.hpp"

namespace npukit::npu {

namespace {
// 0: not set (use the environment), 1: exit, 2: throw.
std::atomic<int> g_mode{0};

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

void set_violation_mode(ViolationMode mode) {
  g_mode = mode == ViolationMode::exit_255 ? 1 : 2;
}

ViolationMode violation_mode() {
  const int m = g_mode.load();
  if (m != 0) return m == 1 ? ViolationMode::exit_255 : ViolationMode::throw_error;
  const char* env = std::getenv("NPUKIT_OKK_THROW");
  return env && std::strcmp(env, "1") == 0 ? ViolationMode::throw_error : ViolationMode::exit_255;
}

RuleViolation::RuleViolation(std::string kernel, std::string function, std::string parameter,
                             std::string value, std::string allowed)
    : Error("kernel '" + kernel + "': " + function, std::move(parameter), std::move(value),
            std::move(allowed)),
      kernel_(std::move(kernel)) {}

void violation(const std::string& function, const std::string& parameter, const std::string& value,
               const std::string& allowed) {
  RuleViolation v(current_kernel(), function, parameter, value, allowed);
  if (violation_mode() == ViolationMode::throw_error) throw v;
  std::fflush(stdout);
  std::fprintf(stderr, "npukit NPU rule violated: %s\n", v.what());
  std::fflush(stderr);
  std::_Exit(255);
}

void rule_range(const char* function, const char* parameter, int64_t value, int64_t lo,
                int64_t hi) {
  if (value < lo || value > hi)
    violation(function, parameter, std::to_string(value), range_text(lo, hi));
}

void rule_divisible(const char* function, const char* parameter, uint64_t value, uint64_t by) {
  if (value % by != 0)
    violation(function, parameter, std::to_string(value) + " (" + hex(value) + ")",
              "divisible by " + std::to_string(by));
}

}  // namespace npukit::npu
