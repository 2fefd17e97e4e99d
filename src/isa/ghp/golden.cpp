// Testbench vectors: lower each case with consecutive addresses (as the
// accelerator's own generator lays them out) and execute it.
#include <random>

#include "npukit/error.hpp"
#include "npukit/isa/ghp.hpp"

namespace npukit::ghp {

namespace {

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng() >> 56);  // top bits: well mixed
  return v;
}

}  // namespace

std::vector<GoldenResult> make_golden(const std::vector<GoldenCase>& cases, const HwConfig& hw,
                                      Profile profile) {
  constexpr const char* fn = "npukit::ghp::make_golden";
  std::vector<GoldenResult> out;
  uint64_t xphm = 0, rtm = 0;
  for (size_t k = 0; k < cases.size(); ++k) {
    const GoldenCase& c = cases[k];
    GoldenResult r;
    try {
      if (c.op == "add") {
        const int64_t n = c.C * c.H * c.W;
        const int64_t rows = n / (hw.S * hw.R);
        AddAddresses addr{rtm, rtm + static_cast<uint64_t>(rows),
                          rtm + 2 * static_cast<uint64_t>(rows)};
        r.ins = lower_qlinear_add(n, c.add_q, addr, hw);
        rtm += 3 * static_cast<uint64_t>(rows);
        r.x_shape = r.y_shape = {n};
        if (c.data.empty()) {
          r.x = random_bytes(static_cast<size_t>(n), c.seed);
          r.x2 = random_bytes(static_cast<size_t>(n), c.seed ^ 0x9E3779B97F4A7C15ull);
        } else {
          check(static_cast<int64_t>(c.data.size()) == 2 * n, fn, "data",
                std::to_string(c.data.size()) + " bytes", std::to_string(2 * n) + " (A then B)");
          r.x.assign(c.data.begin(), c.data.begin() + n);
          r.x2.assign(c.data.begin() + n, c.data.end());
        }
        r.y.resize(static_cast<size_t>(n));
        const Shape s{n};
        execute_add(r.ins, TensorView::contiguous(r.x.data(), DType::u8, s),
                    TensorView::contiguous(r.x2.data(), DType::u8, s),
                    TensorView::contiguous(r.y.data(), DType::u8, s), hw, profile);
      } else {
        const Shape xs{1, c.C, c.H, c.W};
        Addresses addr{xphm, rtm, 0};
        if (c.op == "avgp") {
          r.ins = lower_qlinear_average_pool(xs, c.attrs, c.q, addr, hw);
        } else if (c.op == "gavgp") {
          r.ins = lower_qlinear_global_average_pool(xs, c.q, addr, hw);
        } else if (c.op == "maxp") {
          r.ins = lower_max_pool(xs, c.attrs, addr, hw);
        } else {
          fail(fn, "op", "'" + c.op + "'", "avgp, gavgp, maxp or add");
        }
        // The output follows the input in RTM, as in the public generator.
        const int64_t x_rows = c.C / hw.S * static_cast<int64_t>(r.ins[f64::ifm_height]);
        const int64_t y_rows = c.C / hw.S * static_cast<int64_t>(r.ins[f64::ofm_height]);
        r.ins[f64::Y_addr] = rtm + static_cast<uint64_t>(x_rows);
        check_widths(r.ins);
        rtm += static_cast<uint64_t>(x_rows + y_rows);
        xphm += static_cast<uint64_t>(r.ins[f64::xphs_len]) + 1;
        r.x_shape = xs;
        r.y_shape = output_shape(r.ins, hw);
        const auto n = static_cast<size_t>(shape_numel(xs));
        if (c.data.empty()) {
          r.x = random_bytes(n, c.seed);
        } else {
          check(c.data.size() == n, fn, "data", std::to_string(c.data.size()) + " bytes",
                std::to_string(n) + " for " + shape_text(xs));
          r.x = c.data;
        }
        r.y.resize(static_cast<size_t>(shape_numel(r.y_shape)));
        execute_pool(r.ins, TensorView::contiguous(r.x.data(), DType::u8, xs),
                     TensorView::contiguous(r.y.data(), DType::u8, r.y_shape), hw, profile);
      }
    } catch (const Error& e) {
      fail(e.function(), "case " + std::to_string(k) + ": " + e.parameter(), e.value(),
           e.allowed());
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace npukit::ghp
