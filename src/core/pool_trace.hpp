// NPUKIT_POOL_TRACE=FILE: one line per parallel region the pool split (the
// regions a caller ran alone are not listed: they are serial time), written
// to FILE at exit, to find where a second thread's time goes layer by layer
// (scripts/pool_trace.py summarizes a file per region of a network's run).
// The ONNX runner adds one line per node it ran to FILE.steps (start, end,
// op type, node name), so that the serial time between regions can be laid
// at a node's door: before its first region, after its last, or a node that
// split nothing.
#pragma once

#include <cstdint>
#include <string>

namespace npukit::detail {

struct RegionTrace {
  int64_t start_ns = 0;                             // the caller published the region
  int64_t caller_done_ns = 0;                       // the caller's last chunk ended
  int64_t end_ns = 0;                               // every chunk ended (the caller's wait is over)
  int64_t helper_first_ns = 0, helper_last_ns = 0;  // helpers' chunks (0: none ran one)
  int64_t count = 0, caller_chunks = 0, helper_chunks = 0;
  const void* site = nullptr;  // the code that called parallel_for / parallel_ranges
};

// Whether NPUKIT_POOL_TRACE names a file (read once).
bool pool_trace_on();
// The trace's clock (steady, ns).
int64_t trace_now_ns();
// Keeps r for the file; the pool calls it under its one-job-at-a-time lock.
void record_region(const RegionTrace& r);
// Keeps one node's run for FILE.steps (the runner calls it under its run lock).
void record_step(int64_t start_ns, int64_t end_ns, const std::string& op_type,
                 const std::string& name);

}  // namespace npukit::detail
