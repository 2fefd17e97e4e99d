// Instructions for the cost model from the okk / bm_atomic faces' checked
// places: the direction, runs and alignment of a GDMA transfer, the channel
// slots, elements and operations of a BDC instruction.
#pragma once

#include "npukit/npu/launch.hpp"
#include "npukit/npu/layout.hpp"

namespace npukit::npu::face {

// A GDMA copy between two places of equal shape.
Instruction gdma_copy_instruction(const char* fn, const Place& dst, const Place& src);
// A GDMA fill of a place with a constant (no source read).
Instruction gdma_fill_instruction(const char* fn, const Place& dst);
// A GDMA matrix transfer between the local place `local` and `rows` runs of
// `cols` 4-byte elements in system memory, `row_stride` elements apart.
Instruction gdma_matrix_instruction(const char* fn, bool to_local, const Place& local,
                                    uint64_t system_addr, int64_t rows, int64_t cols,
                                    int64_t row_stride);
// A BDC instruction producing `out` (a local place) with `ops` operations of
// class `c` per output element (`taps`: kernel taps, see bdc_instruction_cycles).
Instruction bdc_instruction(const char* fn, OpClass c, const Place& out, int64_t ops = 1,
                            int64_t taps = 0);
// A sliding-window BDC instruction (conv, depthwise, pooling) producing `out`:
// `ic * kh * kw` operations per output element, read at the window's stride,
// in `kh * kw` tap passes.
Instruction bdc_window_instruction(const char* fn, OpClass c, const Place& out, int64_t ic,
                                   int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w);
// A BDC instruction given its channel slots on the busiest NPU directly.
Instruction bdc_slots_instruction(const char* fn, OpClass c, int64_t slots, int64_t elements,
                                  int64_t ops, const std::string& detail, int64_t taps = 0);

}  // namespace npukit::npu::face
