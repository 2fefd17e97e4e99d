// ONNX models from Python: npukit.run_model(path, {name: array}, profile=...)
// and npukit.OnnxModel for repeated runs (planned once per input shape).
#include "arrays.hpp"
#include "checked_def.hpp"
#include "npukit/onnx/model.hpp"

namespace npukit::python {

namespace {

using py::arg;

// fn: "npukit.run_model" or "npukit.OnnxModel.run", for the messages.
py::dict run(onnx::Model& m, const py::dict& feeds, const char* fn) {
  std::vector<py::array> arrays;
  std::vector<TensorView> views;
  for (const onnx::ValueInfo& v : m.inputs()) {
    check(feeds.contains(v.name), fn, "inputs", "no array for '" + v.name + "'",
          "one array per model input");
    arrays.push_back(as_tensor(feeds[v.name.c_str()], fn, v.name.c_str(), kMaxRank));
    views.push_back(view_of(arrays.back()));
  }
  for (const auto& item : feeds) {
    check(py::isinstance<py::str>(item.first), fn, "inputs",
          "a key of type " + std::string(Py_TYPE(item.first.ptr())->tp_name),
          "input names (str) as keys");
    const auto name = py::cast<std::string>(item.first);
    bool known = false;
    for (const onnx::ValueInfo& v : m.inputs()) known = known || v.name == name;
    check(known, fn, "inputs", "'" + name + "'", "names of the model's inputs");
  }
  std::vector<Tensor> outs;
  {
    py::gil_scoped_release release;
    outs = m.run(views);
  }
  py::dict result;
  for (size_t k = 0; k < outs.size(); ++k) {
    py::array a = new_array(outs[k].dtype(), outs[k].shape());
    copy(outs[k].view(), view_of(a));
    result[py::str(m.outputs()[k].name)] = a;
  }
  return result;
}

py::list infos(const std::vector<onnx::ValueInfo>& vs) {
  py::list l;
  for (const auto& v : vs) {
    py::list shape;
    for (size_t i = 0; i < v.shape.size(); ++i)
      shape.append(v.shape[i] < 0 ? py::object(py::str(v.dim_names[i]))
                                  : py::object(py::int_(v.shape[i])));
    l.append(py::make_tuple(v.name, numpy_dtype(v.dtype), shape));
  }
  return l;
}

// npukit.OnnxModel: load once, run many times.
void bind_model_class(py::module_& m) {
  py::class_<onnx::Model>(m, "OnnxModel",
                          "An ONNX model loaded and checked once; run() it on dicts of arrays")
      .def(py::init(checked_call(
               "npukit.OnnxModel",
               [](const std::string& path, const std::string& profile, bool fallback) {
                 return onnx::Model::load(path, profile_arg(profile), fallback);
               },
               arg("path"), arg("profile"), arg("fallback"))),
           arg("path"), arg("profile") = "onnxruntime", arg("fallback") = false)
      .def("run",
           checked_call(
               "npukit.OnnxModel.run",
               [](onnx::Model& md, const py::dict& inputs) {
                 return run(md, inputs, "npukit.OnnxModel.run");
               },
               arg("self"), arg("inputs")),
           arg("inputs"), "Run on {input name: array}; returns {output name: array}")
      .def_property_readonly(
          "inputs", [](const onnx::Model& md) { return infos(md.inputs()); },
          "[(name, dtype, shape)], symbolic dimensions as strings")
      .def_property_readonly("outputs", [](const onnx::Model& md) { return infos(md.outputs()); })
      .def_property_readonly("profile",
                             [](const onnx::Model& md) { return profile_name(md.profile()); })
      .def(
          "layer_times",
          [](const onnx::Model& md) {
            py::list l;
            const auto runs = static_cast<double>(std::max<int64_t>(md.timed_runs(), 1));
            for (const auto& t : md.layer_times())
              l.append(py::make_tuple(t.node, t.op_type, profile_name(t.profile),
                                      t.seconds / runs * 1e3));
            return l;
          },
          "[(node, op_type, profile, ms per run)] in execution order, averaged over the runs "
          "since load, reset_layer_times() or a change of input shapes (as `npukit run "
          "--layers`)")
      .def("reset_layer_times", &onnx::Model::reset_layer_times)
      .def_property_readonly("timed_runs", &onnx::Model::timed_runs,
                             "Runs averaged in layer_times()")
      .def_property_readonly(
          "memory_use",
          [](const onnx::Model& md) {
            const onnx::MemoryUse m = md.memory_use();
            return py::dict(py::arg("arena_bytes") = m.arena_bytes,
                            py::arg("arena_lower_bound") = m.arena_lower_bound,
                            py::arg("private_bytes") = m.private_bytes,
                            py::arg("unshared_bytes") = m.unshared_bytes,
                            py::arg("in_place_values") = m.in_place_values);
          },
          "Activation bytes of the latest plan: the arena values share by liveness, its lower "
          "bound, values with their own buffers, and every value its own (as `npukit run`); "
          "in_place_values: outputs written over an input dead after them (FusedConv's Z)")
      .def(
          "nodes",
          [](const onnx::Model& md) {
            py::list l;
            for (const onnx::NodeInfo& n : md.nodes()) {
              py::list outs;
              for (size_t k = 0; k < n.outputs.size(); ++k)
                outs.append(py::make_tuple(n.outputs[k], n.output_types[k], n.output_shapes[k]));
              l.append(py::dict(py::arg("name") = n.name, py::arg("op_type") = n.op_type,
                                py::arg("domain") = n.domain,
                                py::arg("profile") = profile_name(n.profile),
                                py::arg("outputs") = outs));
            }
            return l;
          },
          "Planned nodes in execution order: name, op_type, domain, profile and outputs "
          "[(value, element type, shape)] of the latest plan");
}

// The runner's operator list and the one-call run_model.
void bind_runner_functions(py::module_& m) {
  def_checked(
      m, "supported_operators",
      [] {
        py::list l;
        for (const onnx::OperatorInfo& o : onnx::operator_list())
          l.append(py::make_tuple(o.domain.empty() ? "ai.onnx" : o.domain, o.op_type, o.min_opset,
                                  o.max_opset));
        return l;
      },
      "[(domain, op_type, min_opset, max_opset)]: every ONNX operator the runner executes");
  def_checked(
      m, "run_model",
      [](const std::string& path, const py::dict& inputs, const std::string& profile,
         bool fallback) {
        onnx::Model model = onnx::Model::load(path, profile_arg(profile), fallback);
        return run(model, inputs, "npukit.run_model");
      },
      arg("path"), arg("inputs"), py::kw_only(), arg("profile") = "onnxruntime",
      arg("fallback") = false,
      "Load an ONNX model, run it on {input name: array} under a semantics profile and return "
      "{output name: array}. With fallback=True, nodes whose operator has no semantics for the "
      "profile follow onnxruntime. Unsupported or malformed models raise npukit.ModelError naming "
      "every offending node.");
}

}  // namespace

void bind_onnx(py::module_& m) {
  py::register_exception<onnx::ModelError>(m, "ModelError", m.attr("Error").ptr());
  bind_model_class(m);
  bind_runner_functions(m);
}

}  // namespace npukit::python
