/* npukit drop-in bmlib_runtime.h: the host-side part of Sophgo's bmlib that
 * OKKernel host programs use, backed by npukit's simulated device. */
#ifndef BMLIB_RUNTIME_H_
#define BMLIB_RUNTIME_H_

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef DECL_EXPORT
#define DECL_EXPORT __attribute__((visibility("default")))
#endif

typedef enum {
  BM_SUCCESS = 0,
  BM_ERR_DEVNOTREADY = 1,
  BM_ERR_FAILURE = 2,
  BM_ERR_TIMEOUT = 3,
  BM_ERR_PARAM = 4,
  BM_ERR_NOMEM = 5,
  BM_ERR_DATA = 6,
  BM_ERR_BUSY = 7,
  BM_ERR_NOFEATURE = 8,
  BM_NOT_SUPPORTED = 9
} bm_status_t;

typedef enum {
  BM_MEM_TYPE_DEVICE = 0,
  BM_MEM_TYPE_HOST = 1,
  BM_MEM_TYPE_SYSTEM = 2,
  BM_MEM_TYPE_INT8_DEVICE = 3,
  BM_MEM_TYPE_INVALID = 4
} bm_mem_type_t;

typedef union {
  struct {
    bm_mem_type_t mem_type : 3;
    unsigned int gmem_heapid : 3;
    unsigned int reserved : 26;
  } u;
  unsigned int rawflags;
} bm_mem_flags_t;

/* A device or system memory descriptor, passed by value. */
typedef struct bm_mem_desc {
  union {
    struct {
      unsigned long device_addr;
      unsigned int reserved;
      int dmabuf_fd;
    } device;
    struct {
      void* system_addr;
      unsigned int reserved0;
      int reserved1;
    } system;
  } u;
  bm_mem_flags_t flags;
  unsigned int size;
} bm_mem_desc_t;
typedef struct bm_mem_desc bm_device_mem_t;
typedef struct bm_mem_desc bm_system_mem_t;

struct bm_context;
typedef struct bm_context* bm_handle_t;

DECL_EXPORT bm_status_t bm_dev_getcount(int* count);
DECL_EXPORT bm_status_t bm_dev_query(int devid);
DECL_EXPORT bm_status_t bm_dev_request(bm_handle_t* handle, int devid);
DECL_EXPORT int bm_get_devid(bm_handle_t handle);
DECL_EXPORT void bm_dev_free(bm_handle_t handle);

DECL_EXPORT bm_mem_type_t bm_mem_get_type(struct bm_mem_desc mem);
DECL_EXPORT unsigned long long bm_mem_get_device_addr(struct bm_mem_desc mem);
DECL_EXPORT void bm_mem_set_device_addr(struct bm_mem_desc* pmem, unsigned long long addr);
DECL_EXPORT unsigned int bm_mem_get_device_size(struct bm_mem_desc mem);
DECL_EXPORT void bm_mem_set_device_size(struct bm_mem_desc* pmem, unsigned int size);
DECL_EXPORT bm_device_mem_t bm_mem_from_device(unsigned long long device_addr, unsigned int len);

DECL_EXPORT bm_status_t bm_malloc_device_byte(bm_handle_t handle, bm_device_mem_t* pmem,
                                              unsigned int size);
DECL_EXPORT bm_status_t bm_malloc_device_dword(bm_handle_t handle, bm_device_mem_t* pmem,
                                               int count);
DECL_EXPORT void bm_free_device(bm_handle_t handle, bm_device_mem_t mem);

DECL_EXPORT bm_status_t bm_memcpy_s2d(bm_handle_t handle, bm_device_mem_t dst, void* src);
DECL_EXPORT bm_status_t bm_memcpy_d2s(bm_handle_t handle, void* dst, bm_device_mem_t src);
DECL_EXPORT bm_status_t bm_memcpy_s2d_partial(bm_handle_t handle, bm_device_mem_t dst, void* src,
                                              unsigned int size);
DECL_EXPORT bm_status_t bm_memcpy_d2s_partial(bm_handle_t handle, void* dst, bm_device_mem_t src,
                                              unsigned int size);
DECL_EXPORT bm_status_t bm_memset_device(bm_handle_t handle, const int value, bm_device_mem_t mem);

/* Runs the kernel registered (OKKERNEL_FUNC_REGISTER) as `func_name` with a
 * copy of `args`; returns when it has finished. */
DECL_EXPORT bm_status_t okkernel_launch_sync(bm_handle_t handle, const char* func_name,
                                             const void* args, unsigned int size);
DECL_EXPORT bm_status_t okkernel_launch_async(bm_handle_t handle, const char* func_name,
                                              const void* args, unsigned int size);
DECL_EXPORT bm_status_t okkernel_sync(bm_handle_t handle);
DECL_EXPORT bm_status_t okkernel_load_firmware(bm_handle_t handle, unsigned char* firmware,
                                               unsigned int size);

#ifdef __cplusplus
}
#endif

#endif /* BMLIB_RUNTIME_H_ */
