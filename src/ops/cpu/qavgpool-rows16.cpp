// Plan of the x8-qavgpool-rows16-nchw kernels (qavgpool-rows16.hpp): which
// calls they take and the per-lane constants of their integer final step.
#include "ops/cpu/qavgpool-rows16.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace npukit::cpu {

namespace {

// How a lane rounds t / d (d >= 1, t = s + c0 its integer numerator): the
// window sum plus h is divided by floor, and ties of even divisors go to the
// even quotient when `even_ties` (half to even). With n = t + K*d >= 0 (K
// even: every rule below commutes with adding an even integer):
//   floor(n / d) -> h = 0; ceil -> h = d - 1; half up -> h = d / 2 (odd d:
//   (d - 1) / 2 rounds to nearest, there are no ties); half down -> h = d / 2
//   - 1 for even d; half to even -> q1 = floor((n + d/2) / d) rounds ties up,
//   q2 = floor((n + d/2 - 1) / d) down, they differ only on ties (q1 = q2 + 1)
//   and q2 + ((q1 - q2) & q2) is the even one.
struct Rule {
  Rounding base = Rounding::half_to_even;
  bool sign_free = true;  // false: the rule depends on the sign of t
};

Rule rule_of(Rounding r) {
  switch (r) {
    case Rounding::toward_zero:
      return {Rounding::floor, false};
    case Rounding::half_away_from_zero:
      return {Rounding::half_up, false};
    case Rounding::half_toward_zero:
      return {Rounding::half_down, false};
    default:
      return {r, true};
  }
}

int32_t h_of(Rounding base, int32_t d) {
  switch (base) {
    case Rounding::floor:
      return 0;
    case Rounding::ceil:
      return d - 1;
    case Rounding::half_down:
      return d % 2 == 0 ? d / 2 - 1 : d / 2;
    default:  // half_up, half_to_even
      return d / 2;
  }
}

// Largest sh <= 16 with ceil(2^(16+sh) / d) <= 65535 (d >= 2): 2^sh < d, so
// from floor(log2(d)) down (one or two steps).
int max_sh(int64_t d) {
  int sh = std::min(16, 63 - __builtin_clzll(static_cast<uint64_t>(d)));
  while (sh > 0 && ((int64_t{1} << (16 + sh)) + d - 1) / d > 65535) --sh;
  return sh;
}

int64_t floor_div(int64_t a, int64_t b) {
  return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

struct Lane {
  int32_t d = 0, c0 = 0, valid = 0;
  bool real = false;
};

// Whether the call's final step is the checked float tail (calibrated ONNX
// Runtime) rather than an integer one.
bool uses_checked_tail(const QAvgPlan& P) {
  return !qavg_int_float_mean(P) && P.arith != QAvgArith::int_mean && qavg_checked_float(P);
}

// The calls the kernels do not take, by their geometry and arithmetic.
const char* rows16_declines(const QAvgPoolProblem& p, int rows, bool one_load, bool checked_tail) {
  const QAvgPlan& P = p.plan;
  if (P.unsupported) return P.unsupported;
  if (P.bm_shift) return "bm_pool_quantized's shift";
  if (!qavg_int_float_mean(P) && P.arith != QAvgArith::int_mean &&
      !(checked_tail && qavg_checked_float(P)))
    return checked_tail
               ? "not an integer final step (scale-1 ONNX Runtime float path, or "
                 "int_mean) nor the checked float tail (calibrated ONNX Runtime)"
               : "not an integer final step (scale-1 ONNX Runtime float path, or int_mean)";
  if (p.x.stride(3) != 1 || p.y.stride(3) != 1) return "x or y not unit-stride along W";
  if (P.w.stride != 1) return "stride along W above 1";
  if (P.W > 16 || P.w.out > 16) return "input or output rows wider than 16";
  const int64_t pl = -P.w.start, KW = P.w.kernel, KH = P.h.kernel;
  if (pl > 7 || KW - 1 - pl > 7) return "a tap more than 7 columns away from its output";
  if (p.x.stride(2) < P.W) return "x rows overlap (stride along H below W)";
  // AVX2 finds the tensor's last byte from the strides.
  if (p.x.stride(0) < 0 || p.x.stride(1) < 0) return "x with a negative stride";
  // Two output rows' window rows in one 64-byte load.
  if (one_load && rows == 2 && (P.h.stride + KH - 1) * p.x.stride(2) + P.W > 64)
    return "the window rows of two output rows span more than 64 bytes";
  if (KH >= 32767) return "more than 32766 window rows";
  return nullptr;
}

// Row classes: the (valid, clipped) row counts of each row of a group of
// `rows` output rows, packed 16 bits each (rows <= 2; KH < 2^15 so the
// counts fit); 0xffff for a row past the last. The class of every group.
std::vector<uint64_t> group_classes(const QAvgPlan& P, int rows,
                                    std::vector<int32_t>& group_class) {
  const int64_t OH = P.h.out, groups = (OH + rows - 1) / rows;
  std::vector<uint64_t> keys;
  group_class.assign(static_cast<size_t>(groups), 0);
  auto count = [&](int64_t oh, const std::vector<int32_t>& v) -> uint64_t {
    return oh < OH ? static_cast<uint64_t>(v[static_cast<size_t>(oh)]) : 0xffff;
  };
  for (int64_t g = 0; g < groups; ++g) {
    uint64_t key = 0;
    for (int64_t i = 0; i < rows; ++i)
      key |= (count(g * rows + i, P.h.valid) | count(g * rows + i, P.h.clipped) << 16) << (32 * i);
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) it = keys.insert(keys.end(), key);
    group_class[static_cast<size_t>(g)] = static_cast<int32_t>(it - keys.begin());
  }
  return keys;
}

// Every stored lane's divisor d and numerator offset c0 (t = s + c0) into
// `lanes` ([class][16 * rows]); the shared shift sh and the even offset
// multiple K that makes every numerator n = t + K*d non-negative.
const char* lane_divisors(const QAvgPlan& P, int rows, const std::vector<uint64_t>& keys,
                          const Rule& rule, std::vector<Lane>& lanes, int& sh, int& K,
                          bool& clamp_free) {
  const bool int_float_mean = qavg_int_float_mean(P);
  const int64_t L = 16 * int64_t{rows};
  lanes.assign(keys.size() * static_cast<size_t>(L), Lane{});
  bool any_one = false;
  sh = 16, K = 0;
  clamp_free = true;
  int64_t last_tmin = 0, last_kd = 0, last_k = 0, last_sd = 0, last_sh = 0;
  for (size_t c = 0; c < keys.size(); ++c)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < P.w.out; ++j) {
        const uint64_t key = keys[c] >> (32 * i);
        if ((key & 0xffff) == 0xffff) continue;  // no output row
        const auto vh = static_cast<int32_t>(key & 0xffff),
                   ch = static_cast<int32_t>(key >> 16 & 0xffff);
        Lane& l = lanes[c * static_cast<size_t>(L) + static_cast<size_t>(i * 16 + j)];
        l.real = true;
        l.valid = vh * P.w.valid[static_cast<size_t>(j)];
        const int32_t clipped = ch * P.w.clipped[static_cast<size_t>(j)];
        l.d = static_cast<int32_t>(avg_divisor(P.divisor, P.taps, l.valid, clipped));
        if (l.d < 1) return "a window with no tap to divide by (the reference gives y_zp)";
        l.c0 = int_float_mean ? -P.x_zp * l.valid + P.y_zp * l.d : 0;
        const int64_t tmin = int64_t{P.lo} * l.valid + l.c0;
        // q - K = floor((t + h) / d) (h < d), or the one below it on a tie.
        const int64_t tmax = int64_t{P.hi} * l.valid + l.c0;
        if (floor_div(tmin, l.d) < P.lo || -floor_div(-tmax, l.d) > P.hi) clamp_free = false;
        if (!rule.sign_free && tmin < 0) return "a sign-dependent rounding with negative sums";
        if (tmin != last_tmin || l.d != last_kd) {  // neighbouring lanes repeat them
          last_tmin = tmin, last_kd = l.d;
          last_k = tmin < 0 ? (-tmin + l.d - 1) / l.d : 0;
          last_k += last_k & 1;
        }
        const int64_t k = last_k;
        if (k > 32767) return "the offset that makes every numerator positive is too large";
        K = std::max(K, static_cast<int>(k));
        if (l.d == 1)
          any_one = true;
        else if (l.d != last_sd)
          last_sd = l.d, last_sh = max_sh(l.d), sh = std::min(sh, static_cast<int>(last_sh));
      }
  if (any_one) sh = 0;  // d == 1 lanes: m = 65535, n + 1 (see lane_fields)
  return nullptr;
}

// The kernels' three 16-bit fields per lane (A, m, e; field-major per class)
// into R.lanes.
const char* lane_fields(const QAvgPlan& P, const std::vector<Lane>& lanes, size_t classes,
                        const Rule& rule, Rows16Plan& R) {
  const int64_t L = 16 * int64_t{R.rows};
  R.lanes.assign(classes * 3 * static_cast<size_t>(L), 0);
  const int64_t p2 = int64_t{1} << (16 + R.sh);
  int64_t last_md = 0, last_m = 0;
  for (size_t c = 0; c < classes; ++c)
    for (int64_t x = 0; x < L; ++x) {
      const Lane& l = lanes[c * static_cast<size_t>(L) + static_cast<size_t>(x)];
      if (!l.real) continue;  // never stored: A = m = e = 0
      // n + h = s + A; the numerators the multiply sees lie in [0, xmax].
      const int64_t h = l.d == 1 ? 1 : h_of(rule.base, l.d);
      const int64_t A = l.c0 + int64_t{R.K} * l.d + h;
      const int64_t xmax = int64_t{P.hi} * l.valid + A;
      if (xmax > 32767) return "window sums too large for 16-bit lanes";
      int64_t m = 65535;  // d == 1: floor((n + 1) * 65535 / 2^16) == n for n < 2^16
      if (l.d > 1) {
        // floor(x * m / 2^(16+sh)) == floor(x / d) for x in [0, xmax] when
        // xmax * (m*d - 2^(16+sh)) < 2^(16+sh) (m = ceil(2^(16+sh) / d)).
        if (l.d != last_md) last_md = l.d, last_m = (p2 + l.d - 1) / l.d;
        m = last_m;
        if (m > 65535 || xmax * (m * l.d - p2) >= p2)
          return "no 16-bit multiplier divides every window sum exactly";
      }
      const bool e = rule.base == Rounding::half_to_even && l.d % 2 == 0;
      R.any_even = R.any_even || e;
      uint16_t* f = R.lanes.data() + c * 3 * static_cast<size_t>(L) + static_cast<size_t>(x);
      f[0] = static_cast<uint16_t>(A);  // A in [0, xmax]; n >= 0 and h >= e: n + h - e >= 0
      f[L] = static_cast<uint16_t>(m);
      f[2 * L] = e ? 1 : 0;
    }
  return nullptr;
}

// The checked tail's offset and multiplier of every stored lane into R.
const char* checked_lanes(const QAvgPlan& P, const std::vector<uint64_t>& keys, Rows16Plan& R) {
  // The tail widens the window sums as signed 16-bit words.
  if (int64_t{P.hi} * P.taps > 32767 || int64_t{P.lo} * P.taps < -32768)
    return "window sums too large for 16-bit lanes";
  const int64_t L = 16 * int64_t{R.rows};
  R.checked = true;
  R.offsets.assign(keys.size() * static_cast<size_t>(L), 0);
  R.multipliers.assign(keys.size() * static_cast<size_t>(L), 0.0f);
  for (size_t c = 0; c < keys.size(); ++c)
    for (int64_t i = 0; i < R.rows; ++i)
      for (int64_t j = 0; j < P.w.out; ++j) {
        const uint64_t key = keys[c] >> (32 * i);
        if ((key & 0xffff) == 0xffff) continue;  // no output row
        const auto vh = static_cast<int32_t>(key & 0xffff),
                   ch = static_cast<int32_t>(key >> 16 & 0xffff);
        const int32_t valid = vh * P.w.valid[static_cast<size_t>(j)];
        const int64_t d =
            avg_divisor(P.divisor, P.taps, valid, ch * P.w.clipped[static_cast<size_t>(j)]);
        if (d < 1) return "a window with no tap to divide by (the reference gives y_zp)";
        const size_t at = c * static_cast<size_t>(L) + static_cast<size_t>(i * 16 + j);
        R.offsets[at] = -P.x_zp * valid;
        R.multipliers[at] = fmean_check_multiplier(P, d);
      }
  return nullptr;
}

}  // namespace

const char* rows16_build(const QAvgPoolProblem& p, int rows, bool one_load, Rows16Plan* T,
                         bool checked_tail) {
  if (const char* why = rows16_declines(p, rows, one_load, checked_tail)) return why;
  const QAvgPlan& P = p.plan;
  Rows16Plan R;
  R.rows = rows;
  const std::vector<uint64_t> keys = group_classes(P, rows, R.group_class);
  if (uses_checked_tail(P)) {
    if (const char* why = checked_lanes(P, keys, R)) return why;
    if (T) *T = std::move(R);
    return nullptr;
  }
  const Rule rule = rule_of(qavg_int_float_mean(P) ? Rounding::half_to_even : P.rounding);
  std::vector<Lane> lanes;
  if (const char* why = lane_divisors(P, rows, keys, rule, lanes, R.sh, R.K, R.clamp_free))
    return why;
  if (const char* why = lane_fields(P, lanes, keys.size(), rule, R)) return why;
  if (T) *T = std::move(R);
  return nullptr;
}

}  // namespace npukit::cpu
