#include "main_job.hpp"

#include <fmt/core.h>
#include <zlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "npukit/error.hpp"
#include "npukit/npy.hpp"
#include "npukit/onnx/model.hpp"
#include "progress.hpp"

#ifndef NPUKIT_MODELS_DIR
#define NPUKIT_MODELS_DIR "models"
#endif

namespace npukit::cli {

namespace {

constexpr const char* kFn = "npukit run";
constexpr const char* kDatasetDir = "/usr/share/datasets/fashion-mnist";

struct Images {
  Tensor pixels;  // (count, 28, 28) uint8
  std::vector<uint8_t> labels;
  std::string description;
};

// An IDX file of Debian's dataset package (gzip): big-endian header, uint8 data.
std::vector<uint8_t> read_idx_gz(const std::string& path, Shape& dims) {
  gzFile f = gzopen(path.c_str(), "rb");
  check(f != nullptr, kFn, "--dataset", "'" + path + "' missing",
        "the Debian package dataset-fashion-mnist installed");
  std::vector<uint8_t> data;
  unsigned char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) data.insert(data.end(), buf, buf + n);
  gzclose(f);
  check(data.size() >= 4 && data[0] == 0 && data[1] == 0 && data[2] == 0x08, kFn, "--dataset",
        "'" + path + "'", "an IDX file of unsigned bytes");
  const int ndim = data[3];
  size_t off = 4 + 4 * static_cast<size_t>(ndim);
  check(data.size() >= off, kFn, "--dataset", "'" + path + "' truncated", "a complete IDX file");
  dims.clear();
  int64_t numel = 1;
  for (int i = 0; i < ndim; ++i) {
    const size_t p = 4 + 4 * static_cast<size_t>(i);
    dims.push_back((int64_t{data[p]} << 24) | (data[p + 1] << 16) | (data[p + 2] << 8) |
                   data[p + 3]);
    numel *= dims.back();
  }
  check(data.size() - off == static_cast<size_t>(numel), kFn, "--dataset",
        "'" + path + "' truncated", "a complete IDX file");
  return std::vector<uint8_t>(data.begin() + static_cast<std::ptrdiff_t>(off), data.end());
}

Images load_images(const MainJobOptions& o, const std::string& dir) {
  Images im;
  if (o.dataset.empty()) {
    im.pixels = read_npy(dir + "/fashion_mnist_eval_images.npy");
    const Tensor labels = read_npy(dir + "/fashion_mnist_eval_labels.npy");
    check(im.pixels.dtype() == DType::u8 && im.pixels.shape().size() == 3 &&
              im.pixels.shape()[1] == 28 && im.pixels.shape()[2] == 28,
          kFn, "images", shape_text(im.pixels.shape()), "uint8 (count, 28, 28)");
    check(labels.dtype() == DType::u8 && labels.numel() == im.pixels.shape()[0], kFn, "labels",
          shape_text(labels.shape()), "one uint8 label per image");
    im.labels = labels.to_vector<uint8_t>();
    im.description = fmt::format("{} bundled test images ({})", im.labels.size(), dir);
    return im;
  }
  check(o.dataset == "fashion-mnist", kFn, "--dataset", "'" + o.dataset + "'", "fashion-mnist");
  Shape dims, ldims;
  const std::vector<uint8_t> px =
      read_idx_gz(std::string(kDatasetDir) + "/t10k-images-idx3-ubyte.gz", dims);
  im.labels = read_idx_gz(std::string(kDatasetDir) + "/t10k-labels-idx1-ubyte.gz", ldims);
  check(dims.size() == 3 && dims[1] == 28 && dims[2] == 28 &&
            dims[0] == static_cast<int64_t>(im.labels.size()),
        kFn, "--dataset", shape_text(dims), "(count, 28, 28) images with one label each");
  im.pixels = Tensor::from<uint8_t>(dims, px);
  im.description =
      fmt::format("the full Fashion-MNIST test set, {} images ({})", im.labels.size(), kDatasetDir);
  return im;
}

struct Evaluation {
  std::string model, profile;
  bool supported = true;
  std::string reason;
  std::string own_ops;  // op types that followed this profile (the others: onnxruntime)
  std::vector<int> predictions;
  std::vector<float> logits;
  double seconds = 0;
  std::vector<onnx::LayerTime> layers;
  double accuracy = 0, agreement = -1;
  int64_t identical = -1;
};

Evaluation evaluate(const std::string& path, const std::string& label, Profile profile,
                    const Images& im, int64_t batch, bool show_progress) {
  Evaluation e;
  e.model = label;
  e.profile = profile_name(profile);
  std::optional<onnx::Model> model;
  try {
    // Nodes whose operator has no semantics for this profile follow onnxruntime.
    model.emplace(onnx::Model::load(path, profile, /*fallback=*/true));
  } catch (const onnx::ModelError& err) {
    e.supported = false;
    e.reason = err.issues().empty() ? err.what() : err.issues()[0].text();
    return e;
  }
  const int64_t count = static_cast<int64_t>(im.labels.size());
  Tensor x(DType::f32, {batch, 1, 28, 28});
  const uint8_t* px = im.pixels.data<uint8_t>();
  Progress bar(label + " " + e.profile, count, show_progress);
  int64_t correct = 0;
  for (int64_t start = 0; start < count; start += batch) {
    const int64_t b = std::min(batch, count - start);
    // The training script's preprocessing: pixel / 255 in float32.
    TensorView xv = TensorView::contiguous(x.view().raw(), DType::f32, {b, 1, 28, 28});
    float* xp = x.data<float>();
    for (int64_t i = 0; i < b * 784; ++i) xp[i] = static_cast<float>(px[start * 784 + i]) / 255.0f;
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<TensorView>& out = model->execute({xv});
    e.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    check(out.size() == 1 && out[0].dtype() == DType::f32 && out[0].shape() == Shape{b, 10}, kFn,
          "model", "'" + path + "'", "one float output of shape (N, 10)");
    const float* y = static_cast<const float*>(out[0].raw());
    for (int64_t i = 0; i < b; ++i) {
      int best = 0;
      for (int k = 1; k < 10; ++k)
        if (y[i * 10 + k] > y[i * 10 + best]) best = k;
      e.predictions.push_back(best);
      correct += best == im.labels[static_cast<size_t>(start + i)];
    }
    e.logits.insert(e.logits.end(), y, y + b * 10);
    bar.update(start + b);
  }
  e.accuracy = static_cast<double>(correct) / static_cast<double>(count);
  e.layers = model->layer_times();
  for (const auto& l : e.layers)
    if (l.profile == profile && e.own_ops.find(l.op_type) == std::string::npos)
      e.own_ops += (e.own_ops.empty() ? "" : ", ") + l.op_type;
  return e;
}

std::string models_dir(const MainJobOptions& o) {
  if (!o.models_dir.empty()) return o.models_dir;
  if (const char* env = std::getenv("NPUKIT_MODELS")) return env;
  return NPUKIT_MODELS_DIR;
}

// Agreement of each int8 evaluation's predictions and logits with evals[1]
// (the int8 model under onnxruntime).
void compare_with_onnxruntime(std::vector<Evaluation>& evals, size_t images) {
  const Evaluation& ref = evals[1];
  const auto count = static_cast<double>(images);
  for (size_t k = 1; k < evals.size(); ++k) {
    Evaluation& e = evals[k];
    if (!e.supported || !ref.supported) continue;
    int64_t agree = 0, same = 0;
    for (size_t i = 0; i < e.predictions.size(); ++i) {
      agree += e.predictions[i] == ref.predictions[i];
      bool eq = true;
      for (size_t c = 0; c < 10; ++c) eq = eq && e.logits[i * 10 + c] == ref.logits[i * 10 + c];
      same += eq;
    }
    e.agreement = static_cast<double>(agree) / count;
    e.identical = same;
  }
}

void print_json(const std::vector<Evaluation>& evals, const Images& im) {
  const auto count = static_cast<double>(im.labels.size());
  std::string s = fmt::format("{{\"images\": {}, \"source\": {}, \"results\": [", im.labels.size(),
                              json_string(im.description));
  for (size_t k = 0; k < evals.size(); ++k) {
    const Evaluation& e = evals[k];
    s += fmt::format("{}{{\"model\": \"{}\", \"profile\": \"{}\", \"supported\": {}", k ? ", " : "",
                     e.model, e.profile, e.supported ? "true" : "false");
    if (!e.supported) {
      s += ", \"reason\": " + json_string(e.reason) + "}";
      continue;
    }
    s += fmt::format(", \"accuracy\": {:.6f}, \"images_per_second\": {:.1f}", e.accuracy,
                     count / e.seconds);
    if (e.agreement >= 0)
      s += fmt::format(", \"agreement_with_onnxruntime\": {:.6f}, \"identical_logits\": {}",
                       e.agreement, e.identical);
    s += ", \"layers\": [";
    for (size_t l = 0; l < e.layers.size(); ++l)
      s += fmt::format("{}{{\"node\": {}, \"op\": {}, \"ms_per_image\": {:.6f}}}", l ? ", " : "",
                       json_string(e.layers[l].node), json_string(e.layers[l].op_type),
                       e.layers[l].seconds / count * 1e3);
    s += "]}";
  }
  fmt::print("{}]}}\n", s);
}

void print_text(const std::vector<Evaluation>& evals, const Images& im, const std::string& fp32,
                const std::string& int8) {
  const auto count = static_cast<double>(im.labels.size());
  fmt::print("npukit main job: Fashion-MNIST CNN on {}\n", im.description);
  fmt::print(
      "fp32 model {}\nint8 model {} (QOperator: QLinearConv, MaxPool, QLinearAveragePool, ...)\n\n",
      fp32, int8);
  fmt::print("{:<5} {:<12} {:>9} {:>18} {:>16} {:>11}\n", "model", "profile", "accuracy",
             "agrees with int8", "identical logits", "images/s");
  fmt::print("{:<5} {:<12} {:>9} {:>18} {:>16} {:>11}\n", "", "", "", "onnxruntime", "", "");
  for (const Evaluation& e : evals) {
    if (!e.supported) {
      fmt::print("{:<5} {:<12} not run: {}\n", e.model, e.profile, e.reason);
      continue;
    }
    fmt::print(
        "{:<5} {:<12} {:>8.2f}% {:>18} {:>16} {:>11.0f}\n", e.model, e.profile, e.accuracy * 100,
        e.agreement < 0 ? std::string("-") : fmt::format("{:.2f}%", e.agreement * 100),
        e.identical < 0 ? std::string("-") : fmt::format("{}/{}", e.identical, im.labels.size()),
        count / e.seconds);
  }
  fmt::print("\nops that follow each profile (the rest keep onnxruntime's semantics):\n");
  for (size_t k = 1; k < evals.size(); ++k)
    if (evals[k].supported)
      fmt::print("  {:<12} {}\n", evals[k].profile,
                 evals[k].own_ops.empty() ? "-" : evals[k].own_ops);
  for (size_t k : {size_t{0}, size_t{1}}) {
    const Evaluation& e = evals[k];
    if (!e.supported) continue;
    fmt::print("\ntime per layer, {} model, profile {} (microseconds per image)\n", e.model,
               e.profile);
    for (const auto& l : e.layers)
      fmt::print("  {:<40} {:<26} {:>9.2f}\n", l.node, l.op_type, l.seconds / count * 1e6);
  }
}

}  // namespace

int run_main_job(const MainJobOptions& o) {
  check_range(kFn, "--batch", o.batch, 1, 10000);
  const std::string dir = models_dir(o);
  const std::string fp32 = dir + "/fashion_mnist_fp32.onnx",
                    int8 = dir + "/fashion_mnist_int8.onnx";
  const Images im = load_images(o, dir);
  const bool progress = !o.json;
  std::vector<Evaluation> evals;
  evals.push_back(evaluate(fp32, "fp32", Profile::onnxruntime, im, o.batch, progress));
  check(evals[0].supported, kFn, "model", "'" + fp32 + "'",
        "a model npukit runs: " + evals[0].reason);
  for (Profile p : all_profiles())
    evals.push_back(evaluate(int8, "int8", p, im, o.batch, progress));
  compare_with_onnxruntime(evals, im.labels.size());
  if (o.json)
    print_json(evals, im);
  else
    print_text(evals, im, fp32, int8);
  return 0;
}

}  // namespace npukit::cli
