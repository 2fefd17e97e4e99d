// `--input NAME=FILE` for the commands that run a model (run, compare): .npy
// arrays or pictures (picture.hpp), one per graph input.
#pragma once

#include <string>
#include <vector>

#include "npukit/onnx/model.hpp"
#include "npukit/tensor.hpp"

namespace npukit::cli {

// One tensor per graph input, in graph-input order. `args` are "NAME=FILE"
// (or "FILE" for a single-input model); `preprocess` names the picture rule
// ("" for the default of the input's type). Errors name `fn` and --input.
std::vector<Tensor> read_model_inputs(const onnx::Model& model,
                                      const std::vector<std::string>& args,
                                      const std::string& preprocess, const char* fn);

}  // namespace npukit::cli
