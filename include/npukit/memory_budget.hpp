// The memory budget: a cap on the bytes npukit's own tensors (and the other
// large buffers a file or a shape can make it allocate) hold at one time.
// A small hostile input (a model, an npy header, a --shape) must end in an
// npukit::Error naming what would not fit, never in std::bad_alloc or an
// out-of-memory kill. Default: a quarter of the physical RAM; the environment
// variable NPUKIT_MEMORY_LIMIT (bytes, or with a K/M/G suffix) or
// set_memory_budget() change it.
#pragma once

#include <cstdint>
#include <string>

namespace npukit {

uint64_t memory_budget();
// 0 restores the default (environment, else a quarter of the RAM).
void set_memory_budget(uint64_t bytes);
// Bytes currently held by live npukit::Tensor buffers.
uint64_t memory_in_use();

// Throws npukit::Error(function, parameter, "<what>: <bytes> bytes", "at most ...")
// when count * elem_size (overflow-checked) does not fit in what the budget
// has left. `what` names the tensor or buffer (e.g. "tensor 'conv1_out' [1, 64, 56, 56] float32").
void check_allocation(const char* function, const char* parameter, const std::string& what,
                      uint64_t count, uint64_t elem_size);

// Reserves count * elem_size bytes of the budget (same check and message);
// release() or the destructor gives them back.
class BudgetReservation {
 public:
  BudgetReservation() = default;
  BudgetReservation(const char* function, const char* parameter, const std::string& what,
                    uint64_t count, uint64_t elem_size);
  BudgetReservation(BudgetReservation&& o) noexcept : bytes_(o.bytes_) { o.bytes_ = 0; }
  BudgetReservation& operator=(BudgetReservation&& o) noexcept;
  BudgetReservation(const BudgetReservation&) = delete;
  BudgetReservation& operator=(const BudgetReservation&) = delete;
  ~BudgetReservation() { release(); }
  void release() noexcept;
  uint64_t bytes() const { return bytes_; }

 private:
  uint64_t bytes_ = 0;
};

}  // namespace npukit
