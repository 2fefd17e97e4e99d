#include "npukit/npu/cost_model.hpp"

#include <algorithm>
#include <cmath>

namespace npukit::npu {

const char* op_class_name(OpClass c) {
  switch (c) {
    case OpClass::gdma:
      return "gdma";
    case OpClass::conv:
      return "conv";
    case OpClass::depthwise:
      return "depthwise";
    case OpClass::matmul:
      return "matmul";
    case OpClass::pool:
      return "pool";
    case OpClass::arith:
      return "arith";
    case OpClass::sfu:
      return "sfu";
    case OpClass::lookup:
      return "lookup";
    case OpClass::cast:
      return "cast";
    case OpClass::fixed_point:
      return "fixed_point";
    case OpClass::other:
      break;
  }
  return "other";
}

const char* gdma_direction_name(GdmaDirection d) {
  switch (d) {
    case GdmaDirection::s2l:
      return "S2L";
    case GdmaDirection::l2s:
      return "L2S";
    case GdmaDirection::l2l:
      return "L2L";
    case GdmaDirection::s2s:
      return "S2S";
  }
  return "?";
}

CostModel bm1684_cost_model() {
  return CostModel{};
}

// BM1684X: same structure; its public figures (1 GHz class clock, 64-byte
// alignment) are not calibrated against hardware here, so only the clock
// differs from the BM1684 preset.
CostModel bm1684x_cost_model() {
  CostModel m;
  m.clock_mhz = 1000.0;
  return m;
}

namespace {

double bytes_per_cycle(const CostModel& m, GdmaDirection d) {
  switch (d) {
    case GdmaDirection::s2l:
      return m.gdma_s2l_bytes_per_cycle;
    case GdmaDirection::l2s:
      return m.gdma_l2s_bytes_per_cycle;
    case GdmaDirection::l2l:
      return m.gdma_l2l_bytes_per_cycle;
    case GdmaDirection::s2s:
      return m.gdma_s2s_bytes_per_cycle;
  }
  return m.gdma_s2l_bytes_per_cycle;
}

double cycles_per_op(const CostModel& m, OpClass c) {
  switch (c) {
    case OpClass::conv:
      return m.conv_cycles_per_mac;
    case OpClass::depthwise:
      return m.depthwise_cycles_per_mac;
    case OpClass::matmul:
      return m.matmul_cycles_per_mac;
    case OpClass::pool:
      return m.pool_cycles_per_op;
    case OpClass::sfu:
      return m.sfu_cycles_per_op;
    case OpClass::lookup:
      return m.lookup_cycles_per_op;
    case OpClass::cast:
      return m.cast_cycles_per_op;
    case OpClass::fixed_point:
      return m.fixed_point_cycles_per_op;
    default:
      return m.arith_cycles_per_op;
  }
}

}  // namespace

int64_t gdma_transfer_cycles(const CostModel& m, GdmaDirection d, int64_t runs, int64_t run_bytes,
                             bool aligned, int local_npus) {
  const int64_t burst = m.gdma_burst_bytes;
  const int64_t bursts_per_run = (run_bytes + burst - 1) / burst + (aligned ? 0 : 1);
  const double moved = static_cast<double>(runs) * static_cast<double>(bursts_per_run * burst);
  double cycles = moved / bytes_per_cycle(m, d);
  if (local_npus > 0 && m.gdma_npu_port_bytes_per_cycle > 0) {
    const double payload = static_cast<double>(runs) * static_cast<double>(run_bytes);
    cycles = std::max(cycles, payload / (local_npus * m.gdma_npu_port_bytes_per_cycle));
  }
  return m.gdma_descriptor_cycles + static_cast<int64_t>(std::ceil(cycles));
}

double conv_mac_factor(const CostModel& m, int64_t ic, int64_t stride_w) {
  double f = 1.0;
  // Few input channels read at a wide stride: the window's input, not the
  // MACs, limits a tap (the vendor's estimate; its IC counts up to 64).
  const int64_t channels = std::min(ic, m.conv_stride_floor_channels);
  if (channels > 0 && stride_w + 1 > channels)
    f = static_cast<double>(stride_w + 1) / static_cast<double>(channels);
  // Three input channels (image inputs) run slower per MAC (the vendor's).
  if (ic == 3 && m.conv_ic3_mac_factor > 0) f *= m.conv_ic3_mac_factor;
  return f;
}

int64_t bdc_instruction_cycles(const CostModel& m, OpClass c, int64_t slots, int64_t elements,
                               int64_t ops, int eu, int64_t taps, double mac_factor) {
  // Matmul's lane groups and per-group cycles are the vendor's FC estimate
  // (cost_model.hpp); every other class fills the `eu` lanes.
  const bool matmul = c == OpClass::matmul;
  const int64_t lanes = matmul ? m.matmul_columns_per_cycle : eu;
  const int64_t rows = (elements + lanes - 1) / lanes;  // lane rows per channel slot
  const double per_row = static_cast<double>(ops) * cycles_per_op(m, c) * mac_factor +
                         (matmul ? static_cast<double>(m.matmul_group_cycles) : 0.0);
  const double work = static_cast<double>(slots) * static_cast<double>(rows) * per_row;
  const bool pays_taps = c == OpClass::conv || c == OpClass::depthwise;
  const int64_t tap_passes = pays_taps ? slots * rows * taps : 0;
  return m.bdc_startup_cycles + static_cast<int64_t>(std::ceil(work)) +
         tap_passes * m.bdc_tap_startup_cycles;
}

}  // namespace npukit::npu
