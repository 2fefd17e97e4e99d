// Where a kernel called an okk / bm_atomic function, for the trace: the
// return address of the first stack frame outside npukit's shared library,
// resolved to "file:line (function)" through addr2line when the kernel has
// debug information, else to the function and offset. Only when npukit is a
// shared library (a static link cannot tell the kernel's frames from npukit's).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace npukit::npu {

// 0 when no frame outside npukit is found.
uintptr_t kernel_call_address();
// Text for each distinct address (empty when unknown).
std::map<uintptr_t, std::string> describe_call_sites(const std::vector<uintptr_t>& addresses);

}  // namespace npukit::npu
