// The kernel list of the integer convolution family (QLinearConv and
// ConvInteger), best first; "x8" = u8 or s8 activations and weights. The
// depthwise kernels take one-channel groups, the GEMM kernels the rest; the
// reference (the operator's specification) takes everything.
#include <cmath>

#include "ops/cpu/qconv_dw_cols.hpp"
#include "ops/cpu/qconv_dw_nhwc.hpp"
#include "ops/cpu/qconv_gemm.hpp"
#include "ops/cpu/qconv_nhwc.hpp"
#include "ops/cpu/qconv_rowpairs.hpp"
#include "ops/quantized_common.hpp"

namespace npukit {

namespace {

const char* declines_common(const QConvProblem& p) {
  const Window2d& w = p.window;
  if (w.pad_top < 0 || w.pad_bottom < 0 || w.pad_left < 0 || w.pad_right < 0)
    return "negative pads";
  if (p.y.stride(3) != 1) return "output columns are not contiguous";
  if (p.requantize) {
    if (p.rounding != Rounding::half_to_even) return "rounding is not half_to_even";
    if (!qconv_multipliers_finite(p)) return "a requantization multiplier is not finite";
  }
  return nullptr;
}

const char* declines_depthwise(const QConvProblem& p) {
  if (!p.depthwise) return "not depthwise";
  if (p.w.dim(2) * p.w.dim(3) > 64) return "window larger than 64 taps";
  return declines_common(p);
}

const char* declines_gemm(const QConvProblem& p) {
  if (p.depthwise) return "depthwise (its own kernels)";
  if (p.y.stride(2) != p.y.dim(3)) return "output rows are not contiguous";
  return declines_common(p);
}
const char* declines_gemm_exact(const QConvProblem& p) {
  return p.pairs ? "int16-pair accumulation" : declines_gemm(p);
}
const char* declines_gemm_pairs(const QConvProblem& p) {
  return p.pairs ? declines_gemm(p) : "exact accumulation";
}

void run_dw_avx512vnni(const QConvProblem& p) {
  qconv::run_depthwise(p, qconv::dw_row_avx512vnni, qconv::store_avx512, qconv::dw_fill_avx512);
}
void run_dw_avx512(const QConvProblem& p) {
  qconv::run_depthwise(p, qconv::dw_row_avx512, qconv::store_avx512, qconv::dw_fill_avx512);
}
void run_dw_avx2(const QConvProblem& p) {
  qconv::run_depthwise(p, qconv::dw_row_avx2_pairs, qconv::store_avx2, qconv::dw_fill_portable);
}
void run_dw_portable(const QConvProblem& p) {
  qconv::run_depthwise(p, qconv::dw_row_portable, qconv::store_portable, qconv::dw_fill_portable);
}
void run_dw_nhwc_avx512vnni(const QConvProblem& p) {
  qconv::run_dw_nhwc(p, qconv::dw_nhwc_avx512vnni);
}
void run_dw_cols_avx512vnni(const QConvProblem& p) {
  qconv::run_dw_cols(p, qconv::dw_cols_avx512vnni, qconv::dw_nhwc_avx512vnni);
}
void run_dw_nhwc_quads_avx512vnni(const QConvProblem& p) {
  qconv::run_dw_nhwc(p, qconv::dw_nhwc_quads_avx512vnni);
}
void run_dw_nhwc_avx512(const QConvProblem& p) {
  qconv::run_dw_nhwc(p, qconv::dw_nhwc_avx512);
}
void run_dw_nhwc_avx2(const QConvProblem& p) {
  qconv::run_dw_nhwc(p, qconv::dw_nhwc_avx2);
}
void run_dw_nhwc_portable(const QConvProblem& p) {
  qconv::run_dw_nhwc(p, qconv::dw_nhwc_portable);
}
void run_gemm_vnni(const QConvProblem& p) {
  qconv::run_gemm(p, {qconv::gemm_exact_avx512vnni, nullptr, qconv::store_avx512,
                      qconv::fused_exact_avx512vnni, nullptr});
}
void run_gemm_pairs_avx512(const QConvProblem& p) {
  qconv::run_gemm(p, {nullptr, qconv::gemm_pairs_avx512, qconv::store_avx512, nullptr,
                      qconv::fused_pairs_avx512});
}
void run_gemm_avx2(const QConvProblem& p) {
  qconv::run_gemm(p, {qconv::gemm_exact_avx2, qconv::gemm_pairs_avx2, qconv::store_avx2,
                      qconv::fused_exact_avx2, qconv::fused_pairs_avx2});
}
void run_nhwc_vnni(const QConvProblem& p) {
  qconv::run_gemm_nhwc(p, qconv::nhwc_block_avx512vnni);
}
void run_nhwc_avx2(const QConvProblem& p) {
  qconv::run_gemm_nhwc(p, qconv::nhwc_block_avx2, true);
}
void run_nhwc_pairs_avx2(const QConvProblem& p) {
  qconv::run_gemm_nhwc(p, qconv::nhwc_block_pairs_avx2);
}
void run_nhwc_portable(const QConvProblem& p) {
  qconv::run_gemm_nhwc(p, qconv::nhwc_block_portable);
}
void run_gemm_portable(const QConvProblem& p) {
  qconv::run_gemm(p,
                  {qconv::gemm_exact_portable, qconv::gemm_pairs_portable, qconv::store_portable});
}

}  // namespace

void qconv_reference(const QConvProblem& p) {
  const Shape out = p.y.shape();
  Tensor acc(DType::s32, out);
  if (p.pairs)
    ref::conv_accumulate_mlas_pairs(p.x, p.w, acc.view(), p.window, p.groups, p.x_zp, p.wq);
  else
    ref::conv_accumulate(p.x, p.w, acc.view(), p.window, p.groups, p.x_zp, p.wq);
  const detail::CodeRange r = detail::code_range(p.y.dtype());
  const int64_t OC = out[1];
  const int32_t* a = acc.data<int32_t>();
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t o = 0; o < OC; ++o) {
      // The profile's fp32 multiplier (QLinearConvParams::multiplier).
      const float m = p.multiplier(o);
      const int32_t b =
          p.bias.raw() ? static_cast<const int32_t*>(p.bias.raw())[o * p.bias.stride(0)] : 0;
      for (int64_t i = 0; i < out[2]; ++i)
        for (int64_t j = 0; j < out[3]; ++j) {
          const int32_t v = a[((n * OC + o) * out[2] + i) * out[3] + j] + b;
          const int64_t at =
              n * p.y.stride(0) + o * p.y.stride(1) + i * p.y.stride(2) + j * p.y.stride(3);
          if (!p.requantize)
            static_cast<int32_t*>(p.y.raw())[at] = v;
          else
            detail::store_code(p.y.raw(), p.y.dtype(), at,
                               detail::requantize_float(v, m, p.y_zp, r, p.rounding));
        }
    }
}

const KernelList<QConvProblem>& qconv_kernels() {
  static const KernelList<QConvProblem> list{
      "qconv",
      {
          {"x8-qconv-rowquads-nhwc-avx512vnni", Isa::avx512_vnni,
           "as x8-qconv-rowpairs-nhwc-avx2 with a window row's codes as u8 quads, one vpdpbusd "
           "of 8 lanes per quad",
           qconv::rowpairs_declines, qconv::run_rowquads_avx512vnni},
          {"x8-qconv-rowpairs-nhwc-avx2", Isa::avx2,
           "as x8-qconv-gemm-nhwc-avx2 with 1-2 input channels, a window row of at most 8 codes "
           "(dilation 1 across), y channels-last or NCHW (4 pixels per channel transposed in "
           "registers); a window row's taps as int16 pairs, 8 output channels per vector "
           "(before the VNNI GEMM: on a first layer's 1 channel it also beats it, 9 vpdpbusd "
           "of 16 lanes per pixel for 8 channels)",
           qconv::rowpairs_declines, qconv::run_rowpairs_avx2},
          {"x8-qconv-gemm-nhwc-avx512vnni", Isa::avx512_vnni,
           "exact, one group, window > 1x1, weight zero point 0 (s8) or 128 (u8); output "
           "channels in the lanes (no pixel-lane waste on 7x7/14x14 maps)",
           qconv::nhwc_declines, run_nhwc_vnni},
          {"x8-qconv-dw-nhwc-cols-avx512vnni", Isa::avx512_vnni,
           "depthwise on channels-last x and y, window at most 4x4, weight zero point 0 (s8) "
           "or 128 (u8); up to 4 window rows of one column per vpdpbusd, weights in registers",
           qconv::dw_cols_declines, run_dw_cols_avx512vnni},
          {"x8-qconv-dw-nhwc-quads-avx512vnni", Isa::avx512_vnni,
           "depthwise on channels-last x and y, weight zero point 0 (s8) or 128 (u8); four "
           "taps per vpdpbusd",
           qconv::dw_nhwc_quads_declines, run_dw_nhwc_quads_avx512vnni},
          {"x8-qconv-dw-nhwc-avx512vnni", Isa::avx512_vnni,
           "depthwise on channels-last x and y (the runner's int8 layout); channels in the "
           "lanes, two taps per vpdpwssd",
           qconv::dw_nhwc_declines, run_dw_nhwc_avx512vnni},
          {"x8-qconv-dw-nhwc-avx512", Isa::avx512,
           "depthwise on channels-last x and y (the runner's int8 layout); channels in the "
           "lanes, two taps per vpmaddwd",
           qconv::dw_nhwc_declines, run_dw_nhwc_avx512},
          {"x8-qconv-gemm-nhwc-avx2", Isa::avx2,
           "as x8-qconv-gemm-nhwc-avx512vnni with x or y channels-last (the runner's int8 "
           "layout); two exact u8 x s8 products per vpmaddwd on int16 pairs, 3 pixels x 16 "
           "channels per pass",
           qconv::nhwc_declines_channels_last, run_nhwc_avx2},
          {"x8-qconv-dw-nhwc-avx2", Isa::avx2,
           "depthwise on channels-last x and y (the runner's int8 layout); channels in the "
           "lanes, two taps per vpmaddwd",
           qconv::dw_nhwc_declines, run_dw_nhwc_avx2},
          {"x8-qconv-dw-nhwc-portable", Isa::portable,
           "depthwise on channels-last x and y (before the NCHW depthwise kernels, which "
           "take strided planes slowly)",
           qconv::dw_nhwc_declines, run_dw_nhwc_portable},
          {"x8-qconv-dw-nchw-avx512vnni", Isa::avx512_vnni,
           "depthwise (group = C = OC), exact; two taps per vpdpwssd", declines_depthwise,
           run_dw_avx512vnni},
          {"x8-qconv-dw-nchw-avx512", Isa::avx512, "depthwise (group = C = OC), exact",
           declines_depthwise, run_dw_avx512},
          {"x8-qconv-dw-nchw-avx2", Isa::avx2,
           "depthwise (group = C = OC), exact; two taps per vpmaddwd", declines_depthwise,
           run_dw_avx2},
          {"x8-qconv-dw-nchw-portable", Isa::portable, "depthwise (group = C = OC), exact",
           declines_depthwise, run_dw_portable},
          {"x8-qconv-gemm-nchw-avx512vnni", Isa::avx512_vnni,
           "exact int32 accumulation (vpdpbusd), not depthwise", declines_gemm_exact,
           run_gemm_vnni},
          {"x8-qconv-pairs-gemm-nchw-avx512", Isa::avx512,
           "MLAS int16-pair accumulation (vpmaddubsw), not depthwise", declines_gemm_pairs,
           run_gemm_pairs_avx512},
          {"x8-qconv-pairs-gemm-nhwc-avx2", Isa::avx2,
           "MLAS int16-pair accumulation (ONNX Runtime without VNNI) with x or y channels-last, "
           "one group, even input channel count, weight zero point 0; vpmaddubsw, vpmaddwd by "
           "ones, 3 pixels x 16 channels per pass (after the AVX-512 NCHW pair GEMM, faster there)",
           qconv::nhwc_pairs_declines, run_nhwc_pairs_avx2},
          {"x8-qconv-gemm-nchw-avx2", Isa::avx2,
           "either accumulation (vpmaddubsw; exact by 7-bit split), not depthwise", declines_gemm,
           run_gemm_avx2},
          {"x8-qconv-gemm-nchw-portable", Isa::portable, "either accumulation, not depthwise",
           declines_gemm, run_gemm_portable},
          {"x8-qconv-gemm-nhwc-portable", Isa::portable,
           "as x8-qconv-gemm-nhwc-avx512vnni (after the NCHW GEMM, which takes its problems)",
           qconv::nhwc_declines, run_nhwc_portable},
          {"x8-qconv-reference", Isa::portable, "always (the specification)", nullptr,
           qconv_reference, true},
      }};
  return list;
}

}  // namespace npukit
