// Strict conversion of Python arguments. pybind11's own conversions either
// fail with a generic TypeError or, for numpy arrays (array_t::ensure), hand
// back a null array on failure; these name the function and the parameter in
// npukit's format and refuse what would be silently changed: None, strings,
// objects, floats given for integers, integers outside the target range.
#pragma once

#include <string>

#include "arrays.hpp"

namespace npukit::python {

// One integer (Python int, numpy integer or bool) in [lo, hi].
int64_t int_arg(const py::object& obj, const char* function, const char* parameter, int64_t lo,
                int64_t hi);
// One real number (int or float; NaN and infinities pass through).
double float_arg(const py::object& obj, const char* function, const char* parameter);
// A string.
std::string str_arg(const py::object& obj, const char* function, const char* parameter);

// An int64 array (scalar or any shape) of integers in [lo, hi]: integer or bool
// input only; floats, objects (Python ints beyond 64 bits) and strings are refused.
py::array_t<int64_t> int_array(const py::object& obj, const char* function, const char* parameter,
                               int64_t lo, int64_t hi);
// A float64 array of real numbers (integer, bool or float input).
py::array_t<double> float_array(const py::object& obj, const char* function, const char* parameter);

}  // namespace npukit::python
