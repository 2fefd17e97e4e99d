// The list-driven differential loop shared by the kernel-family tests: every
// runnable, accepting, non-reference variant of a KernelList runs on one
// problem and its output is compared with the reference's; run counts are
// kept per kernel so a test can require that each kernel took its share.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "npukit/parallel.hpp"
#include "ops/kernel_list.hpp"
#include "test_util.hpp"

namespace npukit::variant_test {

struct Runs {
  std::map<std::string, int64_t> per_kernel;  // comparisons that passed
  std::map<std::string, int64_t> declined;    // "kernel: reason" -> count
  int64_t total() const {
    int64_t n = 0;
    for (const auto& [name, k] : per_kernel) n += k;
    return n;
  }
  int64_t declines() const {
    int64_t n = 0;
    for (const auto& [why, k] : declined) n += k;
    return n;
  }
  int64_t of(const std::string& name) const {
    const auto it = per_kernel.find(name);
    return it == per_kernel.end() ? 0 : it->second;
  }
};

struct Options {
  // Only kernels whose name contains this (empty: all).
  std::string only;
  // 0: keep the caller's thread count; 1-3: the first run's count, each
  // later run takes the next of 1, 2, 3.
  int threads = 0;
};

// For every runnable non-reference variant of `list` (and `opt.only`):
// problem = make() (a fresh output each time), skipped if declined, run,
// then diff = compare(problem) ("" when the output is the reference's). A
// difference is a test failure naming the kernel, `context` (seed, case,
// configuration) and the thread count; the loop stops there and returns false.
template <class Problem, class Make, class Compare>
bool run_every_variant(const KernelList<Problem>& list, Make&& make, Compare&& compare,
                       const std::string& context, Runs& runs, const Options& opt = {}) {
  int threads = opt.threads;
  for (const auto& v : list.variants) {
    if (v.reference || !KernelList<Problem>::runnable(v)) continue;
    if (!opt.only.empty() && std::string(v.name).find(opt.only) == std::string::npos) continue;
    const Problem p = make();
    if (const char* why = v.declines ? v.declines(p) : nullptr) {
      ++runs.declined[std::string(v.name) + ": " + why];
      continue;
    }
    if (threads != 0) {
      set_num_threads(threads);
      threads = threads % 3 + 1;
    }
    v.run(p);
    const std::string diff = compare(p);
    if (!diff.empty()) {
      ADD_FAILURE() << "kernel " << v.name << ", " << context << ", threads " << num_threads()
                    << ": " << diff;
      return false;
    }
    ++runs.per_kernel[v.name];
  }
  return true;
}

// Every runnable non-reference variant that `selected` names ran more than
// `more_than` times (a weak-test guard: a kernel that never runs is untested).
template <class Problem>
void expect_each_ran(
    const KernelList<Problem>& list, const Runs& runs, int64_t more_than,
    const std::function<bool(const std::string&)>& selected = [](const std::string&) {
      return true;
    }) {
  for (const auto& v : list.variants) {
    if (!v.reference && KernelList<Problem>::runnable(v) && selected(v.name)) {
      EXPECT_GT(runs.of(v.name), more_than) << v.name << " ran too rarely";
    }
  }
}

// Every runnable non-reference variant that `selected` names ran exactly
// `times` times (for loops that give every kernel every case: a decline or
// a skipped case shows as a short count).
template <class Problem>
void expect_each_ran_exactly(const KernelList<Problem>& list, const Runs& runs, int64_t times,
                             const std::function<bool(const std::string&)>& selected) {
  for (const auto& v : list.variants) {
    if (!v.reference && KernelList<Problem>::runnable(v) && selected(v.name)) {
      EXPECT_EQ(runs.of(v.name), times) << v.name << " did not run every case";
    }
  }
}

// A run-count guard written for a host that runs every variant, scaled to
// the share of the family's fast variants runnable here (fewer under
// NPUKIT_MAX_ISA or on an AVX2-only host, where each case runs fewer kernels).
template <class Problem>
int64_t scaled_to_runnable(const KernelList<Problem>& list, int64_t more_than) {
  int64_t all = 0, here = 0;
  for (const auto& v : list.variants) {
    if (v.reference) continue;
    ++all;
    here += KernelList<Problem>::runnable(v) ? 1 : 0;
  }
  return all == 0 ? more_than : more_than * here / all;
}

inline std::function<bool(const std::string&)> name_has(const std::string& part) {
  return [part](const std::string& name) { return name.find(part) != std::string::npos; };
}

// The compare step for fp32 outputs: "" when got and want hold the same bits
// (NaNs of any payload equal), else the first differing element, both values.
inline std::string float_difference(const Tensor& got, const Tensor& want) {
  for (int64_t i = 0; i < got.numel(); ++i) {
    const float a = got.data<float>()[i], b = want.data<float>()[i];
    if (!test::same_bits_or_both_nan(a, b)) {
      char text[96];
      std::snprintf(text, sizeof text, "first mismatch at element %lld: %.9g vs %.9g",
                    static_cast<long long>(i), static_cast<double>(a), static_cast<double>(b));
      return text;
    }
  }
  return "";
}

inline void print_runs(const char* tag, const Runs& runs) {
  for (const auto& [name, n] : runs.per_kernel)
    std::printf("[ %s ] ran %s: %lld\n", tag, name.c_str(), static_cast<long long>(n));
  for (const auto& [why, n] : runs.declined)
    std::printf("[ %s ] declined %s: %lld\n", tag, why.c_str(), static_cast<long long>(n));
}

}  // namespace npukit::variant_test
