// Operand buffers of simulated instructions, reused from one instruction to
// the next. A published conv2d kernel issues thousands of instructions on
// megabyte operands; a fresh zero-filled Tensor per operand made page faults,
// zeroing and the allocator a third of its CPU time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace npukit::npu::face {

// One buffer per operand role of an instruction (an instruction never uses
// a slot twice).
enum class Slot : uint8_t { input, weight_raw, weight, output, count };

// At least `bytes` bytes, 64-byte aligned, contents unspecified (every user
// writes before it reads). Valid until the next call for the same slot in
// this thread or release_operand_scratch(). The bytes are held from the
// memory budget (npukit/memory_budget.hpp); a request that does not fit is a
// violation of instruction `fn` (exit 255, or RuleViolation when thrown).
void* operand_scratch(Slot slot, size_t bytes, const char* fn = "npukit NPU simulator");

// Frees this thread's buffers (end of a launch).
void release_operand_scratch();

}  // namespace npukit::npu::face
