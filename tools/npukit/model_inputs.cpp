#include "model_inputs.hpp"

#include "npukit/error.hpp"
#include "npukit/npy.hpp"
#include "picture.hpp"

namespace npukit::cli {

std::vector<Tensor> read_model_inputs(const onnx::Model& model,
                                      const std::vector<std::string>& args,
                                      const std::string& preprocess, const char* fn) {
  const auto& inputs = model.inputs();
  std::vector<Tensor> tensors(inputs.size());
  std::vector<bool> given(inputs.size(), false);
  std::string names;
  for (const auto& v : inputs) names += (names.empty() ? "" : ", ") + v.name;
  for (const std::string& arg : args) {
    const size_t eq = arg.find('=');
    std::string name = eq == std::string::npos ? "" : arg.substr(0, eq);
    const std::string file = eq == std::string::npos ? arg : arg.substr(eq + 1);
    if (name.empty()) {
      check(inputs.size() == 1, fn, "--input", "'" + arg + "'",
            "NAME=FILE (the model has several inputs: " + names + ")");
      name = inputs[0].name;
    }
    size_t k = 0;
    while (k < inputs.size() && inputs[k].name != name) ++k;
    check(k < inputs.size(), fn, "--input", "'" + name + "'", "an input of the model: " + names);
    check(!given[k], fn, "--input", "'" + arg + "'",
          "one --input per model input (" + name + " was given before)");
    if (is_picture_file(file)) {
      const Preprocess rule =
          preprocess.empty() ? (inputs[k].dtype == DType::u8 ? Preprocess::raw : Preprocess::unit)
                             : preprocess_from_name(preprocess);
      tensors[k] = picture_tensor(read_picture(file), inputs[k], rule);
    } else {
      tensors[k] = read_npy(file);
    }
    given[k] = true;
  }
  for (size_t k = 0; k < inputs.size(); ++k)
    check(given[k], fn, "--input", "none for " + inputs[k].name,
          "one --input NAME=FILE per model input (" + names + ")");
  return tensors;
}

}  // namespace npukit::cli
