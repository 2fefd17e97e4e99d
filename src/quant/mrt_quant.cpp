#include "npukit/quant/mrt_quant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "elements.hpp"
#include "real_text.hpp"

namespace npukit {

namespace {

using detail::real_text;

void check_precision(const char* fn, int precision) {
  check_range(fn, "precision", precision, 2, 16);
}

int64_t symmetric_bound(int precision) {
  return (int64_t{1} << (precision - 1)) - 1;
}
int64_t affine_bound(int precision) {
  return (int64_t{1} << precision) - 1;
}

// Channel of each element: pos index of `axis` (or 0 for layer-wise).
int64_t channel_count(const TensorView& x, int axis, const char* fn) {
  if (axis == -1) return 1;
  check_range(fn, "axis", axis, -1, x.rank() - 1);
  return x.dim(axis);
}

int64_t channel_of(const TensorView& x, int axis, const int64_t* pos) {
  return axis < 0 ? 0 : pos[4 - x.rank() + axis];
}

void check_params(const MrtQuantParams& p, const TensorView& t, const char* fn) {
  check_precision(fn, p.precision);
  const int64_t channels = channel_count(t, p.axis, fn);
  check(static_cast<int64_t>(p.sc.size()) == channels && p.zp.size() == p.sc.size(), fn, "params",
        std::to_string(p.sc.size()) + " scales and " + std::to_string(p.zp.size()) + " zero points",
        std::to_string(channels) + " of each for axis " + std::to_string(p.axis));
  // A NaN, infinite or zero scale would quantize everything to garbage silently.
  for (size_t i = 0; i < p.sc.size(); ++i) {
    check(std::isfinite(p.sc[i]) && p.sc[i] > 0, fn, "params.sc",
          real_text(p.sc[i]) + " (channel " + std::to_string(i) + ")", "finite scales > 0");
    check(std::isfinite(p.zp[i]), fn, "params.zp",
          real_text(p.zp[i]) + " (channel " + std::to_string(i) + ")", "finite zero points");
  }
}

}  // namespace

const char* mrt_scheme_name(MrtScheme s) {
  switch (s) {
    case MrtScheme::symmetric:
      return "symmetric";
    case MrtScheme::seed_affine:
      return "seed_affine";
    case MrtScheme::zero_point:
      return "zero_point";
  }
  return "invalid";
}

MrtScheme mrt_scheme_from_name(const std::string& name) {
  for (MrtScheme s : {MrtScheme::symmetric, MrtScheme::seed_affine, MrtScheme::zero_point})
    if (name == mrt_scheme_name(s)) return s;
  fail("npukit::mrt_scheme_from_name", "name", "'" + name + "'",
       "symmetric, seed_affine, zero_point");
}

int64_t MrtQuantParams::q_min() const {
  return scheme == MrtScheme::symmetric ? -symmetric_bound(precision) : 0;
}
int64_t MrtQuantParams::q_max() const {
  return scheme == MrtScheme::symmetric ? symmetric_bound(precision) : affine_bound(precision);
}

double mrt_symmetric_scale(double max_abs, int precision) {
  constexpr const char* fn = "npukit::mrt_symmetric_scale";
  check_precision(fn, precision);
  check(std::isfinite(max_abs) && max_abs > 0, fn, "max_abs", real_text(max_abs),
        "a finite value > 0 (an all-zero tensor has no scale)");
  return static_cast<double>(symmetric_bound(precision)) / max_abs;
}

double mrt_affine_scale(double min, double max, int precision) {
  constexpr const char* fn = "npukit::mrt_affine_scale";
  check_precision(fn, precision);
  check(std::isfinite(min) && std::isfinite(max) && max > min, fn, "max",
        real_text(max) + " (min " + real_text(min) + ")", "finite values with max > min");
  return static_cast<double>(affine_bound(precision)) / (max - min);
}

double mrt_seed_affine_zero_point(double min, double max, int precision) {
  mrt_affine_scale(min, max, precision);                                    // same validation
  return min * static_cast<double>(affine_bound(precision)) / (max - min);  // as the seed writes it
}

double mrt_zero_point(double sc, double min) {
  return std::ceil(-sc * min);
}

int64_t mrt_quantize_value(double x, double sc, double zp, MrtScheme s, int precision) {
  double v = 0;
  int64_t lo = 0, hi = affine_bound(precision);
  switch (s) {
    case MrtScheme::symmetric:
      v = sc * x;
      lo = -symmetric_bound(precision), hi = symmetric_bound(precision);
      break;
    case MrtScheme::seed_affine:
      v = sc * x - zp;
      break;
    case MrtScheme::zero_point:
      v = sc * x + zp;
      break;
  }
  const double f = std::floor(v);
  if (!(f >= static_cast<double>(lo))) return lo;  // also NaN -> lo
  if (f > static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(f);
}

double mrt_dequantize_value(int64_t q, double sc, double zp, MrtScheme s) {
  switch (s) {
    case MrtScheme::symmetric:
      return static_cast<double>(q) / sc;
    case MrtScheme::seed_affine:
      return (static_cast<double>(q) + zp) / sc;
    case MrtScheme::zero_point:
      return (static_cast<double>(q) - zp) / sc;
  }
  return 0;
}

MrtQuantParams mrt_calibrate(const TensorView& x, MrtScheme scheme, int precision, int axis) {
  constexpr const char* fn = "npukit::mrt_calibrate";
  x.expect_dtype(DType::f32, fn, "x");
  check_precision(fn, precision);
  const int64_t channels = channel_count(x, axis, fn);
  check(x.numel() > 0, fn, "x", "an empty tensor", "at least one element");
  std::vector<double> lo(static_cast<size_t>(channels), std::numeric_limits<double>::infinity());
  std::vector<double> hi(static_cast<size_t>(channels), -std::numeric_limits<double>::infinity());
  const float* data = static_cast<const float*>(x.raw());
  detail::for_each_element(x, [&](int64_t, int64_t off, const int64_t* pos) {
    const auto c = static_cast<size_t>(channel_of(x, axis, pos));
    const double v = data[off];
    check(std::isfinite(v), fn, "x", "an element " + real_text(v), "finite values");
    lo[c] = std::min(lo[c], v);
    hi[c] = std::max(hi[c], v);
  });
  MrtQuantParams p{scheme, precision, axis, {}, {}};
  for (size_t c = 0; c < lo.size(); ++c) {
    check(lo[c] <= hi[c], fn, "x", "channel " + std::to_string(c) + " with no element",
          "non-empty channels");
    switch (scheme) {
      case MrtScheme::symmetric:
        p.sc.push_back(
            mrt_symmetric_scale(std::max(std::fabs(lo[c]), std::fabs(hi[c])), precision));
        p.zp.push_back(0.0);
        break;
      case MrtScheme::seed_affine:
        p.sc.push_back(mrt_affine_scale(lo[c], hi[c], precision));
        p.zp.push_back(mrt_seed_affine_zero_point(lo[c], hi[c], precision));
        break;
      case MrtScheme::zero_point:
        p.sc.push_back(mrt_affine_scale(lo[c], hi[c], precision));
        p.zp.push_back(mrt_zero_point(p.sc.back(), lo[c]));
        break;
    }
  }
  return p;
}

Tensor mrt_quantize(const TensorView& x, const MrtQuantParams& p) {
  constexpr const char* fn = "npukit::mrt_quantize";
  x.expect_dtype(DType::f32, fn, "x");
  check_params(p, x, fn);
  Tensor q(DType::s32, x.shape());
  int32_t* out = q.data<int32_t>();
  const float* data = static_cast<const float*>(x.raw());
  detail::for_each_element(x, [&](int64_t i, int64_t off, const int64_t* pos) {
    const auto c = static_cast<size_t>(channel_of(x, p.axis, pos));
    out[i] = static_cast<int32_t>(
        mrt_quantize_value(data[off], p.sc[c], p.zp[c], p.scheme, p.precision));
  });
  return q;
}

Tensor mrt_dequantize(const TensorView& q, const MrtQuantParams& p) {
  constexpr const char* fn = "npukit::mrt_dequantize";
  check(detail::is_integer_dtype(q.dtype()), fn, "q", dtype_name(q.dtype()), "s8, u8, s16 or s32");
  check_params(p, q, fn);
  Tensor x(DType::f32, q.shape());
  float* out = x.data<float>();
  detail::for_each_element(q, [&](int64_t i, int64_t off, const int64_t* pos) {
    const auto c = static_cast<size_t>(channel_of(q, p.axis, pos));
    out[i] = static_cast<float>(
        mrt_dequantize_value(detail::load_int(q, off), p.sc[c], p.zp[c], p.scheme));
  });
  return x;
}

Tensor mrt_requantize(const TensorView& q, const MrtQuantParams& from, const MrtQuantParams& to,
                      int bits) {
  constexpr const char* fn = "npukit::mrt_requantize";
  check(detail::is_integer_dtype(q.dtype()), fn, "q", dtype_name(q.dtype()), "s8, u8, s16 or s32");
  check(from.scheme != MrtScheme::seed_affine && to.scheme != MrtScheme::seed_affine, fn, "scheme",
        std::string(mrt_scheme_name(from.scheme)) + " -> " + mrt_scheme_name(to.scheme),
        "symmetric or zero_point on both sides (seed_affine's zero point is not an integer)");
  check_params(from, q, fn);
  check_params(to, q, fn);
  check(from.axis == to.axis, fn, "to.axis", std::to_string(to.axis),
        "the axis of `from` (" + std::to_string(from.axis) + ")");
  std::vector<CvmFloat> factors;
  for (size_t c = 0; c < from.sc.size(); ++c)
    factors.push_back(cvm_float(to.sc[c] / from.sc[c], bits));
  Tensor y(DType::s32, q.shape());
  int32_t* out = y.data<int32_t>();
  detail::for_each_element(q, [&](int64_t i, int64_t off, const int64_t* pos) {
    const auto c = static_cast<size_t>(channel_of(q, from.axis, pos));
    // Xqn = round(rsc * (Xq - zp)) + zp_n; symmetric -> symmetric is cvm_requantize.
    const auto centred = detail::load_int(q, off) - static_cast<int64_t>(from.zp[c]);
    out[i] = static_cast<int32_t>(cvm_requantize_affine(
        centred, factors[c], static_cast<int64_t>(to.zp[c]), to.q_min(), to.q_max()));
  });
  return y;
}

}  // namespace npukit
