#include "npukit/ops/npu_packed_int.hpp"

#include <algorithm>
#include <string>

#include "npukit/error.hpp"
#include "npukit/parallel.hpp"
#include "npukit/quant/rounding.hpp"

namespace npukit {

const char* fixed_type_name(FixedType t) {
  switch (t) {
    case FixedType::s8:
      return "int8";
    case FixedType::u8:
      return "uint8";
    case FixedType::s16:
      return "int16";
    case FixedType::u16:
      return "uint16";
  }
  return "invalid";
}

int fixed_bits(FixedType t) {
  return t == FixedType::s8 || t == FixedType::u8 ? 8 : 16;
}
bool fixed_signed(FixedType t) {
  return t == FixedType::s8 || t == FixedType::s16;
}
int64_t fixed_min(FixedType t) {
  return fixed_signed(t) ? -(int64_t{1} << (fixed_bits(t) - 1)) : 0;
}
int64_t fixed_max(FixedType t) {
  return fixed_signed(t) ? (int64_t{1} << (fixed_bits(t) - 1)) - 1
                         : (int64_t{1} << fixed_bits(t)) - 1;
}

const char* fixed_op_name(FixedOp op) {
  switch (op) {
    case FixedOp::add:
      return "add";
    case FixedOp::sub:
      return "sub";
    case FixedOp::mul:
      return "mul";
    case FixedOp::mac:
      return "mac";
    case FixedOp::max:
      return "max";
    case FixedOp::min:
      return "min";
  }
  return "invalid";
}

namespace {

void in_type(int32_t v, FixedType t, const char* name, const char* fn = "npukit::fixed_point_op") {
  if (v < fixed_min(t) || v > fixed_max(t))
    fail(fn, name, std::to_string(v),
         range_text(fixed_min(t), fixed_max(t)) + " (" + fixed_type_name(t) + ")");
}

}  // namespace

int32_t fixed_point_op(FixedOp op, int32_t a, int32_t b, int32_t old, const FixedPointParams& p) {
  constexpr const char* fn = "npukit::fixed_point_op";
  check_range(fn, "rshift", p.rshift, 0, 31);
  check_range(fn, "lshift", p.lshift, 0, 14);
  in_type(a, p.a, "a");
  in_type(b, p.b, "b");
  int64_t r = 0;
  switch (op) {
    case FixedOp::add:
      r = int64_t{a} + b;
      break;
    case FixedOp::sub:
      r = int64_t{a} - b;
      break;
    case FixedOp::mul:
      r = int64_t{a} * b;
      break;
    case FixedOp::mac:
      in_type(old, p.old, "old");
      r = int64_t{old} * (int64_t{1} << p.lshift) + int64_t{a} * b;
      break;
    case FixedOp::max:
      r = std::max(a, b);
      break;
    case FixedOp::min:
      r = std::min(a, b);
      break;
  }
  r = shift_round(r, p.rshift, Rounding::half_up);
  if (p.saturate) return static_cast<int32_t>(std::clamp(r, fixed_min(p.y), fixed_max(p.y)));
  // Wrap: keep the low bits and read them as y's type.
  const int bits = fixed_bits(p.y);
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  int64_t w = static_cast<int64_t>(static_cast<uint64_t>(r) & mask);
  if (fixed_signed(p.y) && w > fixed_max(p.y)) w -= int64_t{1} << bits;
  return static_cast<int32_t>(w);
}

void fixed_point_binary(FixedOp op, std::span<const int32_t> a, std::span<const int32_t> b,
                        std::span<const int32_t> old, std::span<int32_t> y,
                        const FixedPointParams& p) {
  constexpr const char* fn = "npukit::fixed_point_binary";
  auto same = [&](size_t n, const char* name) {
    check(n == a.size(), fn, name, std::to_string(n) + " elements",
          std::to_string(a.size()) + " (a's)");
  };
  same(b.size(), "b");
  same(y.size(), "y");
  if (op == FixedOp::mac) same(old.size(), "old");
  constexpr size_t kBlock = 8192;
  parallel_for(static_cast<int64_t>((a.size() + kBlock - 1) / kBlock), [&](int64_t blk) {
    const size_t lo = static_cast<size_t>(blk) * kBlock;
    const size_t hi = std::min(a.size(), lo + kBlock);
    for (size_t i = lo; i < hi; ++i)
      y[i] = fixed_point_op(op, a[i], b[i], op == FixedOp::mac ? old[i] : 0, p);
  });
}

int32_t fixed_shift(FixedType t, int32_t a, int32_t count) {
  constexpr const char* fn = "npukit::fixed_shift";
  const int bits = fixed_bits(t);
  check_range(fn, "count", count, -bits, bits);
  in_type(a, t, "a", fn);
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  int64_t r;
  if (count >= 0) {
    r = static_cast<int64_t>((static_cast<uint64_t>(a) << count) & mask);
    if (fixed_signed(t) && r > fixed_max(t)) r -= int64_t{1} << bits;
  } else {
    // a is sign- or zero-extended already: >> fills with the type's sign.
    r = -count >= bits ? (a < 0 ? -1 : 0) : int64_t{a} >> -count;
  }
  return static_cast<int32_t>(r);
}

void fixed_to_f32(std::span<const int32_t> x, std::span<float> y) {
  check(y.size() == x.size(), "npukit::fixed_to_f32", "y", std::to_string(y.size()) + " elements",
        std::to_string(x.size()) + " (x's)");
  for (size_t i = 0; i < x.size(); ++i) y[i] = static_cast<float>(x[i]);
}

}  // namespace npukit
