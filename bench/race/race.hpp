// npukit_race: times npukit and its peers (XNNPACK, oneDNN in process;
// PyTorch and ONNX Runtime through scripts) on the same pooling problems and
// the same data, checks every output against npukit's reference kernels, and
// prints one table. Shared types of the harness.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "npukit/profile.hpp"
#include "npukit/tensor.hpp"

namespace race {

enum class Op : uint8_t {
  avg_include_pad,  // divisor kernel_h * kernel_w (ONNX count_include_pad=1)
  avg_exclude_pad,  // divisor = taps on the input (count_include_pad=0)
  max,
  // QLinearAveragePool with calibrated scales (8-bit only, divisor kernel_h *
  // kernel_w): x_scale 0.0235 and y_scale 0.0198 have full mantissas, so ONNX
  // Runtime's float path runs (the "QLinearAveragePool >= 20x ORT").
  avg_calibrated,
};
const char* op_name(Op op);

// One pooling problem: a square window on an (N, C, H, W) image. `global`
// means the window is the whole image (kernel = H = W, no padding).
struct Problem {
  int index = 0;      // position in problems(): names its cases and seeds its inputs
  std::string label;  // "1x64x112x112 k3s2p1"
  int64_t n = 1, c = 1, h = 1, w = 1;
  int64_t kernel = 1, stride = 1, pad = 0;
  bool global = false;
  int64_t out_h() const { return global ? 1 : (h + 2 * pad - kernel) / stride + 1; }
  int64_t out_w() const { return global ? 1 : (w + 2 * pad - kernel) / stride + 1; }
};

// A problem with a data type and an operation: one row of the table (per thread count).
struct Case {
  int problem_index = 0;
  Problem problem;
  npukit::DType dtype = npukit::DType::f32;
  Op op = Op::max;
  std::string id() const;  // stable key shared with the scripts: "p0-f32-max"
  npukit::Shape in_shape() const { return {problem.n, problem.c, problem.h, problem.w}; }
  npukit::Shape out_shape() const {
    return {problem.n, problem.c, problem.out_h(), problem.out_w()};
  }
  int64_t bytes() const;  // input + output bytes
};

// Quantization of the 8-bit average cases: scale 1 and zero point 0 in and out,
// so that every peer (oneDNN has no scales or zero points) computes the same
// mathematical value, round(sum / divisor).
inline constexpr float kQuantScale = 1.0f;
inline constexpr int32_t kQuantZeroPoint = 0;

// The quantization of a case's 8-bit input and output.
struct Quant {
  float x_scale = kQuantScale, y_scale = kQuantScale;
  int32_t x_zero_point = kQuantZeroPoint, y_zero_point = kQuantZeroPoint;
};
// kQuantScale / kQuantZeroPoint, except Op::avg_calibrated: 0.0235 and 121
// (s8: -3) in, 0.0198 and 117 (s8: 5) out.
Quant quant_of(const Case& c);

// The problems of issue #9, in table order.
std::vector<Problem> problems();
// Every case of these problems: f32/u8/s8; avg include/exclude pad (one avg
// when there is no padding: both divisors coincide) and max.
std::vector<Case> cases(const std::vector<Problem>& ps);

// Inputs from a fixed seed: f32 ~ N(0, 1), u8 and s8 uniform over the whole range.
npukit::Tensor make_input(const Problem& p, int problem_index, npukit::DType dtype,
                          npukit::Layout layout);
// The same data in the other layout.
npukit::Tensor relayout(const npukit::Tensor& t, npukit::Layout layout);
// Logical (N, C, H, W) values of a tensor as float (exact for 8-bit codes).
std::vector<float> logical_values(const npukit::TensorView& t);

// A prepared run of one implementation on one case: `run` computes the output
// (timed), `output` returns it as logical NCHW values (not timed).
struct Prepared {
  std::function<void()> run;
  std::function<std::vector<float>()> output;
  std::string detail;  // e.g. the peer's own implementation name
};

// One implementation column of the table. `prepare` either returns a runnable
// computation (threads already set) or leaves `why` saying why it cannot run the case.
struct Peer {
  std::string name;       // "npukit", "XNNPACK", "oneDNN", "PyTorch", "ONNX Runtime"
  std::string layout;     // "nchw" or "nhwc"
  std::string semantics;  // reference the check uses: "onnxruntime" or "pytorch"
  std::function<bool(const Case&, const npukit::Tensor& input, int threads, Prepared& out,
                     std::string& why)>
      prepare;
  std::string column() const { return name + " " + layout; }
};

// npukit's public API on one case under the semantics of `profile`
// (onnxruntime or pytorch); the implementation policy (fast or reference) is
// whatever npukit::impl() says.
void npukit_compute(const Case& c, const npukit::TensorView& x, const npukit::TensorView& y,
                    npukit::Profile profile);
// The same computed by npukit's reference kernels (Impl::reference), as
// logical NCHW values; `x` in the layout the peer used (PyTorch's quantized
// average pooling rounds differently per memory format).
std::vector<float> reference_output(const Case& c, const npukit::Tensor& x,
                                    npukit::Profile profile);

// How a peer's output compares with the reference.
struct Check {
  bool ran = false;
  int64_t exact = 0, within = 0, bad = 0;  // elements bit-equal, within tolerance, beyond it
  double max_abs_diff = 0;
  int64_t first_bad = -1;  // index of the first element beyond tolerance
  bool pass() const { return ran && bad == 0; }
  std::string mark() const;  // "=" bit-exact, "~" within tolerance, "X" beyond it
};
// Tolerance: 0 for max pooling and for peers whose semantics npukit reproduces
// (npukit itself, ONNX Runtime, PyTorch); +-1 code for 8-bit averages of
// XNNPACK and oneDNN (their own rounding); |d| <= 1e-5 * max(1, |ref|) for
// f32 averages of every peer but npukit (their own summation order).
double tolerance(const Case& c, const std::string& peer);
Check compare(const Case& c, const std::string& peer, const std::vector<float>& got,
              const std::vector<float>& want);

std::vector<Peer> npukit_peers();
std::vector<Peer> xnnpack_peers();  // empty list entries say "not available" when not built
std::vector<Peer> onednn_peers();
bool xnnpack_built();
bool onednn_built();

// ---- PyTorch and ONNX Runtime through scripts (race_peers.py, race_ort.mjs) ----

// Writes DIR/cases.tsv (one line per case: id, geometry, dtype, op, input
// file), DIR/input-p<i>-<dtype>.npy (NCHW), DIR/images.npy (the bundled
// images as the models' f32 (N, 1, 28, 28) input) and DIR/models.tsv (the
// bundled models; race_peers.py --torchvision appends its exports).
void export_cases(const std::string& dir, const std::vector<Case>& cs,
                  const std::string& models_dir);

// One model of the main-job table: DIR/models.tsv lines name, model, input
// .npy, check ("exact": the outputs must be ONNX Runtime's bytes, as for the
// int8 models; "close" or absent: reported, not a failed check).
struct ModelJob {
  std::string name, model, input;  // paths absolute; input empty = the bundled images
  bool exact = false;
};
std::vector<ModelJob> read_model_jobs(const std::string& dir);

// One timing written by a script: DIR/results-*.tsv lines
// id, peer, layout, threads, seconds (or -1), output .npy (relative to DIR), note.
struct ExternalResult {
  std::string id, peer, layout;
  int threads = 1;
  double seconds = -1;
  std::string output_file, note;
};
std::vector<ExternalResult> import_results(const std::string& dir, const std::string& prefix);

// ---- results and the printed table ----------------------------------------

struct Cell {
  bool ran = false;
  double seconds = -1;
  Check check;
  std::string note;  // why it did not run, or the peer's implementation name
};
struct Row {
  Case c;
  int threads = 1;
  std::vector<Cell> cells;  // one per column (Peer) in table order
  double copy_gbps = 0;     // copy bandwidth at this working set and thread count
};
struct ModelRow {
  std::string model;  // "fashion_mnist_fp32"
  int threads = 1;
  int64_t images = 0;
  double npukit_seconds = -1, ort_seconds = -1;
  std::string check;   // how npukit's outputs compare with ONNX Runtime's
  bool exact = false;  // the outputs must be identical (int8 models)
};
struct Machine {
  std::string cpu, isa, date, command, statistic;
  std::string load_before, load_after;  // /proc/loadavg: other work on the machine
  std::string omp_wait_policy;          // OMP_WAIT_POLICY (npukit, oneDNN, PyTorch)
  std::vector<std::pair<int64_t, std::vector<double>>>
      copy;  // working set -> GB/s per thread count
  std::vector<int> threads;
};
// Plain text (stdout) and markdown (docs/performance.md) renderings.
std::string render_table(const std::vector<Peer>& columns, const std::vector<Row>& rows,
                         const std::vector<ModelRow>& models, const Machine& m, bool markdown,
                         bool timed);

// ---- timing ------------------------------------------------------------------

struct Budget {
  int warmup = 2;               // untimed runs first (page faults, caches, thread start)
  double target_seconds = 0.1;  // repeats ~ target / (time of one run), clamped:
  int min_repeats = 3, max_repeats = 200;
  // The statistic reported: the median (default), or the minimum, which
  // estimates the uncontended time when other work shares the cores.
  bool minimum = false;
};
Budget full_budget();
Budget quick_budget();
// Median (or minimum, see Budget) of the timed repeats of f, in seconds.
double median_seconds(const std::function<void()>& f, const Budget& b);

// The machine's copy bandwidth for a working set of `bytes` (bytes/2 copied
// from one buffer to another with memcpy, split over `threads` OpenMP threads),
// as (bytes read + bytes written) / second, in GB/s.
double copy_gbps(int64_t bytes, int threads, const Budget& b);

// ---- the main job: the bundled models, images per second ---------------------

// npukit's ONNX runner on `model_path` with input `images` (f32 (N, 1, 28, 28)),
// `threads` threads; returns seconds per batch (median) and the first output.
double time_model(const std::string& model_path, const npukit::Tensor& images, int threads,
                  const Budget& b, std::vector<float>& output);

}  // namespace race
