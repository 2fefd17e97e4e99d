// The integer convolution's per-channel requantization data (QConvEpilogue):
// built once per model load from constant parameters, or per call otherwise.
// The algebra is qconv_problem.hpp's; the multiplier is the reference's.
#include <bit>
#include <cmath>
#include <cstring>

#include "ops/cpu/qconv_dw_cols.hpp"
#include "ops/cpu/qconv_nhwc.hpp"
#include "ops/cpu/qconv_problem.hpp"

namespace npukit {

namespace {

uint32_t u32(int64_t v) {
  return static_cast<uint32_t>(static_cast<uint64_t>(v));
}

int32_t bias_at(const TensorView& bias, int64_t o) {
  return static_cast<const int32_t*>(bias.raw())[o * bias.stride(0)];
}

}  // namespace

QConvEpilogue build_qconv_epilogue(const QConvProblem& p, const QConvPackedWeights& pk) {
  QConvEpilogue e;
  e.x_zp = p.x_zp;
  e.x_scale = p.x_scale, e.y_scale = p.y_scale;
  e.order = p.multiplier_order;
  e.requantize = p.requantize;
  e.w_scale = p.wq.scale;
  e.w_zero_point = p.wq.zero_point;
  const int64_t OC = pk.w_shape[0], OCg = OC / pk.groups, K = pk.K;
  if (p.bias.raw())
    for (int64_t o = 0; o < OC; ++o) e.bias.push_back(bias_at(p.bias, o));
  const int32_t xz = p.x_zp + (pk.x_primed ? 128 : 0);  // x_zp'
  const bool wflip = !pk.pairs && pk.w_dtype == DType::u8;
  const size_t n = static_cast<size_t>(OC);
  // offset and mult padded to whole channels-last blocks (offset 0, multiplier 1), as
  // the channels-last GEMM reads them.
  const size_t padded = static_cast<size_t>((OC + qconv::kNhwcOcBlock - 1) / qconv::kNhwcOcBlock *
                                            qconv::kNhwcOcBlock);
  e.wzp.resize(n), e.offset.assign(padded, 0), e.mult.assign(padded, 1.0f);
  const size_t rows_total = static_cast<size_t>(pk.groups * pk.blocks * kQConvRows);
  e.row_offset.assign(rows_total, 0), e.row_wzp.assign(rows_total, 0);
  e.row_mult.assign(rows_total, 0.0f);
  for (int64_t o = 0; o < OC; ++o) {
    const size_t i = static_cast<size_t>(o);
    const int32_t wz = p.wq.zero_point_at(o) - (wflip ? 128 : 0);
    e.wzp[i] = wz;
    e.any_wzp = e.any_wzp || wz != 0;
    const int64_t b = e.bias.empty() ? 0 : e.bias[i];
    e.offset[i] =
        static_cast<int32_t>(u32(b) - u32(xz) * u32(pk.w_sum[i]) + u32(K) * u32(xz) * u32(wz));
    e.mult[i] = p.multiplier(o);  // as the reference
    const int64_t g = o / OCg, og = o % OCg;
    const size_t at =
        static_cast<size_t>((g * pk.blocks + og / kQConvRows) * kQConvRows + og % kQConvRows);
    e.row_offset[at] = e.offset[i], e.row_wzp[at] = wz, e.row_mult[at] = e.mult[i];
    e.mult_finite = e.mult_finite && std::isfinite(e.mult[i]);
  }
  if (!pk.dw_nhwc.cols.empty())
    qconv::dw_cols_order(e.offset.data(), e.mult.data(), OC, e.dw_cols_offset, e.dw_cols_mult);
  return e;
}

bool qconv_epilogue_matches(const QConvEpilogue& e, const QConvProblem& p) {
  // Scales compare by bits: the multiplier is a function of the bits.
  const auto same_bits = [](const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
  };
  if (e.x_zp != p.x_zp || e.requantize != p.requantize || e.w_zero_point != p.wq.zero_point ||
      std::bit_cast<uint32_t>(e.x_scale) != std::bit_cast<uint32_t>(p.x_scale) ||
      std::bit_cast<uint32_t>(e.y_scale) != std::bit_cast<uint32_t>(p.y_scale) ||
      e.order != p.multiplier_order || !same_bits(e.w_scale, p.wq.scale))
    return false;
  if (p.bias.raw() == nullptr) return e.bias.empty();
  if (e.bias.size() != e.wzp.size()) return false;
  for (size_t o = 0; o < e.bias.size(); ++o)
    if (e.bias[o] != bias_at(p.bias, static_cast<int64_t>(o))) return false;
  return true;
}

const QConvEpilogue* qconv_packed_epilogue(const QConvPackedWeights* pk, const QConvProblem& p) {
  if (p.epilogue_checked && pk == p.packed) return pk->epilogue.get();
  if (pk == nullptr || pk->epilogue == nullptr || !qconv_epilogue_matches(*pk->epilogue, p))
    return nullptr;
  return pk->epilogue.get();
}

const QConvEpilogue& qconv_epilogue_for(const QConvProblem& p, const QConvPackedWeights& pk,
                                        QConvEpilogue& own) {
  if (const QConvEpilogue* e = qconv_packed_epilogue(&pk, p)) return *e;
  own = build_qconv_epilogue(p, pk);
  return own;
}

}  // namespace npukit

namespace npukit {

bool weights_symmetric(const QConvProblem& p) {
  // The epilogue's w_zp' subtracts 128 from u8 zero points in exact mode.
  if (p.epilogue_checked && !p.pairs && p.packed && p.packed->epilogue)
    return !p.packed->epilogue->any_wzp;
  const int32_t symmetric = p.w.dtype() == DType::u8 ? 128 : 0;
  for (int64_t o = 0; o < p.w.dim(0); ++o)
    if (p.wq.zero_point_at(o) != symmetric) return false;
  return true;
}

bool qconv_multipliers_finite(const QConvProblem& p) {
  if (const QConvEpilogue* e = qconv_packed_epilogue(p.packed, p)) return e->mult_finite;
  for (int64_t o = 0; o < p.w.dim(0); ++o)
    if (!std::isfinite(p.multiplier(o))) return false;
  return true;
}

}  // namespace npukit
