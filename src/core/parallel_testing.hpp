// Test seams of the thread pool (src/core/parallel.cpp), for white-box tests.
#pragma once

namespace npukit::detail {

// Whether a helper woken on the CPU its caller runs on takes no chunk (the
// default). A test of another rule turns it off for its duration: on a
// loaded 2-CPU machine the OS places most woken helpers on the waker's CPU.
void set_helpers_avoid_callers_cpu(bool on);

}  // namespace npukit::detail
