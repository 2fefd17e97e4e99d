// bmlib_runtime.h face: device handles, device memory and kernel launches on
// the simulated NPU.
#include <cstdio>
#include <cstring>
#include <vector>

#include "npukit/compat/bmlib_runtime.h"
#include "npukit/npu/launch.hpp"
#include "npukit/npu/machine.hpp"

using namespace npukit::npu;

struct bm_context {
  int devid = 0;
};

namespace {
bm_device_mem_t device_mem(uint64_t addr, unsigned size) {
  bm_device_mem_t m;
  std::memset(&m, 0, sizeof m);
  m.u.device.device_addr = static_cast<unsigned long>(addr);
  m.flags.u.mem_type = BM_MEM_TYPE_DEVICE;
  m.size = size;
  return m;
}
}  // namespace

extern "C" {

bm_status_t bm_dev_getcount(int* count) {
  if (!count) return BM_ERR_PARAM;
  *count = 1;
  return BM_SUCCESS;
}

bm_status_t bm_dev_query(int devid) {
  return devid == 0 ? BM_SUCCESS : BM_ERR_PARAM;
}

bm_status_t bm_dev_request(bm_handle_t* handle, int devid) {
  if (!handle || devid != 0) return BM_ERR_PARAM;
  machine();  // creates the simulated device on first use
  *handle = new bm_context{devid};
  return BM_SUCCESS;
}

int bm_get_devid(bm_handle_t handle) {
  return handle ? handle->devid : -1;
}
void bm_dev_free(bm_handle_t handle) {
  delete handle;
}

bm_mem_type_t bm_mem_get_type(struct bm_mem_desc mem) {
  return mem.flags.u.mem_type;
}
unsigned long long bm_mem_get_device_addr(struct bm_mem_desc mem) {
  return mem.u.device.device_addr;
}
void bm_mem_set_device_addr(struct bm_mem_desc* pmem, unsigned long long addr) {
  pmem->u.device.device_addr = static_cast<unsigned long>(addr);
}
unsigned int bm_mem_get_device_size(struct bm_mem_desc mem) {
  return mem.size;
}
void bm_mem_set_device_size(struct bm_mem_desc* pmem, unsigned int size) {
  pmem->size = size;
}
bm_device_mem_t bm_mem_from_device(unsigned long long device_addr, unsigned int len) {
  return device_mem(device_addr, len);
}

bm_status_t bm_malloc_device_byte(bm_handle_t handle, bm_device_mem_t* pmem, unsigned int size) {
  if (!handle || !pmem) return BM_ERR_PARAM;
  const uint64_t addr = machine().allocate(size);
  if (addr == 0) return BM_ERR_NOMEM;
  *pmem = device_mem(addr, size);
  return BM_SUCCESS;
}

bm_status_t bm_malloc_device_dword(bm_handle_t handle, bm_device_mem_t* pmem, int count) {
  if (count < 0) return BM_ERR_PARAM;
  return bm_malloc_device_byte(handle, pmem, static_cast<unsigned>(count) * 4u);
}

void bm_free_device(bm_handle_t, bm_device_mem_t mem) {
  machine().release(mem.u.device.device_addr);
}

bm_status_t bm_memcpy_s2d_partial(bm_handle_t handle, bm_device_mem_t dst, void* src,
                                  unsigned int size) {
  if (!handle || !src) return BM_ERR_PARAM;
  uint8_t* d = machine().global(dst.u.device.device_addr, size);
  if (!d) return BM_ERR_PARAM;
  std::memcpy(d, src, size);
  return BM_SUCCESS;
}

bm_status_t bm_memcpy_d2s_partial(bm_handle_t handle, void* dst, bm_device_mem_t src,
                                  unsigned int size) {
  if (!handle || !dst) return BM_ERR_PARAM;
  const uint8_t* s = machine().global(src.u.device.device_addr, size);
  if (!s) return BM_ERR_PARAM;
  std::memcpy(dst, s, size);
  return BM_SUCCESS;
}

bm_status_t bm_memcpy_s2d(bm_handle_t handle, bm_device_mem_t dst, void* src) {
  return bm_memcpy_s2d_partial(handle, dst, src, dst.size);
}

bm_status_t bm_memcpy_d2s(bm_handle_t handle, void* dst, bm_device_mem_t src) {
  return bm_memcpy_d2s_partial(handle, dst, src, src.size);
}

bm_status_t bm_memset_device(bm_handle_t handle, const int value, bm_device_mem_t mem) {
  if (!handle) return BM_ERR_PARAM;
  uint8_t* d = machine().global(mem.u.device.device_addr, mem.size);
  if (!d) return BM_ERR_PARAM;
  // bmlib fills with the 32-bit pattern `value`.
  for (unsigned i = 0; i < mem.size; ++i) d[i] = static_cast<uint8_t>(value >> (8 * (i % 4)));
  return BM_SUCCESS;
}

bm_status_t okkernel_launch_sync(bm_handle_t handle, const char* func_name, const void* args,
                                 unsigned int size) {
  if (!handle || !func_name) return BM_ERR_PARAM;
  if (!find_kernel(func_name)) {
    std::string names;
    for (const std::string& n : kernel_names()) names += (names.empty() ? "" : ", ") + n;
    std::fprintf(stderr,
                 "npukit: okkernel_launch_sync: no kernel registered as '%s' (registered: %s)\n",
                 func_name, names.empty() ? "none" : names.c_str());
    return BM_ERR_PARAM;
  }
  // The kernel gets its own copy of the parameters, as on the device.
  std::vector<unsigned char> copy(size + 16);
  if (size) std::memcpy(copy.data(), args, size);
  launch(func_name, copy.data());
  return BM_SUCCESS;
}

bm_status_t okkernel_launch_async(bm_handle_t handle, const char* func_name, const void* args,
                                  unsigned int size) {
  return okkernel_launch_sync(handle, func_name, args, size);
}

bm_status_t okkernel_sync(bm_handle_t handle) {
  return handle ? BM_SUCCESS : BM_ERR_PARAM;
}

bm_status_t okkernel_load_firmware(bm_handle_t handle, unsigned char*, unsigned int) {
  return handle ? BM_SUCCESS : BM_ERR_PARAM;
}

}  // extern "C"
