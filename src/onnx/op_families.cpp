#include "onnx/op_families.hpp"

#include <map>
#include <utility>

#include "npukit/error.hpp"
#include "onnx/attributes.hpp"
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

std::string runner_gap(const Node& n, Profile profile) {
  const bool conv = (n.domain.empty() || n.domain == "ai.onnx") && n.op_type == "Conv";
  const bool fused_conv = n.domain == "com.microsoft" && n.op_type == "FusedConv";
  if ((conv || fused_conv) && semantics_base(profile) == Profile::bm1684) {
    const int64_t group = attr_int(n, "group", 1);
    if (group != 1)
      return "bm1684 covers dense convolutions (group = 1), not group = " + std::to_string(group) +
             ": the runner does not model okk_bdc_depthwise2d's accumulation";
  }
  return {};
}

Profile node_semantics(const Node& n, Profile profile, bool fallback) {
  const std::optional<OpFamily> family = op_family_of(n.domain, n.op_type);
  if (!family)  // every operator of the runner's tables has one (op_family_of)
    fail(n.op_type, "op_type", n.op_type, "an operator of the profile table's families");
  if (!supports(*family, profile)) {
    if (!fallback) expect_supported(*family, profile, n.op_type.c_str());
    return Profile::onnxruntime;
  }
  if (const std::string gap = runner_gap(n, profile); !gap.empty()) {
    if (!fallback)
      fail(n.op_type, "profile", profile_name(profile),
           std::string("a profile other than ") + profile_name(profile) + " for this node (" + gap +
               ")");
    return Profile::onnxruntime;
  }
  return profile;
}

}  // namespace npukit::onnx
