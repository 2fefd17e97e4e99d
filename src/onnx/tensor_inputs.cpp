#include "onnx/tensor_inputs.hpp"

#include "npukit/error.hpp"
#include "onnx/attributes.hpp"

namespace npukit::onnx {

std::vector<int64_t> known_ints(const PlanContext& c, size_t i, const char* what) {
  const Constant& k = constant_input(c, i, what);
  check(k.elem == Elem::s64 || k.elem == Elem::s32, c.node.op_type.c_str(), what, elem_name(k.elem),
        "int64 or int32");
  if (k.elem == Elem::s64) return k.tensor.to_vector<int64_t>();
  const std::vector<int32_t> v = k.tensor.to_vector<int32_t>();
  return {v.begin(), v.end()};
}

void copy_as_output_shape(const std::vector<TensorView>& in, const std::vector<TensorView>& out) {
  copy(TensorView::contiguous(in[0].raw(), in[0].dtype(), out[0].shape()), out[0]);
}

}  // namespace npukit::onnx
