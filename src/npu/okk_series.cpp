// okk.h face: the fp32 functions the BDC builds from its lookup table and
// Taylor-series units (taylor/lookup exp, exp, sigmoid, tanh and their
// _tunable forms) and the two table casts. Arithmetic: npukit/ops/fp32_series.hpp
// under Profile::bm1684; this file checks the documented rules and moves data.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cost_instruction.hpp"
#include "npukit/ops/fp32_series.hpp"
#include "okk_face.hpp"

using namespace npukit;
using namespace npukit::npu;
using namespace npukit::npu::face;

namespace {

constexpr int kDefaultSeries = 32;  // okk_bdc_exp == okk_bdc_exp_tunable(..., 32)

struct Pair {
  Place dst, src;
};

// Destination and source in the 128-byte aligned layout: addresses divisible
// by 128, same start NPU, the common shape ranges.
Pair aligned_pair(const char* fn, local_addr_t dst, local_addr_t src, const dim4* shape) {
  need(shape, fn, "shape");
  rule_shape(fn, *shape);
  rule_divisible(fn, "dst_addr", dst, 128);
  rule_divisible(fn, "src_addr", src, 128);
  rule_same_npu(fn, "dst_addr", dst, "src_addr", src);
  return {local_place(fn, "dst_addr", dst, dims(*shape), nullptr, 4),
          local_place(fn, "src_addr", src, dims(*shape), nullptr, 4)};
}

// The work tensor: same size and layout as the source, on the same NPU, and
// neither the destination nor the source (the unit overwrites it mid-way).
void work_rules(const char* fn, local_addr_t work, const Pair& io) {
  rule_divisible(fn, "work_addr", work, 128);
  rule_same_npu(fn, "dst_addr", io.dst.addr, "work_addr", work);
  const Place wp = local_place(fn, "work_addr", work, io.src.shape, nullptr, 4);
  rule_no_overlap(fn, "work_addr", wp, "dst_addr", io.dst);
  rule_no_overlap(fn, "work_addr", wp, "src_addr", io.src);
}

std::string element_text(const Dims& s, size_t i, const std::string& value) {
  const int64_t w = static_cast<int64_t>(i) % s.w, h = static_cast<int64_t>(i) / s.w % s.h;
  const int64_t c = static_cast<int64_t>(i) / (s.w * s.h) % s.c;
  const int64_t n = static_cast<int64_t>(i) / (s.w * s.h * s.c);
  return "element (" + std::to_string(n) + ", " + std::to_string(c) + ", " + std::to_string(h) +
         ", " + std::to_string(w) + ") = " + value;
}

// Documented value ranges of source elements (NaN is outside every range):
// warnings. The vendor's C-model runs published softmax kernels whose exp
// sources hold values far outside [-103, 88] in lanes they never store; its
// result there was not measured, npukit computes from the value clamped into
// the range (NaN from the lower end).
void rule_values(const char* fn, const std::vector<float>& v, const Dims& s, float lo, float hi) {
  for (size_t i = 0; i < v.size(); ++i)
    if (!(v[i] >= lo && v[i] <= hi) && warning_due(fn, "src_addr")) {
      char value[32], allowed[64];
      std::snprintf(value, sizeof value, "%.9g", static_cast<double>(v[i]));
      std::snprintf(allowed, sizeof allowed, "elements in [%.1f, %.1f]", static_cast<double>(lo),
                    static_cast<double>(hi));
      warning(fn, "src_addr", element_text(s, i, value), allowed);
      return;
    }
}

void clamp_values(std::vector<float>& v, float lo, float hi) {
  for (float& x : v) x = x >= lo ? (x <= hi ? x : hi) : lo;
}
void clamp_values(std::vector<int32_t>& v, int32_t lo, int32_t hi) {
  for (int32_t& x : v) x = std::min(std::max(x, lo), hi);
}

void rule_values(const char* fn, const std::vector<int32_t>& v, const Dims& s, int32_t lo,
                 int32_t hi) {
  for (size_t i = 0; i < v.size(); ++i)
    if ((v[i] < lo || v[i] > hi) && warning_due(fn, "src_addr")) {
      warning(fn, "src_addr", element_text(s, i, std::to_string(v[i])),
              "elements in " + range_text(lo, hi));
      return;
    }
}

// Which 32-bit elements of a local place (n, c, h, w order) were ever written.
std::vector<bool> written_words(const Place& p) {
  Machine& m = machine();
  std::vector<bool> ok;
  ok.reserve(static_cast<size_t>(p.shape.n * p.shape.c * p.shape.h * p.shape.w));
  for (int64_t n = 0; n < p.shape.n; ++n)
    for (int64_t c = 0; c < p.shape.c; ++c) {
      const uint8_t* f = m.written(0, 0) + (plane(m, p, n, c) - m.local(0, 0));
      for (int64_t h = 0; h < p.shape.h; ++h)
        for (int64_t w = 0; w < p.shape.w; ++w) {
          const uint8_t* e = f + 4 * (h * p.stride.h + w * p.stride.w);
          ok.push_back(e[0] && e[1] && e[2] && e[3]);
        }
    }
  return ok;
}

// A never-written source element (already a warning) is outside the value
// rule: published softmax kernels run exp over tile rows they never loaded
// and never store. npukit computes those lanes from 0 (what the vendor's
// C-model gives for its 0xDEADBEEF there was not measured); the kernel
// never uses them.
template <class T>
void zero_unwritten(std::vector<T>& v, const Place& p) {
  const std::vector<bool> ok = written_words(p);
  for (size_t i = 0; i < v.size(); ++i)
    if (!ok[i]) v[i] = T{0};
}

std::vector<int32_t> as_i32(const std::vector<uint32_t>& w) {
  return {w.begin(), w.end()};  // two's complement reinterpretation
}

Fp32SeriesParams bm1684(int num_series) {
  Fp32SeriesParams p;
  apply_profile(p, Profile::bm1684);
  p.num_series = num_series;
  return p;
}

// exp, sigmoid, tanh (plain and _tunable): source elements in [-103, 88].
void series_with_work(const char* fn, Fp32SeriesOp op, local_addr_t dst, local_addr_t src,
                      local_addr_t work, const dim4* shape, int num_series) {
  const Pair io = aligned_pair(fn, dst, src, shape);
  work_rules(fn, work, io);
  rule_range(fn, "num_series", num_series, 1, 64);
  std::vector<float> x = as_f32(gather_u32(fn, "src_addr", io.src));
  zero_unwritten(x, io.src);
  rule_values(fn, x, io.src.shape, -103.0f, 88.0f);
  clamp_values(x, -103.0f, 88.0f);
  std::vector<float> y(x.size());
  fp32_series(op, x, y, bm1684(num_series));
  scatter_u32(as_u32(y), io.dst);
  const int64_t extra = op == Fp32SeriesOp::exp ? 3 : 6;
  record_cost(bdc_instruction(fn, OpClass::sfu, io.dst, 2 * num_series + extra));
}

}  // namespace

extern "C" {

void okk_bdc_taylor_exp(local_addr_t dst_addr, local_addr_t src_addr, const dim4* shape,
                        int num_series) {
  constexpr const char* fn = "okk_bdc_taylor_exp";
  const Pair io = aligned_pair(fn, dst_addr, src_addr, shape);
  rule_range(fn, "num_series", num_series, 1, 64);
  const std::vector<float> x = as_f32(gather_u32(fn, "src_addr", io.src));
  std::vector<float> y(x.size());
  fp32_series(Fp32SeriesOp::taylor_exp, x, y, bm1684(num_series));
  scatter_u32(as_u32(y), io.dst);
  record_cost(bdc_instruction(fn, OpClass::sfu, io.dst, 2 * num_series));
}

void okk_bdc_lookup_exp(local_addr_t dst_addr, local_addr_t src_addr, const dim4* shape) {
  constexpr const char* fn = "okk_bdc_lookup_exp";
  const Pair io = aligned_pair(fn, dst_addr, src_addr, shape);
  std::vector<int32_t> n = as_i32(gather_u32(fn, "src_addr", io.src));
  zero_unwritten(n, io.src);
  rule_values(fn, n, io.src.shape, -103, 88);
  clamp_values(n, -103, 88);
  std::vector<float> y(n.size());
  for (size_t i = 0; i < n.size(); ++i) y[i] = lookup_exp_f32(n[i]);
  scatter_u32(as_u32(y), io.dst);
  record_cost(bdc_instruction(fn, OpClass::lookup, io.dst));
}

void okk_bdc_exp(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr,
                 const dim4* shape) {
  series_with_work("okk_bdc_exp", Fp32SeriesOp::exp, dst_addr, src_addr, work_addr, shape,
                   kDefaultSeries);
}

void okk_bdc_exp_tunable(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr,
                         const dim4* shape, int num_series) {
  series_with_work("okk_bdc_exp_tunable", Fp32SeriesOp::exp, dst_addr, src_addr, work_addr, shape,
                   num_series);
}

void okk_bdc_sigmoid(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr,
                     const dim4* shape) {
  series_with_work("okk_bdc_sigmoid", Fp32SeriesOp::sigmoid, dst_addr, src_addr, work_addr, shape,
                   kDefaultSeries);
}

void okk_bdc_sigmoid_tunable(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr,
                             const dim4* shape, int num_series) {
  series_with_work("okk_bdc_sigmoid_tunable", Fp32SeriesOp::sigmoid, dst_addr, src_addr, work_addr,
                   shape, num_series);
}

void okk_bdc_tanh(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr,
                  const dim4* shape) {
  series_with_work("okk_bdc_tanh", Fp32SeriesOp::tanh, dst_addr, src_addr, work_addr, shape,
                   kDefaultSeries);
}

void okk_bdc_tanh_tunable(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr,
                          const dim4* shape, int num_series) {
  series_with_work("okk_bdc_tanh_tunable", Fp32SeriesOp::tanh, dst_addr, src_addr, work_addr, shape,
                   num_series);
}

void okk_bdc_fp32_to_int32(local_addr_t dst_addr, local_addr_t src_addr, const dim4* shape) {
  constexpr const char* fn = "okk_bdc_fp32_to_int32";
  const Pair io = aligned_pair(fn, dst_addr, src_addr, shape);
  const std::vector<float> x = as_f32(gather_u32(fn, "src_addr", io.src));
  std::vector<int32_t> y(x.size());
  fp32_floor_to_int32(x, y, true);
  scatter_u32({y.begin(), y.end()}, io.dst);
  record_cost(bdc_instruction(fn, OpClass::cast, io.dst));
}

void okk_bdc_lookup_int32_to_fp32(local_addr_t dst_addr, local_addr_t src_addr, const dim4* shape) {
  constexpr const char* fn = "okk_bdc_lookup_int32_to_fp32";
  const Pair io = aligned_pair(fn, dst_addr, src_addr, shape);
  std::vector<int32_t> x = as_i32(gather_u32(fn, "src_addr", io.src));
  zero_unwritten(x, io.src);
  rule_values(fn, x, io.src.shape, -128, 127);
  std::vector<float> y(x.size());
  lookup_int8_to_f32(x, y);
  scatter_u32(as_u32(y), io.dst);
  record_cost(bdc_instruction(fn, OpClass::lookup, io.dst));
}

}  // extern "C"
