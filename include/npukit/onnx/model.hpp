// ONNX models on the operator core: load (check the whole graph), then run
// repeatedly. Shapes are inferred and buffers planned once per input shape
// (describe, then execute); a run with the same input shapes allocates nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "npukit/error.hpp"
#include "npukit/profile.hpp"
#include "npukit/tensor.hpp"

namespace npukit::onnx {

// A graph input or output. Symbolic dimensions ("N") are -1 in `shape` and
// named in `dim_names` (empty strings for fixed dimensions).
struct ValueInfo {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  std::vector<std::string> dim_names;
};

// One problem found while checking a model: the node (name and op type; both
// empty for file- or graph-level problems) and what is wrong.
struct Issue {
  std::string node;
  std::string op_type;
  std::string message;
  std::string text() const;  // "node 'conv1' (Conv): ..." or the message alone
};

// Every problem of a model at once. what() lists each issue on its own line.
class ModelError : public Error {
 public:
  ModelError(const std::string& source, std::vector<Issue> issues);
  const std::vector<Issue>& issues() const noexcept { return issues_; }

 private:
  std::vector<Issue> issues_;
};

// What `npukit info` shows: the graph as it is, supported or not.
struct NodeSummary {
  std::string name, op_type, domain;
  bool supported = false;
};
struct ModelSummary {
  std::string producer;
  int64_t ir_version = 0;
  int64_t opset = 0;  // of the default domain
  std::vector<ValueInfo> inputs, outputs;
  std::vector<NodeSummary> nodes;
  std::vector<std::string> supported_ops;  // every op type the runner executes
  Profile profile = Profile::onnxruntime;  // the nodes are the graph this profile runs:
  std::vector<std::string> rewrites;       // ONNX Runtime's QDQ fusions, one line each
};
// Reads a model without checking that it can run (only an unreadable file
// throws). Under the onnxruntime profiles the nodes are those left after
// ONNX Runtime's QDQ fusion (what Model::load runs); other profiles keep the file's.
ModelSummary summarize(const std::string& path, Profile profile = Profile::onnxruntime);

// The supported operators as "Conv", "com.microsoft.QLinearAdd", ...
std::vector<std::string> supported_operators();

// The same with their domain ("" is ai.onnx) and the opset versions of that
// domain a model may import to use them (`npukit info --operators`).
struct OperatorInfo {
  std::string domain, op_type;
  int64_t min_opset = 0, max_opset = 0;
};
std::vector<OperatorInfo> operator_list();

struct LayerTime {
  std::string node, op_type;
  Profile profile = Profile::onnxruntime;  // the semantics the node ran with
  double seconds = 0;                      // summed over timed_runs() runs
  // The node's fastest timed run: on a shared machine the mean of a small
  // layer mostly measures other processes, its best run much less so.
  double best_seconds = 0;
};

// One planned node: what `npukit info` lists per node and `npukit run
// --dump-all` / `npukit compare MODEL` walk. Shapes are those of the latest
// plan (load time binds every symbolic dimension to 1; infer() rebinds them).
struct NodeInfo {
  std::string name, op_type, domain;
  Profile profile = Profile::onnxruntime;    // the semantics the node follows
  std::vector<std::string> inputs, outputs;  // value names, "" for an absent optional input
  std::vector<std::string> output_types;     // element types ("float", "uint8", "int64", ...)
  std::vector<Shape> output_shapes;
};

// A value computed by the latest run (graph inputs and node outputs, in
// execution order): the view stays valid until the next run.
struct NamedValue {
  std::string name;
  std::string node;  // the producing node, "" for a graph input
  TensorView view;
};

// What a load may leave out of the file's values. `may_fuse`: rewrites that
// only save work run (under onnxruntime, Conv + Relu/Clip as one FusedConv),
// so the conv's unclipped output is never stored and values() lacks it.
// `keep_all`: every value the file's nodes compute is kept for values()
// (`npukit run --dump-all`, `npukit compare MODEL`); outputs are the same bits
// either way (the fused clip is exact). ONNX Runtime's QDQ fusion runs under
// both: it changes what is computed (integer kernels), not only how fast.
enum class Intermediates { may_fuse, keep_all };

// The activation memory of the latest plan (a batch-sliced plan: its last
// slice's). Values a step computes share one arena by liveness, except graph
// inputs and outputs, and except under keep_all or NPUKIT_MEMORY_PLAN=unshared.
struct MemoryUse {
  int64_t arena_bytes = 0;        // the shared arena
  int64_t arena_lower_bound = 0;  // the most bytes of arena values alive at one step
  int64_t private_bytes = 0;      // values with their own buffers (inputs, outputs, ...)
  int64_t unshared_bytes = 0;     // every value its own buffer (each rounded to 64 bytes)
  int64_t in_place_values = 0;    // outputs written over the bytes of an input dead after them
};

class Model {
 public:
  // Loads and checks the model; throws ModelError naming every offending node.
  // Every node follows `profile`; with `fallback`, a node whose operator has
  // no semantics for that profile (its core function rejects the profile)
  // follows onnxruntime instead, and layer_times() says which profile each
  // node followed. Without fallback such a node is a load error.
  static Model load(const std::string& path, Profile profile = Profile::onnxruntime,
                    bool fallback = false, Intermediates kept = Intermediates::may_fuse);
  static Model from_bytes(const void* data, size_t size, Profile profile = Profile::onnxruntime,
                          const std::string& source = "<memory>", bool fallback = false,
                          Intermediates kept = Intermediates::may_fuse);
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  Profile profile() const;
  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;

  // Inputs in graph-input order. The first run, and a run whose input shapes
  // differ from the previous one, plans shapes and buffers; later runs reuse
  // them. Returns views of the model's own output buffers, valid until the
  // next run.
  const std::vector<TensorView>& execute(const std::vector<TensorView>& inputs);
  // The same, returning copies of the outputs.
  // Threads: run() may be called on one Model from several threads at once;
  // the runs take turns on the model's plan and buffers (an internal lock held
  // until the outputs are copied), so each gets the right outputs. Views from
  // execute() stay valid only until the next run: call it from one thread.
  // For runs in parallel, load one Model per thread.
  std::vector<Tensor> run(const std::vector<TensorView>& inputs);

  // Every planned node in execution order (nodes folded into constants at
  // load time are left out).
  std::vector<NodeInfo> nodes() const;
  // Plans shapes for the given input shapes without running (no buffers) and
  // returns the nodes; the next run plans again.
  std::vector<NodeInfo> infer(const std::vector<Shape>& input_shapes);
  // After a run: every value it computed, for dumps and per-layer comparisons.
  // Values held only as load-time constants (int64 shape data) are left out,
  // and so are values fused away, and those whose bytes later values reuse
  // (MemoryUse), unless the load asked for keep_all.
  std::vector<NamedValue> values() const;
  MemoryUse memory_use() const;

  // Per-node time, in execution order.
  std::vector<LayerTime> layer_times() const;
  void reset_layer_times();
  // Runs summed in layer_times() (since load, the last reset or a change of
  // input shapes): divide by it for the time per run.
  int64_t timed_runs() const;
  int64_t plans() const;  // how many times shapes and buffers were planned

 private:
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  // from_bytes with the model file's directory (null: none), where external
  // initializer data is read from.
  static Model from_bytes_in(const void* data, size_t size, Profile profile,
                             const std::string& source, bool fallback, const std::string* model_dir,
                             Intermediates kept);
  std::unique_ptr<Impl> impl_;
};

}  // namespace npukit::onnx
