// Test buffers whose last byte sits right before an unreadable page, so a
// kernel reading past a tensor's span crashes the test in every build (the
// sanitizer build aside, a read past a std::vector goes unnoticed).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace npukit::test {

class GuardedBytes {
 public:
  explicit GuardedBytes(size_t n) {
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_ = ((n + page - 1) / page + 1) * page;
    base_ = static_cast<uint8_t*>(
        mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base_ == MAP_FAILED) throw std::runtime_error("mmap failed");
    if (mprotect(base_ + size_ - page, page, PROT_NONE) != 0)
      throw std::runtime_error("mprotect failed");
    data_ = base_ + size_ - page - n;
  }
  ~GuardedBytes() { munmap(base_, size_); }
  GuardedBytes(const GuardedBytes&) = delete;
  GuardedBytes& operator=(const GuardedBytes&) = delete;
  uint8_t* data() { return data_; }
  // The same bytes as n / sizeof(T) values of T (the guard page follows the last).
  template <class T>
  T* as() {
    return reinterpret_cast<T*>(data_);
  }

 private:
  size_t size_ = 0;
  uint8_t* base_ = nullptr;
  uint8_t* data_ = nullptr;
};

}  // namespace npukit::test
