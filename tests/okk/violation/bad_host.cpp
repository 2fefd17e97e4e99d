// Host program of the rule-violating kernel: launching it must end the process
// with exit status 255 and the rule on stderr (check_install_okk.sh).
#include "bmlib_runtime.h"

int main() {
  bm_handle_t handle;
  if (bm_dev_request(&handle, 0) != BM_SUCCESS) return 1;
  int unused = 0;
  okkernel_launch_sync(handle, "bad_kernel", &unused, sizeof(unused));
  bm_dev_free(handle);
  return 0;  // not reached
}
