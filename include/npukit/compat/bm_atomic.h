/* npukit drop-in bm_atomic.h: the BM168x atomic pooling functions (seed 002)
 * on npukit's simulated NPU. Addresses are local-memory addresses. */
#ifndef ATOMIC_H
#define ATOMIC_H

#include <stdbool.h>

#include "okk.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { BM_INT8, BM_UINT8, BM_INT16, BM_UNT16, BM_FP32 } BmDataType;

/* fp32 pooling; pad = top, bottom, left, right; ins_h/ins_w zeros between rows/columns. */
typedef struct {
  unsigned int input_addr;
  unsigned int output_addr;
  unsigned int input_shape[4];
  unsigned int kernel_h;
  unsigned int kernel_w;
  unsigned int stride_h;
  unsigned int stride_w;
  unsigned int ins_h;
  unsigned int ins_w;
  unsigned int pad[4];
} PoolParam;

typedef struct {
  unsigned int input_addr;
  unsigned int output_addr;
  unsigned int input_shape[4];
  unsigned int kernel_h;
  unsigned int kernel_w;
  unsigned int stride_h;
  unsigned int stride_w;
  unsigned int ins_h;
  unsigned int ins_w;
  unsigned int pad[4];
  float coeff; /* the sum is multiplied by it */
} SumPoolParam;

/* int8 pooling, input and output in the 4N layout. */
typedef struct {
  unsigned int input_addr;
  unsigned int output_addr;
  unsigned int input_shape[4];
  unsigned int kernel_h;
  unsigned int kernel_w;
  unsigned int stride_h;
  unsigned int stride_w;
  unsigned int ins_h;
  unsigned int ins_w;
  unsigned int dilate_h;
  unsigned int dilate_w;
  unsigned int pad[4];
  unsigned int rshift_bit;
  bool input_sign;
  bool if_relu;
} PoolQuantParam;

void bm_atomic_avg_pool(const PoolParam* param);
void bm_atomic_max_pool(const PoolParam* param);
void bm_atomic_sum_pool(const SumPoolParam* param);
void bm_atomic_avg_pool_quantized(const PoolQuantParam* param);
void bm_atomic_max_pool_quantized(const PoolQuantParam* param);

#ifdef __cplusplus
}
#endif

#endif /* ATOMIC_H */
