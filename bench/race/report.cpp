// The race table, as aligned text (stdout) or markdown (docs/performance.md).
#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "race.hpp"

namespace race {

namespace {

using Grid = std::vector<std::vector<std::string>>;

// Aligned text or a markdown table; the first `left` columns are left-aligned
// (labels), the others right-aligned (numbers).
std::string grid_text(const Grid& g, bool markdown, size_t left) {
  std::vector<size_t> width(g[0].size(), 0);
  for (const auto& row : g)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string s;
  for (size_t r = 0; r < g.size(); ++r) {
    for (size_t i = 0; i < g[r].size(); ++i) {
      const std::string& v = g[r][i];
      const std::string pad(width[i] - v.size(), ' ');
      s += markdown ? "| " : (i ? "  " : "");
      s += i < left ? v : pad;
      s += i < left ? pad : v;
      if (markdown) s += ' ';
    }
    s += markdown ? "|\n" : "\n";
    if (markdown && r == 0) {
      for (size_t i = 0; i < width.size(); ++i)
        s.append("|").append(width[i] + 1, '-').append(i < left ? "-" : ":");
      s += "|\n";
    }
  }
  return s;
}

// Two significant digits below 0.1 (a 0.004x ratio is not 0.00x), else two decimals.
std::string ratio_text(double r) {
  return r < 0.1 ? fmt::format("{:.2g}", r) : fmt::format("{:.2f}", r);
}

std::string micros(double seconds) {
  const double us = seconds * 1e6;
  return us >= 1000 ? fmt::format("{:.0f}", us) : fmt::format("{:.1f}", us);
}

}  // namespace

std::string render_table(const std::vector<Peer>& columns, const std::vector<Row>& rows,
                         const std::vector<ModelRow>& models, const Machine& m, bool markdown,
                         bool timed) {
  std::string out;
  const std::string h2 = markdown ? "### " : "== ";
  out += h2 + "Machine\n\n";
  out += fmt::format("{}CPU: {}; npukit ISA level: {}; threads timed: {}\n", markdown ? "- " : "",
                     m.cpu, m.isa, fmt::format("{}", fmt::join(m.threads, ", ")));
  out += fmt::format("{}Date: {}; command: `{}`\n", markdown ? "- " : "", m.date, m.command);
  out += fmt::format(
      "{}Load average (1, 5, 15 min) at start: {}; at end: {} (other work on the same cores "
      "slows the timings, most of all with 2 threads on 2 cores)\n\n",
      markdown ? "- " : "", m.load_before, m.load_after);
  out.insert(out.size() - 1,
             fmt::format("{}OMP_WAIT_POLICY: {}\n", markdown ? "- " : "", m.omp_wait_policy));
  if (timed && !m.copy.empty()) {
    out += h2 + "Copy bandwidth (memcpy, (read + written bytes) / time, GB/s)\n\n";
    Grid g{{"working set"}};
    for (int t : m.threads) g[0].push_back(fmt::format("{} thread{}", t, t > 1 ? "s" : ""));
    for (const auto& [bytes, gbps] : m.copy) {
      g.push_back({fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024.0)});
      for (double v : gbps) g.back().push_back(fmt::format("{:.1f}", v));
    }
    out += grid_text(g, markdown, 1) + "\n";
  }

  out += h2 + fmt::format(
                  "Pooling: time per call in microseconds ({} of repeats), check mark after "
                  "each time\n\n",
                  m.statistic);
  Grid g{{"problem", "dtype", "op", "thr"}};
  for (const Peer& p : columns) g[0].push_back(p.column());
  for (const char* h :
       {"npukit GB/s", "% of copy", "best peer", "npukit speed-up", "nchw speed-up"})
    g[0].push_back(h);
  std::map<std::string, std::map<std::string, int>> reasons;  // column -> reason -> count
  std::map<std::string, std::map<std::string, int>> details;  // column -> implementation -> count
  int failures = 0;
  int raced = 0, ahead_best = 0, ahead_nchw = 0;  // rows with a peer; rows at or above it
  for (const Row& r : rows) {
    // Without padding both divisors coincide: one "avg" row.
    const bool plain_avg = (r.c.op == Op::avg_include_pad || r.c.op == Op::avg_exclude_pad) &&
                           (r.c.problem.pad == 0 || r.c.problem.global);
    std::vector<std::string> line{r.c.problem.label, npukit::dtype_name(r.c.dtype),
                                  plain_avg ? "avg" : op_name(r.c.op), std::to_string(r.threads)};
    double npukit_best = INFINITY, npukit_nchw = INFINITY, peer_best = INFINITY;
    std::string peer_best_name;
    for (size_t i = 0; i < columns.size(); ++i) {
      const Cell& cell = r.cells[i];
      if (!cell.ran) {
        line.push_back(cell.note.rfind("not available", 0) == 0 ? "n/a" : "-");
        if (!cell.note.empty()) ++reasons[columns[i].column()][cell.note];
        continue;
      }
      if (!cell.note.empty()) ++details[columns[i].column()][cell.note];
      if (!cell.check.pass()) ++failures;
      line.push_back((timed && cell.seconds >= 0 ? micros(cell.seconds) : std::string("")) +
                     cell.check.mark());
      if (!timed || !cell.check.pass() || cell.seconds < 0) continue;
      if (columns[i].name == "npukit") {
        npukit_best = std::min(npukit_best, cell.seconds);
        if (columns[i].layout == "nchw") npukit_nchw = cell.seconds;
      } else if (cell.seconds < peer_best) {
        peer_best = cell.seconds;
        peer_best_name = columns[i].column();
      }
    }
    if (timed && std::isfinite(npukit_best)) {
      const double gbps = static_cast<double>(r.c.bytes()) / npukit_best / 1e9;
      line.push_back(ratio_text(gbps));
      const double pct = 100.0 * gbps / r.copy_gbps;
      line.push_back(r.copy_gbps <= 0 ? ""
                     : pct < 10       ? fmt::format("{:.1f}%", pct)
                                      : fmt::format("{:.0f}%", pct));
    } else {
      line.insert(line.end(), {"", ""});
    }
    if (timed && std::isfinite(peer_best) && std::isfinite(npukit_best)) {
      line.push_back(peer_best_name);
      line.push_back(ratio_text(peer_best / npukit_best) + "x");
      line.push_back(std::isfinite(npukit_nchw) ? ratio_text(peer_best / npukit_nchw) + "x" : "");
      ++raced;
      ahead_best += peer_best >= npukit_best;
      ahead_nchw += peer_best >= npukit_nchw;
    } else {
      line.insert(line.end(), {"", "", ""});
    }
    g.push_back(line);
  }
  out += grid_text(g, markdown, 4) + "\n";
  const std::string li = markdown ? "- " : "  ";
  out += "How to read it:\n";
  out += li +
         "Marks: `=` bit-exact with npukit's reference kernel under the peer's semantics; "
         "`~` within the stated tolerance; `X` beyond it (a failure); `-` the peer does not "
         "offer this case (reasons below); `n/a` the peer is not installed.\n";
  out += li +
         "Checks: npukit and ONNX Runtime against npukit's onnxruntime profile, exactly; "
         "PyTorch against npukit's pytorch profile (exact for 8-bit, |d| <= 1e-5*max(1,|ref|) "
         "for f32 averages); XNNPACK and oneDNN against the onnxruntime profile with +-1 code "
         "for 8-bit averages (their own rounding) and |d| <= 1e-5*max(1,|ref|) for f32 "
         "averages (their own summation order); max pooling is exact for everyone.\n";
  out += li +
         "8-bit averages use scale 1 and zero point 0 in and out (oneDNN has neither), so "
         "every peer computes round(sum / divisor); XNNPACK's u8 is its qu8 operator. "
         "`avg calibrated` rows: QLinearAveragePool with count_include_pad = 1 and calibrated "
         "scales (x 0.0235, zero point 121 for u8 / -3 for s8; y 0.0198, 117 / 5), which keep "
         "ONNX Runtime on its float path (PyTorch and oneDNN have no separate output scale).\n";
  out += li +
         "GB/s = (input + output bytes) / npukit's best time (either layout); % of copy = that "
         "over memcpy's GB/s for the same working set and thread count, measured in this run; "
         "npukit speed-up = best peer's time / npukit's best time (> 1: npukit is faster), "
         "over peers whose output passed the check; nchw speed-up = the same for npukit on "
         "NCHW tensors alone (issue #9's pooling target: NCHW against the best peer in any "
         "layout).\n";
  for (const auto& [column, rs] : reasons)
    for (const auto& [why, n] : rs) out += li + fmt::format("{} ({} rows): {}\n", column, n, why);
  for (const auto& [column, ds] : details)
    for (const auto& [impl, n] : ds)
      out += li + fmt::format("{} implementation ({} rows): {}\n", column, n, impl);
  for (const ModelRow& r : models)
    if (r.exact && r.check != "identical logits") ++failures;  // int8 models: ORT's bytes
  if (raced > 0)
    out += li + fmt::format(
                    "Rows with npukit at or above the best peer: {} of {} in its best layout, {} "
                    "of {} on NCHW tensors.\n",
                    ahead_best, raced, ahead_nchw, raced);
  out += li + fmt::format("Checks failed: {}\n\n", failures);

  if (!models.empty()) {
    out += h2 +
           "The main job: bundled models on the bundled images as one batch (torchvision "
           "models: batch 1), images/s; int8 models must give ONNX Runtime's exact outputs\n\n";
    Grid mg{{"model", "images", "threads", "npukit img/s", "ONNX Runtime img/s", "npukit speed-up",
             "outputs vs ONNX Runtime"}};
    for (const ModelRow& r : models) {
      const auto ips = [&](double s) {
        const double ips = static_cast<double>(r.images) / s;
        return s <= 0      ? std::string("-")
               : ips < 100 ? fmt::format("{:.1f}", ips)
                           : fmt::format("{:.0f}", ips);
      };
      mg.push_back({r.model, std::to_string(r.images), std::to_string(r.threads),
                    ips(r.npukit_seconds), ips(r.ort_seconds),
                    r.npukit_seconds > 0 && r.ort_seconds > 0
                        ? ratio_text(r.ort_seconds / r.npukit_seconds) + "x"
                        : "-",
                    r.check});
    }
    out += grid_text(mg, markdown, 1) + "\n";
  }
  return out;
}

}  // namespace race
