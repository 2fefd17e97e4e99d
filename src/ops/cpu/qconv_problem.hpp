// The fast integer convolution (QLinearConv / ConvInteger) family: one
// validated call (QConvProblem), the weights packed once for it
// (QConvPackedWeights), and the ordered kernel list (qconv_kernels()).
//
// Every kernel computes, per output, acc = sum over k of (x - x_zp)(w - w_zp)
// (exact_int32) or MLAS's u8 x s8 int16-pair sum (mlas_u8s8_int16_pairs), plus
// the bias, then either stores acc (ConvInteger) or requantizes it with
// detail::requantize_float's fp32 operations, bit-exact with the reference.
//
// The GEMM kernels share one data layout. Every operand is turned into a
// u8 x s8 product of "primed" codes, so that one vpdpbusd / vpmaddubsw shape
// serves all dtype pairs:
//   exact_int32: x' = x (u8) or x + 128 (s8, x ^ 0x80), x_zp' likewise;
//                w' = w (s8) or w - 128 (u8, w ^ 0x80), w_zp' likewise;
//                sum (x - x_zp)(w - w_zp) = sum (x' - x_zp')(w' - w_zp')
//                = S - x_zp' * sum(w') - w_zp' * sum(x') + K x_zp' w_zp'
//                with S = sum x' w' (all in wrapping int32: the true value fits).
//   mlas pairs:  the raw u8 and s8 codes (no prime), K in (kh, kw, ic) order.
// A padding tap reads x_zp' (it contributes 0); K is padded to a multiple of
// 4 with x' = w' = 0 (contributing 0 to S and to both sums).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "npukit/ops/quantized.hpp"
#include "ops/kernel_list.hpp"

namespace npukit {

// Output channels per packed weight block (the GEMM kernels' register rows).
inline constexpr int64_t kQConvRows = 8;

// The channels-last depthwise kernels' weights (qconv_dw_nhwc.hpp): w' =
// w - w_zp in tap pairs [pairs][C rounded up to 16] and per channel the sum of
// w', for the zero points they were made with.
struct DwNhwcWeights {
  std::vector<int32_t> pairs, sum, zero_point;
  // w' as s8 in tap quads, when every w' fits (qconv_dw_nhwc.hpp's quad kernel).
  std::vector<int8_t> quads;
  // w' as s8 by window column, up to 4 window rows per dword, when every w'
  // fits and the window is at most 4x4 (qconv_dw_cols.hpp's layout).
  std::vector<int8_t> cols;
  // The same with the window one row lower (byte k + 1 = row k), when the
  // window has at most 3 rows: the second output row of a pair that shares
  // one scratch row.
  std::vector<int8_t> cols_lower;
};

// The per-output-channel requantization data of one set of call parameters,
// built once at load time (pack_qconv_epilogue) so that a call does no
// O(channels) set-up and no allocation: w_zp', the constant part of the
// zero-point algebra (bias folded in) and the fp32 multiplier, per channel
// and in the fused epilogue's (group, block, row) layout (0 past a group's
// channels). The key fields are the parameters it was built from.
struct QConvEpilogue {
  // Key.
  int32_t x_zp = 0;
  float x_scale = 1.0f, y_scale = 1.0f;
  MultiplierOrder order = MultiplierOrder::divide_by_y_scale;
  bool requantize = true;
  std::vector<float> w_scale;
  std::vector<int32_t> w_zero_point, bias;  // bias empty when absent
  // Data.
  bool any_wzp = false, mult_finite = true;
  std::vector<int32_t> wzp, offset;  // offset and mult: padded to 64 channels (0, 1.0f)
  std::vector<float> mult;
  std::vector<int32_t> row_offset, row_wzp;
  std::vector<float> row_mult;
  // Depthwise weights with the column-quad layout: offset and mult in its
  // chunks' channel order (dw_cols_order), [C rounded up to 16].
  std::vector<int32_t> dw_cols_offset;
  std::vector<float> dw_cols_mult;
};

struct QConvPackedWeights {
  bool pairs = false;         // mlas_u8s8_int16_pairs layout: raw codes, K in (kh, kw, ic)
  bool x_primed = false;      // exact mode with s8 activations: x' = x ^ 0x80
  DType w_dtype = DType::s8;  // dtype of the weights it was packed from
  Shape w_shape;              // (OC, C/groups, KH, KW)
  int64_t groups = 1;
  int64_t K = 0, K4 = 0;  // products per output; quads of 4 after padding
  int64_t blocks = 0;     // weight blocks of kQConvRows channels per group
  // [groups][blocks][K4][kQConvRows][4] s8 codes w' (0 beyond OC/groups and K).
  std::vector<int8_t> w;
  std::vector<int32_t> w_sum;  // [OC] sum over k of w'
  // Source element offset of each k within one group's input channels, and
  // its (kh, kw), in packing order: k -> (ic, kh, kw).
  std::vector<int32_t> k_ic, k_kh, k_kw;
  // The channels-last layout (qconv_nhwc.hpp), packed when it may serve
  // (exact mode, one group): [OC/64 rounded
  // up][KH*KW][C/4 rounded up][64][4] s8 codes w', 0 past OC and C.
  std::vector<int8_t> nhwc_w;
  // The same as int16 pairs for the AVX2 kernel (made at pack time only on
  // hosts whose best channels-last GEMM is that one): per quad
  // [2 pairs][64][2] instead of [64][4].
  std::vector<int16_t> nhwc_w16;
  // Depthwise weights (one input and output channel per group): the
  // channels-last kernels' form, made with the zero points given to pack_qconv.
  DwNhwcWeights dw_nhwc;
  // Requantization data for the parameters given at load time, or null.
  std::shared_ptr<const QConvEpilogue> epilogue;
  const int8_t* block(int64_t g, int64_t b) const {
    return w.data() + (g * blocks + b) * K4 * kQConvRows * 4;
  }
};

// The arguments of one call, validated by qlinear_conv / conv_integer.
struct QConvProblem {
  TensorView x, w, bias, y;  // bias empty when absent; y s32 when !requantize
  Window2d window;
  int64_t groups = 1;
  int32_t x_zp = 0;
  QuantParams wq;  // axis 0
  bool requantize = true;
  float x_scale = 1.0f, y_scale = 1.0f;
  MultiplierOrder multiplier_order = MultiplierOrder::divide_by_y_scale;
  int32_t y_zp = 0;
  Rounding rounding = Rounding::half_to_even;
  // Output channel o's fp32 requantization multiplier, the one rule every
  // kernel and the reference use.
  float multiplier(int64_t o) const {
    return requantization_multiplier(multiplier_order, x_scale, wq.scale_at(o), y_scale);
  }
  bool pairs = false;  // the effective accumulation is MLAS's int16 pairs
  bool depthwise = false;
  const QConvPackedWeights* packed = nullptr;  // matching weights, or null
  // packed->epilogue was built from exactly these parameters, found once when
  // the call was planned (QLinearConvCall): the per-call compares are skipped.
  bool epilogue_checked = false;
};

// Packs w for the problem's mode and activation dtype (x_dtype).
std::shared_ptr<const QConvPackedWeights> pack_qconv(const TensorView& w, const QuantParams& wq,
                                                     int64_t groups, bool pairs, DType x_dtype);
// The epilogue of problem p's parameters for weights pk (every field filled).
QConvEpilogue build_qconv_epilogue(const QConvProblem& p, const QConvPackedWeights& pk);
// Whether e was built from p's parameters (O(channels) compares, no allocation).
bool qconv_epilogue_matches(const QConvEpilogue& e, const QConvProblem& p);
// pk's epilogue when it matches p, else null.
const QConvEpilogue* qconv_packed_epilogue(const QConvPackedWeights* pk, const QConvProblem& p);
// Whether every output channel's multiplier is finite (from the packed
// epilogue's when it matches: no division per channel).
bool qconv_multipliers_finite(const QConvProblem& p);
// Whether every weight zero point is 0 (s8) or 128 (u8), so that w' = w - w_zp
// fits s8 (from the packed epilogue's when it was checked: no loop per call).
bool weights_symmetric(const QConvProblem& p);
// Whether `pk` was packed for this problem.
bool qconv_packed_matches(const QConvPackedWeights& pk, const QConvProblem& p);
// The drivers' first two steps. The weights: p.packed when it matches p (and,
// for the channels-last GEMM, holds its layout: nhwc), else a pack made here
// and kept alive by `own`.
const QConvPackedWeights& qconv_weights_for(const QConvProblem& p, bool nhwc,
                                            std::shared_ptr<const QConvPackedWeights>& own);
// The epilogue: pk's when it matches p, else one built here into `own`.
const QConvEpilogue& qconv_epilogue_for(const QConvProblem& p, const QConvPackedWeights& pk,
                                        QConvEpilogue& own);

const KernelList<QConvProblem>& qconv_kernels();

// The validated problem of one qlinear_conv / conv_integer call (the errors
// are theirs); tests run every kernel of the list on it.
QConvProblem qlinear_conv_problem(const TensorView& x, const TensorView& w, const TensorView& bias,
                                  const TensorView& y, const QLinearConvParams& p);
QConvProblem conv_integer_problem(const TensorView& x, const TensorView& w, const TensorView& y,
                                  const ConvIntegerParams& p);

// Reference path of the family (the operator's specification).
void qconv_reference(const QConvProblem& p);

}  // namespace npukit
