// The `npukit._npukit` extension: one PYBIND11_MODULE, binding groups in their own files.
#include "arrays.hpp"
#include "npukit/error.hpp"
#include "npukit/version.hpp"

PYBIND11_MODULE(_npukit, m) {
  using namespace npukit::python;
  m.doc() = "npukit operators on numpy arrays";
  m.attr("__version__") = NPUKIT_VERSION_STRING;
  py::register_exception<npukit::Error>(m, "Error", PyExc_ValueError);
  bind_core(m);
  bind_fp32(m);
  bind_quant_math(m);
  bind_onnx(m);
  bind_npu(m);
  bind_quant_ops(m);
  bind_ghp(m);
}
