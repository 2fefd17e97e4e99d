// Device (global) memory of the simulated NPU: one flat range, as in the
// vendor's C-model, with bm_malloc_device_byte allocations carved out of it.
// The range is mapped on first use without reserving swap, so untouched
// device memory costs no host memory (free space reads as zeros, as on the
// vendor's).
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>

#include <string>

#include "npukit/npu/machine.hpp"

namespace npukit::npu {

namespace {
std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t round_up(uint64_t v, uint64_t unit) {
  return (v + unit - 1) / unit * unit;
}
}  // namespace

Machine::~Machine() {
  if (flat_) munmap(flat_, config_.global_mem_size);
}

bool Machine::map_flat() {
  if (flat_) return true;
  void* p = mmap(nullptr, config_.global_mem_size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  flat_ = static_cast<uint8_t*>(p);
  return true;
}

uint64_t Machine::allocate(uint64_t bytes) {
  if (bytes == 0) bytes = 1;
  if (!map_flat()) return 0;
  const uint64_t end = config_.global_mem_start + config_.global_mem_size;
  if (bytes > config_.global_mem_size) return 0;
  const uint64_t size = round_up(bytes, config_.global_alignment);
  // First fit over the gaps between live blocks, as the vendor's allocator
  // (probed: after a free, the next allocation that fits the hole starts
  // there, and a smaller one after it fills the rest). Host programs that
  // allocate and free per case, as the kit's pool hosts do, never run out.
  // Compares sizes with what is left, never forms at + size (no wrap).
  uint64_t at = config_.global_mem_start;
  for (const auto& [addr, held] : blocks_) {
    if (addr - at >= size) break;
    at = addr + round_up(held, config_.global_alignment);
  }
  if (size > end - at) return 0;
  blocks_[at] = bytes;
  return at;
}

bool Machine::release(uint64_t addr) {
  auto it = blocks_.find(addr);
  if (it == blocks_.end()) return false;
  // Give the pages back to the host (they read as zeros again).
  const uint64_t size = round_up(it->second, config_.global_alignment);
  madvise(flat_ + (addr - config_.global_mem_start), size, MADV_DONTNEED);
  blocks_.erase(it);
  return true;
}

namespace {
// Offset of [addr, addr + bytes) inside [start, start + size), or -1. Compares
// offsets, never addr + bytes (it wraps near 2^64).
int64_t inside(uint64_t addr, uint64_t bytes, uint64_t start, uint64_t size) {
  if (addr < start) return -1;
  const uint64_t offset = addr - start;
  if (offset > size || bytes > size - offset) return -1;
  return static_cast<int64_t>(offset);
}
}  // namespace

uint8_t* Machine::global(uint64_t addr, uint64_t bytes) {
  // L2 SRAM and DTCM are system memory to the GDMA (kernels stage data there).
  if (const int64_t o = inside(addr, bytes, config_.l2_sram_start, config_.l2_sram_size); o >= 0)
    return l2_.data() + o;
  if (const int64_t o = inside(addr, bytes, config_.dtcm_start, config_.dtcm_size); o >= 0)
    return dtcm_.data() + o;
  auto it = blocks_.upper_bound(addr);
  if (it == blocks_.begin()) return nullptr;
  --it;
  if (inside(addr, bytes, it->first, it->second) < 0) return nullptr;
  return flat_ + (addr - config_.global_mem_start);
}

uint8_t* Machine::device(uint64_t addr, uint64_t bytes) {
  if (uint8_t* p = global(addr, bytes)) return p;
  const int64_t o = inside(addr, bytes, config_.global_mem_start, config_.global_mem_size);
  if (o < 0 || !map_flat()) return nullptr;
  return flat_ + o;
}

std::string Machine::device_range_text(uint64_t addr, uint64_t bytes) const {
  std::string s;
  int parts = 0;
  auto add = [&](const std::string& part) {
    if (parts == 4) s += " + ...";
    if (parts++ >= 4) return;
    if (!s.empty()) s += " + ";
    s += part;
  };
  uint64_t at = addr;
  const uint64_t end = addr + bytes;  // callers checked the range lies in device memory
  auto it = blocks_.upper_bound(at);
  if (it != blocks_.begin()) --it;
  while (at < end) {
    while (it != blocks_.end() && it->first + it->second <= at) ++it;
    const uint64_t next_start = it == blocks_.end() ? end : std::min(end, it->first);
    if (at < next_start) {
      add("free space (" + std::to_string(next_start - at) + " bytes)");
      at = next_start;
      continue;
    }
    const uint64_t stop = std::min(end, it->first + it->second);
    add("allocation " + hex(it->first) + " (" + std::to_string(stop - at) + " of its " +
        std::to_string(it->second) + " bytes)");
    at = stop;
  }
  return s;
}

}  // namespace npukit::npu
