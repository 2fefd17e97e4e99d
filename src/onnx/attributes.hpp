// Reading node attributes and checking operand types inside planners. Errors
// are npukit::Error with the op type as the function; the loader adds the node.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "npukit/ops/onnx_window.hpp"
#include "npukit/window.hpp"
#include "onnx/graph.hpp"

namespace npukit::onnx {

bool has_attr(const Node& n, const char* name);
int64_t attr_int(const Node& n, const char* name, int64_t dflt);
float attr_float(const Node& n, const char* name, float dflt);
std::string attr_string(const Node& n, const char* name, const std::string& dflt);
std::vector<int64_t> attr_ints(const Node& n, const char* name, std::vector<int64_t> dflt = {});
// Rejects any attribute not in `known` (a misspelt or newer attribute would otherwise be ignored).
void expect_attrs(const Node& n, std::initializer_list<const char*> known);

// Input i must be present and of one of the element types.
const Operand& operand(const PlanContext& c, size_t i, std::initializer_list<Elem> allowed);
bool present(const PlanContext& c, size_t i);
void expect_rank(const PlanContext& c, size_t i, int lo, int hi);

// The 2-D window of Conv / pooling attributes (kernel_shape, strides, pads,
// dilations, auto_pad, ceil_mode) for an (N, C, H, W) input; `kernel` is the
// kernel size when it comes from a weight tensor (else kernel_shape is required).
Window2d onnx_window(const PlanContext& c, const Shape& x, const Shape* kernel, bool ceil_mode);

// Constant inputs read at plan time.
const Constant& constant_input(const PlanContext& c, size_t i, const char* what);
std::vector<int64_t> constant_ints(const PlanContext& c, size_t i, const char* what);

Operand make_operand(Elem e, Shape shape);
DType runtime_dtype(const PlanContext& c, Elem e);  // throws for s64

}  // namespace npukit::onnx
