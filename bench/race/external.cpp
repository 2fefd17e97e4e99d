// The exchange with the scripts that time PyTorch (race_peers.py) and ONNX
// Runtime (race_ort.mjs): the cases and their inputs go out as a TSV file and
// .npy files, the timings and outputs come back the same way.
#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "npukit/npy.hpp"
#include "race.hpp"

namespace race {

namespace {

std::string input_file(const Case& c) {
  return fmt::format("input-p{}-{}.npy", c.problem_index, npukit::dtype_name(c.dtype));
}

}  // namespace

void export_cases(const std::string& dir, const std::vector<Case>& cs,
                  const std::string& models_dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::ofstream tsv(fs::path(dir) / "cases.tsv");
  tsv << "id\tlabel\tn\tc\th\tw\tkernel\tstride\tpad\tglobal\tdtype\top\tscale\tzero_point\t"
         "input\ty_scale\ty_zero_point\n";
  for (const Case& c : cs) {
    const Problem& p = c.problem;
    const std::string in = input_file(c);
    if (!fs::exists(fs::path(dir) / in))
      npukit::write_npy((fs::path(dir) / in).string(),
                        make_input(p, c.problem_index, c.dtype, npukit::Layout::nchw).view());
    const char* op = c.op == Op::max               ? "max"
                     : c.op == Op::avg_include_pad ? "avg_include_pad"
                     : c.op == Op::avg_calibrated  ? "avg_calibrated"
                                                   : "avg_exclude_pad";
    const Quant q = quant_of(c);
    tsv << c.id() << '\t' << p.label << '\t' << p.n << '\t' << p.c << '\t' << p.h << '\t' << p.w
        << '\t' << p.kernel << '\t' << p.stride << '\t' << p.pad << '\t' << (p.global ? 1 : 0)
        << '\t' << npukit::dtype_name(c.dtype) << '\t' << op << '\t'
        << fmt::format("{:.9g}", q.x_scale) << '\t' << q.x_zero_point << '\t' << in << '\t'
        << fmt::format("{:.9g}", q.y_scale) << '\t' << q.y_zero_point << '\n';
  }
  // The models' input: the bundled images as pixel / 255 in f32, (N, 1, 28, 28).
  const npukit::Tensor px = npukit::read_npy(models_dir + "/fashion_mnist_eval_images.npy");
  npukit::check(px.dtype() == npukit::DType::u8 && px.shape().size() == 3, "race::export_cases",
                "images", npukit::shape_text(px.shape()), "uint8 (count, 28, 28)");
  npukit::Tensor x(npukit::DType::f32, {px.shape()[0], 1, px.shape()[1], px.shape()[2]});
  const auto* src = px.data<uint8_t>();
  float* dst = x.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) dst[i] = static_cast<float>(src[i]) / 255.0f;
  const std::string images = fs::absolute(fs::path(dir) / "images.npy").string();
  npukit::write_npy(images, x.view());
  std::ofstream models(fs::path(dir) / "models.tsv");
  models << "name\tmodel\tinput\tcheck\n";
  for (const char* name : {"fashion_mnist_fp32", "fashion_mnist_int8"})
    models << name << '\t' << fs::absolute(fs::path(models_dir) / name).string() << ".onnx\t"
           << images << '\t' << (std::string(name).ends_with("int8") ? "exact" : "close") << '\n';
}

std::vector<ModelJob> read_model_jobs(const std::string& dir) {
  std::vector<ModelJob> jobs;
  std::ifstream in(std::filesystem::path(dir) / "models.tsv");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    ModelJob j;
    std::getline(ss, j.name, '\t');
    std::getline(ss, j.model, '\t');
    std::getline(ss, j.input, '\t');
    std::string check;
    std::getline(ss, check, '\t');
    j.exact = check == "exact";
    if (!j.name.empty()) jobs.push_back(j);
  }
  return jobs;
}

std::vector<ExternalResult> import_results(const std::string& dir, const std::string& prefix) {
  namespace fs = std::filesystem;
  std::vector<ExternalResult> out;
  if (!fs::exists(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || entry.path().extension() != ".tsv") continue;
    std::ifstream in(entry.path());
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      std::vector<std::string> f;
      std::stringstream ss(line);
      std::string field;
      while (std::getline(ss, field, '\t')) f.push_back(field);
      f.resize(7);
      ExternalResult r;
      r.id = f[0];
      r.peer = f[1];
      r.layout = f[2];
      r.threads = f[3].empty() ? 1 : std::stoi(f[3]);
      r.seconds = f[4].empty() ? -1 : std::stod(f[4]);
      r.output_file = f[5].empty() ? "" : (fs::path(dir) / f[5]).string();
      r.note = f[6];
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace race
