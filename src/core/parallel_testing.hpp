// Test seams of the thread pool (src/core/parallel.cpp), for white-box tests.
#pragma once

namespace npukit::detail {

// Whether a helper woken on the CPU its caller runs on takes no chunk (the
// default). A test of another rule turns it off for its duration: on a
// loaded 2-CPU machine the OS places most woken helpers on the waker's CPU.
void set_helpers_avoid_callers_cpu(bool on);

// Moves the calling thread onto another CPU of its CPU set and restores the
// set; false when the set holds no CPU but `cpu` (what a helper that woke on
// its caller's CPU does, so that it is not woken there again).
bool move_off_cpu(int cpu);

// Threads runnable in the whole system now, the calling one included (from
// /proc/loadavg); -1 if unknown. A helper on its caller's CPU moves only
// when fewer than the caller, itself and one per other CPU are runnable.
int runnable_threads();

}  // namespace npukit::detail
