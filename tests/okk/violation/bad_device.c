/* A kernel that breaks a hardware rule: okk_bdc_avg_pool2d needs an output
 * address divisible by 128. Used by check_install_okk.sh. */
#include "okk.h"

void bad_kernel(const void* args) {
  (void)args;
  okk_initialize();
  const dim4 shape = {1, 1, 4, 4};
  x32 one;
  one.fp32 = 1.0f;
  okk_gdma_32bit_set_C_local(0, one, &shape, NULL);
  okk_bdc_avg_pool2d(100, 0, &shape, 2, 2, NULL, NULL);
  okk_poll();
}
OKKERNEL_FUNC_REGISTER(bad_kernel);
