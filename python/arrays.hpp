// numpy <-> npukit glue shared by every binding file.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "npukit/ops/onnx_window.hpp"
#include "npukit/profile.hpp"
#include "npukit/tensor.hpp"
#include "npukit/window.hpp"

namespace npukit::python {

namespace py = pybind11;
using Ints = std::optional<std::vector<int64_t>>;

DType dtype_of_array(const py::array& a, const char* function, const char* parameter);
py::dtype numpy_dtype(DType t);

// A C-contiguous array of the wanted dtype (float64 input is accepted for f32
// and rounded; any other dtype mismatch is an npukit.Error naming `parameter`).
py::array as_dtype(const py::object& obj, DType want, const char* function, const char* parameter);
// A C-contiguous array of whatever supported dtype it has.
// max_rank: kMaxKernelRank for operator calls; ONNX model inputs take up to kMaxRank.
py::array as_tensor(const py::object& obj, const char* function, const char* parameter,
                    int max_rank = kMaxKernelRank);

TensorView view_of(const py::array& a);
py::array new_array(DType t, const Shape& shape);
// A new array of dtype `t` holding t's values (an operator's returned Tensor).
py::array array_of(DType t, const Tensor& values);

// ONNX window attributes go through npukit::onnx_window_2d (onnx_window.hpp).

// A profile by name; an unknown name is an npukit.Error naming `function` and 'profile'.
Profile profile_arg(const std::string& name, const char* function = "npukit");

// Binding groups, one per file.
void bind_core(py::module_& m);
void bind_fp32(py::module_& m);
void bind_quant_math(py::module_& m);
void bind_onnx(py::module_& m);
void bind_npu(py::module_& m);
void bind_quant_ops(py::module_& m);
void bind_ghp(py::module_& m);

}  // namespace npukit::python
