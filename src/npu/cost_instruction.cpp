#include "cost_instruction.hpp"

#include <algorithm>
#include <string>

#include "npukit/npu/machine.hpp"

namespace npukit::npu::face {

namespace {

std::string shape_text(const Dims& d) {
  return std::to_string(d.n) + "x" + std::to_string(d.c) + "x" + std::to_string(d.h) + "x" +
         std::to_string(d.w);
}

// How a place's bytes fall into contiguous runs: system memory merges
// dimensions while strides are dense; local memory never merges across
// channels (they sit on different NPUs).
struct Runs {
  int64_t count = 1, bytes = 0;
  bool aligned = true;
  int npus = 0;  // local NPUs touched (0: system memory)
};

Runs runs_of(const Place& p, int64_t burst) {
  const Dims& s = p.shape;
  const Dims& st = p.stride;
  int64_t run = s.w, step = st.h;  // elements; w stride is 1 (a GDMA rule)
  bool dense = s.h == 1 || st.h == s.w;
  if (dense) {
    run = s.h * s.w;
    step = st.c;
    if (p.space == Space::system && (s.c == 1 || st.c == run)) {
      run *= s.c;
      step = st.n;
      if (s.n == 1 || st.n == run) run *= s.n;
    }
  }
  const int64_t total = s.n * s.c * s.h * s.w;
  Runs r;
  if (p.space == Space::local) {
    const int npus = machine().config().npu_num;
    r.npus = static_cast<int>(std::min<int64_t>(s.c, npus));
  }
  r.count = total / run;
  r.bytes = run * p.esize;
  const int64_t step_bytes = step * p.esize;
  r.aligned =
      p.addr % static_cast<uint64_t>(burst) == 0 && (r.count == 1 || step_bytes % burst == 0);
  return r;
}

Runs worse(const Runs& a, const Runs& b, int64_t burst) {
  auto bursts = [&](const Runs& r) {
    return r.count * ((r.bytes + burst - 1) / burst + (r.aligned ? 0 : 1));
  };
  return bursts(a) >= bursts(b) ? a : b;
}

}  // namespace

Instruction gdma_copy_instruction(const char* fn, const Place& dst, const Place& src) {
  const CostModel& m = machine().config().cost;
  const int64_t burst = m.gdma_burst_bytes;
  const bool sl = src.space == Space::local, dl = dst.space == Space::local;
  const GdmaDirection d = sl ? (dl ? GdmaDirection::l2l : GdmaDirection::l2s)
                             : (dl ? GdmaDirection::s2l : GdmaDirection::s2s);
  // DDR pays for bursts on its side; on chip both sides are local.
  Runs r = !sl ? runs_of(src, burst) : runs_of(dst, burst);
  if (sl == dl) r = worse(runs_of(src, burst), runs_of(dst, burst), burst);
  const int npus = sl && dl ? std::min(runs_of(src, burst).npus, runs_of(dst, burst).npus)
                   : sl     ? runs_of(src, burst).npus
                            : runs_of(dst, burst).npus;
  Instruction in;
  in.function = fn;
  in.engine = Engine::gdma;
  in.op_class = OpClass::gdma;
  in.bytes = src.shape.n * src.shape.c * src.shape.h * src.shape.w * src.esize;
  in.cycles = gdma_transfer_cycles(m, d, r.count, r.bytes, r.aligned, npus);
  in.detail = std::string(gdma_direction_name(d)) + " " + shape_text(src.shape) + " x" +
              std::to_string(src.esize) + "B, " + std::to_string(r.count) + " runs of " +
              std::to_string(r.bytes) + " B" + (r.aligned ? "" : ", unaligned") + ", " +
              std::to_string(npus) + " NPUs";
  return in;
}

Instruction gdma_fill_instruction(const char* fn, const Place& dst) {
  const CostModel& m = machine().config().cost;
  const Runs r = runs_of(dst, m.gdma_burst_bytes);
  const GdmaDirection d = dst.space == Space::local ? GdmaDirection::l2l : GdmaDirection::s2s;
  Instruction in;
  in.function = fn;
  in.engine = Engine::gdma;
  in.op_class = OpClass::gdma;
  in.bytes = dst.shape.n * dst.shape.c * dst.shape.h * dst.shape.w * dst.esize;
  in.cycles = gdma_transfer_cycles(m, d, r.count, r.bytes, r.aligned, r.npus);
  in.detail = std::string("fill ") + shape_text(dst.shape) + " x" + std::to_string(dst.esize) +
              "B, " + std::to_string(r.count) + " runs of " + std::to_string(r.bytes) + " B" +
              (r.aligned ? "" : ", unaligned") + ", " + std::to_string(r.npus) + " NPUs";
  return in;
}

Instruction gdma_matrix_instruction(const char* fn, bool to_local, const Place& local,
                                    uint64_t system_addr, int64_t rows, int64_t cols,
                                    int64_t row_stride) {
  const CostModel& m = machine().config().cost;
  Place p;
  p.space = Space::system;
  p.addr = system_addr;
  p.shape = Dims{1, 1, rows, cols};
  p.stride = Dims{rows * row_stride, rows * row_stride, row_stride, 1};
  const Runs r = runs_of(p, m.gdma_burst_bytes);
  const Runs l = runs_of(local, m.gdma_burst_bytes);
  const GdmaDirection d = to_local ? GdmaDirection::s2l : GdmaDirection::l2s;
  Instruction in;
  in.function = fn;
  in.engine = Engine::gdma;
  in.op_class = OpClass::gdma;
  in.bytes = rows * cols * 4;
  in.cycles = gdma_transfer_cycles(m, d, r.count, r.bytes, r.aligned, l.npus);
  in.detail = std::string(gdma_direction_name(d)) + " matrix " + std::to_string(rows) + "x" +
              std::to_string(cols) + " into " + shape_text(local.shape) + ", " +
              std::to_string(r.count) + " runs of " + std::to_string(r.bytes) + " B" +
              (r.aligned ? "" : ", unaligned") + ", " + std::to_string(l.npus) + " NPUs" +
              // Where each NPU's chunk of a row falls in DDR, so a trace can be
              // re-costed per chunk (docs/npu-simulator.md, "Calibration").
              ", rows " + std::to_string(row_stride * 4) + " B apart from burst offset " +
              std::to_string(system_addr % static_cast<uint64_t>(m.gdma_burst_bytes));
  return in;
}

Instruction bdc_slots_instruction(const char* fn, OpClass c, int64_t slots, int64_t elements,
                                  int64_t ops, const std::string& detail, int64_t taps) {
  const Config& cfg = machine().config();
  Instruction in;
  in.function = fn;
  in.engine = Engine::bdc;
  in.op_class = c;
  in.cycles = bdc_instruction_cycles(cfg.cost, c, slots, elements, ops, cfg.eu_num(), taps);
  in.detail = detail + ", " + std::to_string(slots) + " slots x " + std::to_string(elements) +
              " elements x " + std::to_string(ops) + " ops";
  return in;
}

Instruction bdc_instruction(const char* fn, OpClass c, const Place& out, int64_t ops,
                            int64_t taps) {
  const Config& cfg = machine().config();
  const int64_t slots = channels_per_npu(cfg, start_npu(cfg, out.addr), out.shape.c) * out.shape.n;
  Instruction in = bdc_slots_instruction(fn, c, slots, out.shape.h * out.shape.w, ops,
                                         "out " + shape_text(out.shape), taps);
  in.bytes = out.shape.n * out.shape.c * out.shape.h * out.shape.w * out.esize;
  return in;
}

Instruction bdc_window_instruction(const char* fn, OpClass c, const Place& out, int64_t ic,
                                   int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w) {
  const Config& cfg = machine().config();
  const bool conv = c == OpClass::conv;
  // The fp32 MAC array reads conv weights as 2IC pairs, the dummy partner of
  // an odd IC included (kit docs, layout: 2IC-mode): ceil(IC/2) pairs of 2
  // lane-MACs, scaled by the vendor's factors for IC = 3 and for few channels
  // at a wide stride.
  const int64_t lane_macs = conv ? 2 * ((ic + 1) / 2) : ic;
  const double factor = conv ? conv_mac_factor(cfg.cost, ic, stride_w) : 1.0;
  Instruction in = bdc_instruction(fn, c, out, lane_macs * kh * kw, kh * kw);
  if (factor != 1.0) {
    const int64_t slots =
        channels_per_npu(cfg, start_npu(cfg, out.addr), out.shape.c) * out.shape.n;
    in.cycles = bdc_instruction_cycles(cfg.cost, c, slots, out.shape.h * out.shape.w,
                                       lane_macs * kh * kw, cfg.eu_num(), kh * kw, factor);
  }
  in.detail += ", kernel " + std::to_string(kh) + "x" + std::to_string(kw) + " stride " +
               std::to_string(stride_h) + "x" + std::to_string(stride_w);
  if (conv) in.detail += ", ic " + std::to_string(ic);  // the true IC, for re-costing
  return in;
}

}  // namespace npukit::npu::face
