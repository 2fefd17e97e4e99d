#include "operand_scratch.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "npukit/error.hpp"
#include "npukit/memory_budget.hpp"
#include "npukit/npu/rules.hpp"

namespace npukit::npu::face {

namespace {
struct Free {
  void operator()(void* p) const { std::free(p); }
};
struct Buffer {
  std::unique_ptr<void, Free> data;
  size_t bytes = 0;
  BudgetReservation reserved;  // the buffer's bytes, held from the memory budget
};
const char* const kSlotNames[] = {"input", "weight_raw", "weight", "output"};
// Per thread: concurrent launches from several threads keep their own.
thread_local Buffer buffers[static_cast<size_t>(Slot::count)];
}  // namespace

void* operand_scratch(Slot slot, size_t bytes, const char* fn) {
  Buffer& b = buffers[static_cast<size_t>(slot)];
  if (bytes > b.bytes || !b.data) {
    // Grow geometrically so a kernel whose operands grow slowly does not
    // reallocate on every instruction.
    size_t want = std::max(bytes, b.bytes + b.bytes / 2);
    b.data.reset();
    b.bytes = 0;
    b.reserved.release();
    // Strides may repeat local memory (0 steps), so an operand's dense copy
    // is not bounded by local memory: it is counted in the memory budget,
    // and one that cannot fit stops the kernel like a broken rule.
    const std::string what =
        std::string("operand buffer '") + kSlotNames[static_cast<size_t>(slot)] + "' of " + fn;
    try {
      try {
        b.reserved = BudgetReservation(fn, "operand bytes", what, want + 128, 1);
      } catch (const Error&) {
        want = bytes;  // without the growth margin
        b.reserved = BudgetReservation(fn, "operand bytes", what, want + 128, 1);
      }
    } catch (const Error&) {
      violation(fn, "operand bytes", std::to_string(bytes) + " (" + what + ")",
                "at most the memory budget's free " +
                    std::to_string(
                        memory_budget() > memory_in_use() ? memory_budget() - memory_in_use() : 0) +
                    " bytes (NPUKIT_MEMORY_LIMIT)");
    }
    const size_t padded = (want + 63) / 64 * 64 + 64;
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
    b.reserved.release();
  }
}

}  // namespace npukit::npu::face
