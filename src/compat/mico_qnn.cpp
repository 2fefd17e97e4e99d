// MiCo-Lib's Q8 pooling functions as a face over the core: the arguments are
// checked and translated into QLinearAvgPoolParams (profile mico) and
// Pool2dParams; no arithmetic lives here.
#define REF  // define the _Ref entry points too
#include "npukit/compat/mico_qnn.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "npukit/error.hpp"
#include "npukit/ops/pool2d.hpp"
#include "npukit/ops/quantized.hpp"

namespace {

using namespace npukit;

// MiCo's geometry: square kernel, equal strides and symmetric padding.
Window2d mico_window(size_t kernel, size_t stride, size_t padding) {
  Window2d w;
  w.kernel_h = w.kernel_w = static_cast<int64_t>(kernel);
  w.stride_h = w.stride_w = static_cast<int64_t>(stride);
  w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = static_cast<int64_t>(padding);
  return w;
}

int64_t as_i64(size_t v, const char* fn, const char* parameter) {
  check(v <= static_cast<size_t>(INT32_MAX), fn, parameter, std::to_string(v),
        range_text(0, INT32_MAX));
  return static_cast<int64_t>(v);
}

// Checks everything and returns the views; throws npukit::Error.
void views(const char* fn, Tensor4D_Q8* y, const Tensor4D_Q8* x, size_t kernel, size_t stride,
           size_t padding, TensorView& xv, TensorView& yv, Window2d& win) {
  check(x != nullptr, fn, "x", "NULL", "a Tensor4D_Q8");
  check(y != nullptr, fn, "y", "NULL", "a Tensor4D_Q8");
  check(x->data != nullptr, fn, "x->data", "NULL", "the input codes");
  check(y->data != nullptr, fn, "y->data", "NULL", "a buffer for the output codes");
  check_range(fn, "kernel_size", as_i64(kernel, fn, "kernel_size"), 1, INT32_MAX);
  check_range(fn, "stride", as_i64(stride, fn, "stride"), 1, INT32_MAX);
  as_i64(padding, fn, "padding");
  Shape xs(4);
  for (int i = 0; i < 4; ++i) xs[i] = as_i64(x->shape[i], fn, "x->shape");
  for (int i = 0; i < 4; ++i) check_range(fn, "x->shape", xs[i], 1, INT32_MAX);
  win = mico_window(kernel, stride, padding);
  const Shape want = {xs[0], xs[1], axis_output_size(axis_h(win, xs[2]), fn, 'h'),
                      axis_output_size(axis_w(win, xs[3]), fn, 'w')};
  const Shape ys = {static_cast<int64_t>(y->shape[0]), static_cast<int64_t>(y->shape[1]),
                    static_cast<int64_t>(y->shape[2]), static_cast<int64_t>(y->shape[3])};
  check(ys == want, fn, "y->shape", shape_text(ys),
        shape_text(want) +
            " = [N, C, (H + 2*padding - kernel_size)/stride + 1, (W + ...)/stride + 1]");
  xv = TensorView::contiguous(x->data, DType::s8, xs);
  yv = TensorView::contiguous(y->data, DType::s8, want);
}

[[noreturn]] void die(const std::exception& e) {
  std::fprintf(stderr, "npukit: error: %s\n", e.what());
  std::fflush(stderr);
  std::abort();
}

void avg_pool(const char* fn, Tensor4D_Q8* y, const Tensor4D_Q8* x, size_t k, size_t s,
              size_t pad) {
  try {
    TensorView xv, yv;
    QLinearAvgPoolParams p;
    views(fn, y, x, k, s, pad, xv, yv, p.window);
    p.count_include_pad = false;
    apply_profile(p, Profile::mico);  // scales unused by the code average: left at 1
    qlinear_average_pool(xv, yv, p);
    y->scale = x->scale;
  } catch (const std::exception& e) {
    die(e);
  }
}

void max_pool(const char* fn, Tensor4D_Q8* y, const Tensor4D_Q8* x, size_t k, size_t s,
              size_t pad) {
  try {
    TensorView xv, yv;
    Pool2dParams p;
    views(fn, y, x, k, s, pad, xv, yv, p.window);
    p.mode = PoolMode::max;
    p.pad_value = PadValue::neg_inf;  // integer: the lowest code, -128
    p.empty_max_is_zero = true;
    pool2d(xv, yv, p);
    y->scale = x->scale;
  } catch (const std::exception& e) {
    die(e);
  }
}

}  // namespace

extern "C" {

void MiCo_Q8_AvgPool2D(Tensor4D_Q8* y, const Tensor4D_Q8* x, const size_t kernel_size,
                       const size_t stride, const size_t padding) {
  avg_pool("MiCo_Q8_AvgPool2D", y, x, kernel_size, stride, padding);
}

void MiCo_Q8_MaxPool2D(Tensor4D_Q8* y, const Tensor4D_Q8* x, const size_t kernel_size,
                       const size_t stride, const size_t padding) {
  max_pool("MiCo_Q8_MaxPool2D", y, x, kernel_size, stride, padding);
}

void MiCo_Q8_AvgPool2D_Ref(Tensor4D_Q8* y, const Tensor4D_Q8* x, const size_t kernel_size,
                           const size_t stride, const size_t padding) {
  avg_pool("MiCo_Q8_AvgPool2D_Ref", y, x, kernel_size, stride, padding);
}

void MiCo_Q8_MaxPool2D_Ref(Tensor4D_Q8* y, const Tensor4D_Q8* x, const size_t kernel_size,
                           const size_t stride, const size_t padding) {
  max_pool("MiCo_Q8_MaxPool2D_Ref", y, x, kernel_size, stride, padding);
}

}  // extern "C"
