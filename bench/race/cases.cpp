// The problems of issue #9 and their inputs (fixed seeds, so that every run
// and every script sees the same data).
#include <fmt/core.h>

#include <random>

#include "race.hpp"

namespace race {

const char* op_name(Op op) {
  switch (op) {
    case Op::avg_include_pad:
      return "avg incl pad";
    case Op::avg_exclude_pad:
      return "avg excl pad";
    case Op::max:
      return "max";
    case Op::avg_calibrated:
      return "avg calibrated";
  }
  return "?";
}

std::string Case::id() const {
  const char* o = op == Op::avg_include_pad   ? "avgincl"
                  : op == Op::avg_exclude_pad ? "avgexcl"
                  : op == Op::avg_calibrated  ? "avgcal"
                                              : "max";
  return fmt::format("p{}-{}-{}", problem_index, npukit::dtype_name(dtype), o);
}

int64_t Case::bytes() const {
  const auto esize = static_cast<int64_t>(npukit::dtype_size(dtype));
  return (npukit::shape_numel(in_shape()) + npukit::shape_numel(out_shape())) * esize;
}

Quant quant_of(const Case& c) {
  Quant q;
  if (c.op != Op::avg_calibrated) return q;
  const bool s8 = c.dtype == npukit::DType::s8;
  q.x_scale = 0.0235f;
  q.y_scale = 0.0198f;
  q.x_zero_point = s8 ? -3 : 121;
  q.y_zero_point = s8 ? 5 : 117;
  return q;
}

std::vector<Problem> problems() {
  auto window = [](std::string label, int64_t n, int64_t c, int64_t hw, int64_t k, int64_t s,
                   int64_t p) {
    Problem r;
    r.label = std::move(label);
    r.n = n, r.c = c, r.h = r.w = hw;
    r.kernel = k, r.stride = s, r.pad = p;
    return r;
  };
  Problem global = window("global 1x2048x7x7", 1, 2048, 7, 7, 1, 0);
  global.global = true;
  std::vector<Problem> ps{
      window("1x64x112x112 k3s2p1", 1, 64, 112, 3, 2, 1),
      window("1x256x56x56 k2s2", 1, 256, 56, 2, 2, 0),
      window("1x512x14x14 k3s1p1", 1, 512, 14, 3, 1, 1),
      global,
      window("8x256x56x56 k2s2", 8, 256, 56, 2, 2, 0),
      window("1x128x56x56 k2s2 (MiCo)", 1, 128, 56, 2, 2, 0),
  };
  for (size_t i = 0; i < ps.size(); ++i) ps[i].index = static_cast<int>(i);
  return ps;
}

std::vector<Case> cases(const std::vector<Problem>& ps) {
  std::vector<Case> out;
  for (size_t i = 0; i < ps.size(); ++i) {
    for (npukit::DType dt : {npukit::DType::f32, npukit::DType::u8, npukit::DType::s8}) {
      std::vector<Op> ops{Op::avg_include_pad};
      if (ps[i].pad > 0) ops.push_back(Op::avg_exclude_pad);
      if (dt != npukit::DType::f32) ops.push_back(Op::avg_calibrated);
      ops.push_back(Op::max);
      for (Op op : ops) {
        Case c;
        c.problem_index = ps[i].index;
        c.problem = ps[i];
        c.dtype = dt;
        c.op = op;
        out.push_back(c);
      }
    }
  }
  return out;
}

npukit::Tensor make_input(const Problem& p, int problem_index, npukit::DType dtype,
                          npukit::Layout layout) {
  const npukit::Shape shape{p.n, p.c, p.h, p.w};
  npukit::Tensor t(dtype, shape, npukit::Layout::nchw);
  // One seed per (problem, dtype): the same bytes on every run.
  std::mt19937 rng(20260909u + 16u * static_cast<unsigned>(problem_index) +
                   static_cast<unsigned>(dtype));
  const int64_t count = t.numel();
  if (dtype == npukit::DType::f32) {
    std::normal_distribution<float> dist(0.0f, 1.0f);
    float* d = t.data<float>();
    for (int64_t i = 0; i < count; ++i) d[i] = dist(rng);
  } else {
    std::uniform_int_distribution<int> dist(0, 255);
    auto* d = static_cast<uint8_t*>(t.view().raw());
    for (int64_t i = 0; i < count; ++i) d[i] = static_cast<uint8_t>(dist(rng));
  }
  return layout == npukit::Layout::nchw ? t : relayout(t, layout);
}

npukit::Tensor relayout(const npukit::Tensor& t, npukit::Layout layout) {
  npukit::Tensor r(t.dtype(), t.shape(), layout);
  npukit::copy(t.view(), r.view());
  return r;
}

std::vector<float> logical_values(const npukit::TensorView& t) {
  std::vector<float> out;
  out.reserve(static_cast<size_t>(t.numel()));
  for (int64_t n = 0; n < t.dim(0); ++n)
    for (int64_t c = 0; c < t.dim(1); ++c)
      for (int64_t h = 0; h < t.dim(2); ++h)
        for (int64_t w = 0; w < t.dim(3); ++w) switch (t.dtype()) {
            case npukit::DType::f32:
              out.push_back(t.at<float>(n, c, h, w));
              break;
            case npukit::DType::u8:
              out.push_back(static_cast<float>(t.at<uint8_t>(n, c, h, w)));
              break;
            case npukit::DType::s8:
              out.push_back(static_cast<float>(t.at<int8_t>(n, c, h, w)));
              break;
            default:
              npukit::fail("race::logical_values", "dtype", npukit::dtype_name(t.dtype()),
                           "f32, u8 or s8");
          }
  return out;
}

}  // namespace race
