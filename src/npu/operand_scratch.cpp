#include "operand_scratch.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "npukit/error.hpp"

namespace npukit::npu::face {

namespace {
struct Free {
  void operator()(void* p) const { std::free(p); }
};
struct Buffer {
  std::unique_ptr<void, Free> data;
  size_t bytes = 0;
};
// Per thread: concurrent launches from several threads keep their own.
thread_local Buffer buffers[static_cast<size_t>(Slot::count)];
}  // namespace

void* operand_scratch(Slot slot, size_t bytes) {
  Buffer& b = buffers[static_cast<size_t>(slot)];
  if (bytes > b.bytes || !b.data) {
    // Grow geometrically so a kernel whose operands grow slowly does not
    // reallocate on every instruction.
    const size_t want = std::max(bytes, b.bytes + b.bytes / 2);
    const size_t padded = (want + 63) / 64 * 64 + 64;
    b.data.reset();
    b.bytes = 0;
    void* p = std::aligned_alloc(64, padded);
    check(p != nullptr, "npukit NPU simulator", "operand bytes", std::to_string(bytes),
          "an allocation the system can satisfy (aligned_alloc failed)");
    b.data.reset(p);
    b.bytes = want;
  }
  return b.data.get();
}

void release_operand_scratch() {
  for (Buffer& b : buffers) {
    b.data.reset();
    b.bytes = 0;
  }
}

}  // namespace npukit::npu::face
