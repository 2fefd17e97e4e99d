// Bounded file reading for every reader (models, npy, instruction files,
// YAML): a directory, an unreadable path or an endless stream (/dev/zero)
// becomes an npukit::Error naming `function`, `parameter` and the path,
// instead of basic_filebuf::underflow, std::bad_alloc or a hang.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace npukit {

// The whole file, at most `max_bytes` (further capped by the memory budget);
// `what` says what was expected ("an ONNX model file").
std::vector<char> read_file_bounded(const char* function, const char* parameter,
                                    const std::string& path, uint64_t max_bytes,
                                    const std::string& what);

// Default caps (bytes).
inline constexpr uint64_t kMaxModelFileBytes = uint64_t{2} << 30;   // protobuf's own 2 GiB limit
inline constexpr uint64_t kMaxTextFileBytes = uint64_t{256} << 20;  // instruction lists, YAML
inline constexpr uint64_t kMaxStreamBytes = uint64_t{256} << 20;    // a device or pipe, any reader

}  // namespace npukit
