// bmlib_runtime.h face: device handles, device memory and kernel launches on
// the simulated NPU.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "npukit/compat/bmlib_runtime.h"
#include "npukit/error.hpp"
#include "npukit/npu/launch.hpp"
#include "npukit/npu/machine.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

using namespace npukit::npu;

struct bm_context {
  int devid = 0;
};

namespace {
// The host API reports bad arguments as bmlib does (a status code) and says
// why on stderr in npukit's format.
bm_status_t refuse(const char* function, const char* parameter, const std::string& value,
                   const std::string& allowed, bm_status_t status = BM_ERR_PARAM) {
  const npukit::Error e(function, parameter, value, allowed);
  std::fprintf(stderr, "npukit: %s\n", e.what());
  return status;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// [addr, addr + size) inside one allocation, or a message and nullptr.
uint8_t* device_bytes(const char* function, const char* parameter, uint64_t addr, uint64_t size) {
  uint8_t* p = machine().global(addr, size);
  if (!p)
    refuse(function, parameter, hex(addr) + " (" + std::to_string(size) + " bytes)",
           "a range inside one device memory allocation (bm_malloc_device_byte)");
  return p;
}

// okkernel_launch_sync copies the parameter block; a size beyond this is a
// caller bug (a wrapped length), not a parameter struct.
constexpr unsigned kMaxLaunchArgs = 1u << 20;

bm_device_mem_t device_mem(uint64_t addr, unsigned size) {
  bm_device_mem_t m;
  std::memset(&m, 0, sizeof m);
  m.u.device.device_addr = static_cast<unsigned long>(addr);
  m.flags.u.mem_type = BM_MEM_TYPE_DEVICE;
  m.size = size;
  return m;
}
}  // namespace

namespace npukit::npu {
namespace {
std::atomic<int> g_flush{-1};  // -1: from the environment
}  // namespace

void set_request_flushes_denormals(bool flush) {
  g_flush = flush ? 1 : 0;
}

bool request_flushes_denormals() {
  const int f = g_flush.load();
  if (f >= 0) return f == 1;
  const char* env = std::getenv("NPUKIT_BM_KEEP_MXCSR");
  return !(env && std::strcmp(env, "1") == 0);
}
}  // namespace npukit::npu

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
#if defined(__x86_64__) || defined(__i386__)
  if (request_flushes_denormals()) _mm_setcsr(_mm_getcsr() | 0x8040u);  // FTZ | DAZ
#endif
  std::lock_guard<std::recursive_mutex> lock(device_mutex());
#if defined(__GLIBC__)
  // Every simulated instruction allocates its operand tensors (64-byte
  // aligned, megabytes each) and frees them. With glibc's sliding mmap
  // threshold these land on the heap after the first free, and aligned
  // blocks of varying sizes fragmented it: a published conv2d kernel (case
  // 11, 188****9931) grew to 24 GB and was killed. A fixed 1 MiB threshold
  // returns them to the system on free (170 MB for the same run).
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
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
  std::lock_guard<std::recursive_mutex> lock(device_mutex());
  uint64_t addr = 0;
  try {
    addr = machine().allocate(size);
  } catch (const std::bad_alloc&) {
    addr = 0;  // the host could not back it: the device is out of memory
  }
  if (addr == 0)
    return refuse("bm_malloc_device_byte", "size", std::to_string(size),
                  "a size that fits in the free device memory", BM_ERR_NOMEM);
  *pmem = device_mem(addr, size);
  return BM_SUCCESS;
}

bm_status_t bm_malloc_device_dword(bm_handle_t handle, bm_device_mem_t* pmem, int count) {
  if (count < 0) return BM_ERR_PARAM;
  return bm_malloc_device_byte(handle, pmem, static_cast<unsigned>(count) * 4u);
}

void bm_free_device(bm_handle_t, bm_device_mem_t mem) {
  std::lock_guard<std::recursive_mutex> lock(device_mutex());
  // A second free (or a foreign address) is reported and otherwise ignored.
  if (!machine().release(mem.u.device.device_addr))
    refuse("bm_free_device", "mem", hex(mem.u.device.device_addr),
           "the start of a live allocation (not freed before)");
}

bm_status_t bm_memcpy_s2d_partial(bm_handle_t handle, bm_device_mem_t dst, void* src,
                                  unsigned int size) {
  if (!handle || !src) return BM_ERR_PARAM;
  std::lock_guard<std::recursive_mutex> lock(device_mutex());
  uint8_t* d = device_bytes("bm_memcpy_s2d", "dst", dst.u.device.device_addr, size);
  if (!d) return BM_ERR_PARAM;
  std::memcpy(d, src, size);
  return BM_SUCCESS;
}

bm_status_t bm_memcpy_d2s_partial(bm_handle_t handle, void* dst, bm_device_mem_t src,
                                  unsigned int size) {
  if (!handle || !dst) return BM_ERR_PARAM;
  std::lock_guard<std::recursive_mutex> lock(device_mutex());
  const uint8_t* s = device_bytes("bm_memcpy_d2s", "src", src.u.device.device_addr, size);
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
  std::lock_guard<std::recursive_mutex> lock(device_mutex());
  uint8_t* d = device_bytes("bm_memset_device", "mem", mem.u.device.device_addr, mem.size);
  if (!d) return BM_ERR_PARAM;
  // bmlib fills with the 32-bit pattern `value`.
  for (unsigned i = 0; i < mem.size; ++i) d[i] = static_cast<uint8_t>(value >> (8 * (i % 4)));
  return BM_SUCCESS;
}

bm_status_t okkernel_launch_sync(bm_handle_t handle, const char* func_name, const void* args,
                                 unsigned int size) {
  if (!handle || !func_name) return BM_ERR_PARAM;
  if (!args && size != 0)
    return refuse("okkernel_launch_sync", "args", "NULL with size " + std::to_string(size),
                  "a pointer to `size` bytes of parameters (NULL only with size 0)");
  if (size > kMaxLaunchArgs)
    return refuse("okkernel_launch_sync", "size", std::to_string(size),
                  npukit::range_text(0, kMaxLaunchArgs) + " bytes of kernel parameters");
  // Launches share one simulated device: they run one at a time.
  std::lock_guard<std::recursive_mutex> lock(device_mutex());
  if (!find_kernel(func_name)) {
    std::string names;
    for (const std::string& n : kernel_names()) names += (names.empty() ? "" : ", ") + n;
    std::fprintf(stderr,
                 "npukit: okkernel_launch_sync: no kernel registered as '%s' (registered: %s)\n",
                 func_name, names.empty() ? "none" : names.c_str());
    return BM_ERR_PARAM;
  }
  // The kernel gets its own copy of the parameters, as on the device.
  std::vector<unsigned char> copy(static_cast<size_t>(size) + 16);
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
