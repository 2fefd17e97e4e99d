// One ordered kernel list per operator family (see include/npukit/kernels.hpp).
//
// A family defines a Problem struct (the validated arguments of one call) and
// a list of KernelVariant<Problem>, best first and the reference last:
//
//   const KernelList<Pool2dProblem>& pool2d_kernels() {
//     static const KernelList<Pool2dProblem> list{"pool2d", {
//         {"f32-avgpool-nchw-avx2", Isa::avx2, "f32 avg, NCHW", declines_avx2, run_avx2},
//         {"f32-pool-reference", Isa::portable, "always", nullptr, ref::pool2d_f32, true}}};
//     return list;
//   }
//   ... pool2d_kernels().run(problem);
//
// Tests and benchmarks iterate `variants` (each with KernelList::runnable), so
// listing a kernel is what makes it tested and benchmarked. The family must
// also be named in src/ops/kernel_catalog.cpp for `npukit info --kernels`.
#pragma once

#include <string>
#include <vector>

#include "npukit/kernels.hpp"

namespace npukit {

template <class Problem>
struct KernelVariant {
  const char* name;     // dtype-op-variant-isa
  Isa isa;              // level the kernel needs
  const char* applies;  // when it applies, in words (for listings)
  // nullptr when it applies to `p`, else why not (a static string).
  const char* (*declines)(const Problem& p);
  void (*run)(const Problem& p);
  bool reference = false;  // the specification (always applies)
};

// Logs one choice (NPUKIT_LOG_KERNELS); defined in src/core/kernels.cpp.
void log_kernel_choice(const char* family, const char* chosen, const std::string& declined);

template <class Problem>
struct KernelList {
  const char* family;
  std::vector<KernelVariant<Problem>> variants;

  // Whether `v` may run here: the Impl setting and max_isa() (variant tests follow the cap).
  static bool runnable(const KernelVariant<Problem>& v) {
    return kernel_allowed(v.isa, v.reference);
  }

  // The first runnable kernel that accepts `p`.
  const KernelVariant<Problem>& choose(const Problem& p) const {
    std::string declined;
    const bool log = log_kernels();
    for (const auto& v : variants) {
      if (!runnable(v)) {
        if (log) declined += std::string(" ") + v.name + ": not allowed here;";
        continue;
      }
      const char* why = v.declines ? v.declines(p) : nullptr;
      if (why == nullptr) {
        if (log) log_kernel_choice(family, v.name, declined);
        return v;
      }
      if (log) declined += std::string(" ") + v.name + ": " + why + ";";
    }
    return variants.back();  // the reference, which never declines
  }

  void run(const Problem& p) const { choose(p).run(p); }

  std::vector<KernelInfo> info() const {
    std::vector<KernelInfo> out;
    for (const auto& v : variants) out.push_back({family, v.name, v.isa, v.applies, v.reference});
    return out;
  }
};

}  // namespace npukit
