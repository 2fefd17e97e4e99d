// Fast elementwise quantized operators: QLinearAdd (same-shape operands) and
// per-tensor QuantizeLinear, each a kernel list whose kernels compute the
// reference's fp32 operations in the same order, lane by lane (bit-exact).
#pragma once

#include <cstdint>

#include "npukit/ops/quantized.hpp"
#include "ops/kernel_list.hpp"

namespace npukit {

struct QAddProblem {
  TensorView a, b, c;
  QLinearAddParams p;
};
const KernelList<QAddProblem>& qadd_kernels();

struct QuantizeProblem {
  TensorView x, y;
  QuantizeParams p;
};
const KernelList<QuantizeProblem>& quantize_kernels();

namespace qelem {

// The per-call constants, computed once in portable code (no FMA contraction
// can touch them: the build uses -ffp-contract=off, and they are scalar here).
struct AddConsts {
  bool fma_form;                    // QAddArith::ort_x86_fma
  float a_scale, b_scale, c_scale;  // dequant_add_quant
  float ra, rb, k;                  // ort_x86_fma: a/c, b/c, c_zp - fma(ra, a_zp, rb*b_zp)
  int32_t a_zp, b_zp, c_zp;
  float lo, hi;  // clamp bounds before rounding (code range, minus c_zp for dequant_add_quant)
  bool s8;
};
AddConsts add_consts(const QAddProblem& q);
// c[i] for i < n from a[i], b[i] (contiguous codes).
void add_portable(const void* a, const void* b, void* c, int64_t n, const AddConsts& k);
void add_avx512(const void* a, const void* b, void* c, int64_t n, const AddConsts& k);
void add_avx2(const void* a, const void* b, void* c, int64_t n, const AddConsts& k);

struct QuantizeConsts {
  bool reciprocal;  // multiply by inv (PyTorch) instead of dividing by scale
  float scale, inv;
  int32_t zp;
  float lo, hi;  // code range minus zp
  bool s8;
};
void quantize_portable(const float* x, void* y, int64_t n, const QuantizeConsts& k);
void quantize_avx512(const float* x, void* y, int64_t n, const QuantizeConsts& k);
void quantize_avx2(const float* x, void* y, int64_t n, const QuantizeConsts& k);

}  // namespace qelem
}  // namespace npukit
