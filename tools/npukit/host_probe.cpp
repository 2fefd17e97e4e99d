#include "host_probe.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

namespace npukit::cli {

namespace {

using Clock = std::chrono::steady_clock;

// What the two sides of a run share. Held by both threads and the caller, so
// that a thread the caller gave up on (its CPU held by a higher-priority
// process) can finish later, detached, without touching freed memory.
struct Handoff {
  alignas(64) std::atomic<long> flag{0};  // alone on its cache line
  alignas(64) std::atomic<bool> abandoned{false};
  std::atomic<double> seconds{-1};
  std::atomic<int> finished{0};  // threads that returned
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(1);

  // Waits until `flag` holds `value`; false (and the run abandoned) when the
  // deadline passed first or the other side gave up.
  bool await(long value) {
    for (long spins = 0; flag.load(std::memory_order_acquire) != value; ++spins) {
      if ((spins & 1023) == 1023 && (abandoned.load() || Clock::now() > deadline)) {
        abandoned = true;
        return false;
      }
    }
    return true;
  }
};

// Starts `body` on a thread already bound to `cpu` (a real-time spinner on the
// creating CPU cannot then keep it from ever running to bind itself).
bool start_pinned(int cpu, std::function<void()> body, pthread_t& thread) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_attr_setaffinity_np(&attr, sizeof set, &set);
  auto* owned = new std::function<void()>(std::move(body));
  const bool ok = pthread_create(
                      &thread, &attr,
                      [](void* f) -> void* {
                        auto* fn = static_cast<std::function<void()>*>(f);
                        (*fn)();
                        delete fn;
                        return nullptr;
                      },
                      owned) == 0;
  if (!ok) delete owned;
  pthread_attr_destroy(&attr);
  return ok;
}

// One run of `round_trips` round trips between CPUs a and b; seconds, or -1.
double one_run(int a, int b, int round_trips) {
  auto h = std::make_shared<Handoff>();
  // b answers every odd value; a starts the clock after a warm-up trip.
  auto pong = [h, round_trips] {
    for (long i = 1; i < 2L * round_trips && h->await(i); i += 2)
      h->flag.store(i + 1, std::memory_order_release);
    ++h->finished;
  };
  auto ping = [h, round_trips] {
    h->flag.store(1, std::memory_order_release);
    if (h->await(2)) {
      const auto t0 = Clock::now();
      bool ok = true;
      for (long i = 3; ok && i < 2L * round_trips; i += 2) {
        h->flag.store(i, std::memory_order_release);
        ok = h->await(i + 1);
      }
      if (ok) h->seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    }
    ++h->finished;
  };
  pthread_t threads[2];
  const bool started[2] = {start_pinned(b, pong, threads[0]), start_pinned(a, ping, threads[1])};
  const int expected = int{started[0]} + int{started[1]};
  if (expected < 2) h->abandoned = true;
  // Joined when both ended in time, else left to end on their own.
  const auto give_up = h->deadline + std::chrono::milliseconds(100);
  while (h->finished.load() < expected && Clock::now() <= give_up)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  const bool ended = h->finished.load() == expected;
  if (!ended) h->abandoned = true;
  for (int k = 0; k < 2; ++k) {
    if (!started[k]) continue;
    if (ended) {
      pthread_join(threads[k], nullptr);
    } else {
      pthread_detach(threads[k]);
    }
  }
  return h->abandoned.load() ? -1 : h->seconds.load();
}

}  // namespace

std::vector<int> allowed_cpu_list() {
  std::vector<int> cpus;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::optional<double> handoff_ns(int a, int b, int round_trips, int tries) {
  double best = -1;
  for (int t = 0; t < tries; ++t) {
    const double s = one_run(a, b, round_trips);
    if (s < 0) return std::nullopt;
    best = best < 0 ? s : std::min(best, s);
  }
  // round_trips - 1 timed round trips, two one-way hand-offs each.
  return best * 1e9 / (2.0 * (round_trips - 1));
}

}  // namespace npukit::cli
