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
  // The budget race_ort.mjs gives ONNX Runtime: b.warmup untimed runs (this
  // first one, which also plans and packs, counts as one), then as many
  // repeats as fit b.target_seconds; a median of only 3 runs after one cold
  // run swung the int8 network rows by 10-20% on a shared machine. A run that
  // takes seconds (torchvision models on the reference kernels) is timed once.
  const auto t0 = std::chrono::steady_clock::now();
  model.execute(inputs);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Budget mb = b;
  mb.warmup = first > 2.0 ? 0 : std::max(0, b.warmup - 1);
  if (first > 2.0) mb.min_repeats = mb.max_repeats = 1;
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
