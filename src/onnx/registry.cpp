#include <string>
#include <vector>

#include "onnx/graph.hpp"

namespace npukit::onnx {

namespace {
// Every operator table, searched in this order.
const std::vector<const std::vector<OpEntry>*>& op_tables() {
  static const std::vector<const std::vector<OpEntry>*> tables = {
      &fp32_ops(), &shape_ops(),  &quant_ops(), &quant_extra_ops(),
      &math_ops(), &tensor_ops(), &index_ops(), &deconv_ops()};
  return tables;
}
}  // namespace

const OpEntry* find_op(const std::string& domain, const std::string& op_type) {
  const std::string d = domain == "ai.onnx" ? "" : domain;
  for (const auto* table : op_tables())
    for (const OpEntry& e : *table)
      if (d == e.domain && op_type == e.op_type) return &e;
  return nullptr;
}

bool is_data_movement_op(const std::string& domain, const std::string& op_type) {
  if (!(domain.empty() || domain == "ai.onnx")) return false;
  for (const auto* table : {&shape_ops(), &tensor_ops(), &index_ops()})
    for (const OpEntry& e : *table)
      if (op_type == e.op_type) return true;
  return false;
}

bool accepts_any_rank(const std::string& domain, const std::string& op_type) {
  if (is_data_movement_op(domain, op_type)) return true;
  if (!(domain.empty() || domain == "ai.onnx")) return false;
  static const char* const elementwise[] = {
      "Add",     "Mul",     "Sub",        "Div",  "Pow",         "Min",        "Max",
      "Sigmoid", "Tanh",    "Erf",        "Gelu", "HardSigmoid", "HardSwish",  "LeakyRelu",
      "Sqrt",    "Exp",     "Log",        "Neg",  "Abs",         "Reciprocal", "Dropout",
      "Einsum",  "Softmax", "LogSoftmax", "Relu", "Clip"};
  for (const char* op : elementwise)
    if (op_type == op) return true;
  return false;
}

std::shared_ptr<Constant> constant_from(Tensor t) {
  auto k = std::make_shared<Constant>();
  k->elem = elem_of(t.dtype());
  k->shape = t.shape();
  if (t.dtype() == DType::s64) k->ints = t.to_vector<int64_t>();
  k->tensor = std::move(t);
  return k;
}

std::vector<std::string> supported_operators() {
  std::vector<std::string> out;
  for (const auto* table : op_tables())
    for (const OpEntry& e : *table)
      out.push_back(std::string(e.domain).empty() ? e.op_type
                                                  : std::string(e.domain) + "." + e.op_type);
  return out;
}

const char* elem_name(Elem e) {
  switch (e) {
    case Elem::f32:
      return "float";
    case Elem::u8:
      return "uint8";
    case Elem::s8:
      return "int8";
    case Elem::s32:
      return "int32";
    case Elem::s64:
      return "int64";
    case Elem::b8:
      return "bool";
  }
  return "invalid";
}

std::optional<Elem> elem_from_onnx(int32_t t) {
  switch (t) {
    case 1:
      return Elem::f32;
    case 2:
      return Elem::u8;
    case 3:
      return Elem::s8;
    case 6:
      return Elem::s32;
    case 7:
      return Elem::s64;
    case 9:
      return Elem::b8;
    default:
      return std::nullopt;
  }
}

std::string onnx_type_name(int32_t t) {
  static const char* names[] = {
      "undefined",      "float",      "uint8",          "int8",       "uint16",   "int16",
      "int32",          "int64",      "string",         "bool",       "float16",  "double",
      "uint32",         "uint64",     "complex64",      "complex128", "bfloat16", "float8e4m3fn",
      "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4",      "int4"};
  if (t >= 0 && t < static_cast<int32_t>(sizeof(names) / sizeof(names[0]))) return names[t];
  return "type " + std::to_string(t);
}

std::optional<DType> dtype_of(Elem e) {
  switch (e) {
    case Elem::f32:
      return DType::f32;
    case Elem::u8:
      return DType::u8;
    case Elem::s8:
      return DType::s8;
    case Elem::s32:
      return DType::s32;
    case Elem::s64:
      return DType::s64;
    case Elem::b8:
      return DType::b8;
  }
  return std::nullopt;
}

Elem elem_of(DType t) {
  switch (t) {
    case DType::u8:
      return Elem::u8;
    case DType::s8:
      return Elem::s8;
    case DType::s32:
      return Elem::s32;
    case DType::s64:
      return Elem::s64;
    case DType::b8:
      return Elem::b8;
    default:
      return Elem::f32;
  }
}

}  // namespace npukit::onnx
