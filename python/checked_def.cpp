#include "checked_def.hpp"

namespace npukit::python::checked_detail {

std::string shown_value(const py::handle& obj) {
  std::string s;
  try {
    s = py::cast<std::string>(py::repr(obj));
  } catch (const py::error_already_set&) {
    s = "<" + std::string(Py_TYPE(obj.ptr())->tp_name) + ">";
  }
  for (char& c : s)
    if (c == '\0') c = '?';
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

std::string describe(const char* text, const std::type_info* const* types) {
  std::string out;
  for (const char* c = text; *c; ++c) {
    if (*c != '%') {
      out += *c;
      continue;
    }
    const py::detail::type_info* t = *types ? py::detail::get_type_info(**types) : nullptr;
    out += t ? std::string(t->type->tp_name) : std::string("an npukit object");
    if (*types) ++types;
  }
  return out;
}

}  // namespace npukit::python::checked_detail
