#include "onnx/op_families.hpp"

#include <map>
#include <utility>

#include "onnx/graph.hpp"

namespace npukit::onnx {

std::optional<OpFamily> op_family_of(const std::string& domain, const std::string& op_type) {
  using K = std::pair<std::string, std::string>;
  static const std::map<K, OpFamily> families = {
      {{"", "Relu"}, OpFamily::elementwise},
      {{"", "Add"}, OpFamily::binary},
      {{"", "Mul"}, OpFamily::binary},
      {{"", "Clip"}, OpFamily::clip},
      {{"", "BatchNormalization"}, OpFamily::batch_norm},
      {{"", "Softmax"}, OpFamily::softmax},
      {{"", "DequantizeLinear"}, OpFamily::dequantize_linear},
      {{"", "MaxPool"}, OpFamily::pool2d},
      {{"", "AveragePool"}, OpFamily::pool2d},
      {{"", "GlobalMaxPool"}, OpFamily::pool2d},
      {{"", "GlobalAveragePool"}, OpFamily::pool2d},
      {{"", "Conv"}, OpFamily::conv2d},
      {{"com.microsoft", "FusedConv"}, OpFamily::conv2d},
      {{"", "Gemm"}, OpFamily::gemm},
      {{"", "MatMul"}, OpFamily::gemm},
      {{"", "QuantizeLinear"}, OpFamily::quantize_linear},
      {{"", "QLinearConv"}, OpFamily::qlinear_conv},
      {{"", "ConvInteger"}, OpFamily::qlinear_conv},
      {{"", "QLinearMatMul"}, OpFamily::qlinear_matmul},
      {{"", "MatMulInteger"}, OpFamily::matmul_integer},
      {{"com.microsoft", "QLinearAdd"}, OpFamily::qlinear_add},
      {{"com.microsoft", "QLinearAveragePool"}, OpFamily::qlinear_average_pool},
      {{"com.microsoft", "QLinearGlobalAveragePool"}, OpFamily::qlinear_average_pool},
      {{"com.microsoft", "QLinearMul"}, OpFamily::qlinear_mul},
      {{"com.microsoft", "QLinearSigmoid"}, OpFamily::qlinear_lookup},
      {{"com.microsoft", "QLinearLeakyRelu"}, OpFamily::qlinear_lookup},
      {{"com.microsoft", "QLinearConcat"}, OpFamily::qlinear_lookup},
      {{"com.microsoft", "QGemm"}, OpFamily::qgemm},
      {{"", "ConvTranspose"}, OpFamily::conv_transpose},
      {{"", "Resize"}, OpFamily::resize},
      {{"", "LayerNormalization"}, OpFamily::layer_norm},
  };
  const std::string d = domain == "ai.onnx" ? "" : domain;
  if (const auto it = families.find({d, op_type}); it != families.end()) return it->second;
  // The rest of ops_math.cpp's table: reductions, else float math (so a new
  // operator there joins its family without an edit here).
  for (const OpEntry& e : math_ops())
    if (d == e.domain && op_type == e.op_type)
      return op_type.rfind("Reduce", 0) == 0 ? OpFamily::reduce : OpFamily::float_math;
  if (is_data_movement_op(domain, op_type)) return OpFamily::data_movement;
  return std::nullopt;
}

}  // namespace npukit::onnx
