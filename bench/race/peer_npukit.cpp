// npukit through its public API, NCHW and NHWC: whatever kernels the library
// dispatches to (fast ones when they land, the reference otherwise).
#include <memory>

#include "npukit/kernels.hpp"
#include "npukit/ops/pool2d.hpp"
#include "npukit/ops/quantized.hpp"
#include "npukit/parallel.hpp"
#include "race.hpp"

namespace race {

namespace {

npukit::Window2d window_of(const Problem& p) {
  npukit::Window2d w;
  w.kernel_h = w.kernel_w = p.global ? p.h : p.kernel;
  w.stride_h = w.stride_w = p.global ? 1 : p.stride;
  w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = p.global ? 0 : p.pad;
  return w;
}

}  // namespace

void npukit_compute(const Case& c, const npukit::TensorView& x, const npukit::TensorView& y,
                    npukit::Profile profile) {
  const bool include_pad = c.op != Op::avg_exclude_pad;
  if (c.dtype == npukit::DType::f32 || c.op == Op::max) {
    if (c.problem.global && profile == npukit::Profile::onnxruntime) {
      // ONNX GlobalAveragePool / GlobalMaxPool.
      npukit::global_pool2d(x, y, c.op == Op::max ? npukit::PoolMode::max : npukit::PoolMode::avg);
      return;
    }
    npukit::Pool2dParams p;
    p.mode = c.op == Op::max ? npukit::PoolMode::max : npukit::PoolMode::avg;
    p.window = window_of(c.problem);
    p.count_include_pad = include_pad;
    npukit::apply_profile(p, profile);
    npukit::pool2d(x, y, p);
    return;
  }
  npukit::QLinearAvgPoolParams q;
  q.window = window_of(c.problem);
  q.count_include_pad = include_pad;
  const Quant quant = quant_of(c);
  q.x_scale = quant.x_scale;
  q.y_scale = quant.y_scale;
  q.x_zero_point = quant.x_zero_point;
  q.y_zero_point = quant.y_zero_point;
  npukit::apply_profile(q, profile);
  if (c.problem.global && profile == npukit::Profile::onnxruntime)
    npukit::qlinear_global_average_pool(x, y, q);  // com.microsoft.QLinearGlobalAveragePool
  else
    npukit::qlinear_average_pool(x, y, q);
}

std::vector<float> reference_output(const Case& c, const npukit::Tensor& x,
                                    npukit::Profile profile) {
  const npukit::Impl saved = npukit::impl();
  npukit::set_impl(npukit::Impl::reference);
  npukit::Tensor y(c.dtype, c.out_shape(), x.layout());
  try {
    npukit_compute(c, x.view(), y.view(), profile);
  } catch (...) {
    npukit::set_impl(saved);
    throw;
  }
  npukit::set_impl(saved);
  return logical_values(y.view());
}

std::vector<Peer> npukit_peers() {
  std::vector<Peer> peers;
  for (npukit::Layout layout : {npukit::Layout::nchw, npukit::Layout::nhwc}) {
    Peer p;
    p.name = "npukit";
    p.layout = npukit::layout_name(layout);
    p.semantics = "onnxruntime";
    p.prepare = [layout](const Case& c, const npukit::Tensor& input, int threads, Prepared& out,
                         std::string&) {
      auto x = std::make_shared<npukit::Tensor>(relayout(input, layout));
      auto y = std::make_shared<npukit::Tensor>(c.dtype, c.out_shape(), layout);
      npukit::set_num_threads(threads);
      out.run = [c, x, y] {
        npukit_compute(c, x->view(), y->view(), npukit::Profile::onnxruntime);
      };
      out.output = [y] { return logical_values(y->view()); };
      return true;
    };
    peers.push_back(std::move(p));
  }
  return peers;
}

}  // namespace race
