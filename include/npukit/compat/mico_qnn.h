/* MiCo-Lib's quantized pooling API (seed 003), implemented by npukit.
 *
 * Drop-in for MiCo's mico_qnn.h pooling functions, usable from C and C++.
 * Semantics are MiCo's, for every kernel, stride and padding (MiCo itself only
 * accepts kernel 2/3, stride 1/2, padding 0/1):
 *   - NCHW int8, out = (in + 2*padding - kernel_size) / stride + 1 per axis;
 *   - AvgPool: int32 sum of the window's input elements (padding excluded) /
 *     the number of those elements, C division (truncation toward zero);
 *   - MaxPool: max of the window's input elements (padding acts as -128 and
 *     never wins);
 *   - a window with no input element (padding >= kernel_size) gives 0;
 *   - y->scale = x->scale (the codes are averaged in place, no zero point).
 * The _Ref functions are declared when REF is defined, as in MiCo; npukit's
 * reference and default functions are the same specification, the one of
 * MiCo's documentation and MiCo_Q8_*_Ref. (MiCo's own im2col-based
 * MiCo_Q8_AvgPool2D differs in one corner: with padding > 0 it also drops
 * input elements equal to -128, its padding marker, from sum and count;
 * npukit counts them, as MiCo_Q8_AvgPool2D_Ref does.)
 *
 * Invalid arguments (NULL pointers, kernel_size or stride 0, a window larger
 * than the padded input, y->shape not [N, C, out_h, out_w]) are reported on
 * stderr as "npukit: error: MiCo_Q8_AvgPool2D: parameter 'stride' = 0 is not
 * allowed (allowed: ...)" and the process aborts, like MiCo's own MiCo_assert;
 * y is never written in that case.
 */
#ifndef NPUKIT_COMPAT_MICO_QNN_H
#define NPUKIT_COMPAT_MICO_QNN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  size_t shape[4]; /* N, C, H, W */
  int8_t* data;
  float scale;
  int wq; /* weight/activation bit width (informational) */
} Tensor4D_Q8;

void MiCo_Q8_AvgPool2D(Tensor4D_Q8* y, const Tensor4D_Q8* x, const size_t kernel_size,
                       const size_t stride, const size_t padding);
void MiCo_Q8_MaxPool2D(Tensor4D_Q8* y, const Tensor4D_Q8* x, const size_t kernel_size,
                       const size_t stride, const size_t padding);

#ifdef REF
void MiCo_Q8_AvgPool2D_Ref(Tensor4D_Q8* y, const Tensor4D_Q8* x, const size_t kernel_size,
                           const size_t stride, const size_t padding);
void MiCo_Q8_MaxPool2D_Ref(Tensor4D_Q8* y, const Tensor4D_Q8* x, const size_t kernel_size,
                           const size_t stride, const size_t padding);
#endif

#ifdef __cplusplus
}
#endif

#endif /* NPUKIT_COMPAT_MICO_QNN_H */
