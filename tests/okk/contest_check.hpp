// Host-side helpers of the contest-style kernel tests: deterministic random
// data and Sophgo's contest tolerance |out - ref| < 1e-4 * max(|out|, |ref|, 1).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "bmlib_runtime.h"

#define BMLIB_SAFE_CALL(cmd)                                       \
  do {                                                             \
    if ((cmd) != BM_SUCCESS) {                                     \
      std::printf("%s:%d: %s failed\n", __FILE__, __LINE__, #cmd); \
      std::exit(1);                                                \
    }                                                              \
  } while (0)

inline std::vector<float> random_floats(size_t n, unsigned seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Returns the number of mismatches (printing the first few).
inline int contest_compare(const char* name, const std::vector<float>& out,
                           const std::vector<double>& ref) {
  int bad = 0;
  int zeros = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const double o = out[i], r = ref[i];
    zeros += o == 0.0;
    const double tol = 1e-4 * std::max({std::fabs(o), std::fabs(r), 1.0});
    if (!(std::fabs(o - r) < tol)) {
      if (bad < 5) std::printf("%s: element %zu: out %.9g ref %.9g\n", name, i, o, r);
      ++bad;
    }
  }
  // A weak test would pass with an all-zero output: refuse that.
  if (zeros * 2 > static_cast<int>(out.size())) {
    std::printf("%s: %d of %zu outputs are zero: mistrusted\n", name, zeros, out.size());
    ++bad;
  }
  std::printf("%s: %s (%zu outputs, %d mismatches)\n", name, bad ? "FAIL" : "pass", out.size(),
              bad);
  return bad;
}

struct DeviceBuffer {
  bm_handle_t handle;
  bm_device_mem_t mem;
  DeviceBuffer(bm_handle_t h, size_t bytes) : handle(h) {
    BMLIB_SAFE_CALL(bm_malloc_device_byte(h, &mem, static_cast<unsigned>(bytes)));
  }
  ~DeviceBuffer() { bm_free_device(handle, mem); }
  unsigned long long addr() const { return bm_mem_get_device_addr(mem); }
  void upload(const std::vector<float>& v) {
    BMLIB_SAFE_CALL(bm_memcpy_s2d(handle, mem, (void*)v.data()));
  }
  std::vector<float> download(size_t n) {
    std::vector<float> v(n);
    BMLIB_SAFE_CALL(bm_memcpy_d2s(handle, v.data(), mem));
    return v;
  }
};
