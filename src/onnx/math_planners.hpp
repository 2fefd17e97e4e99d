// Planners of the ONNX float math operators, shared by the table in
// ops_math.cpp (one table for the family, planners in files by topic).
#pragma once

#include "onnx/graph.hpp"

namespace npukit::onnx {

// These operators reproduce ONNX Runtime only: any other profile is an error
// naming the parameter "profile" (so a model loaded with fallback keeps
// ONNX Runtime's semantics for them, and one without says why it cannot run).
void expect_onnxruntime_profile(const PlanContext& c);

NodePlan plan_reduce_sum(const PlanContext& c);
NodePlan plan_reduce_mean(const PlanContext& c);
NodePlan plan_reduce_max(const PlanContext& c);
NodePlan plan_reduce_min(const PlanContext& c);
NodePlan plan_reduce_l2(const PlanContext& c);
NodePlan plan_layer_norm(const PlanContext& c);
NodePlan plan_einsum(const PlanContext& c);  // ops_einsum.cpp

}  // namespace npukit::onnx
