// oneDNN (Debian libdnnl-dev, OpenMP runtime): one pooling primitive per case,
// NCHW and NHWC, threads set with omp_set_num_threads.
#include <omp.h>

#include <dnnl.hpp>
#include <memory>

#include "race.hpp"

namespace race {

namespace {

dnnl::memory::data_type data_type_of(npukit::DType t) {
  switch (t) {
    case npukit::DType::u8:
      return dnnl::memory::data_type::u8;
    case npukit::DType::s8:
      return dnnl::memory::data_type::s8;
    default:
      return dnnl::memory::data_type::f32;
  }
}

dnnl::algorithm algorithm_of(Op op) {
  switch (op) {
    case Op::avg_include_pad:
      return dnnl::algorithm::pooling_avg_include_padding;
    case Op::avg_exclude_pad:
      return dnnl::algorithm::pooling_avg_exclude_padding;
    default:
      return dnnl::algorithm::pooling_max;
  }
}

struct DnnlRun {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::pooling_forward prim;
  dnnl::memory src, dst;
  std::shared_ptr<npukit::Tensor> x, y;
};

}  // namespace

bool onednn_built() {
  return true;
}

std::vector<Peer> onednn_peers() {
  std::vector<Peer> peers;
  for (npukit::Layout layout : {npukit::Layout::nchw, npukit::Layout::nhwc}) {
    Peer p;
    p.name = "oneDNN";
    p.layout = npukit::layout_name(layout);
    p.semantics = "onnxruntime";
    p.prepare = [layout](const Case& c, const npukit::Tensor& input, int threads, Prepared& out,
                         std::string& why) {
      const Problem& pr = c.problem;
      if (c.op == Op::avg_calibrated) {
        why = "oneDNN's pooling has no scales or zero points";
        return false;
      }
      const int64_t k = pr.global ? pr.h : pr.kernel, s = pr.global ? 1 : pr.stride,
                    pad = pr.global ? 0 : pr.pad;
      const auto tag = layout == npukit::Layout::nchw ? dnnl::memory::format_tag::nchw
                                                      : dnnl::memory::format_tag::nhwc;
      try {
        auto r = std::make_shared<DnnlRun>();
        r->x = std::make_shared<npukit::Tensor>(relayout(input, layout));
        r->y = std::make_shared<npukit::Tensor>(c.dtype, c.out_shape(), layout);
        const dnnl::memory::desc src_md(c.in_shape(), data_type_of(c.dtype), tag);
        const dnnl::memory::desc dst_md(c.out_shape(), data_type_of(c.dtype), tag);
        const dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, algorithm_of(c.op),
                                            src_md, dst_md, {s, s}, {k, k}, {pad, pad}, {pad, pad});
        const dnnl::pooling_forward::primitive_desc pd(d, r->engine);
        r->prim = dnnl::pooling_forward(pd);
        r->src = dnnl::memory(src_md, r->engine, r->x->view().raw());
        r->dst = dnnl::memory(dst_md, r->engine, r->y->view().raw());
        out.detail = pd.impl_info_str();
        omp_set_num_threads(threads);
        out.run = [r] {
          r->prim.execute(r->stream, {{DNNL_ARG_SRC, r->src}, {DNNL_ARG_DST, r->dst}});
          r->stream.wait();
        };
        out.output = [r] { return logical_values(r->y->view()); };
        return true;
      } catch (const dnnl::error& e) {
        why = std::string("oneDNN declined: ") + e.what();
        return false;
      }
    };
    peers.push_back(std::move(p));
  }
  return peers;
}

}  // namespace race
