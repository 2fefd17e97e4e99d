// Planners of the ONNX float math operators, shared by the table in
// ops_math.cpp (one table for the family, planners in files by topic).
#pragma once

#include "onnx/graph.hpp"

namespace npukit::onnx {

NodePlan plan_reduce_sum(const PlanContext& c);
NodePlan plan_reduce_mean(const PlanContext& c);
NodePlan plan_reduce_max(const PlanContext& c);
NodePlan plan_reduce_min(const PlanContext& c);
NodePlan plan_layer_norm(const PlanContext& c);

}  // namespace npukit::onnx
