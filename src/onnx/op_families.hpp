// Which operator family of the profile table (npukit/ops/profile_support.hpp)
// an ONNX operator belongs to, and so which profile a node's kernel follows:
// the runner asks this before planning a node instead of learning it from an
// error.
#pragma once

#include <optional>
#include <string>

#include "npukit/ops/profile_support.hpp"

namespace npukit::onnx {

struct Node;

// Every operator of the runner's tables has a family (tests/unit/
// test_onnx_op_families.cpp); nullopt means an operator the runner lacks.
std::optional<OpFamily> op_family_of(const std::string& domain, const std::string& op_type);

// Why the runner's planner of `n` does not model `profile` although the
// profile table covers the node's family, or "". The one such case: grouped
// Conv under bm1684 (the runner models the chip's interleaved accumulation
// for dense convolutions only).
std::string runner_gap(const Node& n, Profile profile);

// The profile node `n`'s kernel follows: `profile` where the table covers the
// node's family and the runner has no gap there; otherwise onnxruntime with
// `fallback`, and without it the refusal (an npukit::Error naming the
// operator, parameter "profile", the reason).
Profile node_semantics(const Node& n, Profile profile, bool fallback);

}  // namespace npukit::onnx
