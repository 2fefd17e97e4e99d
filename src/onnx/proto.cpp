#include <cstring>
#include <limits>

#include <onnx/onnx_pb.h>

#include "npukit/error.hpp"
#include "npukit/memory_budget.hpp"
#include "onnx/external_data.hpp"
#include "onnx/loaded.hpp"

namespace npukit::onnx {

namespace {

namespace pb = ::onnx;

// Raw bool bytes other than 0 and 1 read as true.
std::shared_ptr<Constant> finish_constant(Tensor data, Elem elem) {
  if (elem == Elem::b8) {
    auto* b = static_cast<uint8_t*>(data.view().raw());
    for (int64_t i = 0; i < data.view().numel(); ++i) b[i] = b[i] != 0;
  }
  return constant_from(std::move(data));
}

// Reads the bytes of an EXTERNAL tensor straight into its Tensor (no second
// copy: these are the models over 2 GB). `model_dir` is null for a model
// given as bytes, which has no directory to read from.
std::shared_ptr<Constant> read_external(const pb::TensorProto& t, Elem elem, const Shape& shape,
                                        size_t bytes, const std::string* model_dir,
                                        std::string& why) {
  ExternalEntries entries;
  for (const auto& kv : t.external_data()) entries.emplace_back(kv.key(), kv.value());
  if (!model_dir) {
    why =
        "its data is stored in an external file, which a model given as bytes cannot reach "
        "(load the model from its path)";
    return nullptr;
  }
  check_allocation("npukit::onnx::Model::load", "model",
                   "initializer '" + t.name() + "' " + shape_text(shape), bytes, 1);
  Tensor data(*dtype_of(elem), shape);
  why = read_external_data(entries, *model_dir, data.view().raw(), bytes);
  if (!why.empty()) return nullptr;
  return finish_constant(std::move(data), elem);
}

// Reads a TensorProto; returns null and sets `why` when it cannot be used.
std::shared_ptr<Constant> read_tensor(const pb::TensorProto& t, const std::string* model_dir,
                                      std::string& why) {
  auto elem = elem_from_onnx(t.data_type());
  if (!elem) {
    why = "element type " + onnx_type_name(t.data_type()) +
          " is not supported (float, uint8, int8, int32, int64)";
    return nullptr;
  }
  if (t.has_segment()) {
    why = "segmented tensors are not supported";
    return nullptr;
  }
  auto k = std::make_shared<Constant>();
  k->elem = *elem;
  int64_t numel = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > kMaxElements || numel * std::max<int64_t>(d, 1) > kMaxElements) {
      why = "dimensions " + shape_text(Shape(t.dims().begin(), t.dims().end())) +
            " are negative or too large";
      return nullptr;
    }
    numel *= d;
    k->shape.push_back(d);
  }
  if (k->shape.size() > static_cast<size_t>(kMaxRank)) {
    why = "rank " + std::to_string(k->shape.size()) + " is above 8";
    return nullptr;
  }
  const size_t esize = dtype_size(*dtype_of(*elem));
  const auto n = static_cast<size_t>(numel);
  if (t.data_location() == pb::TensorProto::EXTERNAL)
    return read_external(t, *elem, k->shape, n * esize, model_dir, why);
  auto wrong_count = [&](size_t got) {
    why = "holds " + std::to_string(got) + " values for shape " + shape_text(k->shape) + " (" +
          std::to_string(n) + " expected)";
  };
  // Check the stored count before allocating: a corrupt file cannot ask for memory it lacks.
  const size_t stored = t.has_raw_data()     ? t.raw_data().size() / esize
                        : *elem == Elem::f32 ? static_cast<size_t>(t.float_data_size())
                        : *elem == Elem::s64 ? static_cast<size_t>(t.int64_data_size())
                                             : static_cast<size_t>(t.int32_data_size());
  if (stored != n || (t.has_raw_data() && t.raw_data().size() != n * esize)) {
    wrong_count(stored);
    return nullptr;
  }
  std::vector<char> bytes(n * esize);
  if (t.has_raw_data()) {
    if (n) std::memcpy(bytes.data(), t.raw_data().data(), bytes.size());  // little-endian host
  } else if (*elem == Elem::f32) {
    if (n) std::memcpy(bytes.data(), t.float_data().data(), bytes.size());
  } else if (*elem == Elem::s64) {
    if (n) std::memcpy(bytes.data(), t.int64_data().data(), bytes.size());
  } else {  // int32_data holds u8, s8 and s32 values, one per int32
    for (size_t i = 0; i < n; ++i) {
      const int32_t v = t.int32_data(static_cast<int>(i));
      if (*elem == Elem::u8)
        bytes[i] = static_cast<char>(static_cast<uint8_t>(v));
      else if (*elem == Elem::b8)
        bytes[i] = static_cast<char>(v != 0);
      else if (*elem == Elem::s8)
        bytes[i] = static_cast<char>(static_cast<int8_t>(v));
      else
        std::memcpy(bytes.data() + 4 * i, &v, 4);
    }
  }
  Tensor data(*dtype_of(*elem), k->shape);
  if (n) std::memcpy(data.view().raw(), bytes.data(), bytes.size());
  return finish_constant(std::move(data), *elem);
}

Declared read_value_info(const pb::ValueInfoProto& v) {
  Declared d;
  d.info.name = v.name();
  if (!v.has_type() || !v.type().has_tensor_type()) return d;
  const auto& tt = v.type().tensor_type();
  d.onnx_type = tt.elem_type();
  if (auto e = elem_from_onnx(d.onnx_type); e && dtype_of(*e)) d.info.dtype = *dtype_of(*e);
  d.has_shape = tt.has_shape();
  for (const auto& dim : tt.shape().dim()) {
    if (dim.has_dim_value()) {
      d.info.shape.push_back(dim.dim_value());
      // A negative declared size keeps its value as its name so that messages show it.
      d.info.dim_names.emplace_back(dim.dim_value() < 0 ? std::to_string(dim.dim_value()) : "");
    } else {
      d.info.shape.push_back(-1);
      d.info.dim_names.push_back(dim.has_dim_param() ? dim.dim_param() : "?");
    }
  }
  return d;
}

Attr read_attr(const pb::AttributeProto& a, const std::string* model_dir, std::string& why) {
  Attr r;
  switch (a.type()) {
    case pb::AttributeProto::INT:
      r.kind = Attr::Kind::i;
      r.i = a.i();
      break;
    case pb::AttributeProto::FLOAT:
      r.kind = Attr::Kind::f;
      r.f = a.f();
      break;
    case pb::AttributeProto::STRING:
      r.kind = Attr::Kind::s;
      r.s = a.s();
      break;
    case pb::AttributeProto::INTS:
      r.kind = Attr::Kind::ints;
      r.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case pb::AttributeProto::FLOATS:
      r.kind = Attr::Kind::floats;
      r.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case pb::AttributeProto::TENSOR:
      r.kind = Attr::Kind::tensor;
      r.tensor = read_tensor(a.t(), model_dir, why);
      break;
    default:
      break;  // graphs, sparse tensors, ...: no supported operator takes them
  }
  return r;
}

}  // namespace

LoadedGraph read_model(const void* data, size_t size, const std::string& source,
                       const std::string* model_dir) {
  pb::ModelProto m;
  if (size > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !m.ParseFromArray(data, static_cast<int>(size)))
    throw ModelError(source, {{"", "",
                               "the file is truncated or is not an ONNX model "
                               "(protobuf parsing failed)"}});
  LoadedGraph g;
  g.producer = m.producer_name() + (m.producer_version().empty() ? "" : " " + m.producer_version());
  g.ir_version = m.ir_version();
  for (const auto& o : m.opset_import()) {
    const std::string d = o.domain() == "ai.onnx" ? "" : o.domain();
    g.opsets[d] = o.version();
  }
  if (!m.has_graph() || (m.graph().node_size() == 0 && m.graph().output_size() == 0))
    throw ModelError(source,
                     {{"", "", "the file holds no graph (truncated, or not an ONNX model)"}});
  if (g.opsets.count("") == 0) {
    // IR version 3 models without an opset_import mean opset 1; everything else is malformed.
    g.issues.push_back({"", "", "the model imports no opset of the default ONNX domain"});
  } else {
    g.opset = g.opsets[""];
    // Every supported operator has the same semantics from opset 6 to 25 for
    // the attributes the planners accept (they reject the others).
    if (g.opset < kMinOpset || g.opset > kMaxOpset)
      g.issues.push_back(
          {"", "",
           "opset " + std::to_string(g.opset) + " of the default domain is not supported (" +
               std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + ")"});
  }
  const pb::GraphProto& graph = m.graph();
  for (const auto& t : graph.initializer()) {
    std::string why;
    auto k = read_tensor(t, model_dir, why);
    if (!k)
      g.issues.push_back({"", "", "initializer '" + t.name() + "': " + why});
    else
      g.constants[t.name()] = std::move(k);
  }
  for (const auto& v : graph.input())
    if (!g.constants.count(v.name())) g.inputs.push_back(read_value_info(v));
  for (const auto& v : graph.output()) g.outputs.push_back(read_value_info(v));
  for (const auto& v : graph.value_info()) g.value_infos.push_back(read_value_info(v));
  int index = 0;
  for (const auto& n : graph.node()) {
    Node node;
    node.name = n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
    node.op_type = n.op_type();
    node.domain = n.domain() == "ai.onnx" ? "" : n.domain();
    auto it = g.opsets.find(node.domain);
    node.opset = it == g.opsets.end() ? 0 : it->second;
    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    for (const auto& a : n.attribute()) {
      std::string why;
      Attr attr = read_attr(a, model_dir, why);
      if (!why.empty())
        g.issues.push_back({node.name, node.op_type, "attribute '" + a.name() + "': " + why});
      node.attrs[a.name()] = std::move(attr);
    }
    g.nodes.push_back(std::move(node));
    ++index;
  }
  return g;
}

}  // namespace npukit::onnx
