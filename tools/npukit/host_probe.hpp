// `npukit info --host`: how far apart the CPUs this process may use are.
// Two CPUs that share a last-level cache hand a cache line to each other in
// ~40 ns; on different chiplets (a virtual machine whose two CPUs the host
// placed apart) it takes ~200 ns, and every buffer one thread wrote and the
// other reads crosses between the chiplets: 2-thread runs then gain much
// less (docs/performance-history.md, session 14, helper T3).
#pragma once

#include <optional>
#include <vector>

namespace npukit::cli {

// The CPUs this process may run on, in order.
std::vector<int> allowed_cpu_list();

// One-way time (ns) for a cache line written on CPU a to be seen on CPU b
// and back, halved: the minimum over `tries` runs of `round_trips` round
// trips. Empty when either thread did not get its CPU within a second (a CPU
// held by a higher-priority process).
std::optional<double> handoff_ns(int a, int b, int round_trips = 2000, int tries = 5);

}  // namespace npukit::cli
