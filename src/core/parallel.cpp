// npukit's thread pool. One job at a time: the caller publishes it, bumps a
// generation counter, works on it itself and waits for the chunks others took.
// Workers and the waiting caller spin briefly (the next job usually follows
// within microseconds inside a network) and then block, so that a busy
// machine gets its cores back; that is what OMP_WAIT_POLICY=passive did for
// the OpenMP version, whose active spinning made two threads 20x slower than
// one when another process held a core.
//
// On a shared machine (issue #9: two threads never slower than one):
// - a region uses no more threads than the CPUs the process may run on
//   (taskset -c 0 with 2 threads: the second thread could only take turns
//   with the first, adding switches and spinning, never speed);
// - a waiter that was preempted recently (another process wants its CPU;
//   read every 0.5 ms) or whose last wait outlasted a spin does not spin
//   next time (it sleeps at once and is woken);
// - a caller left waiting for a helper's chunk (the helper lost its core
//   mid-chunk) in several regions runs the following regions alone for a
//   while, then tries the helpers again;
// - a helper woken onto the CPU the caller runs on (no other CPU was free:
//   another process holds it) could only run by pushing the caller off its
//   CPU, so it takes no chunk and goes back to waiting; when another CPU
//   looks free it first moves there and spins (asleep on the caller's CPU
//   it would be woken there again, region after region); after
//   two such regions the caller runs the following regions alone for a while
//   (no futex wake per region), then tries the helpers again.
// NPUKIT_POOL_STATS=1 prints event counts at exit (regions, chunks per
// thread, spins that ended in work or in sleep, wake-ups, straggler waits);
// NPUKIT_POOL_TRACE=FILE writes every split region's timing (pool_trace.hpp).
#include "npukit/parallel.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

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

#include "core/parallel_testing.hpp"
#include "core/pool_trace.hpp"
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
// How often a waiter reads its preemption count (see SpinPolicy).
constexpr auto kPreemptionCheck = std::chrono::microseconds(500);
// Each thread of a region has a home segment, an equal share of the indices
// in order (the caller the first, helper k the (k+1)-th), so that a thread
// touches the same part of every buffer in every region: when the two CPUs
// share no cache (a host that puts them on different chiplets), output a
// thread writes was last held by that same thread, not fetched from the other
// CPU's cache (NPUKIT_POOL_TRACE's "late" column shows the distance: 0.1 us
// when they share one, 0.4 when not). A thread takes chunks from the front of
// its home segment, then from the others' (a descheduled helper's work is
// done by the threads that run). Chunk sizes shrink as a segment runs out
// (guided): the indices left in it divided by kPartsPerThread, at least
// `grain`, so the threads finish within a grain of each other (fixed chunks
// of 1/16 of the region left a thread idle for up to a chunk at the end:
// resnet18 fp32 at 2 threads lost 0.33 ms of 9.5 that way).
constexpr int64_t kPartsPerThread = 4;
// Threads beyond this many share home segments (the Job holds them inline).
constexpr int kMaxSegments = 16;
// When the caller, its own chunks done, keeps waiting for a helper's chunk
// (the helper lost its core to another process mid-chunk), a region takes
// longer than the caller alone would. After kStrikes such regions in a row
// the next kBackoff regions run on the caller alone, then helpers are tried
// again: on a contended machine two threads then cost about what one does,
// and a quiet machine never meets the rule.
constexpr int kStrikes = 3;
constexpr int kBackoff = 64;
// Regions whose helper woke on the caller's CPU before the caller backs off.
constexpr int kSharedCpuStrikes = 2;
constexpr auto kStraggleMin = std::chrono::microseconds(200);
constexpr int kCpuCheckEvery = 64;

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

// Event counts behind NPUKIT_POOL_STATS (relaxed atomics, off by default).
struct Stats {
  std::atomic<uint64_t> regions{0}, alone_small{0}, alone_cpus{0}, alone_busy{0}, alone_backoff{0},
      caller_chunks{0}, helper_chunks{0}, late_helpers{0}, caller_spin_ok{0}, caller_sleeps{0},
      caller_wait_us{0}, straggles{0}, backoffs{0}, worker_spin_ok{0}, worker_no_spin{0},
      worker_sleeps{0}, wakes{0}, shared_cpu{0}, shared_cpu_backoffs{0}, moved_off{0};
};
Stats* make_stats() {
  const char* env = std::getenv("NPUKIT_POOL_STATS");
  if (env == nullptr || env[0] == '\0' || env[0] == '0') return nullptr;
  static Stats stats;
  std::atexit([] {
    const Stats& s = stats;
    std::fprintf(stderr,
                 "npukit pool: regions %llu (alone: small %llu, cpus %llu, busy %llu, backoff "
                 "%llu); chunks caller %llu helpers %llu; late helpers %llu; caller waits: spin "
                 "%llu sleep %llu, %llu us; straggles %llu, backoffs %llu; workers: spin ok %llu, "
                 "no spin %llu, sleeps %llu; wakes %llu; helper on the caller's CPU %llu "
                 "(backoffs %llu, moved off %llu)\n",
                 (unsigned long long)s.regions, (unsigned long long)s.alone_small,
                 (unsigned long long)s.alone_cpus, (unsigned long long)s.alone_busy,
                 (unsigned long long)s.alone_backoff, (unsigned long long)s.caller_chunks,
                 (unsigned long long)s.helper_chunks, (unsigned long long)s.late_helpers,
                 (unsigned long long)s.caller_spin_ok, (unsigned long long)s.caller_sleeps,
                 (unsigned long long)s.caller_wait_us, (unsigned long long)s.straggles,
                 (unsigned long long)s.backoffs, (unsigned long long)s.worker_spin_ok,
                 (unsigned long long)s.worker_no_spin, (unsigned long long)s.worker_sleeps,
                 (unsigned long long)s.wakes, (unsigned long long)s.shared_cpu,
                 (unsigned long long)s.shared_cpu_backoffs, (unsigned long long)s.moved_off);
  });
  return &stats;
}
Stats* const g_stats = make_stats();
#define NPUKIT_COUNT(field, n)                                           \
  do {                                                                   \
    if (g_stats) g_stats->field.fetch_add(n, std::memory_order_relaxed); \
  } while (0)

// Involuntary context switches of the calling thread so far: a rise since
// the last wait means another process wanted this CPU.
long preemptions() {
  rusage usage;
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
  return usage.ru_nivcsw;
}

// When a thread should spin before it blocks: not when it was preempted
// recently (its CPU is wanted elsewhere: spinning would take time from
// another process, or from this process's other thread on the same CPU) and
// not when its last wait lasted longer than a spin (spinning would not have
// paid then). A wait that slept but was short brings the spinning back.
// The preemption count is a syscall (getrusage, ~0.2 us here, paid before
// every spin it cost a region ~0.5 us: issue #9 §5), so it is read at most
// once per kPreemptionCheck: a preemption is noticed at most that late (a
// time slice under contention is milliseconds long) and, as before, skips
// the spin of one wait.
class SpinPolicy {
 public:
  bool should_spin(std::chrono::steady_clock::time_point now) {
    bool preempted = false;
    if (now >= next_check_) {
      const long count = preemptions();
      preempted = count != preemptions_;
      preemptions_ = count;
      next_check_ = now + kPreemptionCheck;
    }
    return !preempted && !long_last_;
  }
  void waited(std::chrono::steady_clock::time_point since) {
    long_last_ = std::chrono::steady_clock::now() - since > kSpin;
  }
  // The thread was just moved to another CPU (move_off_cpu): its next wait
  // spins (the next region usually follows within microseconds; a wake-up
  // would place it by the waker again) and the switch the move itself cost
  // is not taken for another process's demand.
  void moved() {
    long_last_ = false;
    preemptions_ = preemptions();
    next_check_ = std::chrono::steady_clock::now() + kPreemptionCheck;
  }

 private:
  std::chrono::steady_clock::time_point next_check_{};
  long preemptions_ = -1;
  bool long_last_ = false;
};

// Spins until done() or kSpin has passed; returns done(). No sched_yield
// here: on a loaded machine a yield hands the CPU to another process for a
// whole time slice (mobilenet_v2 fp32 at 2 threads, load 24: 14 ms per run
// without it, 48-65 ms with a yield after 5 us of spinning).
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

}  // namespace

// Moves the calling thread off `cpu` onto another CPU it may use: narrowing
// its CPU set migrates it at once, and restoring the set leaves it where it
// now runs. A thread that sleeps on a CPU is woken there again whenever no
// other CPU looks idle to the scheduler (the kernel's wake-up placement
// starts from the CPU it last ran on, or the waker's), so a helper that
// once woke on its caller's CPU and went back to sleep there kept waking
// there: mobilenet_v2 fp32 at 2 threads, load 1, ran 1069-1118 of 1304
// regions alone (issue #9 §5). False when it may use no other CPU.
bool detail::move_off_cpu(int cpu) {
  cpu_set_t allowed;
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    return false;
  }
  cpu_set_t others = allowed;
  CPU_CLR(cpu, &others);
  if (CPU_COUNT(&others) == 0) return false;
  if (sched_setaffinity(0, sizeof others, &others) != 0) return false;
  const bool moved = sched_getcpu() != cpu;
  sched_setaffinity(0, sizeof allowed, &allowed);
  return moved;
}

// Threads runnable in the whole system now (the fourth field of
// /proc/loadavg, "running/total"), this one included; -1 if unknown.
int detail::runnable_threads() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return -1;
  double l1 = 0, l5 = 0, l15 = 0;
  int running = -1, total = 0;
  if (std::fscanf(f, "%lf %lf %lf %d/%d", &l1, &l5, &l15, &running, &total) != 5) running = -1;
  std::fclose(f);
  return running;
}

namespace {

// Whether a helper that woke on its caller's CPU should move to another:
// only when some other CPU looks free, i.e. fewer threads are runnable than
// the caller, this helper and one per other CPU. When another process holds
// the other CPUs the scheduler's placement was right (no CPU was idle): a
// helper moved onto a busy CPU would share it, be preempted mid-chunk and
// leave the caller waiting a time slice (scripts/contention.py, load 5,
// moving always: 2 threads / 1 thread busy 1.67 on mobilenet_v2, 1.34 on
// resnet18); there it stays and goes back to sleep, as before.
bool other_cpu_looks_free(int cpus) {
  const int running = detail::runnable_threads();
  return running >= 0 && running < 2 + (cpus - 1);
}

// A cache line: data that different threads write go on different lines.
constexpr size_t kLine = 64;

// One thread's share of a region's indices (see kPartsPerThread).
struct alignas(kLine) Segment {
  std::atomic<int64_t> next{0};  // first index not handed out
  int64_t end = 0;
};

struct Job {
  const std::function<void(int64_t, int64_t)>* body = nullptr;
  int64_t count = 0, grain = 1;
  int segments = 1;
  Segment segment[kMaxSegments];
  alignas(kLine) std::atomic<int64_t> finished{0};  // indices completed (every thread adds)
  std::exception_ptr error;
  std::mutex error_mutex;
  // NPUKIT_POOL_TRACE only: the call site, the helpers' chunk window and count.
  const void* site = nullptr;
  std::atomic<int64_t> helper_first{0}, helper_last{0}, helper_chunks{0};

  bool done() const { return finished.load() == count; }

  // Splits [0, count) into `parts` home segments of whole grains (the last
  // takes the remainder), so that every chunk is at least a grain long but
  // the region's last.
  void split(int parts) {
    segments = std::clamp<int>(parts, 1, kMaxSegments);
    const int64_t grains = (count + grain - 1) / grain;
    for (int s = 0; s < segments; ++s) {
      segment[s].next.store(std::min(count, grains * s / segments * grain),
                            std::memory_order_relaxed);
      segment[s].end = std::min(count, grains * (s + 1) / segments * grain);
    }
  }

  // Claims the next chunk [begin, end) of `home`'s segment, or of the next
  // one with indices left: the segment's indices left / kPartsPerThread, at
  // least a grain, and all of them when fewer than a grain would remain.
  bool take(int home, int64_t& begin, int64_t& end) {
    for (int k = 0; k < segments; ++k) {
      Segment& seg = segment[(home + k) % segments];
      int64_t at = seg.next.load(std::memory_order_relaxed);
      while (at < seg.end) {
        const int64_t left = seg.end - at;
        int64_t size = std::max(grain, (left + kPartsPerThread - 1) / kPartsPerThread);
        if (left - size < grain) size = left;
        if (seg.next.compare_exchange_weak(at, at + size)) {
          begin = at;
          end = at + size;
          return true;
        }
      }
    }
    return false;
  }

  // A helper's work(), its window kept for the trace.
  int64_t traced_work(int home) {
    const int64_t from = detail::trace_now_ns();
    const int64_t ran = work(home);
    if (ran == 0) return 0;
    const int64_t to = detail::trace_now_ns();
    int64_t first = 0;
    while ((first == 0 || from < first) && !helper_first.compare_exchange_weak(first, from)) {
    }
    int64_t last = helper_last.load();
    while (to > last && !helper_last.compare_exchange_weak(last, to)) {
    }
    helper_chunks.fetch_add(ran);
    return ran;
  }

  // Takes and runs chunks, from its home segment first, until none is left;
  // returns how many it ran.
  int64_t work(int home) {
    int64_t ran = 0;
    for (int64_t begin = 0, end = 0; take(home, begin, end); ++ran) {
      try {
        (*body)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
      finished.fetch_add(end - begin);
    }
    return ran;
  }
};

thread_local bool t_in_parallel = false;
std::atomic<bool> g_avoid_callers_cpu{true};  // parallel_testing.hpp

class Pool {
 public:
  // Runs `job` on the caller and up to `helpers` workers; returns when every chunk is done.
  void run(Job& job, int helpers) {
    start_workers(helpers);
    helpers_.store(helpers);
    caller_cpu_.store(sched_getcpu(), std::memory_order_relaxed);
    shared_cpu_.store(false, std::memory_order_relaxed);
    job_.store(&job);
    const auto start = std::chrono::steady_clock::now();
    generation_.fetch_add(1);
    wake(sleeping_workers_, worker_cv_);
    const int64_t own = job.work(0);
    NPUKIT_COUNT(caller_chunks, own);
    const auto own_done = std::chrono::steady_clock::now();
    wait(job);
    const auto end = std::chrono::steady_clock::now();
    NPUKIT_COUNT(caller_wait_us,
                 std::chrono::duration_cast<std::chrono::microseconds>(end - own_done).count());
    note_straggling(start, own_done, end);
    note_shared_cpu();
    if (tracing_) trace(job, own, start, own_done, end);
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
    cpus_checked_.store(0, std::memory_order_relaxed);  // re-read the affinity too
  }

  // The CPUs this process may run on, read again every kCpuCheckEvery
  // regions (a syscall; affinity rarely changes mid-run).
  int cpus() {
    const int n = cpus_checked_.load(std::memory_order_relaxed);
    if (n % kCpuCheckEvery == 0) cpus_ = available_cpus();
    cpus_checked_.store(n + 1, std::memory_order_relaxed);
    return cpus_;
  }

  std::mutex submit;  // one job at a time (other callers run serially)

 private:
  static int64_t ns(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  }
  void trace(const Job& job, int64_t own, std::chrono::steady_clock::time_point start,
             std::chrono::steady_clock::time_point own_done,
             std::chrono::steady_clock::time_point end) {
    detail::RegionTrace r;
    r.start_ns = ns(start);
    r.caller_done_ns = ns(own_done);
    r.end_ns = ns(end);
    r.helper_first_ns = job.helper_first.load();
    r.helper_last_ns = job.helper_last.load();
    r.count = job.count;
    r.caller_chunks = own;
    r.helper_chunks = job.helper_chunks.load();
    r.site = job.site;
    detail::record_region(r);
  }

  // A helper woke on the caller's CPU in this region (see the file comment).
  void note_shared_cpu() {
    if (!shared_cpu_.load(std::memory_order_relaxed)) {
      shared_strikes_ = 0;
      return;
    }
    if (++shared_strikes_ < kSharedCpuStrikes) return;
    NPUKIT_COUNT(shared_cpu_backoffs, 1);
    shared_strikes_ = 0;
    backoff_left_.store(kBackoff, std::memory_order_relaxed);
  }

  void note_straggling(std::chrono::steady_clock::time_point start,
                       std::chrono::steady_clock::time_point own_done,
                       std::chrono::steady_clock::time_point end) {
    const auto waited = end - own_done;
    if (waited < kStraggleMin || waited * 4 < end - start) {
      strikes_.store(0, std::memory_order_relaxed);
      return;
    }
    NPUKIT_COUNT(straggles, 1);
    if (strikes_.fetch_add(1, std::memory_order_relaxed) + 1 >= kStrikes) {
      NPUKIT_COUNT(backoffs, 1);
      strikes_.store(0, std::memory_order_relaxed);
      backoff_left_.store(kBackoff, std::memory_order_relaxed);
    }
  }

  // The caller's wait for the chunks helpers still hold.
  void wait(Job& job) {
    auto done = [&] { return job.done(); };
    const auto since = std::chrono::steady_clock::now();
    if (done()) {
      NPUKIT_COUNT(caller_spin_ok, 1);
    } else if (caller_spin_.should_spin(since) && spin_until(done)) {
      NPUKIT_COUNT(caller_spin_ok, 1);
      caller_spin_.waited(since);
    } else {
      NPUKIT_COUNT(caller_sleeps, 1);
      std::unique_lock<std::mutex> lock(mutex_);
      ++sleeping_caller_;
      caller_cv_.wait(lock, done);
      --sleeping_caller_;
      caller_spin_.waited(since);
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
    NPUKIT_COUNT(wakes, 1);
    { std::lock_guard<std::mutex> lock(mutex_); }
    cv.notify_all();
  }

  void worker(int index) {
    t_in_parallel = true;
    uint64_t seen = generation_.load();
    SpinPolicy spin;
    for (;;) {
      auto next_job = [&] { return generation_.load() != seen; };
      const auto since = std::chrono::steady_clock::now();
      const bool spinning = spin.should_spin(since);
      if (!spinning) NPUKIT_COUNT(worker_no_spin, 1);
      if (spinning && spin_until(next_job)) {
        NPUKIT_COUNT(worker_spin_ok, 1);
        spin.waited(since);
      } else {
        NPUKIT_COUNT(worker_sleeps, 1);
        std::unique_lock<std::mutex> lock(mutex_);
        ++sleeping_workers_;
        worker_cv_.wait(lock, next_job);
        --sleeping_workers_;
        spin.waited(since);
      }
      seen = generation_.load();
      if (index >= helpers_.load()) continue;
      inside_.fetch_add(1);
      Job* job = job_.load();
      // On the caller's CPU this thread runs only while the caller does not.
      const int caller_cpu = caller_cpu_.load();
      const bool shared = job != nullptr && g_avoid_callers_cpu.load(std::memory_order_relaxed) &&
                          sched_getcpu() == caller_cpu;
      if (shared) {
        NPUKIT_COUNT(shared_cpu, 1);
        shared_cpu_.store(true, std::memory_order_relaxed);
      }
      if (job != nullptr && !shared && generation_.load() == seen) {
        // Helper `index` is the region's thread index + 1 (its home segment).
        const int home = (index + 1) % job->segments;
        const int64_t ran = tracing_ ? job->traced_work(home) : job->work(home);
        NPUKIT_COUNT(helper_chunks, ran);
        if (ran == 0) NPUKIT_COUNT(late_helpers, 1);
        // The caller may be asleep waiting for the chunk this thread finished last.
        if (job->done()) wake(sleeping_caller_, caller_cv_);
      }
      inside_.fetch_sub(1);
      // Off the job first: the caller's CPU is free again for the caller,
      // which may be waiting for inside_ (a system call here would hold it).
      if (shared && other_cpu_looks_free(available_cpus()) && detail::move_off_cpu(caller_cpu)) {
        NPUKIT_COUNT(moved_off, 1);
        spin.moved();
      }
    }
  }

  // Cache lines by who writes them (kLine each): the caller writes a job's
  // fields while idle helpers spin reading the generation; when they shared
  // one line, each of the caller's stores took it back from a spinning
  // helper: run_ranges' start cost 0.43-0.47 us with the CPUs on two
  // chiplets, 0.15 on one; now 0.27-0.28 and 0.12 (issue #9 §5).
  // The job's fields: written by the caller before it bumps the generation,
  // read by helpers after they see the bump.
  alignas(kLine) std::atomic<Job*> job_{nullptr};
  std::atomic<int> helpers_{0};          // workers allowed to join the current job
  std::atomic<int> caller_cpu_{-1};      // the CPU the caller started the job on
  std::atomic<bool> shared_cpu_{false};  // a helper woke on it during the job
  // What idle helpers spin on; the sleeper counts change only around sleeps.
  alignas(kLine) std::atomic<uint64_t> generation_{0};
  std::atomic<int> sleeping_workers_{0}, sleeping_caller_{0};
  // Written by every helper in every job.
  alignas(kLine) std::atomic<int> inside_{0};  // workers that may be touching job_
  // The caller's own.
  alignas(kLine) std::atomic<int> strikes_{0}, backoff_left_{0};  // guarded by `submit`
  int shared_strikes_ = 0;                                        // guarded by `submit`
  int threads_started_ = 0;                                       // guarded by `submit`
  SpinPolicy caller_spin_;                                        // guarded by `submit`
  std::atomic<int> cpus_checked_{0};  // regions since the affinity was read
  int cpus_ = 1;                      // guarded by `submit`
  const bool tracing_ = detail::pool_trace_on();
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

void detail::set_helpers_avoid_callers_cpu(bool on) {
  g_avoid_callers_cpu.store(on);
}

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

// num_threads()'s default: the CPUs this process may run on, read again every
// kCpuCheckEvery calls and after set_num_threads (the syscall cost ~0.2 µs of
// a 1-2 µs global pool call when read on every call).
std::atomic<int> g_default_threads{0}, g_default_checked{0};

void set_num_threads(int n) {
  check_range("npukit::set_num_threads", "n", n, 0, kMaxThreads);
  g_threads = n;
  g_default_checked.store(0, std::memory_order_relaxed);
  // An explicit choice is honoured from the next region on (tests rely on it).
  if (Pool* p = g_pool.load()) p->reset_backoff();
}

int num_threads() {
  const int n = g_threads.load();
  if (n > 0) return n;
  const int checked = g_default_checked.fetch_add(1, std::memory_order_relaxed);
  if (checked % kCpuCheckEvery == 0) g_default_threads.store(available_cpus());
  const int d = g_default_threads.load();
  return d > 0 ? d : available_cpus();
}

namespace {

// parallel_ranges with the code that called it (NPUKIT_POOL_TRACE's site).
void run_ranges(int64_t count, int64_t grain, const std::function<void(int64_t, int64_t)>& body,
                const void* site) {
  if (count <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int threads = num_threads();
  if (threads <= 1 || t_in_parallel) {
    body(0, count);
    return;
  }
  NPUKIT_COUNT(regions, 1);
  if (count < 2 * grain) {
    NPUKIT_COUNT(alone_small, 1);
    body(0, count);
    return;
  }
  Pool& p = pool();
  std::unique_lock<std::mutex> lock(p.submit, std::try_to_lock);
  if (!lock.owns_lock()) {  // another thread of the program is using the pool
    NPUKIT_COUNT(alone_busy, 1);
    body(0, count);
    return;
  }
  // More threads than CPUs could only take turns: no speed, more switches.
  threads = std::min(threads, p.cpus());
  if (threads <= 1) {
    NPUKIT_COUNT(alone_cpus, 1);
    lock.unlock();
    body(0, count);
    return;
  }
  if (p.backing_off()) {
    NPUKIT_COUNT(alone_backoff, 1);
    lock.unlock();
    body(0, count);
    return;
  }
  Job job;
  job.body = &body;
  job.count = count;
  job.grain = grain;
  job.site = site;
  const int helpers = static_cast<int>(std::min<int64_t>(threads - 1, count / grain - 1));
  job.split(helpers + 1);
  t_in_parallel = true;
  p.run(job, helpers);
  t_in_parallel = false;
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace

void parallel_ranges(int64_t count, int64_t grain,
                     const std::function<void(int64_t, int64_t)>& body) {
  run_ranges(count, grain, body, __builtin_return_address(0));
}

void parallel_for(int64_t count, int64_t grain, const std::function<void(int64_t)>& body) {
  run_ranges(
      count, grain,
      [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) body(i);
      },
      __builtin_return_address(0));
}

void parallel_for(int64_t count, const std::function<void(int64_t)>& body) {
  parallel_for(count, 1, body);
}

}  // namespace npukit
