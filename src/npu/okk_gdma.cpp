// okk.h face: the GDMA engine (copies between system and local memory,
// matrix copies, set-constant). Pure data movement.
#include <algorithm>
#include <cstring>

#include "cost_instruction.hpp"
#include "okk_face.hpp"

using namespace npukit::npu;
using namespace npukit::npu::face;

namespace {

void gdma_cpy(const char* fn, int esize, Space dst_space, uint64_t dst, Space src_space,
              uint64_t src, const dim4* shape, const dim4* dst_stride, const dim4* src_stride) {
  need(shape, fn, "shape");
  rule_range(fn, "shape->n", shape->n, 1, 65535);
  // c > 65535: the vendor's simulator rejects it for a copy between two
  // default layouts (its GDMA_MAX_C) and copies correctly once a stride is
  // given (probed up to 131072 channels): a warning there.
  if (dst_stride || src_stride)
    rule_range_warn_above(fn, "shape->c", shape->c, 1, 65535, INT32_MAX);
  else
    rule_range(fn, "shape->c", shape->c, 1, 65535);
  rule_range(fn, "shape->h", shape->h, 1, 65535);
  rule_range(fn, "shape->w", shape->w, 1, 65535);
  rule_w_stride_one(fn, "dst_stride", dst_stride);
  rule_w_stride_one(fn, "src_stride", src_stride);
  rule_divisible(fn, "dst_addr", dst, static_cast<uint64_t>(esize));
  rule_divisible(fn, "src_addr", src, static_cast<uint64_t>(esize));
  const Dims s = dims(*shape);
  const Place d = dst_space == Space::local
                      ? local_place(fn, "dst_addr", dst, s, dst_stride, esize)
                      : system_place(fn, "dst_addr", dst, s, dst_stride, esize);
  const Place r = src_space == Space::local
                      ? local_place(fn, "src_addr", src, s, src_stride, esize)
                      : system_place(fn, "src_addr", src, s, src_stride, esize);
  copy_place(fn, "src_addr", r, d);
  record_cost(gdma_copy_instruction(fn, d, r));
}

void gdma_set(const char* fn, int esize, Space space, uint64_t dst, const void* value,
              const dim4* shape, const dim4* dst_stride) {
  need(shape, fn, "shape");
  rule_w_stride_one(fn, "dst_stride", dst_stride);
  rule_divisible(fn, "dst_addr", dst, static_cast<uint64_t>(esize));
  const Dims s = dims(*shape);
  const Place d = space == Space::local ? local_place(fn, "dst_addr", dst, s, dst_stride, esize)
                                        : system_place(fn, "dst_addr", dst, s, dst_stride, esize);
  fill_place(d, value);
  record_cost(gdma_fill_instruction(fn, d));
}

// The matrix layout: an rows x cols matrix as the aligned tensor
// (rows, ceil(cols / cols_per_channel), 1, cols_per_channel).
void gdma_matrix(const char* fn, bool to_local, uint64_t local, uint64_t system, int rows, int cols,
                 int cpc, int row_stride) {
  rule_range(fn, "rows", rows, 1, 65535);
  rule_range(fn, "cols", cols, 1, 65535 * 4095);
  // cols_per_channel > cols: the vendor's simulator accepts it and lays the
  // matrix out with that width (one channel per row): a warning.
  rule_range_warn_above(fn, "cols_per_channel", cpc, 1, cols, 65535);
  rule_range(fn, "row_stride", row_stride, cols, INT32_MAX);
  rule_divisible(fn, to_local ? "dst_addr" : "src_addr", local, 4);
  rule_divisible(fn, to_local ? "src_addr" : "dst_addr", system, 4);
  const Dims s{rows, (cols + cpc - 1) / cpc, 1, cpc};
  const Place lp = local_place(fn, to_local ? "dst_addr" : "src_addr", local, s, nullptr, 4);
  // The system matrix: rows of `cols` elements, `row_stride` elements apart.
  const dim4 sstride{rows * row_stride, rows * row_stride, row_stride, 1};
  system_place(fn, to_local ? "src_addr" : "dst_addr", system, Dims{1, 1, rows, cols}, &sstride, 4);
  Machine& m = machine();
  uint8_t* sys = m.device(system, 4);
  const std::vector<uint8_t*> bases = channel_bases(m, lp);
  bool check = true;  // until the first never-written element
  // One channel's chunk of a row at a time: cpc consecutive local elements.
  for (int r = 0; r < rows; ++r) {
    for (int first = 0; first < cols; first += cpc) {
      const size_t bytes = 4 * static_cast<size_t>(std::min(cpc, cols - first));
      uint8_t* lptr =
          bases[static_cast<size_t>(first / cpc)] + 4 * static_cast<int64_t>(r) * lp.stride.n;
      uint8_t* flag = m.written(0, 0) + (lptr - m.local(0, 0));
      uint8_t* sptr = sys + 4 * (static_cast<int64_t>(r) * row_stride + first);
      if (to_local) {
        std::memcpy(lptr, sptr, bytes);
        std::memset(flag, 1, bytes);
        continue;
      }
      if (check && std::memchr(flag, 0, bytes)) {
        const size_t at =
            static_cast<size_t>(static_cast<const uint8_t*>(std::memchr(flag, 0, bytes)) - flag);
        check = false;
        if (warning_due(fn, "src_addr"))
          warning(fn, "src_addr",
                  std::to_string(local) + ": matrix element (" + std::to_string(r) + ", " +
                      std::to_string(first + static_cast<int>(at / 4)) + ") was never written",
                  "reads of local memory written before (by GDMA or BDC)");
      }
      std::memcpy(sptr, lptr, bytes);
    }
  }
  record_cost(gdma_matrix_instruction(fn, to_local, lp, system, rows, cols, row_stride));
}

}  // namespace

extern "C" {

#define NPUKIT_GDMA_DEFINE(bits, xt, esize)                                                   \
  void okk_gdma_##bits##bit_cpy_S2L(local_addr_t dst_addr, system_addr_t src_addr,            \
                                    const dim4* shape, const dim4* dst_stride,                \
                                    const dim4* src_stride) {                                 \
    gdma_cpy("okk_gdma_" #bits "bit_cpy_S2L", esize, Space::local, dst_addr, Space::system,   \
             src_addr, shape, dst_stride, src_stride);                                        \
  }                                                                                           \
  void okk_gdma_##bits##bit_cpy_L2S(system_addr_t dst_addr, local_addr_t src_addr,            \
                                    const dim4* shape, const dim4* dst_stride,                \
                                    const dim4* src_stride) {                                 \
    gdma_cpy("okk_gdma_" #bits "bit_cpy_L2S", esize, Space::system, dst_addr, Space::local,   \
             src_addr, shape, dst_stride, src_stride);                                        \
  }                                                                                           \
  void okk_gdma_##bits##bit_cpy_L2L(local_addr_t dst_addr, local_addr_t src_addr,             \
                                    const dim4* shape, const dim4* dst_stride,                \
                                    const dim4* src_stride) {                                 \
    gdma_cpy("okk_gdma_" #bits "bit_cpy_L2L", esize, Space::local, dst_addr, Space::local,    \
             src_addr, shape, dst_stride, src_stride);                                        \
  }                                                                                           \
  void okk_gdma_##bits##bit_cpy_S2S(system_addr_t dst_addr, system_addr_t src_addr,           \
                                    const dim4* shape, const dim4* dst_stride,                \
                                    const dim4* src_stride) {                                 \
    gdma_cpy("okk_gdma_" #bits "bit_cpy_S2S", esize, Space::system, dst_addr, Space::system,  \
             src_addr, shape, dst_stride, src_stride);                                        \
  }                                                                                           \
  void okk_gdma_##bits##bit_set_C_system(system_addr_t dst_addr, xt C, const dim4* shape,     \
                                         const dim4* dst_stride) {                            \
    gdma_set("okk_gdma_" #bits "bit_set_C_system", esize, Space::system, dst_addr, &C, shape, \
             dst_stride);                                                                     \
  }                                                                                           \
  void okk_gdma_##bits##bit_set_C_local(local_addr_t dst_addr, xt C, const dim4* shape,       \
                                        const dim4* dst_stride) {                             \
    gdma_set("okk_gdma_" #bits "bit_set_C_local", esize, Space::local, dst_addr, &C, shape,   \
             dst_stride);                                                                     \
  }

NPUKIT_GDMA_DEFINE(32, x32, 4)
NPUKIT_GDMA_DEFINE(16, x16, 2)
NPUKIT_GDMA_DEFINE(8, x8, 1)

void okk_gdma_32bit_matrix_S2L(local_addr_t dst_addr, system_addr_t src_addr, int rows, int cols,
                               int cols_per_channel, int row_stride) {
  gdma_matrix("okk_gdma_32bit_matrix_S2L", true, dst_addr, src_addr, rows, cols, cols_per_channel,
              row_stride);
}

void okk_gdma_32bit_matrix_L2S(system_addr_t dst_addr, local_addr_t src_addr, int rows, int cols,
                               int cols_per_channel, int row_stride) {
  gdma_matrix("okk_gdma_32bit_matrix_L2S", false, src_addr, dst_addr, rows, cols, cols_per_channel,
              row_stride);
}

}  // extern "C"
