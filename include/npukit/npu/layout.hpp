// Where a 4-D tensor lives on the simulated NPU and how its elements are
// addressed (docs/npu-simulator.md, "The machine"): local address A = Q*S + R, channel c on
// NPU (Q + c) % NPUs in slot (Q + c) / NPUs; strides in elements.
#pragma once

#include <cstdint>
#include <vector>

#include "npukit/npu/machine.hpp"
#include "npukit/tensor.hpp"

namespace npukit::npu {

struct Dims {
  int64_t n = 1, c = 1, h = 1, w = 1;
};

enum class Space : uint8_t { local, system };

struct Place {
  Space space = Space::local;
  uint64_t addr = 0;
  Dims shape, stride;
  int esize = 4;  // bytes per element
};

int start_npu(const Config& cfg, uint64_t local_addr);                     // Q
int64_t channels_per_npu(const Config& cfg, int start, int64_t channels);  // ceil((Q + C)/NPUs)
Dims aligned_stride(const Config& cfg, int start, const Dims& shape, int esize);
Dims compact_stride(const Config& cfg, int start, const Dims& shape);
Dims continuous_stride(const Dims& shape);

// Validates a place (shape >= 1, strides >= 0, the whole tensor inside local
// memory or inside one device allocation); `name` is the address parameter.
void check_place(const char* function, const char* name, const Place& p);

// Host pointer of element (n, c, 0, 0); no checks.
uint8_t* plane(Machine& m, const Place& p, int64_t n, int64_t c);

// Element-wise copy between two places of equal shape and element size.
// Local bytes read must have been written (rule), local bytes written are marked.
void copy_place(const char* function, const char* src_name, const Place& src, const Place& dst);
// Fills a place with one element value (esize bytes at `value`).
void fill_place(const Place& dst, const void* value);

// fp32 tensor <-> place (32-bit elements).
Tensor gather_f32(const char* function, const char* name, const Place& p);
// The same into `out` (n*c*h*w floats, NCHW), for buffers reused across instructions.
void gather_f32_into(const char* function, const char* name, const Place& p, float* out);
void scatter_f32(const TensorView& t, const Place& p);

// In-place access to a local fp32 place (no copies), for instructions that
// compute straight into local memory:
// Whether every element of `p` was written; warns at the first one that was
// not (the check gather_f32 makes).
bool check_written(const char* function, const char* name, const Place& p);
// Marks every element of `p` written (what scatter_f32 marks).
void mark_written(const Place& p);
// Channels [c0, c0 + channels) of a local place that sit in one slot of
// consecutive NPUs, viewed as one (N, channels, H, W) fp32 tensor: channel
// steps are whole NPU memories. A place is covered by ceil((q + C) / NPUs)
// such runs (q its start NPU).
struct LocalRun {
  int64_t c0 = 0, channels = 0;
  TensorView view;
};
std::vector<LocalRun> local_runs(Machine& m, const Place& p);

// 4N / 2N storage modes: 8-bit (lane_bytes 1) or 16-bit (2) elements of a
// logical (N, C, H, W) tensor packed 4 or 2 batches to a 32-bit word. The words
// form a place of shape (ceil(N / lanes), C, H, W) with esize 4 (strides count
// words); element (n, c, h, w) is lane n % lanes of word (n / lanes, c, h, w),
// lane k at bytes [k*lane_bytes, (k+1)*lane_bytes) (little endian). Dummy lanes
// past N are not read; a scatter writes them as 0 (the unit writes whole words).
int packed_lanes(int lane_bytes);  // 4 or 2
Dims packed_shape(const Dims& logical, int lane_bytes);
// The N*C*H*W real elements in (n, c, h, w) order, sign- or zero-extended;
// local bytes read must have been written.
std::vector<int32_t> gather_packed(const char* function, const char* name, const Place& words,
                                   int64_t n, int lane_bytes, bool is_signed);
// Writes the low lane_bytes of each value, and 0 to the dummy lanes (marking
// the bytes written).
void scatter_packed(const std::vector<int32_t>& values, const Place& words, int64_t n,
                    int lane_bytes);

// Local byte ranges [first, last] of a place on its NPUs (for overlap checks).
bool places_overlap(const Place& a, const Place& b);

}  // namespace npukit::npu
