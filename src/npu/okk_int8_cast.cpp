// okk.h face: int8 / uint8 to fp32, from the plain 8-bit layout
// (okk_bdc_int8_to_fp32) or the 4N mode (okk_bdc_4N_int8_to_fp32), with all
// three tensors in the 128-byte aligned or the compact layout.
#include "cost_instruction.hpp"
#include "npukit/ops/npu_packed_int.hpp"
#include "okk_face.hpp"

using namespace npukit;
using namespace npukit::npu;
using namespace npukit::npu::face;

namespace {

// 8-bit "approximately compact" layout: C stride ALIGN(H*W, 4) (documented).
Dims compact8_stride(int start, const Dims& s) {
  const int64_t cs = (s.h * s.w + 3) / 4 * 4;
  return {cs * channels_per_npu(cfg(), start, s.c), cs, s.w, 1};
}

Place byte_place(const char* fn, const char* name, local_addr_t addr, const Dims& shape,
                 bool aligned) {
  const int q = start_npu(cfg(), addr);
  Place p{Space::local, addr, shape,
          aligned ? aligned_stride(cfg(), q, shape, 1) : compact8_stride(q, shape), 1};
  check_place(fn, name, p);
  return p;
}

void common(const char* fn, local_addr_t dst, local_addr_t src, local_addr_t work,
            const dim4* shape) {
  need(shape, fn, "shape");
  rule_shape(fn, *shape);
  rule_divisible(fn, "dst_addr", dst, 4);
  rule_divisible(fn, "src_addr", src, 4);
  rule_divisible(fn, "work_addr", work, 4);
  rule_same_npu(fn, "dst_addr", dst, "src_addr", src);
  rule_same_npu(fn, "dst_addr", dst, "work_addr", work);
}

void finish(const char* fn, const std::vector<int32_t>& x, const Place& dp) {
  std::vector<float> y(x.size());
  fixed_to_f32(x, y);
  scatter_u32(as_u32(y), dp);
  record_cost(bdc_instruction(fn, OpClass::cast, dp, 2));
}

}  // namespace

extern "C" {

void okk_bdc_int8_to_fp32(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr,
                          const dim4* shape, bool is_signed, bool is_aligned_layout) {
  constexpr const char* fn = "okk_bdc_int8_to_fp32";
  common(fn, dst_addr, src_addr, work_addr, shape);
  const Dims s = dims(*shape);
  const Place dp = local_place(fn, "dst_addr", dst_addr, s, nullptr, 4,
                               is_aligned_layout ? DefaultLayout::aligned : DefaultLayout::compact);
  const Place sp = byte_place(fn, "src_addr", src_addr, s, is_aligned_layout);
  const Place wp = byte_place(fn, "work_addr", work_addr, s, is_aligned_layout);
  rule_no_overlap(fn, "work_addr", wp, "dst_addr", dp);
  const std::vector<uint8_t> raw = gather_raw(fn, "src_addr", sp);
  std::vector<int32_t> x(raw.size());
  for (size_t i = 0; i < raw.size(); ++i)
    x[i] = is_signed ? int32_t{static_cast<int8_t>(raw[i])} : int32_t{raw[i]};
  finish(fn, x, dp);
}

void okk_bdc_4N_int8_to_fp32(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr,
                             const dim4* shape, bool is_signed, bool is_aligned_layout) {
  constexpr const char* fn = "okk_bdc_4N_int8_to_fp32";
  common(fn, dst_addr, src_addr, work_addr, shape);
  const Dims s = dims(*shape);
  const DefaultLayout layout = is_aligned_layout ? DefaultLayout::aligned : DefaultLayout::compact;
  const Place dp = local_place(fn, "dst_addr", dst_addr, s, nullptr, 4, layout);
  const Place sp = local_place(fn, "src_addr", src_addr, packed_shape(s, 1), nullptr, 4, layout);
  const Place wp = local_place(fn, "work_addr", work_addr, packed_shape(s, 1), nullptr, 4, layout);
  rule_no_overlap(fn, "work_addr", wp, "dst_addr", dp);
  finish(fn, gather_packed(fn, "src_addr", sp, s.n, 1, is_signed), dp);
}

}  // extern "C"
