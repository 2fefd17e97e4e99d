// Threading. Work is split over independent outputs only, so every result is
// identical for any thread count (each output is computed by one thread, in a
// fixed order).
//
// npukit runs its own small thread pool (not OpenMP): the calling thread works
// too, idle workers spin for a few tens of microseconds and then sleep on a
// condition variable, so they do not hold a core that another process needs,
// and each thread takes chunks (shrinking as they run out) from its own share
// of the indices first, then from the others', so that it touches the same
// part of every buffer in every region (on CPUs that share no cache, data
// the other thread wrote last is slow to write again) and a worker that the
// OS does not schedule delays the call by one chunk at most. On a
// shared machine a region uses no more threads than the CPUs the process may
// run on (sched_getaffinity), a thread that was preempted or whose last wait
// was long sleeps at once instead of spinning, a helper woken on the CPU its
// caller runs on takes no work (it could only run instead of the caller), and
// a caller that keeps waiting for descheduled helpers, or whose helpers keep
// waking on its CPU, runs the next regions alone for a while.
// NPUKIT_POOL_STATS=1 prints the pool's event counts at exit.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace npukit {

// 0 means "all hardware threads the process may use" (the default). The
// initial value comes from NPUKIT_NUM_THREADS (0 to 1024; larger values are
// capped at 1024 and anything else is ignored, with a message on stderr).
void set_num_threads(int n);
int num_threads();

// Reads a NPUKIT_NUM_THREADS value: the count it sets (0 when `text` is not
// an integer from 0 to 1024, which is then ignored; 1024 when it is larger).
// `message` says why a value was capped or ignored (empty when taken as is).
int parse_num_threads(const char* text, std::string& message);

// Calls body(i) for i in [0, count), spread over the threads. Each call of
// body handles one index; `grain` is the number of indices worth waking a
// second thread for (1: every index is a large piece of work).
void parallel_for(int64_t count, const std::function<void(int64_t)>& body);
void parallel_for(int64_t count, int64_t grain, const std::function<void(int64_t)>& body);

// Calls body(begin, end) on disjoint ranges covering [0, count), each at
// least `grain` long except the last. Runs on the calling thread alone when
// count < 2 * grain, with one thread, inside another parallel region, or when
// the process may run on one CPU only.
void parallel_ranges(int64_t count, int64_t grain,
                     const std::function<void(int64_t, int64_t)>& body);

}  // namespace npukit
