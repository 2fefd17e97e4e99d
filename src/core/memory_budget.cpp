#include "npukit/memory_budget.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#include "npukit/error.hpp"

namespace npukit {

namespace {

std::atomic<uint64_t> g_budget{0};  // 0: not set, use the default
std::atomic<uint64_t> g_in_use{0};

constexpr const char* kEnv = "NPUKIT_MEMORY_LIMIT";

// A quarter of the RAM: room for the caller's own copies (numpy arrays,
// outputs) and for other processes on a shared machine.
uint64_t quarter_of_ram() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return uint64_t{2} << 30;  // unknown: 2 GiB
  return static_cast<uint64_t>(pages) / 4 * static_cast<uint64_t>(page);
}

// "123", "64K", "512M", "8G" (powers of 1024).
uint64_t parse_limit(const char* text) {
  const std::string s = text;
  const std::string allowed = "a positive byte count, optionally with a K, M or G suffix";
  size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(s, &used, 10);
  } catch (...) {
    fail("npukit", kEnv, "'" + s + "'", allowed);
  }
  int shift = 0;
  if (used + 1 == s.size()) {
    const char u = s[used];
    shift = u == 'K' || u == 'k' ? 10 : u == 'M' || u == 'm' ? 20 : u == 'G' || u == 'g' ? 30 : -1;
  } else if (used != s.size()) {
    shift = -1;
  }
  check(shift >= 0 && v > 0 && (v >> (63 - shift)) == 0 && s[0] != '-', "npukit", kEnv,
        "'" + s + "'", allowed);
  return static_cast<uint64_t>(v) << shift;
}

uint64_t default_budget() {
  static const uint64_t b = [] {
    const char* env = std::getenv(kEnv);
    return env && *env ? parse_limit(env) : quarter_of_ram();
  }();
  return b;
}

std::string mib(uint64_t bytes) {
  return std::to_string(bytes / (1024 * 1024)) + " MiB";
}

std::string too_big(uint64_t bytes, bool overflow) {
  return overflow ? std::string("more than 2^64 bytes")
                  : std::to_string(bytes) + " bytes (" + mib(bytes) + ")";
}

std::string budget_text(uint64_t budget, uint64_t in_use) {
  return "at most " + std::to_string(budget - in_use) + " bytes: the memory budget is " +
         std::to_string(budget) + " bytes (" + mib(budget) + ", " + std::to_string(in_use) +
         " in use; set NPUKIT_MEMORY_LIMIT or npukit::set_memory_budget)";
}

}  // namespace

uint64_t memory_budget() {
  const uint64_t b = g_budget.load();
  return b ? b : default_budget();
}

void set_memory_budget(uint64_t bytes) {
  g_budget = bytes;
}

uint64_t memory_in_use() {
  return g_in_use.load();
}

void check_allocation(const char* function, const char* parameter, const std::string& what,
                      uint64_t count, uint64_t elem_size) {
  uint64_t bytes = 0;
  const bool overflow = __builtin_mul_overflow(count, elem_size, &bytes);
  const uint64_t budget = memory_budget(), in_use = std::min(g_in_use.load(), budget);
  if (overflow || bytes > budget - in_use)
    fail(function, parameter, what + ": " + too_big(bytes, overflow), budget_text(budget, in_use));
}

BudgetReservation::BudgetReservation(const char* function, const char* parameter,
                                     const std::string& what, uint64_t count, uint64_t elem_size) {
  uint64_t bytes = 0;
  const bool overflow = __builtin_mul_overflow(count, elem_size, &bytes);
  const uint64_t budget = memory_budget();
  uint64_t in_use = g_in_use.load();
  // Reserve atomically so that two threads cannot both take the last bytes.
  do {
    if (overflow || in_use > budget || bytes > budget - in_use)
      fail(function, parameter, what + ": " + too_big(bytes, overflow),
           budget_text(budget, std::min(in_use, budget)));
  } while (!g_in_use.compare_exchange_weak(in_use, in_use + bytes));
  bytes_ = bytes;
}

BudgetReservation& BudgetReservation::operator=(BudgetReservation&& o) noexcept {
  if (this != &o) {
    release();
    bytes_ = o.bytes_;
    o.bytes_ = 0;
  }
  return *this;
}

void BudgetReservation::release() noexcept {
  if (bytes_) g_in_use.fetch_sub(bytes_);
  bytes_ = 0;
}

}  // namespace npukit
