// Batch-sliced execution of a planned model (the rules: batch_slices.cpp):
// the plans for the slice sizes, and one run over the slices on one or more
// lanes, each slice reading and writing its rows of the batch in place.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <tuple>

#include "npukit/parallel.hpp"
#include "onnx/batch_slices.hpp"
#include "onnx/model_impl.hpp"

namespace npukit::onnx {

// Plans the batch-sliced run of the current (full) plan, or leaves `slices`
// empty when the setting, the kept intermediates or the graph rule it out.
void Model::Impl::plan_slices(const std::vector<Shape>& shapes) {
  slice_sets.clear();
  slices.clear();
  slice_setting = batch_slice_setting();
  if (slice_setting < 0 || kept == Intermediates::keep_all) return;
  std::vector<SliceStep> view;
  for (const Step& s : steps) view.push_back({&g.nodes[s.node], &s.in, &s.out});
  std::vector<char> batch;
  const std::string refusal = batch_independence(view, types, input_ids, output_ids, batch);
  if (!refusal.empty()) return log_slices("unsliced: " + refusal);
  const int64_t n = types[input_ids[0]].shape[0];
  const std::vector<int64_t> sizes =
      slice_sizes(n, slice_setting > 0 ? slice_setting : auto_slice_images(view, types, batch, n));
  if (sizes.size() < 2) return;
  // Each slice size is planned like a batch of that size, with the full
  // plan's state set aside and restored after.
  auto full = std::make_tuple(std::move(steps), std::move(types), std::move(plan_values),
                              std::move(buffers), std::move(views), std::move(output_views),
                              seconds, best_seconds, timed_runs, plan_count);
  const int64_t lanes = slice_lanes(sizes.size());
  std::vector<std::vector<SlicePlan>> made(static_cast<size_t>(lanes));
  bool complete = true;
  try {
    for (std::vector<SlicePlan>& set : made)
      for (const int64_t images : {sizes.front(), sizes.back()}) {
        if (!set.empty() && set[0].images == images) break;
        std::vector<Shape> sliced = shapes;
        for (Shape& s : sliced) s[0] = images;
        plan(sliced, nullptr);
        allocate();
        complete = complete && slice_plan_matches(std::get<1>(full), types, batch, images);
        set.push_back({images, std::move(steps), std::move(types), std::move(plan_values),
                       std::move(buffers), std::move(views)});
      }
  } catch (const Error&) {  // a shape fixed in the graph (Reshape to [1000, 784]): unsliced
    complete = false;
  }
  std::tie(steps, types, plan_values, buffers, views, output_views, seconds, best_seconds,
           timed_runs, plan_count) = std::move(full);
  if (!complete) return log_slices("unsliced: a slice's plan differs from the batch's");
  slice_sets = std::move(made);
  slices = sizes;
  // The whole batch's intermediates are never written now: only its outputs stay.
  for (size_t v = 0; v < buffers.size(); ++v)
    if (std::find(output_ids.begin(), output_ids.end(), v) == output_ids.end())
      buffers[v] = Tensor();
  log_slices(std::to_string(n) + " images as " + std::to_string(sizes.size()) + " slices of " +
             std::to_string(sizes.front()) + " to " + std::to_string(sizes.back()) + " on " +
             std::to_string(lanes) + " lane(s)");
}

// One run over the slices: each slice's plan reads its rows of the inputs and
// writes its rows of the full plan's output buffers in place. With several
// lanes, each takes the next slice not yet taken (threads of a loaded
// machine progress unevenly) and its kernels run on its thread alone.
void Model::Impl::run_sliced(const std::vector<TensorView>& in) {
  std::vector<int64_t> first(slices.size(), 0);
  for (size_t i = 1; i < slices.size(); ++i) first[i] = first[i - 1] + slices[i - 1];
  const int64_t lanes = std::min<int64_t>(static_cast<int64_t>(slice_sets.size()), num_threads());
  std::atomic<size_t> next{0};
  std::vector<std::vector<double>> secs(static_cast<size_t>(lanes),
                                        std::vector<double>(seconds.size(), 0.0));
  auto lane = [&](int64_t w) {
    std::vector<TensorView> bound(names.size());
    for (size_t i; (i = next.fetch_add(1)) < slices.size();)
      run_slice(slice_sets[static_cast<size_t>(w)], in, first[i], slices[i], bound,
                secs[static_cast<size_t>(w)]);
  };
  if (lanes == 1)
    lane(0);
  else
    parallel_for(lanes, 1, lane);
  // A node's time in this run: its slices' times added up (lanes overlap).
  run_seconds.assign(seconds.size(), 0.0);
  for (const std::vector<double>& s : secs)
    for (size_t k = 0; k < s.size(); ++k) run_seconds[k] += s[k];
  record_run_times();
}

void Model::Impl::run_slice(std::vector<SlicePlan>& set, const std::vector<TensorView>& in,
                            int64_t first, int64_t images, std::vector<TensorView>& bound,
                            std::vector<double>& secs) {
  SlicePlan& p = images == set[0].images ? set[0] : set.back();
  for (size_t i = 0; i < input_ids.size(); ++i) {
    const size_t v = input_ids[i];
    const TensorView rows = batch_rows(in[i], first, images);
    bound[v] = rows.strides() == p.views[v].strides() ? rows : p.views[v];
    if (bound[v].raw() != rows.raw()) copy(rows, p.views[v]);
  }
  for (size_t v : output_ids) {
    const TensorView rows = batch_rows(views[v], first, images);
    bound[v] = rows.strides() == p.views[v].strides() ? rows : p.views[v];
  }
  for (Step& s : p.steps) {
    for (size_t k = 0; k < s.in.size(); ++k)
      if (s.in[k] != SIZE_MAX && bound[s.in[k]].raw()) s.in_views[k] = bound[s.in[k]];
    for (size_t k = 0; k < s.out.size(); ++k)
      if (bound[s.out[k]].raw()) s.out_views[k] = bound[s.out[k]];
    if (s.view_only) continue;
    const auto t0 = std::chrono::steady_clock::now();
    s.run(s.in_views, s.out_views);
    secs[s.node] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  for (size_t v : output_ids)
    if (bound[v].raw() == p.views[v].raw()) copy(p.views[v], batch_rows(views[v], first, images));
}

}  // namespace npukit::onnx
