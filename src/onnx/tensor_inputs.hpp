// Helpers shared by the tensor and index planners (ops_tensor.cpp, ops_index.cpp).
#pragma once

#include <initializer_list>
#include <vector>

#include "onnx/graph.hpp"

namespace npukit::onnx {

// Every element type a runtime value can have.
inline constexpr std::initializer_list<Elem> kAnyElem = {Elem::f32, Elem::u8,  Elem::s8,
                                                         Elem::s32, Elem::s64, Elem::b8};

// The values of input i, an int64 or int32 tensor known when planning
// (initializer, Constant, or folded), as int64.
std::vector<int64_t> known_ints(const PlanContext& c, size_t i, const char* what);

// A kernel copying input 0 into output 0 of another shape (same elements, both dense).
void copy_as_output_shape(const std::vector<TensorView>& in, const std::vector<TensorView>& out);

}  // namespace npukit::onnx
