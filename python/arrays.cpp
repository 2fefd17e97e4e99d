#include "arrays.hpp"

#include "npukit/error.hpp"

namespace npukit::python {

namespace {
// "float32", or ">f4 (float32, big-endian)" when the byte order is not the host's.
std::string dtype_text(const py::dtype& d) {
  std::string name = py::cast<std::string>(d.attr("name"));
  if (!d.attr("isnative").cast<bool>())
    return py::cast<std::string>(d.attr("str")) + " (" + name + ", non-native byte order)";
  return name;
}
}  // namespace

DType dtype_of_array(const py::array& a, const char* fn, const char* parameter) {
  const py::dtype d = a.dtype();
  // By kind and size, not descriptor identity: an equal dtype may be another object.
  const char k = d.kind();
  const py::ssize_t size = d.itemsize();
  if (d.attr("isnative").cast<bool>()) {
    if (k == 'f' && size == 4) return DType::f32;
    if (k == 'i' && size == 1) return DType::s8;
    if (k == 'u' && size == 1) return DType::u8;
    if (k == 'i' && size == 2) return DType::s16;
    if (k == 'i' && size == 4) return DType::s32;
    if (k == 'i' && size == 8) return DType::s64;
    if (k == 'b' && size == 1) return DType::b8;
  }
  fail(fn, std::string(parameter) + ".dtype", dtype_text(d),
       "float32, int8, uint8, int16, int32, int64 or bool");
}

py::dtype numpy_dtype(DType t) {
  switch (t) {
    case DType::f32:
      return py::dtype::of<float>();
    case DType::s8:
      return py::dtype::of<int8_t>();
    case DType::u8:
      return py::dtype::of<uint8_t>();
    case DType::s16:
      return py::dtype::of<int16_t>();
    case DType::s32:
      return py::dtype::of<int32_t>();
    case DType::s64:
      return py::dtype::of<int64_t>();
    case DType::b8:
      return py::dtype::of<bool>();
  }
  return py::dtype::of<float>();
}

py::array as_tensor(const py::object& obj, const char* fn, const char* parameter, int max_rank) {
  check(!obj.is_none(), fn, parameter, "None", "a numpy array");
  py::array a = py::array::ensure(obj);
  check(static_cast<bool>(a), fn, parameter, py::cast<std::string>(py::repr(py::type::of(obj))),
        "a numpy array");
  // Byte order is storage, not value: convert to native order (lossless).
  if (!a.dtype().attr("isnative").cast<bool>())
    a = a.attr("astype")(a.dtype().attr("newbyteorder")("="));
  if (a.dtype().kind() == 'f' && a.dtype().itemsize() == 8)
    a = a.attr("astype")(py::dtype::of<float>());
  dtype_of_array(a, fn, parameter);
  check(a.ndim() <= max_rank, fn, parameter, std::to_string(a.ndim()) + "-D array",
        "at most " + std::to_string(max_rank) + " dimensions");
  return py::array::ensure(a, py::array::c_style);
}

py::array as_dtype(const py::object& obj, DType want, const char* fn, const char* parameter) {
  py::array a = as_tensor(obj, fn, parameter);
  const DType got = dtype_of_array(a, fn, parameter);
  check(got == want, fn, (std::string(parameter) + ".dtype").c_str(), dtype_text(a.dtype()),
        dtype_text(numpy_dtype(want)));
  return a;
}

TensorView view_of(const py::array& a) {
  Shape shape(a.shape(), a.shape() + a.ndim());
  return TensorView::contiguous(const_cast<void*>(a.data()), dtype_of_array(a, "npukit", "array"),
                                shape);
}

py::array new_array(DType t, const Shape& shape) {
  std::vector<py::ssize_t> s(shape.begin(), shape.end());
  py::array a(numpy_dtype(t), s);
  std::memset(a.mutable_data(), 0, static_cast<size_t>(a.nbytes()));
  return a;
}

py::array array_of(DType t, const Tensor& values) {
  py::array a = new_array(t, values.shape());
  copy(values, view_of(a));
  return a;
}

Profile profile_arg(const std::string& name, const char* function) {
  for (Profile p : all_profiles())
    if (name == profile_name(p)) return p;
  fail(function, "profile", "'" + name + "'", profile_names());
}

}  // namespace npukit::python
