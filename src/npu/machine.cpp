#include "npukit/npu/machine.hpp"

#include <algorithm>
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
      dtcm_(config_.dtcm_size) {
  // The vendor's simulator starts local memory as 0xDEADBEEF words (probed):
  // a kernel reading memory it never wrote (a warning) sees the same numbers.
  // (Filled by doubling copies: a few large memcpy calls instead of 8 M word
  // stores, which the sanitizer build checks one by one.)
  const uint32_t word = 0xDEADBEEFu;
  const size_t bytes = local_.size() / 4 * 4;
  if (bytes == 0) return;
  std::memcpy(local_.data(), &word, 4);
  for (size_t done = 4; done < bytes; done *= 2)
    std::memcpy(local_.data() + done, local_.data(), std::min(done, bytes - done));
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
