// XNNPACK (Debian libxnnpack-dev): its NHWC pooling operators, threaded by a
// pthreadpool of the requested size. Cases whose divisor rule XNNPACK does not
// offer, and s8 averages over windows (absent in this version), are declined.
#include <xnnpack.h>

#include <cmath>
#include <memory>

#include "race.hpp"

namespace race {

namespace {

struct XnnRun {
  xnn_operator_t op = nullptr;
  pthreadpool_t pool = nullptr;
  std::shared_ptr<npukit::Tensor> x, y;
  ~XnnRun() {
    if (op) xnn_delete_operator(op);
    if (pool) pthreadpool_destroy(pool);
  }
};

bool initialized(std::string& why) {
  static const xnn_status status = xnn_initialize(nullptr);
  if (status != xnn_status_success) why = "xnn_initialize failed: status " + std::to_string(status);
  return status == xnn_status_success;
}

// Creates and sets up the operator for case `c` on NHWC x and y.
xnn_status create(const Case& c, XnnRun& r, std::string& why) {
  const Problem& p = c.problem;
  const auto k = static_cast<uint32_t>(p.global ? p.h : p.kernel);
  const auto s = static_cast<uint32_t>(p.global ? 1 : p.stride);
  const auto pad = static_cast<uint32_t>(p.global ? 0 : p.pad);
  const auto C = static_cast<size_t>(p.c), N = static_cast<size_t>(p.n);
  const auto H = static_cast<size_t>(p.h), W = static_cast<size_t>(p.w);
  const float inf = INFINITY;
  void* x = r.x->view().raw();
  void* y = r.y->view().raw();
  xnn_status st = xnn_status_success;
  if (c.op == Op::max) {
    switch (c.dtype) {
      case npukit::DType::f32:
        st = xnn_create_max_pooling2d_nhwc_f32(pad, pad, pad, pad, k, k, s, s, 1, 1, C, C, C, -inf,
                                               inf, 0, &r.op);
        if (st == xnn_status_success)
          st = xnn_setup_max_pooling2d_nhwc_f32(r.op, N, H, W, static_cast<const float*>(x),
                                                static_cast<float*>(y), r.pool);
        return st;
      case npukit::DType::u8:
        st = xnn_create_max_pooling2d_nhwc_u8(pad, pad, pad, pad, k, k, s, s, 1, 1, C, C, C, 0, 255,
                                              0, &r.op);
        if (st == xnn_status_success)
          st = xnn_setup_max_pooling2d_nhwc_u8(r.op, N, H, W, static_cast<const uint8_t*>(x),
                                               static_cast<uint8_t*>(y), r.pool);
        return st;
      default:
        st = xnn_create_max_pooling2d_nhwc_s8(pad, pad, pad, pad, k, k, s, s, 1, 1, C, C, C, -128,
                                              127, 0, &r.op);
        if (st == xnn_status_success)
          st = xnn_setup_max_pooling2d_nhwc_s8(r.op, N, H, W, static_cast<const int8_t*>(x),
                                               static_cast<int8_t*>(y), r.pool);
        return st;
    }
  }
  // With padding, XNNPACK's f32 average divides by the taps on the input (exclude
  // padding) while its qu8 average divides by the kernel area (padding counted as
  // the zero point), as measured against npukit's reference on this harness's cases.
  if (pad > 0 && c.dtype == npukit::DType::f32 && c.op == Op::avg_include_pad) {
    why = "XNNPACK's f32 average excludes padding from the divisor";
    return xnn_status_unsupported_parameter;
  }
  if (pad > 0 && c.dtype == npukit::DType::u8 && c.op == Op::avg_exclude_pad) {
    why = "XNNPACK's qu8 average includes padding in the divisor";
    return xnn_status_unsupported_parameter;
  }
  const Quant q = quant_of(c);
  const auto qxzp = static_cast<uint8_t>(q.x_zero_point),
             qyzp = static_cast<uint8_t>(q.y_zero_point);
  if (p.global) {
    switch (c.dtype) {
      case npukit::DType::f32:
        st = xnn_create_global_average_pooling_nwc_f32(C, C, C, -inf, inf, 0, &r.op);
        if (st == xnn_status_success)
          st = xnn_setup_global_average_pooling_nwc_f32(
              r.op, N, H * W, static_cast<const float*>(x), static_cast<float*>(y), r.pool);
        return st;
      case npukit::DType::u8:
        st = xnn_create_global_average_pooling_nwc_qu8(C, C, C, qxzp, q.x_scale, qyzp, q.y_scale, 0,
                                                       255, 0, &r.op);
        if (st == xnn_status_success)
          st = xnn_setup_global_average_pooling_nwc_qu8(
              r.op, N, H * W, static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), r.pool);
        return st;
      default:
        st = xnn_create_global_average_pooling_nwc_qs8(
            C, C, C, static_cast<int8_t>(q.x_zero_point), q.x_scale,
            static_cast<int8_t>(q.y_zero_point), q.y_scale, -128, 127, 0, &r.op);
        if (st == xnn_status_success)
          st = xnn_setup_global_average_pooling_nwc_qs8(
              r.op, N, H * W, static_cast<const int8_t*>(x), static_cast<int8_t*>(y), r.pool);
        return st;
    }
  }
  switch (c.dtype) {
    case npukit::DType::f32:
      st = xnn_create_average_pooling2d_nhwc_f32(pad, pad, pad, pad, k, k, s, s, C, C, C, -inf, inf,
                                                 0, &r.op);
      if (st == xnn_status_success)
        st = xnn_setup_average_pooling2d_nhwc_f32(r.op, N, H, W, static_cast<const float*>(x),
                                                  static_cast<float*>(y), r.pool);
      return st;
    case npukit::DType::u8:
      st = xnn_create_average_pooling2d_nhwc_qu8(pad, pad, pad, pad, k, k, s, s, C, C, C, qxzp,
                                                 q.x_scale, qyzp, q.y_scale, 0, 255, 0, &r.op);
      if (st == xnn_status_success)
        st = xnn_setup_average_pooling2d_nhwc_qu8(r.op, N, H, W, static_cast<const uint8_t*>(x),
                                                  static_cast<uint8_t*>(y), r.pool);
      return st;
    default:
      why = "this XNNPACK has no s8 average pooling over windows";
      return xnn_status_unsupported_parameter;
  }
}

}  // namespace

bool xnnpack_built() {
  return true;
}

std::vector<Peer> xnnpack_peers() {
  Peer p;
  p.name = "XNNPACK";
  p.layout = "nhwc";
  p.semantics = "onnxruntime";
  p.prepare = [](const Case& c, const npukit::Tensor& input, int threads, Prepared& out,
                 std::string& why) {
    if (!initialized(why)) return false;
    auto r = std::make_shared<XnnRun>();
    r->x = std::make_shared<npukit::Tensor>(relayout(input, npukit::Layout::nhwc));
    r->y = std::make_shared<npukit::Tensor>(c.dtype, c.out_shape(), npukit::Layout::nhwc);
    if (threads > 1) r->pool = pthreadpool_create(static_cast<size_t>(threads));
    const xnn_status st = create(c, *r, why);
    if (st != xnn_status_success) {
      if (why.empty()) why = "XNNPACK declined the operator (status " + std::to_string(st) + ")";
      return false;
    }
    out.run = [r] {
      const xnn_status s = xnn_run_operator(r->op, r->pool);
      if (s != xnn_status_success)
        npukit::fail("xnn_run_operator", "status", std::to_string(s), "xnn_status_success");
    };
    out.output = [r] { return logical_values(r->y->view()); };
    return true;
  };
  return {p};
}

}  // namespace race
