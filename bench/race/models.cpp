// The main job against ONNX Runtime: the bundled Fashion-MNIST models on the
// bundled images as one batch, through npukit's ONNX runner.
#include <algorithm>
#include <chrono>

#include "npukit/onnx/model.hpp"
#include "npukit/parallel.hpp"
#include "race.hpp"

namespace race {

double time_model(const std::string& model_path, const npukit::Tensor& images, int threads,
                  const Budget& b, std::vector<float>& output) {
  npukit::onnx::Model model = npukit::onnx::Model::load(model_path, npukit::Profile::onnxruntime);
  npukit::set_num_threads(threads);
  const std::vector<npukit::TensorView> inputs{images.view()};
  // Whole models run long: one warm-up, then 3 repeats, or 1 when a run
  // takes seconds (torchvision models on the reference kernels).
  const auto t0 = std::chrono::steady_clock::now();
  model.execute(inputs);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Budget mb = b;
  mb.warmup = 0;
  mb.min_repeats = mb.max_repeats = first > 2.0 ? 1 : 3;
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
