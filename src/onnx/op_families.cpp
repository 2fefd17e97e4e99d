#include "onnx/op_families.hpp"

#include <map>
#include <utility>

namespace npukit::onnx {

std::optional<OpFamily> op_family_of(const std::string& domain, const std::string& op_type) {
  using K = std::pair<std::string, std::string>;
  static const std::map<K, OpFamily> families = {
      {{"", "Relu"}, OpFamily::elementwise},
      {{"", "MaxPool"}, OpFamily::pool2d},
      {{"", "AveragePool"}, OpFamily::pool2d},
      {{"", "GlobalMaxPool"}, OpFamily::pool2d},
      {{"", "GlobalAveragePool"}, OpFamily::pool2d},
      {{"", "Conv"}, OpFamily::conv2d},
      {{"com.microsoft", "FusedConv"}, OpFamily::conv2d},
      {{"", "Gemm"}, OpFamily::matmul},
      {{"", "MatMul"}, OpFamily::matmul},
      {{"", "QuantizeLinear"}, OpFamily::quantize_linear},
      {{"", "QLinearConv"}, OpFamily::qlinear_conv},
      {{"", "ConvInteger"}, OpFamily::qlinear_conv},
      {{"", "QLinearMatMul"}, OpFamily::qlinear_matmul},
      {{"", "MatMulInteger"}, OpFamily::matmul_integer},
      {{"com.microsoft", "QLinearAdd"}, OpFamily::qlinear_add},
      {{"com.microsoft", "QLinearAveragePool"}, OpFamily::qlinear_average_pool},
      {{"com.microsoft", "QLinearGlobalAveragePool"}, OpFamily::qlinear_average_pool},
  };
  const auto it = families.find({domain == "ai.onnx" ? "" : domain, op_type});
  if (it == families.end()) return std::nullopt;
  return it->second;
}

}  // namespace npukit::onnx
