// Initializers stored outside the .onnx file (TensorProto data_location =
// EXTERNAL): ONNX's way past protobuf's 2 GiB limit. The bytes come from a
// file named relative to the model's directory; a hostile model must not read
// outside that directory, past the file's end, or beyond the memory budget.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace npukit::onnx {

// The TensorProto's external_data key/value entries (location, offset,
// length, checksum), in file order.
using ExternalEntries = std::vector<std::pair<std::string, std::string>>;

// Reads `bytes` bytes described by `entries` into `dst`. `model_dir` is the
// directory of the model file. Returns "" on success, else why not (a
// sentence for the initializer's issue). The checksum entry is not verified.
std::string read_external_data(const ExternalEntries& entries, const std::string& model_dir,
                               void* dst, uint64_t bytes);

}  // namespace npukit::onnx
