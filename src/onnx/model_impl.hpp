// The ONNX executor's state (Model::Impl): the graph as loaded, the current
// plan and its buffers, and the batch-sliced plans. model.cpp loads, checks,
// plans and runs; batch_slices_run.cpp plans and runs batch slices.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "npukit/onnx/model.hpp"
#include "onnx/graph.hpp"
#include "onnx/loaded.hpp"
#include "onnx/memory_plan.hpp"

namespace npukit::onnx {

class OrtNchwcTracker;

struct Model::Impl {
  Profile profile = Profile::onnxruntime;
  bool fallback = false;
  std::vector<Profile> node_profile;  // per node: the profile its kernel follows
  std::string source;
  LoadedGraph g;
  std::vector<ValueInfo> inputs, outputs;

  // Values: every name the graph uses gets an index.
  std::map<std::string, size_t> ids;
  std::vector<std::string> names;
  std::vector<const Constant*> constant_of;  // per value, null unless known at load
  std::vector<size_t> input_ids, output_ids;
  std::vector<size_t> order;  // node indices in execution order (folded Constants excluded)
  std::vector<std::shared_ptr<Constant>> folded;
  std::vector<std::shared_ptr<Constant>> plan_values;  // computed while planning (this plan's)

  // The current plan.
  struct Step {
    size_t node;
    std::vector<size_t> in, out;
    Kernel run;
    std::vector<TensorView> in_views, out_views;
    bool view_only = false;   // its output is a view of its input: nothing to run
    int in_place_input = -1;  // NodePlan::in_place_input
  };
  std::vector<Step> steps;
  std::vector<Operand> types;
  std::vector<Tensor> buffers;  // per value, the bytes it owns (the arena: its first value's)
  std::vector<TensorView> views;
  std::vector<char> shared;  // per value: in the shared arena (later values overwrite it)
  MemoryUse memory;
  std::vector<Shape> planned_shapes;
  // int64 graph inputs carry shapes, axes and pads: their values are known
  // when a run plans (a change of value replans, like a change of shape). At
  // load they are unknown, and nodes that need them are planned at run time.
  std::vector<std::shared_ptr<Constant>> input_values, planned_values;
  std::vector<TensorView> output_views;
  std::vector<double> seconds, best_seconds;  // per node: summed, and the fastest run
  int64_t timed_runs = 0;                     // runs summed in `seconds`
  std::vector<double> run_seconds;            // per node, the run under way
  // Adds one run's per-node times (run_seconds) to seconds and best_seconds.
  void record_run_times();
  int64_t plan_count = 0;
  // The plan and buffers above are per model: one run at a time holds them.
  mutable std::recursive_mutex run_mutex;
  Intermediates kept = Intermediates::may_fuse;

  // Batch-sliced execution (batch_slices.hpp): the plans for the slice sizes
  // (at most two), the images of each slice in order (empty: run unsliced),
  // and the setting they were made under.
  struct SlicePlan {
    int64_t images = 0;
    std::vector<Step> steps;
    std::vector<Operand> types;
    std::vector<std::shared_ptr<Constant>> plan_values;
    std::vector<Tensor> buffers;
    std::vector<TensorView> views;
  };
  // One set of slice plans per lane: lanes run different slices at once.
  std::vector<std::vector<SlicePlan>> slice_sets;
  std::vector<int64_t> slices;
  int64_t slice_setting = 0;
  bool last_run_sliced = false;
  void plan_slices(const std::vector<Shape>& shapes);
  void run_sliced(const std::vector<TensorView>& in);
  void run_slice(std::vector<SlicePlan>& set, const std::vector<TensorView>& in, int64_t first,
                 int64_t images, std::vector<TensorView>& bound, std::vector<double>& secs);

  size_t id(const std::string& name) {
    auto [it, fresh] = ids.emplace(name, names.size());
    if (fresh) {
      names.push_back(name);
      constant_of.push_back(nullptr);
    }
    return it->second;
  }

  // Load-time checks, in order; each step adds what it finds to `issues`.
  void check_graph(std::vector<Issue>& issues);
  void check_inputs(std::vector<Issue>& issues);
  std::vector<size_t> check_nodes(const std::set<size_t>& is_input,
                                  std::map<std::string, size_t>& producer,
                                  std::vector<Issue>& issues);
  std::shared_ptr<Constant> constant_node_value(const Node& n, std::vector<Issue>& issues);
  std::set<size_t> check_sources(const std::set<size_t>& is_input,
                                 const std::map<std::string, size_t>& producer,
                                 std::vector<Issue>& issues);
  void order_nodes(const std::vector<size_t>& pending, const std::set<size_t>& missing_values,
                   std::vector<Issue>& issues);
  void check_outputs(const std::set<size_t>& is_input,
                     const std::map<std::string, size_t>& producer, std::vector<Issue>& issues);
  // Plans every node for the given input shapes. With `issues`, problems are
  // collected per node (load time); without, the first one throws.
  void plan(const std::vector<Shape>& shapes, std::vector<Issue>* issues);
  // plan's steps.
  std::vector<char> seed_types(const std::vector<Shape>& shapes);
  bool gather_inputs(const Node& n, Step& s, std::vector<Operand>& in, std::vector<char>& deferred,
                     bool& defer);
  bool plan_node(size_t ni, const std::vector<Operand>& in, OrtNchwcTracker& nchwc, Step& s);
  void check_declared_types(std::vector<Issue>& issues) const;
  void allocate();  // allocate.cpp
  std::vector<size_t> rename_roots(const std::vector<bool>& channels_last,
                                   const std::vector<char>& io);
  std::vector<char> join_in_place(std::vector<size_t>& root, const std::vector<bool>& channels_last,
                                  const std::vector<char>& io) const;
  std::vector<Lifetime> lifetimes(const std::vector<size_t>& root) const;
  std::vector<char*> place_in_arena(const std::vector<size_t>& root,
                                    const std::vector<Lifetime>& life, const std::vector<char>& io,
                                    bool share);
  // Computes a node's outputs now when they are known (all inputs known, or
  // the planner knew them): they become values of this plan, the node no step.
  bool fold(const Node& n, const std::vector<Operand>& in, NodePlan& p);
};

}  // namespace npukit::onnx
