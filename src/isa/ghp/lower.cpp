// Lowering ONNX-level operators to GHP-FPGA instructions, field by field as
// the accelerator's compiler does (docs/ghp-isa.md, "The arithmetic").
#include <cmath>
#include <cstdio>

#include "npukit/error.hpp"
#include "npukit/isa/ghp.hpp"
#include "npukit/ops/ghp_pool.hpp"
#include "npukit/ops/onnx_window.hpp"

namespace npukit::ghp {

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

std::string real_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Stores a real value, naming the lowering function and the field on failure.
void put(Instruction& ins, int i, int64_t real, const HwConfig& hw, const char* fn) {
  try {
    ins[i] = encode_field(ins.format(), i, real, hw);
  } catch (const Error& e) {
    fail(fn, std::string("field ") + fields(ins.format())[static_cast<size_t>(i)].name, e.value(),
         e.allowed());
  }
}

void check_scale(const char* fn, const char* name, double s) {
  check(std::isfinite(s) && s > 0, fn, name, real_text(s), "a finite value > 0");
}

// M -> (m1, n1) with the lowering's name on the error and the RTL's n1 limit.
Multiplier lower_multiplier(double M, const char* fn, const std::string& what) {
  Multiplier m;
  try {
    m = decompose_multiplier(M);
  } catch (const Error& e) {
    fail(fn, what, real_text(M), "a multiplier the hardware can hold: " + e.allowed());
  }
  if (m.n1 > kN1MaxRtl)
    fail(fn, what, real_text(M) + " (n1 = " + std::to_string(m.n1) + ")",
         "M >= 2^-39 so that n1 <= 64 (the PPU's shift port is 6 bits)");
  return m;
}

// The geometry fields shared by MAXP and AVGP.
Instruction lower_pool_common(OpCode op, const Shape& x, const Window2d& w, const Addresses& addr,
                              const HwConfig& hw, const char* fn) {
  const int64_t C = x[1], H = x[2], W = x[3];
  const int64_t OH = axis_output_size(axis_h(w, H), fn, 'h');
  const int64_t OW = axis_output_size(axis_w(w, W), fn, 'w');
  check_range(fn, "kernel_shape[0]", w.kernel_h, 1, 256);
  check_range(fn, "kernel_shape[1]", w.kernel_w, 1, 256);
  check(w.stride_h <= 15, fn, "strides[0]", std::to_string(w.stride_h),
        "[1, 15] (the instruction's stride fields are 4 bits)");
  check(w.stride_w <= 15, fn, "strides[1]", std::to_string(w.stride_w),
        "[1, 15] (the instruction's stride fields are 4 bits)");
  check(w.pad_top <= 15, fn, "pads[0] (top)", std::to_string(w.pad_top),
        "[0, 15] (the instruction's pad fields are 4 bits)");
  check(w.pad_left <= 15, fn, "pads[1] (left)", std::to_string(w.pad_left),
        "[0, 15] (the instruction's pad fields are 4 bits)");
  check(w.pad_top < w.kernel_h && w.pad_left < w.kernel_w, fn, "pads",
        std::to_string(w.pad_top) + ", " + std::to_string(w.pad_left),
        "begin pads smaller than the kernel");
  Instruction ins(op);
  namespace f = f64;
  const int64_t outs = OH * OW, rounds = ceil_div(outs, hw.P);
  put(ins, f::xphs_addr, static_cast<int64_t>(addr.xphs_addr), hw, fn);
  put(ins, f::xphs_len, rounds, hw, fn);
  put(ins, f::X_addr, static_cast<int64_t>(addr.x_addr), hw, fn);
  put(ins, f::Y_addr, static_cast<int64_t>(addr.y_addr), hw, fn);
  put(ins, f::OC, C, hw, fn);
  put(ins, f::INC, C, hw, fn);
  put(ins, f::INW_, W, hw, fn);
  put(ins, f::KH, w.kernel_h, hw, fn);
  put(ins, f::KW, w.kernel_w, hw, fn);
  put(ins, f::strideH, w.stride_h, hw, fn);
  put(ins, f::strideW, w.stride_w, hw, fn);
  put(ins, f::padL, w.pad_left, hw, fn);
  put(ins, f::padU, w.pad_top, hw, fn);
  put(ins, f::INH2, H + w.pad_top, hw, fn);
  put(ins, f::INW2, W + w.pad_left, hw, fn);
  put(ins, f::ifm_height, ceil_div(H * W, hw.R), hw, fn);
  put(ins, f::ofm_height, ceil_div(outs, hw.R), hw, fn);
  put(ins, f::n_last_batch, ceil_div(outs - (rounds - 1) * hw.P, hw.R), hw, fn);
  put(ins, f::row_bound, (OH - 1) * w.stride_h, hw, fn);
  put(ins, f::col_bound, (OW - 1) * w.stride_w, hw, fn);
  put(ins, f::vec_size, w.kernel_h * w.kernel_w, hw, fn);
  put(ins, f::vec_size_minus_1, w.kernel_h * w.kernel_w - 1, hw, fn);
  return ins;
}

void check_x_shape(const Shape& x, const HwConfig& hw, const char* fn) {
  check(x.size() == 4, fn, "x_shape", shape_text(x), "(1, C, H, W)");
  check(x[0] == 1, fn, "x_shape[0] (N)", std::to_string(x[0]),
        "1 (the accelerator runs one image per instruction)");
  check(x[1] >= hw.S && x[1] % hw.S == 0, fn, "x_shape[1] (C)", std::to_string(x[1]),
        "a positive multiple of S = " + std::to_string(hw.S) +
            " (the compiler pads channels to a multiple of S; pad the tensor first)");
  check_range(fn, "x_shape[2] (H)", x[2], 1, 65535);
  check_range(fn, "x_shape[3] (W)", x[3], 1, 65535);
}

void check_zp(const char* fn, const char* name, int zp) {
  check_range(fn, name, zp, 0, 255);
}

Instruction lower_avg(const Shape& x, const Window2d& w, const QuantParams& q,
                      const Addresses& addr, const HwConfig& hw, const char* fn) {
  check_scale(fn, "x_scale", q.x_scale);
  check_scale(fn, "y_scale", q.y_scale);
  check_zp(fn, "x_zero_point", q.x_zp);
  check_zp(fn, "y_zero_point", q.y_zp);
  const int64_t N = w.kernel_h * w.kernel_w;
  check(N * 255 < (int64_t{1} << kPoolSumBits), fn, "kernel_shape",
        std::to_string(w.kernel_h) + "x" + std::to_string(w.kernel_w) +
            " (N = " + std::to_string(N) + ")",
        "N = KH*KW <= 64 (the pool engine sums a window in a 14-bit register: N*255 < 16384)");
  Instruction ins = lower_pool_common(OpCode::avgp, x, w, addr, hw, fn);
  const Multiplier m = lower_multiplier(q.x_scale / (q.y_scale * static_cast<double>(N)), fn,
                                        "M1 = x_scale/(N*y_scale)");
  namespace f = f64;
  const int64_t neg_nxz = -N * q.x_zp;  // >= -64*255, fits the signed 16-bit {obj2, obj1}
  put(ins, f::X_z, q.x_zp, hw, fn);
  put(ins, f::Y_z, q.y_zp, hw, fn);
  put(ins, f::m1, m.m1, hw, fn);
  put(ins, f::n1, m.n1, hw, fn);
  put(ins, f::obj1, neg_nxz & 0xFF, hw, fn);
  put(ins, f::obj2, (neg_nxz >> 8) & 0xFF, hw, fn);
  return ins;
}

}  // namespace

Window2d pool_window(const Shape& x, const PoolAttrs& a, const char* fn) {
  check(x.size() == 4, fn, "x_shape", shape_text(x), "(1, C, H, W)");
  for (int64_t d : a.dilations)
    check(d == 1, fn, "dilations", std::to_string(d), "1 (the pool engine has no dilation)");
  // Empty lists are absent attributes; the GHP profiles pool with ONNX's geometry.
  auto given = [](const std::vector<int64_t>& v) {
    return v.empty() ? std::nullopt : std::optional<std::vector<int64_t>>(v);
  };
  OnnxWindowAttributes attrs{given(a.kernel_shape), given(a.strides), given(a.pads),
                             std::nullopt,          a.auto_pad,       a.ceil_mode ? 1 : 0};
  Window2d w = onnx_window_2d(fn, attrs, x[2], x[3], WindowUse::pool, Profile::ghp_rtl);
  const int64_t OH = axis_output_size(axis_h(w, x[2]), fn, 'h');
  const int64_t OW = axis_output_size(axis_w(w, x[3]), fn, 'w');
  // ceil_mode becomes extra end padding: exactly enough for OH x OW windows.
  if (w.ceil_mode) {
    w.pad_bottom =
        std::max<int64_t>(w.pad_bottom, (OH - 1) * w.stride_h + w.kernel_h - x[2] - w.pad_top);
    w.pad_right =
        std::max<int64_t>(w.pad_right, (OW - 1) * w.stride_w + w.kernel_w - x[3] - w.pad_left);
    w.ceil_mode = false;
  }
  return w;
}

Instruction lower_qlinear_average_pool(const Shape& x, const PoolAttrs& attrs, const QuantParams& q,
                                       const Addresses& addr, const HwConfig& hw) {
  constexpr const char* fn = "npukit::ghp::lower_qlinear_average_pool";
  check_x_shape(x, hw, fn);
  check(attrs.count_include_pad == 1, fn, "count_include_pad",
        std::to_string(attrs.count_include_pad),
        "1 (the accelerator always divides by KH*KW; count_include_pad = 0 is not supported)");
  return lower_avg(x, pool_window(x, attrs, fn), q, addr, hw, fn);
}

Instruction lower_qlinear_global_average_pool(const Shape& x, const QuantParams& q,
                                              const Addresses& addr, const HwConfig& hw) {
  constexpr const char* fn = "npukit::ghp::lower_qlinear_global_average_pool";
  check_x_shape(x, hw, fn);
  Window2d w;
  w.kernel_h = x[2];
  w.kernel_w = x[3];
  return lower_avg(x, w, q, addr, hw, fn);
}

Instruction lower_max_pool(const Shape& x, const PoolAttrs& attrs, const Addresses& addr,
                           const HwConfig& hw) {
  constexpr const char* fn = "npukit::ghp::lower_max_pool";
  check_x_shape(x, hw, fn);
  Instruction ins = lower_pool_common(OpCode::maxp, x, pool_window(x, attrs, fn), addr, hw, fn);
  // MaxPool passes the window maximum through the PPU unchanged: 1024 * 2^-10.
  put(ins, f64::m1, 1024, hw, fn);
  put(ins, f64::n1, 10, hw, fn);
  return ins;
}

Instruction lower_qlinear_add(int64_t elements, const AddQuant& q, const AddAddresses& addr,
                              const HwConfig& hw) {
  constexpr const char* fn = "npukit::ghp::lower_qlinear_add";
  const int64_t row = hw.S * hw.R;
  check(elements >= row && elements % row == 0, fn, "elements", std::to_string(elements),
        "a positive multiple of S*R = " + std::to_string(row) + " (one RTM row)");
  check_scale(fn, "a_scale", q.a_scale);
  check_scale(fn, "b_scale", q.b_scale);
  check_scale(fn, "c_scale", q.c_scale);
  check_zp(fn, "a_zero_point", q.a_zp);
  check_zp(fn, "b_zero_point", q.b_zp);
  check_zp(fn, "c_zero_point", q.c_zp);
  AddParams p;
  try {
    p = add_params(Profile::ghp_rtl, q.a_scale, q.a_zp, q.b_scale, q.b_zp, q.c_scale, q.c_zp);
  } catch (const Error& e) {
    fail(fn, "max(a_scale, b_scale)/c_scale", e.value(),
         "a multiplier the hardware can hold: " + e.allowed());
  }
  check(p.n <= kN1MaxRtl, fn, "max(a_scale, b_scale)/c_scale", "n = " + std::to_string(p.n),
        "n <= 64 (the PPU's shift port is 6 bits)");
  Instruction ins(OpCode::add);
  put(ins, fadd::A_addr, static_cast<int64_t>(addr.a_addr), hw, fn);
  put(ins, fadd::B_addr, static_cast<int64_t>(addr.b_addr), hw, fn);
  put(ins, fadd::C_addr, static_cast<int64_t>(addr.c_addr), hw, fn);
  put(ins, fadd::len, elements / row, hw, fn);
  put(ins, fadd::m1, p.m1, hw, fn);
  put(ins, fadd::m2, p.m2, hw, fn);
  put(ins, fadd::n, p.n, hw, fn);
  put(ins, fadd::A_z, q.a_zp, hw, fn);
  put(ins, fadd::B_z, q.b_zp, hw, fn);
  put(ins, fadd::C_z, q.c_zp, hw, fn);
  return ins;
}

}  // namespace npukit::ghp
