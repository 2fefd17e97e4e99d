// Bindings whose arguments are converted by npukit, not by pybind11's
// dispatcher. pybind11 answers a wrong argument type with a generic TypeError
// ("incompatible function arguments") that names neither the parameter nor
// what it accepts. checked_call() wraps a C++ callable in one that takes every
// argument as py::object (so the dispatcher always matches) and converts each
// with pybind11's own caster; a failure is an npukit.Error naming the
// function, the parameter, the value and what is allowed.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "npukit/error.hpp"

namespace npukit::python {

namespace checked_detail {

std::string shown_value(const py::handle& obj);  // repr(), shortened
// The text of a pybind11 type description, '%' replaced by the Python class names.
std::string describe(const char* text, const std::type_info* const* types);

template <typename T>
std::string allowed_text() {
  using U = py::detail::intrinsic_t<T>;
  if constexpr (std::is_same_v<U, bool>) {
    return "True or False";
  } else if constexpr (std::is_integral_v<U>) {
    return "an integer in [" + std::to_string(std::numeric_limits<U>::min()) + ", " +
           std::to_string(std::numeric_limits<U>::max()) + "]";
  } else if constexpr (std::is_floating_point_v<U>) {
    return "a real number (int or float)";
  } else if constexpr (std::is_same_v<U, std::string>) {
    return "a string";
  } else {
    using caster = py::detail::make_caster<T>;
    return describe(caster::name.text, caster::name.types().data());
  }
}

// pybind11 turns None (and anything with __bool__) into a bool when
// converting: accept only booleans and the integers 0 and 1.
inline bool strict_bool_ok(const py::handle& obj) {
  if (py::isinstance<py::bool_>(obj)) return true;
  if (std::string(Py_TYPE(obj.ptr())->tp_name) == "numpy.bool_") return true;
  if (PyLong_Check(obj.ptr()) && !PyBool_Check(obj.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    return overflow == 0 && (v == 0 || v == 1);
  }
  return false;
}

template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};

// None passes only where the parameter says it may be absent (an optional or
// a py::object the function checks itself): a class caster would accept it as
// a null reference that pybind11 then reports as a generic TypeError.
template <typename T>
constexpr bool takes_none =
    is_optional<py::detail::intrinsic_t<T>>::value ||
    std::is_base_of_v<py::handle, py::detail::intrinsic_t<T>> || std::is_pointer_v<T>;

template <typename T>
void load(py::detail::make_caster<T>& caster, const py::object& obj, const std::string& function,
          const std::string& parameter) {
  using U = py::detail::intrinsic_t<T>;
  bool ok = true;
  if constexpr (std::is_same_v<U, bool>) ok = strict_bool_ok(obj);
  if constexpr (!takes_none<T>) ok = ok && !obj.is_none();
  ok = ok && caster.load(obj, true);
  if (!ok) {
    PyErr_Clear();  // a failed caster may leave an OverflowError set
    fail(function, parameter, shown_value(obj) + " (" + Py_TYPE(obj.ptr())->tp_name + ")",
         allowed_text<T>());
  }
}

// One argument as the dispatcher hands it over: any Python object, converted
// later by load(). Its caster (below) names T's Python type, so that help()
// and __doc__ show the real parameter types instead of "object".
template <typename T>
struct Unconverted {
  py::object obj;
};

template <typename Sig>
struct signature;
template <typename R, typename... A>
struct signature<R(A...)> {
  using ret = R;
  using args = std::tuple<A...>;
};
template <typename R, typename... A>
struct signature<R (*)(A...)> : signature<R(A...)> {};
template <typename C, typename R, typename... A>
struct signature<R (C::*)(A...) const> : signature<R(A...)> {};
template <typename C, typename R, typename... A>
struct signature<R (C::*)(A...)> : signature<R(A...)> {};
template <typename F, typename = void>
struct callable_signature : signature<F> {};
template <typename F>
struct callable_signature<F, std::void_t<decltype(&F::operator())>>
    : signature<decltype(&F::operator())> {};

template <typename F, typename Args, typename Index>
struct Wrapper;
template <typename F, typename... A, size_t... I>
struct Wrapper<F, std::tuple<A...>, std::index_sequence<I...>> {
  F f;
  std::string function;
  std::vector<std::string> names;
  // One unconverted object per argument: the dispatcher matches any value and
  // the conversion below names the parameter that does not fit.
  auto operator()(Unconverted<A>... objs) const {
    [[maybe_unused]] std::tuple<py::detail::make_caster<A>...> casters;
    [[maybe_unused]] const py::object in[] = {std::move(objs.obj)..., py::none()};
    (load<A>(std::get<I>(casters), in[I], function, names[I]), ...);
    return f(py::detail::cast_op<A>(std::move(std::get<I>(casters)))...);
  }
};

inline void collect(std::vector<std::string>& names, const py::arg& a) {
  names.emplace_back(a.name);
}
inline void collect(std::vector<std::string>& names, const py::arg_v& a) {
  names.emplace_back(a.name);
}
template <typename T>
void collect(std::vector<std::string>&, const T&) {}

}  // namespace checked_detail

// f (a lambda or function pointer) with its arguments converted by npukit;
// `function` is the name errors give ("npukit.max_pool"), `extra` the py::arg
// list that names the parameters (unnamed ones are "argument <k>").
template <typename F, typename... Extra>
auto checked_call(std::string function, F f, const Extra&... extra) {
  using sig = checked_detail::callable_signature<std::decay_t<F>>;
  using args = typename sig::args;
  constexpr size_t n = std::tuple_size_v<args>;
  std::vector<std::string> names;
  (checked_detail::collect(names, extra), ...);
  for (size_t k = names.size(); k < n; ++k) names.push_back("argument " + std::to_string(k));
  return checked_detail::Wrapper<std::decay_t<F>, args, std::make_index_sequence<n>>{
      std::move(f), std::move(function), std::move(names)};
}

// m.def(name, f, extra...) with checked_call's conversion; errors name "npukit.<name>".
template <typename F, typename... Extra>
void def_checked(py::module_& m, const char* name, F&& f, const Extra&... extra) {
  m.def(name, checked_call(std::string("npukit.") + name, std::forward<F>(f), extra...), extra...);
}

}  // namespace npukit::python

namespace pybind11::detail {
// Accepts every object (npukit converts it, naming the parameter on failure)
// and describes itself with T's caster name for the generated signature.
template <typename T>
struct type_caster<npukit::python::checked_detail::Unconverted<T>> {
  using Value = npukit::python::checked_detail::Unconverted<T>;
  PYBIND11_TYPE_CASTER(Value, make_caster<T>::name);
  bool load(handle src, bool) {
    value.obj = reinterpret_borrow<object>(src);
    return true;
  }
  static handle cast(const Value& v, return_value_policy, handle) { return v.obj.inc_ref(); }
};
}  // namespace pybind11::detail
