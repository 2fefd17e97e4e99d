#include "npukit/npu/machine.hpp"

#include <cstring>
#include <mutex>

namespace npukit::npu {

Config bm1684_config() {
  return Config{};
}

Config bm1684x_config() {
  Config c;
  c.name = "bm1684x";
  c.local_mem_size = 256 * 1024;
  c.local_mem_banks = 16;
  c.align_bytes = 64;
  c.cost = bm1684x_cost_model();
  return c;
}

Machine::Machine(Config config)
    : config_(std::move(config)),
      local_(static_cast<size_t>(config_.npu_num) * config_.local_mem_size),
      written_(local_.size()),
      l2_(config_.l2_sram_size),
      next_(config_.global_mem_start) {
  // The vendor's simulator starts local memory as 0xDEADBEEF words (probed):
  // a kernel reading memory it never wrote (a warning) sees the same numbers.
  const uint32_t word = 0xDEADBEEFu;
  for (size_t i = 0; i + 4 <= local_.size(); i += 4) std::memcpy(local_.data() + i, &word, 4);
}

uint64_t Machine::allocate(uint64_t bytes) {
  if (bytes == 0) bytes = 1;
  // Compare against what is left (never form next_ + size: it could wrap).
  const uint64_t end = config_.global_mem_start + config_.global_mem_size;
  if (bytes > end - next_) return 0;
  const uint64_t size = (bytes + 127) / 128 * 128;  // 128-byte aligned blocks
  if (size > end - next_) return 0;
  const uint64_t addr = next_;
  next_ += size;
  blocks_[addr] = Block{bytes, std::make_unique<uint8_t[]>(bytes)};
  return addr;
}

bool Machine::release(uint64_t addr) {
  return blocks_.erase(addr) == 1;
}

uint8_t* Machine::global(uint64_t addr, uint64_t bytes) {
  // L2 SRAM is system memory to the GDMA (kernels stage data there).
  if (addr >= config_.l2_sram_start && addr - config_.l2_sram_start < config_.l2_sram_size) {
    const uint64_t offset = addr - config_.l2_sram_start;
    return bytes <= config_.l2_sram_size - offset ? l2_.data() + offset : nullptr;
  }
  auto it = blocks_.upper_bound(addr);
  if (it == blocks_.begin()) return nullptr;
  --it;
  // addr >= start here; compare offsets, never addr + bytes (it wraps near 2^64).
  const uint64_t offset = addr - it->first, size = it->second.size;
  if (offset > size || bytes > size - offset) return nullptr;
  return it->second.data.get() + offset;
}

namespace {
std::unique_ptr<Machine>& holder() {
  static std::unique_ptr<Machine> m;
  return m;
}
}  // namespace

std::recursive_mutex& device_mutex() {
  static std::recursive_mutex m;
  return m;
}

Machine& machine() {
  auto& m = holder();
  if (!m) m = std::make_unique<Machine>(bm1684_config());
  return *m;
}

void select_machine(const Config& config) {
  holder() = std::make_unique<Machine>(config);
}

}  // namespace npukit::npu
