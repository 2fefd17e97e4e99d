// npukit_race: see race.hpp. Usage:
//   npukit_race [--quick] [--check-only] [--stat median|min] [--problems N] [--only I,J] [--threads
//   1,2]
//               [--results DIR] [--markdown FILE] [--no-models] [--models-dir DIR]
//   npukit_race --export DIR [--problems N]   (inputs and cases for the scripts)
//   --perturb-npukit changes one element of npukit's every output before the
//   check (a test that the checks catch a one-ulp or one-code difference).
// Exit status 1 when any output fails its check.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "npukit/kernels.hpp"
#include "npukit/npy.hpp"
#include "race.hpp"

#ifndef NPUKIT_RACE_MODELS_DIR
#define NPUKIT_RACE_MODELS_DIR "models"
#endif

namespace race {
namespace {

struct Options {
  bool quick = false, check_only = false, models = true, minimum = false;
  bool perturb = false;   // change one npukit output element: shows that the checks bite
  size_t problems = 0;    // 0 = all
  std::vector<int> only;  // problem indices to keep (empty = all)
  std::vector<int> threads{1, 2};
  std::string export_dir, results_dir, markdown, command = "npukit_race";
  std::string models_dir = NPUKIT_RACE_MODELS_DIR;
};

Options parse(int argc, char** argv) {
  Options o;
  constexpr const char* fn = "npukit_race";
  auto value = [&](int& i) {
    npukit::check(i + 1 < argc, fn, argv[i], "missing value", "a value after the option");
    return std::string(argv[++i]);
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(
          "usage: npukit_race [options]  (scripts/bench.sh builds the peers and runs it)\n"
          "  --quick            shorter time budget per case\n"
          "  --check-only       check every output, time nothing\n"
          "  --stat median|min  statistic over the repeats (default median)\n"
          "  --no-models        pooling only, skip the networks\n"
          "  --perturb-npukit   change one element of every npukit output (the checks must fail)\n"
          "  --problems N       the first N pooling problems\n"
          "  --only I,J         these pooling problem indices\n"
          "  --threads LIST     thread counts to time, e.g. 1,2\n"
          "  --export DIR       write the cases and inputs for the external peers, then stop\n"
          "  --results DIR      read the external peers' results\n"
          "  --markdown FILE    also write the tables as Markdown\n"
          "  --models-dir DIR   where the network models are\n"
          "  --command TEXT     the command line to print in the report\n",
          stdout);
      std::exit(0);
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--check-only") {
      o.check_only = true;
    } else if (a == "--stat") {
      const std::string v = value(i);
      npukit::check(v == "median" || v == "min", fn, "--stat", v, "median or min");
      o.minimum = v == "min";
    } else if (a == "--perturb-npukit") {
      o.perturb = true;
    } else if (a == "--no-models") {
      o.models = false;
    } else if (a == "--problems" || a == "--cases") {
      const std::string v = value(i);
      const long n = std::strtol(v.c_str(), nullptr, 10);
      npukit::check(n >= 1 && n <= 100, fn, a.c_str(), v, "[1, 100]");
      o.problems = static_cast<size_t>(n);
    } else if (a == "--only") {
      std::stringstream ss(value(i));
      std::string t;
      while (std::getline(ss, t, ',')) {
        const long n = std::strtol(t.c_str(), nullptr, 10);
        const auto count = static_cast<long>(problems().size());
        npukit::check(n >= 0 && n < count, fn, "--only", t,
                      "problem indices in [0, " + std::to_string(count - 1) + "]");
        o.only.push_back(static_cast<int>(n));
      }
    } else if (a == "--threads") {
      o.threads.clear();
      std::stringstream ss(value(i));
      std::string t;
      while (std::getline(ss, t, ',')) {
        const long n = std::strtol(t.c_str(), nullptr, 10);
        npukit::check(n >= 1 && n <= 256, fn, "--threads", t, "a comma-separated list in [1, 256]");
        o.threads.push_back(static_cast<int>(n));
      }
    } else if (a == "--export") {
      o.export_dir = value(i);
    } else if (a == "--results") {
      o.results_dir = value(i);
    } else if (a == "--markdown") {
      o.markdown = value(i);
    } else if (a == "--models-dir") {
      o.models_dir = value(i);
    } else if (a == "--command") {
      o.command = value(i);
    } else {
      npukit::fail(fn, "argument", a,
                   "--quick, --check-only, --stat median|min, --no-models, --perturb-npukit, "
                   "--problems N, --only "
                   "I,J, --threads LIST, --export DIR, "
                   "--results DIR, --markdown FILE, --models-dir DIR, --command TEXT");
    }
  }
  return o;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

// "AMD EPYC, 2 cores, L1d 32 KiB, L2 1024 KiB, L3 32768 KiB, 23 GiB; avx2 fma avx512f ..."
std::string cpu_description() {
  std::string s =
      cpu_model() + ", " + std::to_string(std::thread::hardware_concurrency()) + " cores";
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level(dir + "level"), type(dir + "type"), size(dir + "size");
    std::string l, t, z;
    if (!(level >> l) || !(type >> t) || !(size >> z) || t == "Instruction") continue;
    s += ", L" + l + (t == "Data" ? "d " : " ") + z;
  }
  std::ifstream mem("/proc/meminfo");
  std::string key;
  long kib = 0;
  if (mem >> key >> kib) s += fmt::format(", {} GiB", kib / (1024 * 1024));
  std::ifstream in("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      std::stringstream ss(line.substr(line.find(':') + 1));
      std::string f;
      while (ss >> f)
        for (const char* want : {"avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl",
                                 "avx512_vnni", "avx512_bf16", "avx_vnni"})
          if (f == want) flags += " " + f;
      break;
    }
  return s + ";" + flags;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return buf;
}

// PyTorch and ONNX Runtime columns: filled from the scripts' results.
std::vector<Peer> external_columns() {
  auto col = [](std::string name, std::string layout, std::string semantics) {
    Peer p;
    p.name = std::move(name);
    p.layout = std::move(layout);
    p.semantics = std::move(semantics);
    return p;
  };
  return {col("PyTorch", "nchw", "pytorch"), col("PyTorch", "nhwc", "pytorch"),
          col("ONNX Runtime", "nchw", "onnxruntime")};
}

std::string key(const std::string& id, const std::string& peer, const std::string& layout,
                int threads) {
  return id + "|" + peer + "|" + layout + "|" + std::to_string(threads);
}

void report_failure(const Case& c, const Peer& p, int threads, const Check& k,
                    const std::vector<float>& got, const std::vector<float>& want) {
  const auto i = static_cast<size_t>(std::max<int64_t>(k.first_bad, 0));
  fmt::print(stderr,
             "MISMATCH case {} ({} {} {}) peer '{}' threads {}: {} of {} elements beyond "
             "tolerance {}; first at flat NCHW index {}: got {} want {}\n",
             c.id(), c.problem.label, npukit::dtype_name(c.dtype), op_name(c.op), p.column(),
             threads, k.bad, want.size(), tolerance(c, p.name), i, i < got.size() ? got[i] : NAN,
             i < want.size() ? want[i] : NAN);
}

npukit::Tensor load_images(const std::string& models_dir) {
  const npukit::Tensor px = npukit::read_npy(models_dir + "/fashion_mnist_eval_images.npy");
  npukit::Tensor x(npukit::DType::f32, {px.shape()[0], 1, px.shape()[1], px.shape()[2]});
  const auto* src = px.data<uint8_t>();
  for (int64_t i = 0; i < x.numel(); ++i)
    x.data<float>()[i] = static_cast<float>(src[i]) / 255.0f;  // the training preprocessing
  return x;
}

std::string compare_logits(const std::vector<float>& a, const std::vector<float>& b,
                           int64_t classes) {
  if (a.size() != b.size() || classes <= 0) return "different sizes";
  size_t same = 0, agree = 0;
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    same += a[i] == b[i];
    max_diff = std::max(max_diff, static_cast<double>(std::fabs(a[i] - b[i])));
    max_ref = std::max(max_ref, static_cast<double>(std::fabs(b[i])));
  }
  const auto rows = a.size() / static_cast<size_t>(classes);
  for (size_t r = 0; r < rows; ++r) {
    const auto begin = static_cast<std::ptrdiff_t>(r * static_cast<size_t>(classes));
    const auto ia = std::max_element(a.begin() + begin, a.begin() + begin + classes) - a.begin();
    const auto ib = std::max_element(b.begin() + begin, b.begin() + begin + classes) - b.begin();
    agree += ia == ib;
  }
  if (same == a.size()) return "identical logits";
  // Relative to the largest logit: random-weight models can have tiny logits.
  return fmt::format("max abs diff {:.2g} ({:.2g} of the largest logit), top-1 agrees {}/{}",
                     max_diff, max_ref > 0 ? max_diff / max_ref : 0.0, agree, rows);
}

int run(const Options& o) {
  std::vector<Problem> ps = problems();
  if (o.problems > 0 && o.problems < ps.size()) ps.resize(o.problems);
  if (!o.only.empty())
    std::erase_if(ps, [&](const Problem& p) {
      return std::find(o.only.begin(), o.only.end(), p.index) == o.only.end();
    });
  const std::vector<Case> cs = cases(ps);
  if (!o.export_dir.empty()) {
    export_cases(o.export_dir, cs, o.models_dir);
    fmt::print("npukit_race: wrote {} cases and their inputs to {}\n", cs.size(), o.export_dir);
    return 0;
  }
  Budget budget = o.quick ? quick_budget() : full_budget();
  budget.minimum = o.minimum;
  const bool timed = !o.check_only;

  std::vector<Peer> columns = npukit_peers();
  for (auto list : {xnnpack_peers(), onednn_peers(), external_columns()})
    columns.insert(columns.end(), list.begin(), list.end());

  std::map<std::string, ExternalResult> external;
  if (!o.results_dir.empty())
    for (const ExternalResult& r : import_results(o.results_dir, "results-"))
      external[key(r.id, r.peer, r.layout, r.threads)] = r;

  Machine m;
  m.cpu = cpu_description();
  m.isa = npukit::isa_name(npukit::max_isa());
  m.date = utc_now();
  m.command = o.command;
  m.threads = o.threads;
  m.statistic = o.minimum ? "minimum" : "median";
  m.load_before = load_average();
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  m.omp_wait_policy = policy && *policy ? policy : "unset (libgomp default: spin, then sleep)";
  std::map<std::pair<int64_t, int>, double> copy;
  if (timed) {
    std::set<int64_t> sizes;
    for (const Case& c : cs) sizes.insert(c.bytes());
    for (int64_t s : sizes) {
      std::vector<double> v;
      for (int t : o.threads) v.push_back(copy[{s, t}] = copy_gbps(s, t, budget));
      m.copy.emplace_back(s, v);
    }
  }

  std::vector<Row> rows;
  int failures = 0;
  size_t done = 0;
  for (const Case& c : cs) {
    ++done;
    const npukit::Tensor x = make_input(c.problem, c.problem_index, c.dtype, npukit::Layout::nchw);
    const std::vector<float> want_ort = reference_output(c, x, npukit::Profile::onnxruntime);
    std::map<std::string, std::vector<float>> want_torch;  // by layout, computed when needed
    const auto want_for = [&](const Peer& p) -> const std::vector<float>& {
      if (p.semantics != "pytorch") return want_ort;
      auto it = want_torch.find(p.layout);
      if (it == want_torch.end()) {
        const auto layout = p.layout == "nhwc" ? npukit::Layout::nhwc : npukit::Layout::nchw;
        it = want_torch
                 .emplace(p.layout,
                          reference_output(c, relayout(x, layout), npukit::Profile::pytorch))
                 .first;
      }
      return it->second;
    };
    for (int t : o.threads) {
      fmt::print(stderr, "[{}/{}] {} threads {}\n", done, cs.size(), c.id(), t);
      Row row;
      row.c = c;
      row.threads = t;
      if (timed) row.copy_gbps = copy[{c.bytes(), t}];
      for (const Peer& p : columns) {
        Cell cell;
        std::vector<float> got;
        if (p.prepare) {
          Prepared pr;
          try {
            if (p.prepare(c, x, t, pr, cell.note)) {
              pr.run();
              got = pr.output();
              cell.ran = true;
              cell.note = pr.detail;
              if (timed) cell.seconds = median_seconds(pr.run, budget);
            }
          } catch (const std::exception& e) {
            cell.ran = false;
            cell.note = std::string("failed: ") + e.what();
          }
        } else {
          const auto it = external.find(key(c.id(), p.name, p.layout, t));
          if (it == external.end()) {
            cell.note = o.results_dir.empty()
                            ? "not available (timed by scripts/bench.sh through --results)"
                            : "not available (no result from its script)";
          } else if (it->second.seconds < 0) {
            cell.note = it->second.note;
          } else {
            got = logical_values(npukit::read_npy(it->second.output_file).view());
            cell.ran = true;
            cell.seconds = it->second.seconds;
            cell.note = it->second.note;
          }
        }
        if (cell.ran && o.perturb && p.name == "npukit" && !got.empty()) {
          float& v = got[got.size() / 2];
          v = std::nextafter(v, INFINITY);  // one ulp (f32) or one code (8-bit: v + 1 rounds)
          if (c.dtype != npukit::DType::f32) v = std::floor(v) + 1;
        }
        if (cell.ran) {
          cell.check = compare(c, p.name, got, want_for(p));
          if (!cell.check.pass()) {
            ++failures;
            report_failure(c, p, t, cell.check, got, want_for(p));
          }
        }
        row.cells.push_back(cell);
      }
      rows.push_back(std::move(row));
    }
  }

  std::vector<ModelRow> model_rows;
  std::vector<ModelJob> jobs;
  if (!o.results_dir.empty()) jobs = read_model_jobs(o.results_dir);
  if (jobs.empty() && std::filesystem::exists(o.models_dir + "/fashion_mnist_fp32.onnx"))
    for (const char* name : {"fashion_mnist_fp32", "fashion_mnist_int8"})
      jobs.push_back(
          {name, o.models_dir + "/" + name + ".onnx", "", std::string(name).ends_with("int8")});
  if (!o.models || !timed) jobs.clear();
  for (const ModelJob& job : jobs) {
    const npukit::Tensor input =
        job.input.empty() ? load_images(o.models_dir) : npukit::read_npy(job.input);
    for (int t : o.threads) {
      fmt::print(stderr, "model {} threads {}\n", job.name, t);
      ModelRow r;
      r.model = job.name;
      r.threads = t;
      r.images = input.shape()[0];
      r.exact = job.exact;
      std::vector<float> logits;
      r.npukit_seconds = time_model(job.model, input, t, budget, logits);
      const auto it = external.find(key("model-" + job.name, "ONNX Runtime", "nchw", t));
      if (it != external.end() && it->second.seconds > 0) {
        r.ort_seconds = it->second.seconds;
        const npukit::Tensor ort = npukit::read_npy(it->second.output_file);
        const std::vector<float> ort_logits(ort.data<float>(), ort.data<float>() + ort.numel());
        r.check =
            compare_logits(logits, ort_logits, static_cast<int64_t>(logits.size()) / r.images);
        if (r.exact && r.check != "identical logits") {
          ++failures;
          fmt::print(stderr, "MISMATCH model {} threads {}: {} (must be ONNX Runtime's bytes)\n",
                     job.name, t, r.check);
          r.check += " (FAILED: must be identical)";
        }
      } else {
        r.check = "ONNX Runtime not run";
      }
      model_rows.push_back(r);
    }
  }

  m.load_after = load_average();
  fmt::print("{}", render_table(columns, rows, model_rows, m, false, timed));
  if (!o.markdown.empty()) {
    std::ofstream md(o.markdown);
    md << render_table(columns, rows, model_rows, m, true, timed);
  }
  if (failures) fmt::print(stderr, "npukit_race: {} outputs failed their check\n", failures);
  return failures ? 1 : 0;
}

}  // namespace
}  // namespace race

int main(int argc, char** argv) {
  try {
    return race::run(race::parse(argc, argv));
  } catch (const std::exception& e) {
    fmt::print(stderr, "npukit_race: {}\n", e.what());
    return 2;
  }
}
