// The simulator's estimate of BM1684 kernel time (docs/npu-simulator.md,
// "Cost model"): the constants of one chip preset, each with its source or
// how it was fitted, and one small cost function per instruction class.
// All times are device cycles of the chip's clock.
#pragma once

#include <cstdint>

namespace npukit::npu {

// What an instruction does, which decides its throughput and its colour in
// the timeline.
enum class OpClass : uint8_t {
  gdma,         // data movement (GDMA engine)
  conv,         // fp32 convolution (2IC weight layout)
  depthwise,    // fp32 depthwise convolution
  matmul,       // fp32 matrix multiply
  pool,         // max / avg pooling
  arith,        // element-wise arithmetic, select, bitwise, relu, bias, scale
  sfu,          // exp / sigmoid / tanh style series (several passes)
  lookup,       // table lookups
  cast,         // type conversions
  fixed_point,  // 4N / 2N fixed-point arithmetic
  other,
};
const char* op_class_name(OpClass c);

// Which memories a GDMA transfer connects.
enum class GdmaDirection : uint8_t { s2l, l2s, l2l, s2s };
const char* gdma_direction_name(GdmaDirection d);

struct CostModel {
  // Device clock. Assumed (npukit's earlier figure): with the BM1684's
  // published 2.2 TFLOPS fp32 over 64 NPUs x 32 fp32 lanes it means one MAC
  // (2 flops) per lane per cycle.
  double clock_mhz = 550.0;
  // Host launch of one kernel (bm_kernel_launch -> firmware -> done), part of
  // the contest's measured times. Fitted with issue_cycles on the 15 fit cases
  // (docs/npu-simulator.md, "Calibration"): softmax case 1 (1000 floats, 6
  // instructions) measures 47 us, and the season-2 contest's smallest cases
  // 40-46 us, so the launch is below 40 us.
  double launch_overhead_us = 28.0;

  // Firmware issue of one GDMA or BDC instruction: the device's CPU turns
  // each okk call into an engine command. Outside okk_parallel_start/end it
  // then waits for the instruction to finish, so the issue adds to every
  // instruction; inside a region it issues ahead and only delays an engine
  // that would otherwise start earlier. Fitted (see docs: "Calibration"):
  // the softmax cases run 6-16 short instructions each, and their hardware
  // times grow with the instruction count beyond what bytes and lanes explain.
  int64_t issue_cycles = 500;  // 0.9 us

  // --- BDC (compute engine) ----------------------------------------------
  // Issue/start-up latency of one BDC instruction (decode, pipeline fill,
  // write-back drain). Assumed: the fit cases run few, long instructions and
  // do not constrain it.
  int64_t bdc_startup_cycles = 110;
  // Cycles per lane-operation by class (a lane does one fp32 MAC or one
  // element-wise op per cycle: the 2.2 TFLOPS figure above). Pooling and
  // depthwise reuse the MAC array one window element per cycle; lookups and
  // casts are single-pass element-wise operations. Conv counts its input
  // channels in whole 2IC pairs (kit layout docs: an odd IC gets a dummy).
  double conv_cycles_per_mac = 1.0;
  double depthwise_cycles_per_mac = 1.0;
  double matmul_cycles_per_mac = 1.0;
  double pool_cycles_per_op = 1.0;
  double arith_cycles_per_op = 1.0;
  double sfu_cycles_per_op = 1.0;  // per pass of the series (passes counted by the caller)
  double lookup_cycles_per_op = 1.0;
  double cast_cycles_per_op = 1.0;
  double fixed_point_cycles_per_op = 1.0;  // per 32-bit word (4 int8 or 2 int16 lanes)

  // --- GDMA (data movement engine) ---------------------------------------
  // Bytes per cycle by direction. Fitted (s2l, l2s): the large depthwise
  // cases 3, 4, 8, 9 move 24-71 MB at 24.3-24.7 GB/s on hardware (launch
  // included) whatever their read/write mix, i.e. one shared DDR path; the
  // fit over all 15 cases gives 42 B/cycle = 23.1 GB/s of transfer time.
  // Assumed: local to local stays on chip (twice that), system to system
  // reads and writes DDR (half).
  double gdma_s2l_bytes_per_cycle = 42.0;
  double gdma_l2s_bytes_per_cycle = 42.0;
  double gdma_l2l_bytes_per_cycle = 84.0;
  double gdma_s2s_bytes_per_cycle = 21.0;
  // Local-memory side of a GDMA transfer: each NPU's local memory accepts (or
  // gives) this many bytes per cycle, so a transfer touching few NPUs (few
  // channels) is slower than DDR allows. Fitted on the fit cases whose
  // kernels touch fewer than 64 NPUs: depthwise cases 0 and 1 (C = 3, all
  // five top teams' kernels load 12 image planes into 12 NPUs per transfer)
  // run at 9-12 GB/s on hardware; the documentation gives no figure.
  double gdma_npu_port_bytes_per_cycle = 2.0;
  // Latency of one descriptor (address generation, DDR row open, completion
  // signal). Fitted (1.8 us) with issue_cycles: it separates the softmax
  // kernels (many short transfers) from the depthwise ones (few long ones).
  int64_t gdma_descriptor_cycles = 1000;
  // DDR burst: a contiguous run of bytes costs whole bursts, and a run that
  // does not start on a burst boundary costs one more (narrow, strided and
  // unaligned transfers pay for the bytes they drag along). Source: the
  // 64-byte LPDDR4X burst (BL16 x 32 bit).
  int64_t gdma_burst_bytes = 64;
};

CostModel bm1684_cost_model();
CostModel bm1684x_cost_model();

// A GDMA transfer of `runs` contiguous runs of `run_bytes` each; `aligned`
// says whether the runs start on burst boundaries; `local_npus` is the number
// of NPUs whose local memory the transfer touches (0: none, system to system).
// The transfer lasts as long as the slower of DDR and the NPUs' ports.
int64_t gdma_transfer_cycles(const CostModel& m, GdmaDirection d, int64_t runs, int64_t run_bytes,
                             bool aligned, int local_npus);
// A BDC instruction: `slots` channel slots on the busiest NPU, each of
// `elements` per channel spread over `eu` lanes, `ops` operations per element.
int64_t bdc_instruction_cycles(const CostModel& m, OpClass c, int64_t slots, int64_t elements,
                               int64_t ops, int eu);

}  // namespace npukit::npu
