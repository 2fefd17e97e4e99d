#include "npukit/npu/rules.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "npukit/npu/launch.hpp"

namespace npukit::npu {

namespace {
// 0: not set (use the environment), 1: exit, 2: throw.
std::atomic<int> g_mode{0};

// -1: not set (use the environment), 0: lenient, 1: strict.
std::atomic<int> g_strict{-1};

struct Warnings {
  std::mutex mutex;
  std::set<std::string> keys;  // kernel '\0' function '\0' parameter
  std::vector<std::string> messages;
};
Warnings& warnings() {
  static Warnings w;
  return w;
}
std::string warning_key(const char* function, const char* parameter) {
  std::string k = current_kernel();
  k += '\0';
  k += function;
  k += '\0';
  k += parameter;
  return k;
}

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

void set_strict_rules(bool strict) {
  g_strict = strict ? 1 : 0;
}

void reset_strict_rules() {
  g_strict = -1;
}

bool strict_rules() {
  const int s = g_strict.load();
  if (s >= 0) return s == 1;
  const char* env = std::getenv("NPUKIT_OKK_STRICT");
  return env && std::strcmp(env, "1") == 0;
}

bool warning_due(const char* function, const char* parameter) {
  if (strict_rules()) return true;
  Warnings& w = warnings();
  std::lock_guard<std::mutex> lock(w.mutex);
  return w.keys.count(warning_key(function, parameter)) == 0;
}

void warning(const std::string& function, const std::string& parameter, const std::string& value,
             const std::string& allowed) {
  if (strict_rules()) violation(function, parameter, value, allowed);
  Warnings& w = warnings();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (!w.keys.insert(warning_key(function.c_str(), parameter.c_str())).second) return;
  const RuleViolation v(current_kernel(), function, parameter, value, allowed);
  w.messages.push_back(v.what());
  std::fflush(stdout);
  std::fprintf(stderr,
               "npukit NPU rule warning: %s (accepted by the vendor's simulator; reported once, "
               "NPUKIT_OKK_STRICT=1 makes it an error)\n",
               v.what());
  std::fflush(stderr);
}

std::vector<std::string> warnings_printed() {
  Warnings& w = warnings();
  std::lock_guard<std::mutex> lock(w.mutex);
  return w.messages;
}

void clear_warnings() {
  Warnings& w = warnings();
  std::lock_guard<std::mutex> lock(w.mutex);
  w.keys.clear();
  w.messages.clear();
}

RuleViolation::RuleViolation(std::string kernel, std::string function, std::string parameter,
                             std::string value, std::string allowed)
    : Error("kernel '" + kernel + "': " + std::move(function), std::move(parameter),
            std::move(value), std::move(allowed)),
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

void warn_range(const char* function, const char* parameter, int64_t value, int64_t lo,
                int64_t hi) {
  if ((value < lo || value > hi) && warning_due(function, parameter))
    warning(function, parameter, std::to_string(value), range_text(lo, hi));
}

void rule_range_warn_above(const char* function, const char* parameter, int64_t value, int64_t lo,
                           int64_t hi, int64_t hard_hi) {
  if (value < lo) violation(function, parameter, std::to_string(value), range_text(lo, hi));
  rule_range(function, parameter, value, lo, hard_hi);
  warn_range(function, parameter, value, lo, hi);
}

void rule_divisible(const char* function, const char* parameter, uint64_t value, uint64_t by) {
  if (value % by != 0)
    violation(function, parameter, std::to_string(value) + " (" + hex(value) + ")",
              "divisible by " + std::to_string(by));
}

}  // namespace npukit::npu
