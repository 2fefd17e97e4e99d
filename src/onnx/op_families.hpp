// Which operator family of the profile table (npukit/ops/profile_support.hpp)
// an ONNX operator belongs to, so that the runner asks supports(family,
// profile) before planning a node, instead of learning it from an error.
#pragma once

#include <optional>
#include <string>

#include "npukit/ops/profile_support.hpp"

namespace npukit::onnx {

// nullopt for operators outside the table: those have one semantics
// (ONNX Runtime's) and their planners refuse any other profile themselves.
std::optional<OpFamily> op_family_of(const std::string& domain, const std::string& op_type);

}  // namespace npukit::onnx
