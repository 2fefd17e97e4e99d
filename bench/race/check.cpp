// Output checks: every peer's output against npukit's reference kernels, with
// the tolerance its semantics call for (see tolerance()).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "race.hpp"

namespace race {

std::string Check::mark() const {
  if (!ran) return "?";
  if (bad > 0) return "X";
  return within > 0 ? "~" : "=";
}

double tolerance(const Case& c, const std::string& peer) {
  if (c.op == Op::max) return 0;  // a maximum is a maximum
  if (peer == "npukit" || peer == "ONNX Runtime") return 0;
  if (c.dtype != npukit::DType::f32) return peer == "PyTorch" ? 0 : 1;
  return 1e-5;  // relative, for f32 averages summed in another order
}

Check compare(const Case& c, const std::string& peer, const std::vector<float>& got,
              const std::vector<float>& want) {
  Check r;
  r.ran = true;
  if (got.size() != want.size()) {
    r.bad = static_cast<int64_t>(std::max(got.size(), want.size()));
    r.first_bad = 0;
    return r;
  }
  const double tol = tolerance(c, peer);
  const bool relative = c.dtype == npukit::DType::f32;
  for (size_t i = 0; i < got.size(); ++i) {
    uint32_t a, b;
    std::memcpy(&a, &got[i], 4);
    std::memcpy(&b, &want[i], 4);
    if (a == b) {
      ++r.exact;
      continue;
    }
    const double d = std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
    const double limit =
        relative ? tol * std::max(1.0, std::fabs(static_cast<double>(want[i]))) : tol;
    if (!std::isnan(d)) r.max_abs_diff = std::max(r.max_abs_diff, d);
    if (d <= limit) {
      ++r.within;
    } else {
      if (r.first_bad < 0) r.first_bad = static_cast<int64_t>(i);
      ++r.bad;
    }
  }
  return r;
}

}  // namespace race
