// okk.h face: memory information, utils and stride helpers, control
// (initialize, poll, parallel regions) and kernel registration.
#include <cstdio>

#include "okk_face.hpp"

using namespace npukit::npu;
using namespace npukit::npu::face;

extern "C" {

void okk_register_kernel_func(const char* name, okk_kernel_func_t func) {
  register_kernel(name, func);
}

void okk_dump_registered_kernel_funcs(void) {
  for (const std::string& n : kernel_names()) std::printf("%s\n", n.c_str());
}

void okk_assertion_failed(const char* file, int line, const char* function,
                          const char* expression) {
  violation("OKKERNEL_ASSERT", "assertion",
            std::string(expression) + " is false (" + file + ":" + std::to_string(line) + " in " +
                function + ")",
            "a true assertion");
}

void okk_set_id_node(void*) {}
void okk_get_id_node(void*) {}
void okk_enable_check_id_node(void) {}
void okk_disable_check_id_node(void) {}

unsigned long long okk_global_mem_start_addr(void) {
  return cfg().global_mem_start;
}
unsigned int okk_local_mem_start_addr(void) {
  return 0;
}
unsigned int okk_local_mem_bank_per_npu(void) {
  return static_cast<unsigned>(cfg().local_mem_banks);
}
unsigned int okk_l2_sram_start_addr(void) {
  return static_cast<unsigned>(cfg().l2_sram_start);
}
unsigned int okk_dtcm_start_addr(void) {
  return static_cast<unsigned>(cfg().dtcm_start);
}
unsigned int okk_lookup_table_start_addr(void) {
  return 0;
}
unsigned int okk_lookup_table_size(void) {
  return 0;
}
unsigned int okk_eu_num(void) {
  return static_cast<unsigned>(cfg().eu_num());
}
unsigned int okk_local_mem_size_per_npu(void) {
  return cfg().local_mem_size;
}
unsigned int okk_l2_sram_size(void) {
  return cfg().l2_sram_size;
}
unsigned int okk_dtcm_size(void) {
  return cfg().dtcm_size;
}
int okk_npu_num(void) {
  return cfg().npu_num;
}

unsigned char* okk_global_mem_addr(unsigned long long addr) {
  unsigned char* p = machine().device(addr, 1);
  rule(p != nullptr, "okk_global_mem_addr", "addr", std::to_string(addr),
       "an address inside device memory, L2 SRAM or DTCM");
  return p;
}

unsigned char* okk_local_mem_addr(unsigned int idx, unsigned int addr) {
  rule_range("okk_local_mem_addr", "idx", idx, 0, cfg().npu_num - 1);
  rule_range("okk_local_mem_addr", "addr", addr, 0, cfg().local_mem_size - 1);
  // Direct host access: the simulator cannot follow it, so count it as written.
  *machine().written(static_cast<int>(idx), addr) = 1;
  return machine().local(static_cast<int>(idx), addr);
}

// Both take system addresses, as the vendor's do (probed:
// okk_l2_sram_addr(okk_l2_sram_start_addr()) - okk_l2_sram_addr(0) is the
// start address; the same for the DTCM). The host pointer lets the kernel's
// own C code read what a GDMA copy stored there after okk_poll.
unsigned char* okk_l2_sram_addr(unsigned int addr) {
  const Config& c = cfg();
  rule_range("okk_l2_sram_addr", "addr", addr, static_cast<int64_t>(c.l2_sram_start),
             static_cast<int64_t>(c.l2_sram_start + c.l2_sram_size - 1));
  return machine().l2(addr - c.l2_sram_start);
}

unsigned char* okk_dtcm_addr(unsigned int addr) {
  const Config& c = cfg();
  rule_range("okk_dtcm_addr", "addr", addr, static_cast<int64_t>(c.dtcm_start),
             static_cast<int64_t>(c.dtcm_start + c.dtcm_size - 1));
  return machine().dtcm(addr - c.dtcm_start);
}

void okk_initialize(void) {}
void okk_poll(void) {
  parallel_end("okk_poll");
}
void okk_parallel_start(void) {
  rule(!in_parallel(), "okk_parallel_start", "state", "already in a parallel region",
       "okk_parallel_start outside a parallel region (regions do not nest)");
  parallel_start("okk_parallel_start");
}
void okk_parallel_end(void) {
  rule(in_parallel(), "okk_parallel_end", "state", "not in a parallel region",
       "okk_parallel_end after okk_parallel_start");
  parallel_end("okk_parallel_end");
}
bool okk_is_parallel_state(void) {
  return in_parallel();
}

int okk_start_npu_index(local_addr_t addr) {
  return start_npu(cfg(), addr);
}

int okk_channle_num_per_npu(int start_idx, int num_channels) {
  return static_cast<int>(channels_per_npu(cfg(), start_idx, num_channels));
}

namespace {
void aligned(dim4* stride, int start_idx, const dim4* shape, int esize, const char* fn) {
  need(stride, fn, "stride");
  need(shape, fn, "shape");
  rule_range(fn, "start_idx", start_idx, 0, cfg().npu_num - 1);
  *stride = to_dim4(aligned_stride(cfg(), start_idx, dims(*shape), esize));
}
}  // namespace

void okk_128_byte_aligned_stride_for_32bit(dim4* stride, int start_idx, const dim4* shape) {
  aligned(stride, start_idx, shape, 4, "okk_128_byte_aligned_stride_for_32bit");
}
void okk_128_byte_aligned_stride_for_16bit(dim4* stride, int start_idx, const dim4* shape) {
  aligned(stride, start_idx, shape, 2, "okk_128_byte_aligned_stride_for_16bit");
}
void okk_128_byte_aligned_stride_for_8bit(dim4* stride, int start_idx, const dim4* shape) {
  aligned(stride, start_idx, shape, 1, "okk_128_byte_aligned_stride_for_8bit");
}
void okk_compact_stride(dim4* stride, int start_idx, const dim4* shape) {
  need(stride, "okk_compact_stride", "stride");
  need(shape, "okk_compact_stride", "shape");
  rule_range("okk_compact_stride", "start_idx", start_idx, 0, cfg().npu_num - 1);
  *stride = to_dim4(compact_stride(cfg(), start_idx, dims(*shape)));
}
void okk_continuous_stride(dim4* stride, const dim4* shape) {
  need(stride, "okk_continuous_stride", "stride");
  need(shape, "okk_continuous_stride", "shape");
  *stride = to_dim4(continuous_stride(dims(*shape)));
}

}  // extern "C"
