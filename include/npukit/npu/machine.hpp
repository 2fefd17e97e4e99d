// The simulated Sophgo NPU: its constants, device (global) memory, per-NPU
// local memory and L2 SRAM (docs/npu-simulator.md, "The machine"). The okk/bm_atomic/bmlib
// faces translate addresses through it; it holds no arithmetic.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "npukit/npu/cost_model.hpp"

namespace npukit::npu {

struct Config {
  std::string name = "bm1684";
  int npu_num = 64;
  uint32_t local_mem_size = 512 * 1024;  // bytes per NPU
  int local_mem_banks = 8;
  uint32_t align_bytes = 128;  // the aligned layout's unit
  // L2 SRAM as the vendor's C-model reports it (probed: okk_l2_sram_start_addr()
  // 0x100a2000, okk_l2_sram_size() 2482176): GDMA reaches it as system memory.
  uint32_t l2_sram_size = 2482176;
  uint64_t l2_sram_start = 0x100a2000ull;
  // DTCM (the ARM9's data memory) as the C-model reports it (probed:
  // okk_dtcm_start_addr() 0x2020000, okk_dtcm_size() 390144; the kit's
  // documentation says 512 KiB): GDMA reaches it as system memory.
  uint32_t dtcm_size = 390144;
  uint64_t dtcm_start = 0x2020000ull;
  // Device memory is one flat range, as in the vendor's C-model (probed:
  // 4 GiB; a GDMA tensor may run from one allocation into free space or the
  // next allocation, and an access beyond the range asserts). Allocations
  // are 4 KiB aligned as the vendor's are.
  uint64_t global_mem_start = 0x100000000ull;
  uint64_t global_mem_size = 4ull << 30;
  uint64_t global_alignment = 4096;
  // Timing constants of the cost model (cost_model.hpp).
  CostModel cost = bm1684_cost_model();

  int eu_num() const { return static_cast<int>(align_bytes / 4); }  // fp32 lanes per NPU
};

Config bm1684_config();
Config bm1684x_config();  // 256 KiB / 16 banks / 64-byte alignment

class Machine {
 public:
  explicit Machine(Config config);
  ~Machine();
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  const Config& config() const { return config_; }

  // Local memory of NPU `npu` at byte offset `offset`; no checks (callers
  // validate ranges first with the rules of rules.hpp).
  uint8_t* local(int npu, uint64_t offset) {
    return local_.data() + static_cast<size_t>(npu) * config_.local_mem_size + offset;
  }
  // One flag per local byte: has it ever been written?
  uint8_t* written(int npu, uint64_t offset) {
    return written_.data() + static_cast<size_t>(npu) * config_.local_mem_size + offset;
  }
  uint8_t* l2(uint64_t offset) { return l2_.data() + offset; }
  uint8_t* dtcm(uint64_t offset) { return dtcm_.data() + offset; }

  // Device memory: allocations at addresses from global_mem_start
  // (src/npu/device_memory.cpp).
  uint64_t allocate(uint64_t bytes);  // 0 when out of address space
  bool release(uint64_t addr);        // false if addr starts no allocation
  // Host pointer for [addr, addr + bytes) if it lies inside one allocation,
  // the L2 SRAM or the DTCM.
  uint8_t* global(uint64_t addr, uint64_t bytes);
  // Host pointer for [addr, addr + bytes) if it lies inside the flat device
  // memory (allocations and free space between and after them), the L2 SRAM
  // or the DTCM: what the vendor's GDMA reaches.
  uint8_t* device(uint64_t addr, uint64_t bytes);
  // What [addr, addr + bytes) of device memory covers, e.g. "allocation
  // 0x100000000 (256 bytes) + free space (3840 bytes) + allocation ...".
  std::string device_range_text(uint64_t addr, uint64_t bytes) const;
  size_t allocation_count() const { return blocks_.size(); }

 private:
  Config config_;
  std::vector<uint8_t> local_, written_, l2_, dtcm_;
  std::map<uint64_t, uint64_t> blocks_;  // start -> size in bytes
  uint8_t* flat_ = nullptr;              // global_mem_size bytes, mapped on first use
  bool map_flat();
};

// The process-wide machine the faces use (created with bm1684_config() on
// first use). select_machine replaces it, memory included.
Machine& machine();
void select_machine(const Config& config);

// bm_dev_request sets the calling thread's x86 MXCSR flush-to-zero and
// denormals-are-zero bits, as the vendor's bmlib C-model does (probed: MXCSR
// 0x1f80 before, 0x9fc0 after), so host reference code sees the same numbers
// on denormals. Opt out with set_request_flushes_denormals(false) or
// NPUKIT_BM_KEEP_MXCSR=1 (the setting wins over the environment). No effect
// on other CPUs.
void set_request_flushes_denormals(bool flush);
bool request_flushes_denormals();

// One simulated device per process: the bmlib host calls (allocation, copies,
// launches) hold this lock, so launches from several threads run one at a
// time instead of corrupting the shared memories and launch context.
std::recursive_mutex& device_mutex();

}  // namespace npukit::npu
