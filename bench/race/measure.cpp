// Timing (median of repeats after warm-up) and the copy bandwidth that each
// case's GB/s is compared with.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "npukit/parallel.hpp"
#include "race.hpp"

namespace race {

Budget full_budget() {
  return Budget{};
}

Budget quick_budget() {
  Budget b;
  b.warmup = 1;
  b.target_seconds = 0.01;
  b.min_repeats = 3;
  b.max_repeats = 20;
  return b;
}

double median_seconds(const std::function<void()>& f, const Budget& b) {
  using clock = std::chrono::steady_clock;
  double first = 0;
  for (int i = 0; i < b.warmup; ++i) {
    const auto t0 = clock::now();
    f();
    first = std::chrono::duration<double>(clock::now() - t0).count();
  }
  int reps = b.min_repeats;
  if (first > 0)
    reps = std::clamp(static_cast<int>(b.target_seconds / first), b.min_repeats, b.max_repeats);
  std::vector<double> t(static_cast<size_t>(reps));
  for (double& s : t) {
    const auto t0 = clock::now();
    f();
    s = std::chrono::duration<double>(clock::now() - t0).count();
  }
  if (b.minimum) return *std::min_element(t.begin(), t.end());
  std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
  return t[static_cast<size_t>(reps / 2)];
}

double copy_gbps(int64_t bytes, int threads, const Budget& budget) {
  // A copy is cheap: more repeats than a case gets, for a steadier figure.
  Budget b = budget;
  b.min_repeats = std::max(b.min_repeats, 20);
  b.max_repeats = std::max(b.max_repeats, 1000);
  const size_t half = static_cast<size_t>(bytes / 2) & ~size_t{63};
  std::vector<unsigned char> src(half + 64, 1), dst(half + 64, 0);
  // Each thread copies one contiguous, cache-line aligned share.
  const auto share = [&](size_t t, size_t nt) {
    const size_t chunk = (half / nt + 63) & ~size_t{63};
    const size_t begin = std::min(half, t * chunk), end = std::min(half, begin + chunk);
    if (end > begin) std::memcpy(dst.data() + begin, src.data() + begin, end - begin);
  };
  const auto omp_copy = [&] {
#pragma omp parallel num_threads(threads)
    share(static_cast<size_t>(omp_get_thread_num()), static_cast<size_t>(omp_get_num_threads()));
  };
  // OpenMP with OMP_WAIT_POLICY=passive wakes sleeping threads for every
  // region (tens of microseconds here), which is not the machine's limit on
  // small working sets: the copy through npukit's own pool is timed too and
  // the faster of the two is the reference.
  const auto pool_copy = [&] {
    const auto nt = static_cast<size_t>(threads);
    npukit::parallel_for(static_cast<int64_t>(nt), 1,
                         [&](int64_t t) { share(static_cast<size_t>(t), nt); });
  };
  const double s_omp = median_seconds(omp_copy, b);
  const int saved = npukit::num_threads();
  npukit::set_num_threads(threads);
  const double s_pool = median_seconds(pool_copy, b);
  npukit::set_num_threads(saved);
  return static_cast<double>(2 * half) / std::min(s_omp, s_pool) / 1e9;
}

}  // namespace race
