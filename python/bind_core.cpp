#include "arrays.hpp"
#include "checked_def.hpp"
#include "npukit/ops/profile_support.hpp"
#include "npukit/parallel.hpp"

namespace npukit::python {

void bind_core(py::module_& m) {
  def_checked(
      m, "set_num_threads", &set_num_threads, py::arg("n"),
      "Threads used by the operators (0 = all hardware threads). Results do not depend on it.");
  def_checked(m, "num_threads", &num_threads);
  def_checked(
      m, "profiles",
      [] {
        std::vector<std::string> names;
        for (Profile p : all_profiles()) names.emplace_back(profile_name(p));
        return names;
      },
      "Names of the semantics profiles.");
  def_checked(
      m, "supports",
      [](const std::string& family, const std::string& profile) {
        return supports(op_family_from_name(family), profile_arg(profile));
      },
      py::arg("family"), py::arg("profile"),
      "Whether `profile` covers the operator family (npukit info --profiles lists them)");
  def_checked(
      m, "profile_table",
      [] {
        py::list l;
        for (const ProfileSupport& r : profile_table())
          l.append(py::dict(py::arg("family") = op_family_name(r.family),
                            py::arg("profile") = profile_name(r.profile),
                            py::arg("supported") = r.supported, py::arg("semantics") = r.semantics,
                            py::arg("checked") = r.checked));
        return l;
      },
      "Every (operator family, profile) pair: supported, its semantics (or why not) and what it "
      "was checked against");
}

}  // namespace npukit::python
