// NPU-related operators: the BM168x quantized pooling of the operator core.
#include "arrays.hpp"
#include "checked_def.hpp"
#include "npukit/ops/bm_pool_quantized.hpp"

namespace npukit::python {

namespace {
std::pair<int64_t, int64_t> pair_arg(const std::vector<int64_t>& v, const char* fn,
                                     const char* name) {
  check(v.size() == 2, fn, name, std::to_string(v.size()) + " values", "2 values (h, w)");
  return {v[0], v[1]};
}
}  // namespace

void bind_npu(py::module_& m) {
  def_checked(
      m, "bm_pool_quantized",
      [](const py::object& xo, const std::string& mode, const std::vector<int64_t>& kernel,
         const std::vector<int64_t>& stride, const std::vector<int64_t>& pad,
         const std::vector<int64_t>& ins, const std::vector<int64_t>& dilation, int rshift,
         bool relu) {
        constexpr const char* fn = "npukit.bm_pool_quantized";
        py::array x = as_tensor(xo, fn, "x");
        BmPoolQuantParams p;
        if (mode == "avg")
          p.mode = QuantPoolMode::avg;
        else if (mode == "max")
          p.mode = QuantPoolMode::max;
        else
          fail(fn, "mode", "'" + mode + "'", "avg or max");
        std::tie(p.window.kernel_h, p.window.kernel_w) = pair_arg(kernel, fn, "kernel");
        std::tie(p.window.stride_h, p.window.stride_w) = pair_arg(stride, fn, "stride");
        std::tie(p.window.ins_h, p.window.ins_w) = pair_arg(ins, fn, "ins");
        std::tie(p.window.dilation_h, p.window.dilation_w) = pair_arg(dilation, fn, "dilation");
        check(pad.size() == 4, fn, "pad", std::to_string(pad.size()) + " values",
              "4 values (top, bottom, left, right)");
        p.window.pad_top = pad[0];
        p.window.pad_bottom = pad[1];
        p.window.pad_left = pad[2];
        p.window.pad_right = pad[3];
        p.rshift = rshift;
        p.relu = relu;
        TensorView xv = view_of(x);
        py::array y = new_array(xv.dtype(), bm_pool_quantized_output_shape(xv.shape(), p));
        bm_pool_quantized(xv, view_of(y), p);
        return y;
      },
      py::arg("x"), py::kw_only(), py::arg("mode") = "avg", py::arg("kernel"),
      py::arg("stride") = std::vector<int64_t>{1, 1},
      py::arg("pad") = std::vector<int64_t>{0, 0, 0, 0},
      py::arg("ins") = std::vector<int64_t>{0, 0}, py::arg("dilation") = std::vector<int64_t>{1, 1},
      py::arg("rshift") = 0, py::arg("relu") = false,
      "BM168x bm_atomic_{avg,max}_pool_quantized on an (N, C, H, W) int8 (input_sign) or uint8 "
      "array: y = saturate((r + 2^(rshift-1)) >> rshift) with r the window sum (avg) or maximum "
      "(max); max pads with the type's lowest "
      "value; pad = (top, bottom, left, right); ins = zeros inserted between rows/columns.");
}

}  // namespace npukit::python
