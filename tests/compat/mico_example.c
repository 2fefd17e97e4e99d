/* The usage example of MiCo-Lib's quantized pooling document (seed 003),
 * compiled as C against npukit's mico_qnn.h, plus hand-checked values. */
#include <stdio.h>
#include <stdlib.h>

#include "npukit/compat/mico_qnn.h"

static int failures = 0;

static void expect(int cond, const char* what) {
  if (!cond) {
    printf("FAIL %s\n", what);
    ++failures;
  }
}

int main(void) {
  /* Setup input tensor (already quantized): 1x16x32x32, element
   * (c, h, w) holds ((c + h + w) % 200) - 100. */
  Tensor4D_Q8 input;
  input.shape[0] = 1;
  input.shape[1] = 16;
  input.shape[2] = 32;
  input.shape[3] = 32;
  input.scale = 0.05f;
  input.wq = 8;
  input.data = (int8_t*)malloc(16 * 32 * 32);
  for (size_t c = 0; c < 16; ++c)
    for (size_t h = 0; h < 32; ++h)
      for (size_t w = 0; w < 32; ++w)
        input.data[(c * 32 + h) * 32 + w] = (int8_t)((int)((c + h + w) % 200) - 100);

  /* Setup output tensor */
  int out_h = (32 - 2) / 2 + 1; /* 16 */
  int out_w = (32 - 2) / 2 + 1; /* 16 */
  Tensor4D_Q8 output;
  output.shape[0] = 1;
  output.shape[1] = 16;
  output.shape[2] = out_h;
  output.shape[3] = out_w;
  output.wq = 8;
  output.data = (int8_t*)malloc(1 * 16 * out_h * out_w * sizeof(int8_t));

  /* Perform 2x2 max pooling with stride 2, no padding */
  MiCo_Q8_MaxPool2D(&output, &input, 2, 2, 0);
  /* Window (oh, ow) of channel c holds (c + 2oh + 2ow + {0,1,1,2}) - 100: max
   * at +2. Channel 3, (5, 7): 3 + 10 + 14 + 2 - 100 = -71. */
  expect(output.scale == input.scale, "max pool keeps the scale");
  expect(output.data[(3 * 16 + 5) * 16 + 7] == -71, "max pool value");

  /* Average: sum of {0,1,1,2} offsets = 4 + 4*(base) -> base + 1 exactly:
   * channel 3, (5, 7): 3 + 10 + 14 - 100 + 1 = -72. */
  MiCo_Q8_AvgPool2D(&output, &input, 2, 2, 0);
  expect(output.data[(3 * 16 + 5) * 16 + 7] == -72, "avg pool value");

  /* A kernel/stride/padding MiCo itself rejects (5, 3, 2): out = (32 + 4 - 5)/3 + 1 = 11.
   * Window (0, 0) of channel 0 covers rows/cols -2..2: valid 0..2, values
   * (h + w) - 100 for h, w in 0..2: sum = 9*(-100) + 18 = -882, / 9 = -98. */
  Tensor4D_Q8 big = output;
  big.shape[2] = big.shape[3] = 11;
  MiCo_Q8_AvgPool2D(&big, &input, 5, 3, 2);
  expect(big.data[0] == -98, "avg pool k5 s3 p2");

  free(input.data);
  free(output.data);
  printf("%d passed, %d failed\n", 3 + 1 - failures, failures);
  return failures ? 1 : 0;
}
