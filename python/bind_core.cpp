#include "arrays.hpp"
#include "npukit/parallel.hpp"

namespace npukit::python {

void bind_core(py::module_& m) {
  m.def("set_num_threads", &set_num_threads, py::arg("n"),
        "Threads used by the operators (0 = all hardware threads). Results do not depend on it.");
  m.def("num_threads", &num_threads);
  m.def(
      "profiles",
      [] {
        std::vector<std::string> names;
        for (Profile p : all_profiles()) names.emplace_back(profile_name(p));
        return names;
      },
      "Names of the semantics profiles.");
}

}  // namespace npukit::python
