#include "args.hpp"

#include "checked_def.hpp"

#include <limits>

#include "npukit/error.hpp"

namespace npukit::python {

namespace {

// repr() of the offending value, short and without NUL bytes: the checked
// wrapper's own helper, so both kinds of message show values alike.
std::string shown(const py::handle& obj) {
  return checked_detail::shown_value(obj);
}

std::string type_name(const py::handle& obj) {
  return Py_TYPE(obj.ptr())->tp_name;
}

py::module_ numpy() {
  return py::module_::import("numpy");
}

// numpy.asarray(obj) or an npukit.Error naming the parameter.
py::array as_numpy(const py::object& obj, const char* fn, const char* parameter,
                   const std::string& allowed) {
  check(!obj.is_none(), fn, parameter, "None", allowed);
  check(!py::isinstance<py::str>(obj) && !py::isinstance<py::bytes>(obj), fn, parameter,
        shown(obj) + " (" + type_name(obj) + ")", allowed);
  try {
    return numpy().attr("asarray")(obj);
  } catch (const py::error_already_set&) {
    fail(fn, parameter, shown(obj) + " (" + type_name(obj) + ")", allowed);
  }
}

// Python integer v compared with an int64 bound without overflow.
bool within(const py::object& v, int64_t lo, int64_t hi) {
  return v >= py::int_(lo) && v <= py::int_(hi);
}

}  // namespace

int64_t int_arg(const py::object& obj, const char* fn, const char* parameter, int64_t lo,
                int64_t hi) {
  const std::string allowed = "an integer in " + range_text(lo, hi);
  check(!obj.is_none(), fn, parameter, "None", allowed);
  // operator.index accepts int, bool and numpy integers, and refuses floats and strings.
  py::object v;
  try {
    v = py::module_::import("operator").attr("index")(obj);
  } catch (const py::error_already_set&) {
    fail(fn, parameter, shown(obj) + " (" + type_name(obj) + ")", allowed);
  }
  check(within(v, lo, hi), fn, parameter, shown(v), allowed);
  return py::cast<int64_t>(v);
}

double float_arg(const py::object& obj, const char* fn, const char* parameter) {
  const char* allowed = "a real number";
  check(!obj.is_none(), fn, parameter, "None", allowed);
  check(!py::isinstance<py::str>(obj) && !py::isinstance<py::bytes>(obj), fn, parameter,
        shown(obj) + " (" + type_name(obj) + ")", allowed);
  try {
    return py::cast<double>(py::float_(obj));
  } catch (const py::error_already_set&) {
    fail(fn, parameter, shown(obj) + " (" + type_name(obj) + ")", allowed);
  } catch (const py::cast_error&) {
    fail(fn, parameter, shown(obj) + " (" + type_name(obj) + ")", allowed);
  }
}

std::string str_arg(const py::object& obj, const char* fn, const char* parameter) {
  check(py::isinstance<py::str>(obj), fn, parameter,
        obj.is_none() ? std::string("None") : shown(obj) + " (" + type_name(obj) + ")", "a string");
  std::string s = py::cast<std::string>(obj);
  check(s.find('\0') == std::string::npos, fn, parameter, shown(obj), "a string without NUL bytes");
  return s;
}

py::array_t<int64_t> int_array(const py::object& obj, const char* fn, const char* parameter,
                               int64_t lo, int64_t hi) {
  const std::string allowed = "integers in " + range_text(lo, hi) + " (an int or integer array)";
  py::array a = as_numpy(obj, fn, parameter, allowed);
  const char kind = a.dtype().kind();
  if (kind == 'O') {
    // numpy keeps Python ints beyond 64 bits (and mixed objects) as objects.
    fail(fn, parameter, shown(obj) + " (not integers numpy can hold in 64 bits)", allowed);
  }
  check(kind == 'i' || kind == 'u' || kind == 'b', fn, parameter,
        shown(obj) + " (dtype " + py::cast<std::string>(a.dtype().attr("name")) + ")", allowed);
  if (a.size() > 0) {
    const py::object mn = py::int_(a.attr("min")()), mx = py::int_(a.attr("max")());
    const bool one = a.size() == 1;
    check(within(mn, lo, hi), fn, parameter, shown(mn) + (one ? "" : " (smallest value)"), allowed);
    check(within(mx, lo, hi), fn, parameter, shown(mx) + (one ? "" : " (largest value)"), allowed);
  }
  return py::array_t<int64_t, py::array::c_style>(a.attr("astype")("int64"));
}

py::array_t<double> float_array(const py::object& obj, const char* fn, const char* parameter) {
  const std::string allowed = "real numbers (a number or a numeric array)";
  py::array a = as_numpy(obj, fn, parameter, allowed);
  const char kind = a.dtype().kind();
  check(kind == 'f' || kind == 'i' || kind == 'u' || kind == 'b', fn, parameter,
        shown(obj) + " (dtype " + py::cast<std::string>(a.dtype().attr("name")) + ")", allowed);
  return py::array_t<double, py::array::c_style>(a.attr("astype")("float64"));
}

}  // namespace npukit::python
