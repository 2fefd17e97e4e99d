// Shared translation helpers of the okk / bm_atomic faces: C descriptors to
// checked Places, documented shape rules, cost recording.
#pragma once

#include <string>
#include <vector>

#include "npukit/compat/okk.h"
#include "npukit/npu/launch.hpp"
#include "npukit/npu/layout.hpp"
#include "npukit/npu/machine.hpp"
#include "npukit/npu/rules.hpp"

namespace npukit::npu::face {

inline const Config& cfg() {
  return machine().config();
}
inline Dims dims(const dim4& d) {
  return {d.n, d.c, d.h, d.w};
}
inline dim4 to_dim4(const Dims& d) {
  return {static_cast<int>(d.n), static_cast<int>(d.c), static_cast<int>(d.h),
          static_cast<int>(d.w)};
}
std::string text(const dim4& d);

enum class DefaultLayout : uint8_t { aligned, compact, continuous };

// Non-null pointer rule for a required descriptor.
void need(const void* p, const char* fn, const char* name);

// The tensor at local `addr` with `stride` (NULL: the default layout).
Place local_place(const char* fn, const char* name, uint64_t addr, const Dims& shape,
                  const dim4* stride, int esize, DefaultLayout def = DefaultLayout::aligned);
Place system_place(const char* fn, const char* name, uint64_t addr, const Dims& shape,
                   const dim4* stride, int esize);

// n, h, w in [1, 65535], c in [1, 4095] (seed 004's common shape rule).
// `wide_c_warns`: more channels only warn (see word_destination).
void rule_shape(const char* fn, const dim4& shape, bool wide_c_warns = false);
// The tensors must start on the same NPU as the first one.
void rule_same_npu(const char* fn, const char* a_name, uint64_t a, const char* b_name, uint64_t b);
void rule_w_stride_one(const char* fn, const char* name, const dim4* stride);
// A 32-bit element operand (fp32, int32, x32): address divisible by 4 and
// starting on the destination's NPU; `stride` NULL means the aligned layout.
Place word_operand(const char* fn, const char* name, uint64_t addr, const dim4& shape,
                   const dim4* stride, uint64_t dst);
// The 32-bit destination: non-null shape within the common shape rule,
// address divisible by 4. `any_stride`: some operand's stride was given; the
// vendor's C-model then accepts more than 4095 channels in the fp32
// arithmetic and computes every channel (probed: okk_bdc_mul_C / add / add_C
// with 5120 and 8192 channels and any one stride given; with every stride
// NULL it asserts `input_c < 1 << 12`), so it is a warning there.
Place word_destination(const char* fn, uint64_t dst, const dim4* shape, const dim4* stride,
                       bool any_stride = false);

void rule_no_overlap(const char* fn, const char* out_name, const Place& out, const char* in_name,
                     const Place& in);

// A packed operand (4N mode for lane_bytes 1, 2N for 2): address divisible by
// 4, starting on the first NPU (NPU 0) as the fixed-point functions require;
// the place holds the words of packed_shape(shape).
Place packed_place(const char* fn, const char* name, uint64_t addr, const dim4& shape,
                   const dim4* stride, int lane_bytes);

}  // namespace npukit::npu::face

namespace npukit::npu::face {
// A local matrix (matrix layout, `cpc` columns per channel) <-> a dense
// rows x cols fp32 tensor; only the matrix's own elements are touched.
npukit::Tensor gather_matrix(const char* fn, const char* name, const Place& p, int64_t rows,
                             int64_t cols, int64_t cpc);
// The same into `out` (rows x cols floats).
void gather_matrix_into(const char* fn, const char* name, const Place& p, int64_t rows,
                        int64_t cols, int64_t cpc, float* out);
void scatter_matrix(const npukit::TensorView& t, const Place& p, int64_t cpc);
// Host pointers of element (0, c, 0, 0) for every channel c of a place:
// element (n, c, 0, 0) is then bases[c] + esize * n * stride.n, without
// plane()'s per-call divisions (matrix rows walk every channel of every row).
std::vector<uint8_t*> channel_bases(Machine& m, const Place& p);
// Raw elements of a local place in (n, c, h, w) order, read-checked.
std::vector<uint8_t> gather_raw(const char* fn, const char* name, const Place& p);
// The same into `out` (n*c*h*w*esize bytes).
void gather_raw_into(const char* fn, const char* name, const Place& p, uint8_t* out);
// 32-bit elements (any type, as raw words) of a place in (n, c, h, w) order,
// read-checked, and back (marking them written).
std::vector<uint32_t> gather_u32(const char* fn, const char* name, const Place& p);
void scatter_u32(const std::vector<uint32_t>& words, const Place& p);
std::vector<float> as_f32(const std::vector<uint32_t>& words);
std::vector<uint32_t> as_u32(const std::vector<float>& values);
}  // namespace npukit::npu::face
