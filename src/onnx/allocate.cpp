// Model::Impl::allocate: the buffers of a plan. Graph inputs and outputs own
// their buffers (batch-sliced runs rebind them); the other values a step
// computes share one arena by liveness (memory_plan.hpp) unless the load kept
// every intermediate (values() reads them after the run) or
// NPUKIT_MEMORY_PLAN=unshared; renaming steps make views of their input, and
// a FusedConv may write its output over its dead Z (join_in_place).
#include <cstdlib>
#include <numeric>
#include <string>

#include "npukit/memory_budget.hpp"
#include "onnx/fp32_layout.hpp"
#include "onnx/int8_layout.hpp"
#include "onnx/memory_plan.hpp"
#include "onnx/model_impl.hpp"

namespace npukit::onnx {

namespace {
// NPUKIT_MEMORY_PLAN: "shared" (the default) or "unshared" (every value its own buffer).
bool memory_sharing_allowed() {
  const char* env = std::getenv("NPUKIT_MEMORY_PLAN");
  const std::string mode = env ? env : "shared";
  check(mode == "shared" || mode == "unshared", "npukit::onnx::Model::run", "NPUKIT_MEMORY_PLAN",
        mode, "shared or unshared");
  return mode == "shared";
}

uint64_t value_bytes(const Operand& t) {
  return static_cast<uint64_t>(shape_numel(t.shape)) * dtype_size(*dtype_of(t.elem));
}
}  // namespace

// Flatten, Reshape, Squeeze, Unsqueeze and Identity of a dense value only
// rename its bytes: per value, the value whose bytes it is (itself if none).
// Not for graph inputs and outputs, whose views a batch-sliced run rebinds.
std::vector<size_t> Model::Impl::rename_roots(const std::vector<bool>& channels_last,
                                              const std::vector<char>& io) {
  std::vector<size_t> root(names.size());
  std::iota(root.begin(), root.end(), size_t{0});
  for (Step& s : steps) {
    s.view_only = false;
    if (!is_renaming_op(g.nodes[s.node]) || s.in.empty() || s.out.size() != 1) continue;
    const size_t a = s.in[0], b = s.out[0];
    if (a == SIZE_MAX || io[a] || io[b] || !types[a].present || types[a].value ||
        channels_last[root[a]])
      continue;
    root[b] = root[a];
    s.view_only = true;
  }
  return root;
}

// A step whose output starts as a copy of one of its inputs
// (Step::in_place_input: FusedConv's Z) writes over that input's bytes when
// no later step reads them (directly or through a rename), no other input of
// the step shares them, neither is a graph input or output, and both have one
// type, shape and layout: the output then joins the input's root like a
// rename, so the root lives on to the output's last reader. `root` holds the
// renames on entry and the joins too on return. Per value: 1 if joined so.
std::vector<char> Model::Impl::join_in_place(std::vector<size_t>& root,
                                             const std::vector<bool>& channels_last,
                                             const std::vector<char>& io) const {
  const std::vector<size_t> rename = root;
  std::vector<size_t> last_read(names.size(), SIZE_MAX);  // per rename root
  for (size_t k = 0; k < steps.size(); ++k)
    for (size_t v : steps[k].in)
      if (v != SIZE_MAX) last_read[rename[v]] = k;
  std::vector<char> joined(names.size(), 0);
  for (size_t k = 0; k < steps.size(); ++k) {
    const Step& s = steps[k];
    if (s.view_only) {  // again, in order: a rename of a joined value shares its root
      root[s.out[0]] = root[s.in[0]];
      continue;
    }
    const size_t i = static_cast<size_t>(s.in_place_input);
    if (s.in_place_input < 0 || s.out.empty() || i >= s.in.size() || s.in[i] == SIZE_MAX) continue;
    const size_t z = s.in[i], y = s.out[0], r = root[z];
    bool ok = last_read[rename[z]] == k && !io[r] && !io[y] && types[r].present &&
              !types[r].value && types[y].present && types[z].elem == types[y].elem &&
              types[z].shape == types[y].shape && channels_last[z] == channels_last[y];
    for (size_t u = 0; ok && u < s.in.size(); ++u)
      ok = u == i || s.in[u] == SIZE_MAX || root[s.in[u]] != r;
    if (!ok) continue;
    root[y] = r;
    joined[y] = 1;
  }
  return joined;
}

// Per value owning bytes: the steps from its writer to its last reader
// (readers of its renames included); SIZE_MAX for values no step writes.
std::vector<Lifetime> Model::Impl::lifetimes(const std::vector<size_t>& root) const {
  std::vector<Lifetime> life(names.size(), Lifetime{0, SIZE_MAX, 0});
  for (size_t k = 0; k < steps.size(); ++k) {
    for (size_t v : steps[k].out)
      if (root[v] == v) life[v].first = life[v].last = k;
    for (size_t v : steps[k].in)
      if (v != SIZE_MAX) life[root[v]].last = std::max(life[root[v]].last, k);
  }
  for (size_t v = 0; v < names.size(); ++v)
    if (types[v].present && !types[v].value) life[v].bytes = value_bytes(types[v]);
  return life;
}

// Checks each owner of bytes against the budget, fills `memory`, and puts the
// values a step computes (not graph inputs or outputs) in one arena when
// `share`: per value, its address there (null: it gets its own buffer).
std::vector<char*> Model::Impl::place_in_arena(const std::vector<size_t>& root,
                                               const std::vector<Lifetime>& life,
                                               const std::vector<char>& io, bool share) {
  std::vector<size_t> in_arena;
  memory = MemoryUse{};
  for (size_t v = 0; v < names.size(); ++v) {
    const Operand& t = types[v];
    if (!t.present || t.value || root[v] != v) continue;
    // Named here: the Tensor's own budget error only knows the shape.
    const DType dt = *dtype_of(t.elem);
    check_allocation("npukit::onnx::Model::run", "value",
                     "'" + names[v] + "' " + shape_text(t.shape) + " " + dtype_name(dt),
                     static_cast<uint64_t>(shape_numel(t.shape)), dtype_size(dt));
    memory.unshared_bytes += static_cast<int64_t>(arena_aligned(life[v].bytes));
    if (share && !io[v] && life[v].first != SIZE_MAX && life[v].bytes > 0)
      in_arena.push_back(v);
    else
      memory.private_bytes += static_cast<int64_t>(arena_aligned(life[v].bytes));
  }
  std::vector<Lifetime> placed;
  for (size_t v : in_arena) placed.push_back(life[v]);
  const ArenaPlan arena = plan_arena(placed);
  memory.arena_bytes = static_cast<int64_t>(arena.bytes);
  memory.arena_lower_bound = static_cast<int64_t>(peak_live_bytes(placed));
  if (!in_arena.empty()) {
    check_allocation("npukit::onnx::Model::run", "activation arena",
                     std::to_string(arena.bytes) + " bytes", arena.bytes, 1);
    // Held by the first value placed: a Tensor per value is what the rest of the runner frees.
    buffers[in_arena[0]] = Tensor(DType::u8, {static_cast<int64_t>(arena.bytes)});
  }
  char* const base =
      in_arena.empty() ? nullptr : static_cast<char*>(buffers[in_arena[0]].view().raw());
  std::vector<char*> at(names.size(), nullptr);
  for (size_t k = 0; k < in_arena.size(); ++k) {
    at[in_arena[k]] = base + arena.offsets[k];
    shared[in_arena[k]] = 1;
  }
  return at;
}

void Model::Impl::allocate() {
  buffers.assign(names.size(), Tensor());
  views.assign(names.size(), TensorView());
  shared.assign(names.size(), 0);
  std::vector<LayoutStep> layout_steps;
  for (const Step& s : steps)
    layout_steps.push_back({&g.nodes[s.node], &s.in, &s.out, node_profile[s.node]});
  std::vector<bool> channels_last = channels_last_values(layout_steps, types, output_ids);
  const std::vector<bool> f32_cl = channels_last_f32_values(layout_steps, types, output_ids);
  for (size_t v = 0; v < channels_last.size(); ++v)
    channels_last[v] = channels_last[v] || f32_cl[v];
  std::vector<char> io(names.size(), 0);
  for (size_t v : input_ids) io[v] = 1;
  for (size_t v : output_ids) io[v] = 1;
  std::vector<size_t> root = rename_roots(channels_last, io);
  const bool share = kept == Intermediates::may_fuse && memory_sharing_allowed();
  const std::vector<char> joined =
      share ? join_in_place(root, channels_last, io) : std::vector<char>(names.size(), 0);
  const std::vector<Lifetime> life = lifetimes(root);
  std::vector<char*> at = place_in_arena(root, life, io, share);
  for (size_t v = 0; v < names.size(); ++v)
    if (joined[v]) {
      memory.unshared_bytes += static_cast<int64_t>(arena_aligned(value_bytes(types[v])));
      ++memory.in_place_values;
    }
  for (size_t v = 0; v < names.size(); ++v) {
    const Operand& t = types[v];
    if (!t.present || root[v] != v) continue;
    if (t.value) {  // initializer, Constant node or folded value
      views[v] = t.value->tensor.view();
      continue;
    }
    const DType dt = *dtype_of(t.elem);
    if (at[v] == nullptr) {  // its own buffer
      buffers[v] = channels_last[v] ? Tensor(dt, {t.shape[0], t.shape[2], t.shape[3], t.shape[1]})
                                    : Tensor(dt, t.shape);
      at[v] = static_cast<char*>(buffers[v].view().raw());
    }
    // int8_layout.hpp, fp32_layout.hpp: NHWC bytes behind an NCHW view.
    views[v] = channels_last[v] ? channels_last_view(at[v], dt, t.shape)
                                : TensorView::contiguous(at[v], dt, t.shape);
  }
  for (const Step& s : steps) {  // in order: a rename of a rename sees its source's view
    if (s.view_only) {
      const size_t a = s.in[0], b = s.out[0];
      views[b] = TensorView::contiguous(views[a].raw(), views[a].dtype(), types[b].shape);
      shared[b] = shared[root[b]];
    } else if (!s.out.empty() && joined[s.out[0]]) {  // one shape and layout: the input's view
      const size_t y = s.out[0];
      views[y] = views[s.in[static_cast<size_t>(s.in_place_input)]];
      shared[y] = shared[root[y]];
    }
  }
  for (Step& s : steps) {
    s.in_views.clear();
    s.out_views.clear();
    for (size_t v : s.in) s.in_views.push_back(v == SIZE_MAX ? TensorView() : views[v]);
    for (size_t v : s.out) s.out_views.push_back(views[v]);
  }
  output_views.clear();
  for (size_t v : output_ids) output_views.push_back(views[v]);
  seconds.assign(g.nodes.size(), 0.0);
  best_seconds.assign(g.nodes.size(), 0.0);
  timed_runs = 0;
  ++plan_count;
}

}  // namespace npukit::onnx
