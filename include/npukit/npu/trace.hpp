// The NPUKIT_TRACE file read back: one LaunchReport per launch, with its
// slices and parallel regions (function totals are not stored in the file).
#pragma once

#include <string>
#include <vector>

#include "npukit/npu/launch.hpp"

namespace npukit::npu {

// Parses the JSON written by chrome_trace_json; npukit::Error if it is not
// JSON or holds no traceEvents array.
std::vector<LaunchReport> read_chrome_trace(const std::string& json);

}  // namespace npukit::npu
