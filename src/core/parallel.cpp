// npukit's thread pool. One job at a time: the caller publishes it, bumps a
// generation counter, works on it itself and waits for the chunks others took.
// Workers and the waiting caller spin briefly (the next job usually follows
// within microseconds inside a network) and then block, so that a busy
// machine gets its cores back; that is what OMP_WAIT_POLICY=passive did for
// the OpenMP version, whose active spinning made two threads 20x slower than
// one when another process held a core.
#include "npukit/parallel.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "npukit/error.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NPUKIT_PAUSE() _mm_pause()
#else
#define NPUKIT_PAUSE() std::this_thread::yield()
#endif

namespace npukit {

namespace {

constexpr int kMaxThreads = 1024;
// How long an idle worker (or a caller waiting for a straggler) spins before
// it blocks. Long enough to bridge the gap between two layers of a network,
// short enough to cost another process little.
constexpr auto kSpin = std::chrono::microseconds(50);
// Chunks per thread: small chunks let the threads that run finish the work of
// one that the OS has descheduled.
constexpr int64_t kChunksPerThread = 8;
// When the caller, its own chunks done, keeps waiting for a helper's chunk
// (the helper lost its core to another process mid-chunk), a region takes
// longer than the caller alone would. After kStrikes such regions in a row
// the next kBackoff regions run on the caller alone, then helpers are tried
// again: on a contended machine two threads then cost about what one does,
// and a quiet machine never meets the rule.
constexpr int kStrikes = 3;
constexpr int kBackoff = 64;
constexpr auto kStraggleMin = std::chrono::microseconds(200);

int available_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

int initial_threads() {
  const char* env = std::getenv("NPUKIT_NUM_THREADS");
  if (env == nullptr) return 0;
  std::string message;
  const int n = parse_num_threads(env, message);
  if (!message.empty()) std::fprintf(stderr, "npukit: %s\n", message.c_str());
  return n;
}
std::atomic<int> g_threads{initial_threads()};

// Spins until done() or kSpin has passed; returns done().
template <class Done>
bool spin_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      if (done()) return true;
      NPUKIT_PAUSE();
    }
    if (std::chrono::steady_clock::now() >= until) return done();
  }
}

struct Job {
  const std::function<void(int64_t, int64_t)>* body = nullptr;
  int64_t count = 0, chunk = 1, chunks = 0;
  std::atomic<int64_t> next{0};      // next chunk to hand out
  std::atomic<int64_t> finished{0};  // chunks completed
  std::exception_ptr error;
  std::mutex error_mutex;

  // Takes and runs chunks until none is left.
  void work() {
    for (;;) {
      const int64_t c = next.fetch_add(1);
      if (c >= chunks) return;
      const int64_t begin = c * chunk, end = std::min(count, begin + chunk);
      try {
        (*body)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
      finished.fetch_add(1);
    }
  }
};

thread_local bool t_in_parallel = false;

class Pool {
 public:
  // Runs `job` on the caller and up to `helpers` workers; returns when every chunk is done.
  void run(Job& job, int helpers) {
    start_workers(helpers);
    helpers_.store(helpers);
    job_.store(&job);
    const auto start = std::chrono::steady_clock::now();
    generation_.fetch_add(1);
    wake(sleeping_workers_, worker_cv_);
    job.work();
    const auto own_done = std::chrono::steady_clock::now();
    wait(job);
    note_straggling(start, own_done, std::chrono::steady_clock::now());
  }

  // Whether the next region should run on the caller alone (see kStrikes).
  bool backing_off() {
    int left = backoff_left_.load(std::memory_order_relaxed);
    if (left <= 0) return false;
    backoff_left_.store(left - 1, std::memory_order_relaxed);
    return true;
  }
  void reset_backoff() {
    strikes_.store(0, std::memory_order_relaxed);
    backoff_left_.store(0, std::memory_order_relaxed);
  }

  std::mutex submit;  // one job at a time (other callers run serially)

 private:
  void note_straggling(std::chrono::steady_clock::time_point start,
                       std::chrono::steady_clock::time_point own_done,
                       std::chrono::steady_clock::time_point end) {
    const auto waited = end - own_done;
    if (waited < kStraggleMin || waited * 4 < end - start) {
      strikes_.store(0, std::memory_order_relaxed);
      return;
    }
    if (strikes_.fetch_add(1, std::memory_order_relaxed) + 1 >= kStrikes) {
      strikes_.store(0, std::memory_order_relaxed);
      backoff_left_.store(kBackoff, std::memory_order_relaxed);
    }
  }

  void wait(Job& job) {
    if (!spin_until([&] { return job.finished.load() == job.chunks; })) {
      std::unique_lock<std::mutex> lock(mutex_);
      ++sleeping_caller_;
      caller_cv_.wait(lock, [&] { return job.finished.load() == job.chunks; });
      --sleeping_caller_;
    }
    // Retire the job; workers that picked it up late leave before it dies.
    job_.store(nullptr);
    while (inside_.load() != 0) NPUKIT_PAUSE();
  }

  void start_workers(int wanted) {
    while (static_cast<int>(threads_started_) < wanted) {
      const int index = threads_started_++;
      std::thread([this, index] { worker(index); }).detach();
    }
  }

  // Taking the mutex first: a waiter is then either asleep or about to see the change.
  void wake(const std::atomic<int>& sleepers, std::condition_variable& cv) {
    if (sleepers.load() == 0) return;
    { std::lock_guard<std::mutex> lock(mutex_); }
    cv.notify_all();
  }

  void worker(int index) {
    t_in_parallel = true;
    uint64_t seen = generation_.load();
    for (;;) {
      if (!spin_until([&] { return generation_.load() != seen; })) {
        std::unique_lock<std::mutex> lock(mutex_);
        ++sleeping_workers_;
        worker_cv_.wait(lock, [&] { return generation_.load() != seen; });
        --sleeping_workers_;
      }
      seen = generation_.load();
      if (index >= helpers_.load()) continue;
      inside_.fetch_add(1);
      Job* job = job_.load();
      if (job != nullptr && generation_.load() == seen) {
        job->work();
        // The caller may be asleep waiting for the chunk this thread finished last.
        if (job->finished.load() == job->chunks) wake(sleeping_caller_, caller_cv_);
      }
      inside_.fetch_sub(1);
    }
  }

  std::atomic<uint64_t> generation_{0};
  std::atomic<Job*> job_{nullptr};
  std::atomic<int> helpers_{0};  // workers allowed to join the current job
  std::atomic<int> inside_{0};   // workers that may be touching job_
  std::atomic<int> sleeping_workers_{0}, sleeping_caller_{0};
  std::atomic<int> strikes_{0}, backoff_left_{0};  // guarded by `submit` (atomics for tidiness)
  int threads_started_ = 0;                        // guarded by `submit`
  std::mutex mutex_;
  std::condition_variable worker_cv_, caller_cv_;
};

// Never destroyed: detached workers may still be waiting at exit. A forked
// child has none of the parent's workers, so it starts a new pool.
std::atomic<Pool*> g_pool{nullptr};
std::once_flag g_atfork_once;

Pool& pool() {
  std::call_once(g_atfork_once,
                 [] { pthread_atfork(nullptr, nullptr, [] { g_pool.store(nullptr); }); });
  Pool* p = g_pool.load();
  if (p == nullptr) {
    Pool* fresh = new Pool;
    if (g_pool.compare_exchange_strong(p, fresh)) return *fresh;
    delete fresh;
  }
  return *p;
}

}  // namespace

int parse_num_threads(const char* text, std::string& message) {
  message.clear();
  const std::string shown = std::string("NPUKIT_NUM_THREADS='") + text + "'";
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v < 0) {
    message = shown + " ignored: expected an integer from 0 to " + std::to_string(kMaxThreads) +
              " (0 = all hardware threads)";
    return 0;
  }
  if (errno == ERANGE || v > kMaxThreads) {
    message = shown + " capped at " + std::to_string(kMaxThreads) + " (the allowed range is 0 to " +
              std::to_string(kMaxThreads) + ")";
    return kMaxThreads;
  }
  return static_cast<int>(v);
}

void set_num_threads(int n) {
  check_range("npukit::set_num_threads", "n", n, 0, kMaxThreads);
  g_threads = n;
  // An explicit choice is honoured from the next region on (tests rely on it).
  if (Pool* p = g_pool.load()) p->reset_backoff();
}

int num_threads() {
  const int n = g_threads.load();
  return n > 0 ? n : available_cpus();
}

void parallel_ranges(int64_t count, int64_t grain,
                     const std::function<void(int64_t, int64_t)>& body) {
  if (count <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int threads = num_threads();
  if (threads <= 1 || count < 2 * grain || t_in_parallel) {
    body(0, count);
    return;
  }
  Pool& p = pool();
  std::unique_lock<std::mutex> lock(p.submit, std::try_to_lock);
  if (!lock.owns_lock()) {  // another thread of the program is using the pool
    body(0, count);
    return;
  }
  if (p.backing_off()) {
    lock.unlock();
    body(0, count);
    return;
  }
  Job job;
  job.body = &body;
  job.count = count;
  const int64_t max_chunks = std::max<int64_t>(1, count / grain);
  job.chunks = std::min<int64_t>(max_chunks, int64_t{threads} * kChunksPerThread);
  job.chunk = (count + job.chunks - 1) / job.chunks;
  job.chunks = (count + job.chunk - 1) / job.chunk;
  const int helpers = static_cast<int>(std::min<int64_t>(threads - 1, job.chunks - 1));
  t_in_parallel = true;
  p.run(job, helpers);
  t_in_parallel = false;
  if (job.error) std::rethrow_exception(job.error);
}

void parallel_for(int64_t count, int64_t grain, const std::function<void(int64_t)>& body) {
  parallel_ranges(count, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) body(i);
  });
}

void parallel_for(int64_t count, const std::function<void(int64_t)>& body) {
  parallel_for(count, 1, body);
}

}  // namespace npukit
