// The main job against ONNX Runtime: the bundled Fashion-MNIST models on the
// bundled images as one batch, through npukit's ONNX runner.
#include <algorithm>

#include "npukit/onnx/model.hpp"
#include "npukit/parallel.hpp"
#include "race.hpp"

namespace race {

double time_model(const std::string& model_path, const npukit::Tensor& images, int threads,
                  const Budget& b, std::vector<float>& output) {
  npukit::onnx::Model model = npukit::onnx::Model::load(model_path, npukit::Profile::onnxruntime);
  npukit::set_num_threads(threads);
  const std::vector<npukit::TensorView> inputs{images.view()};
  Budget mb = b;
  mb.min_repeats = std::min(mb.min_repeats, 3);  // a batch of 1,000 images is long enough
  const double s = median_seconds([&] { model.execute(inputs); }, mb);
  const npukit::TensorView& y = model.execute(inputs)[0];
  npukit::check(y.dtype() == npukit::DType::f32, "race::time_model", "output dtype",
                npukit::dtype_name(y.dtype()), "f32 logits");
  npukit::Tensor copy(npukit::DType::f32, y.shape());
  npukit::copy(y, copy.view());
  output.assign(copy.data<float>(), copy.data<float>() + copy.numel());
  return s;
}

}  // namespace race
