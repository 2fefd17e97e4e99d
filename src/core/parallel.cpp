#include "npukit/parallel.hpp"

#include <omp.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>

#include "npukit/error.hpp"

namespace npukit {

namespace {
int initial_threads() {
  if (const char* env = std::getenv("NPUKIT_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  return 0;
}
std::atomic<int> g_threads{initial_threads()};
}  // namespace

void set_num_threads(int n) {
  check_range("npukit::set_num_threads", "n", n, 0, 1024);
  g_threads = n;
}

int num_threads() {
  const int n = g_threads.load();
  return n > 0 ? n : omp_get_max_threads();
}

void parallel_for(int64_t count, const std::function<void(int64_t)>& body) {
  const int threads = num_threads();
  if (threads <= 1 || count <= 1) {
    for (int64_t i = 0; i < count; ++i) body(i);
    return;
  }
  // Exceptions must not cross an OpenMP region: keep the first and rethrow.
  std::exception_ptr error;
  std::mutex error_mutex;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < count; ++i) {
    try {
      body(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace npukit
