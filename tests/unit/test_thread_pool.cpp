// npukit's thread pool: every index exactly once for any count, grain and
// thread count; small loops stay on the caller; nested and concurrent calls;
// errors reach the caller; NPUKIT_NUM_THREADS values are capped or ignored
// with a message; straggling helpers are left out for a while, then retried;
// a helper that can only run on its caller's CPU takes no chunk; chunks
// keep to each thread's home segment and shrink to a grain at its end; a process
// allowed fewer CPUs than threads still completes every region.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "core/parallel_testing.hpp"
#include "npukit/npukit.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_thread_pool {
namespace {

TEST(ThreadPool, EveryIndexOnceForAnyCountGrainAndThreads) {
  test::SettingsRestore restore;
  for (int threads : {1, 2, 3, 7}) {
    set_num_threads(threads);
    for (int64_t count : {0, 1, 2, 3, 17, 64, 1000, 4099})
      for (int64_t grain : {1, 2, 5, 100}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
        std::atomic<int64_t> ranges{0};
        parallel_ranges(count, grain, [&](int64_t begin, int64_t end) {
          ASSERT_LE(begin, end);
          ranges++;
          for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
        });
        for (int64_t i = 0; i < count; ++i)
          ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1)
              << "threads " << threads << " count " << count << " grain " << grain << " index "
              << i;
        // Ranges are at least `grain` long, so there are at most count / grain of them.
        if (count > 0) {
          EXPECT_LE(ranges.load(), std::max<int64_t>(1, count / grain));
        }
      }
  }
}

TEST(ThreadPool, SmallLoopsStayOnTheCaller) {
  test::SettingsRestore restore;
  set_num_threads(4);
  const auto caller = std::this_thread::get_id();
  bool elsewhere = false;
  parallel_for(7, 4, [&](int64_t) { elsewhere |= std::this_thread::get_id() != caller; });
  EXPECT_FALSE(elsewhere);  // 7 < 2 * grain: not worth a second thread
}

TEST(ThreadPool, NestedAndConcurrentCalls) {
  test::SettingsRestore restore;
  set_num_threads(3);
  std::atomic<int64_t> sum{0};
  parallel_for(8, [&](int64_t i) {
    parallel_for(10, [&](int64_t j) { sum += i * 10 + j; });  // runs serially inside
  });
  EXPECT_EQ(sum.load(), 79 * 80 / 2);
  // Two program threads at once: one gets the pool, the other runs serially.
  std::atomic<int64_t> a{0}, b{0};
  std::thread t([&] {
    for (int r = 0; r < 50; ++r) parallel_for(100, [&](int64_t i) { a += i; });
  });
  for (int r = 0; r < 50; ++r) parallel_for(100, [&](int64_t i) { b += i; });
  t.join();
  EXPECT_EQ(a.load(), 50 * 4950);
  EXPECT_EQ(b.load(), 50 * 4950);
}

TEST(ThreadPool, FirstErrorReachesTheCallerAndThePoolStillWorks) {
  test::SettingsRestore restore;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    EXPECT_THROW(parallel_for(64,
                              [](int64_t i) {
                                if (i % 9 == 4) throw std::runtime_error("boom");
                              }),
                 std::runtime_error);
    std::atomic<int> n{0};
    parallel_for(64, [&](int64_t) { n++; });
    EXPECT_EQ(n.load(), 64);
  }
}

TEST(ThreadPool, EnvironmentValuesAreCappedOrIgnored) {
  std::string message;
  EXPECT_EQ(parse_num_threads("2", message), 2);
  EXPECT_TRUE(message.empty());
  EXPECT_EQ(parse_num_threads("0", message), 0);
  EXPECT_TRUE(message.empty());
  EXPECT_EQ(parse_num_threads("1024", message), 1024);
  EXPECT_TRUE(message.empty());
  EXPECT_EQ(parse_num_threads("65536", message), 1024);
  EXPECT_NE(message.find("capped at 1024"), std::string::npos) << message;
  EXPECT_EQ(parse_num_threads("99999999999999999999999", message), 1024);
  EXPECT_NE(message.find("capped"), std::string::npos) << message;
  for (const char* bad : {"-1", "abc", "", "2x", " "}) {
    EXPECT_EQ(parse_num_threads(bad, message), 0) << bad;
    EXPECT_NE(message.find("ignored"), std::string::npos) << bad << ": " << message;
    EXPECT_NE(message.find("0 to 1024"), std::string::npos) << message;
  }
}

// One region of two chunks in which the caller, its chunk done, waits for a
// helper that holds the other one (as one that lost its core to another
// process). The helper keeps its chunk until the caller has finished its own,
// then 5 ms plus four times the region so far: the caller's wait is then more
// than a quarter of the region (a straggle to the pool) however late either
// thread runs on a loaded machine, unless the caller is preempted for longer
// than that between finishing its chunk and the pool's clock reading. (The
// helper used to sleep from its own start: a caller preempted while waiting
// for it to start then found it nearly done, and the region did not count.)
// Returns whether a helper took a chunk.
bool straggling_region() {
  const auto caller = std::this_thread::get_id();
  const auto region_start = std::chrono::steady_clock::now();
  std::atomic<bool> helper_started{false}, caller_done{false};
  const auto wait_for = [](const std::atomic<bool>& flag) {  // bounded: 2 s
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!flag && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  };
  parallel_ranges(2, 1, [&](int64_t begin, int64_t end) {
    if (end - begin == 2) return;  // run on the caller alone: no helper to wait for
    if (std::this_thread::get_id() != caller) {
      helper_started = true;
      wait_for(caller_done);
      const auto so_far = std::chrono::steady_clock::now() - region_start;
      std::this_thread::sleep_for(std::chrono::milliseconds(5) + 4 * so_far);
      return;
    }
    // Give a helper time to take the other chunk (on a very busy machine it
    // may not come, and the caller takes both).
    wait_for(helper_started);
    caller_done = true;
  });
  return helper_started;
}

// Whether every index of a 64-index region ran on the caller.
bool region_on_caller_alone() {
  const auto caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  parallel_for(64, 1, [&](int64_t) {
    if (std::this_thread::get_id() != caller) ++elsewhere;
  });
  return elsewhere == 0;
}

// CPUs the test process may run on.
int allowed_cpus() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

// Turns off the pool's same-CPU rule for a test of another rule (on a loaded
// machine most woken helpers land on the caller's CPU and would stay out).
struct HelpersMayShareTheCallersCpu {
  HelpersMayShareTheCallersCpu() { detail::set_helpers_avoid_callers_cpu(false); }
  ~HelpersMayShareTheCallersCpu() { detail::set_helpers_avoid_callers_cpu(true); }
};

TEST(ThreadPool, StragglingHelpersAreLeftOutThenRetried) {
  // With one CPU the pool never uses helpers (see MoreThreadsThanCpus...).
  if (allowed_cpus() < 2) GTEST_SKIP() << "needs 2 CPUs";
  test::SettingsRestore restore;
  HelpersMayShareTheCallersCpu sharing;
  set_num_threads(2);
  // Whether the pool counts a region as a straggle depends on how long the
  // caller waited, which a loaded machine can blur (the caller itself
  // preempted): a back-off that did not start is retried a few times; once
  // it has started it must last its 64 regions exactly.
  bool backed_off = false;
  for (int attempt = 0; attempt < 5 && !backed_off; ++attempt) {
    int in_a_row = 0;
    for (int tries = 0; tries < 50 && in_a_row < 3; ++tries)
      in_a_row = straggling_region() ? in_a_row + 1 : 0;
    ASSERT_EQ(in_a_row, 3) << "no helper took a chunk in 3 regions in a row (50 tries)";
    backed_off = region_on_caller_alone();
  }
  ASSERT_TRUE(backed_off) << "3 straggling regions in a row never started a back-off (5 attempts)";
  // Backing off: this and the next 63 regions run on the caller alone.
  for (int r = 1; r < 64; ++r) ASSERT_TRUE(region_on_caller_alone()) << "region " << r;
  // Then helpers are tried again.
  EXPECT_TRUE(straggling_region());
  // An explicit set_num_threads ends a back-off at once: straggle until the
  // pool backs off again (a region without helpers), then set it.
  bool backed_off_again = false;
  for (int tries = 0; tries < 50 && !backed_off_again; ++tries)
    backed_off_again = !straggling_region();
  ASSERT_TRUE(backed_off_again);
  ASSERT_TRUE(region_on_caller_alone());
  set_num_threads(2);
  EXPECT_TRUE(straggling_region());
}

// Pins every thread of the process to one CPU (the pool's workers too) and
// gives each its CPU set back at the end.
class AllThreadsOnOneCpu {
 public:
  explicit AllThreadsOnOneCpu(int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    DIR* dir = opendir("/proc/self/task");
    ok_ = dir != nullptr;
    while (dirent* e = dir ? readdir(dir) : nullptr) {
      if (e->d_name[0] == '.') continue;
      const pid_t tid = static_cast<pid_t>(std::atoi(e->d_name));
      cpu_set_t set;
      if (sched_getaffinity(tid, sizeof set, &set) != 0) continue;  // already gone
      saved_.push_back({tid, set});
      ok_ = ok_ && sched_setaffinity(tid, sizeof one, &one) == 0;
    }
    if (dir) closedir(dir);
  }
  ~AllThreadsOnOneCpu() {
    for (const auto& [tid, set] : saved_) sched_setaffinity(tid, sizeof set, &set);
  }
  bool ok() const { return ok_; }

 private:
  std::vector<std::pair<pid_t, cpu_set_t>> saved_;
  bool ok_ = false;
};

// Each thread of a region has a home segment of whole grains, [0, count) cut
// in equal shares, one per thread (at most one per CPU), and chunks never cross a segment's end (a
// thread keeps to the same part of every buffer). Inside a segment chunks
// shrink as its indices run out (guided): in the order they cover it none
// but the last is longer than the one before it (the last takes the
// remainder under a grain), and the last is shorter than two grains, so the
// threads finish within about a grain of each other. Fixed chunks of
// count / 16 (the pool before session 13) fail the last check: their last
// chunk of 1000 indices was 55 long; one shared guided range (session 13)
// fails the first, its chunks alternating between the threads.
TEST(ThreadPool, ChunksKeepToHomeSegmentsAndShrinkToAGrain) {
  test::SettingsRestore restore;
  if (allowed_cpus() < 2) GTEST_SKIP() << "needs 2 CPUs (one CPU runs each region whole)";
  for (int threads : {2, 3}) {
    for (int64_t grain : {1, 3, 10}) {
      set_num_threads(threads);  // also ends any back-off: this region is split
      constexpr int64_t count = 1000;
      std::mutex mutex;
      std::vector<std::pair<int64_t, int64_t>> ranges;
      parallel_ranges(count, grain, [&](int64_t begin, int64_t end) {
        std::lock_guard<std::mutex> lock(mutex);
        ranges.emplace_back(begin, end);
      });
      std::sort(ranges.begin(), ranges.end());
      const std::string where =
          "threads " + std::to_string(threads) + " grain " + std::to_string(grain);
      // A region uses at most one thread per CPU the process may run on.
      const int parts = std::min(threads, allowed_cpus());
      ASSERT_GE(ranges.size(), static_cast<size_t>(parts)) << where;
      const int64_t grains = (count + grain - 1) / grain;
      size_t i = 0;
      for (int seg = 0; seg < parts; ++seg) {
        const int64_t seg_begin = std::min(count, grains * seg / parts * grain);
        const int64_t seg_end = std::min(count, grains * (seg + 1) / parts * grain);
        const std::string in_seg = where + " segment " + std::to_string(seg);
        ASSERT_LT(i, ranges.size()) << in_seg;
        ASSERT_EQ(ranges[i].first, seg_begin) << in_seg << ": a chunk crosses into it";
        const size_t first = i;
        for (; i < ranges.size() && ranges[i].first < seg_end; ++i) {
          const int64_t size = ranges[i].second - ranges[i].first;
          EXPECT_LE(ranges[i].second, seg_end) << in_seg << " chunk " << i << " crosses its end";
          EXPECT_GE(size, grain) << in_seg << " chunk " << i;
          const bool last = i + 1 == ranges.size() || ranges[i + 1].first >= seg_end;
          if (i > first && !last) {
            EXPECT_LE(size, ranges[i - 1].second - ranges[i - 1].first) << in_seg << " chunk " << i;
          }
          if (last) {
            EXPECT_LT(size, 2 * grain) << in_seg << ": the last chunk is long";
          }
        }
      }
      EXPECT_EQ(i, ranges.size()) << where;
    }
  }
}

TEST(ThreadPool, HelpersOnTheCallersCpuTakeNoChunk) {
  if (allowed_cpus() < 2) GTEST_SKIP() << "needs 2 CPUs";
  test::SettingsRestore restore;
  // The pool reads the CPUs it may use in the first region after
  // set_num_threads and then every 64 regions: region 0 sees two CPUs and
  // starts a helper; then every thread is pinned to the caller's CPU, so a
  // woken helper can only run while the caller does not (here: while a chunk
  // of the caller sleeps). The 24 regions below stay within those 64.
  set_num_threads(2);
  const auto caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  const auto region = [&] {
    parallel_for(16, 1, [&](int64_t) {
      if (std::this_thread::get_id() != caller) ++elsewhere;
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    });
  };
  region();  // region 0: the helper is started
  const int cpu = sched_getcpu();
  ASSERT_GE(cpu, 0);
  AllThreadsOnOneCpu pinned(cpu);
  ASSERT_TRUE(pinned.ok());
  {
    // The rule off: the pinned helper takes chunks while the caller sleeps
    // (so the check below can fail).
    HelpersMayShareTheCallersCpu sharing;
    elsewhere = 0;
    for (int r = 1; r <= 20 && elsewhere == 0; ++r) region();
    ASSERT_GT(elsewhere.load(), 0) << "the pinned helper never ran a chunk in 20 regions";
  }
  elsewhere = 0;
  for (int r = 0; r < 3; ++r) region();
  EXPECT_EQ(elsewhere.load(), 0) << "chunks run by a helper on the caller's CPU";
}

// What a helper woken on its caller's CPU does (it would be woken there again
// if it went back to sleep there): move_off_cpu moves the calling thread off
// a CPU it runs on when its CPU set holds another, and gives the set back
// unchanged; with no other CPU it stays and says so. Run in a thread of its
// own so that the test thread's CPU set is never touched.
bool same_set(const cpu_set_t& a, const cpu_set_t& b) {
  return CPU_EQUAL(&a, &b);
}

TEST(ThreadPool, MoveOffCpuLeavesTheCpuAndKeepsTheCpuSet) {
  if (allowed_cpus() < 2) GTEST_SKIP() << "needs 2 CPUs";
  std::thread([] {
    cpu_set_t before;
    ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
    for (int round = 0; round < 5; ++round) {
      const int cpu = sched_getcpu();
      ASSERT_GE(cpu, 0);
      EXPECT_TRUE(detail::move_off_cpu(cpu)) << "round " << round << ", from CPU " << cpu;
      cpu_set_t after;
      ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
      EXPECT_TRUE(same_set(before, after)) << "round " << round << ": the CPU set changed";
    }
    EXPECT_FALSE(detail::move_off_cpu(-1));
    EXPECT_FALSE(detail::move_off_cpu(CPU_SETSIZE));
  }).join();
}

TEST(ThreadPool, MoveOffCpuStaysWhenNoOtherCpuIsAllowed) {
  std::thread([] {
    const int cpu = sched_getcpu();
    ASSERT_GE(cpu, 0);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    EXPECT_FALSE(detail::move_off_cpu(cpu));
    EXPECT_EQ(sched_getcpu(), cpu);
    cpu_set_t after;
    ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
    EXPECT_TRUE(same_set(one, after)) << "the CPU set changed";
  }).join();
}

// The count behind "another CPU looks free": the threads runnable now, the
// caller included, so a second thread that spins adds one.
TEST(ThreadPool, RunnableThreadsCountsSpinningThreads) {
  EXPECT_GE(detail::runnable_threads(), 1) << "the calling thread is running";
  std::atomic<bool> started{false}, stop{false};
  std::thread spinner([&] {
    started = true;
    while (!stop) {
    }
  });
  while (!started) std::this_thread::yield();
  const int running = detail::runnable_threads();
  stop = true;
  spinner.join();
  EXPECT_GE(running, 2) << "this thread and the spinning one";
}

// Pins the calling thread to one CPU for the test's duration (as taskset -c
// does for a whole process), then restores its CPU set.
class OneCpu {
 public:
  OneCpu() {
    CPU_ZERO(&saved_);
    ok_ = sched_getaffinity(0, sizeof saved_, &saved_) == 0;
    int first = 0;
    while (first < CPU_SETSIZE && !CPU_ISSET(first, &saved_)) ++first;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ok_ = ok_ && first < CPU_SETSIZE && sched_setaffinity(0, sizeof one, &one) == 0;
  }
  ~OneCpu() {
    sched_setaffinity(0, sizeof saved_, &saved_);
    set_num_threads(0);  // the pool reads the affinity again
  }
  bool ok() const { return ok_; }

 private:
  cpu_set_t saved_;
  bool ok_ = false;
};

TEST(ThreadPool, MoreThreadsThanCpusCompleteWithTheSameResults) {
  test::SettingsRestore restore;
  // Expected results from one thread, before the pinning.
  auto squares = [](int64_t count, int64_t grain) {
    std::vector<int64_t> out(static_cast<size_t>(count), -1);
    parallel_ranges(count, grain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[static_cast<size_t>(i)] = i * i + 3;
    });
    return out;
  };
  set_num_threads(1);
  std::vector<std::vector<int64_t>> expected;
  const int64_t counts[] = {2, 3, 17, 1000, 4099};
  for (int64_t count : counts) expected.push_back(squares(count, 1));
  OneCpu pin;
  ASSERT_TRUE(pin.ok()) << "sched_setaffinity to one CPU failed";
  for (int threads : {2, 3, 8}) {
    set_num_threads(threads);  // also makes the pool read the new affinity
    for (int round = 0; round < 50; ++round)
      for (size_t k = 0; k < std::size(counts); ++k)
        for (int64_t grain : {1, 7}) {
          ASSERT_EQ(squares(counts[k], grain), expected[k])
              << "threads " << threads << " on 1 CPU, count " << counts[k] << " grain " << grain
              << " round " << round;
        }
    // Threads beyond the process's one CPU could only take turns with the
    // caller: regions run on the caller alone.
    // (A region that waits for a helper to join: none does.)
    EXPECT_FALSE(straggling_region()) << "threads " << threads;
    // Errors still reach the caller, and nested regions still complete.
    EXPECT_THROW(parallel_for(64,
                              [](int64_t i) {
                                if (i == 40) throw std::runtime_error("boom");
                              }),
                 std::runtime_error);
    std::atomic<int64_t> sum{0};
    parallel_for(8, [&](int64_t i) { parallel_for(10, [&](int64_t j) { sum += i * 10 + j; }); });
    EXPECT_EQ(sum.load(), 79 * 80 / 2) << "threads " << threads;
  }
}

}  // namespace
}  // namespace test_thread_pool
}  // namespace npukit
