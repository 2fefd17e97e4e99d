// The pieces an ISA supplies to the GEMM form of the integer convolution
// (x8-qconv-gemm.cpp drives them): a micro-kernel over one im2col tile and one
// block of kQConvRows packed weight rows, and a requantizing row store.
#pragma once

#include <cstdint>

#include "npukit/tensor.hpp"
#include "ops/cpu/qconv_problem.hpp"

namespace npukit::qconv {

// Output pixels per im2col tile: three vectors of 16 int32 lanes.
inline constexpr int64_t kTile = 48;

// c[r * kTile + t] = sum over quads q and j < 4 of x[(q * kTile + t) * 4 + j] *
// w[(q * kQConvRows + r) * 4 + j] (x u8, w s8), for r < kQConvRows and
// t < 16 * nvec: exactly in int32 (exact kernels) or with each pair (j = 0, 1)
// and (j = 2, 3) saturated to int16 first (pair kernels).
using GemmFn = void (*)(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c);

// How one output channel's row of accumulators becomes output values.
struct RowStore {
  int32_t offset = 0;              // bias - x_zp' * sum(w') + K * x_zp' * w_zp' (wrapping)
  int32_t w_zp = 0;                // w_zp': subtract w_zp' * x_sum[t] when non-zero
  const int32_t* x_sum = nullptr;  // sum over k of x' per pixel (when w_zp != 0)
  bool requantize = true;          // false: store the int32 accumulator (ConvInteger)
  float multiplier = 1.0f;         // QConvProblem::multiplier(o)
  int32_t y_zp = 0;
  bool y_s8 = false;
};

// y[t] for t < n from c[t]: acc = c + offset - w_zp * x_sum (wrapping int32),
// then detail::requantize_float(acc, multiplier, y_zp, range, half_to_even)
// into u8 / s8, or acc itself into int32.
using StoreFn = void (*)(const int32_t* c, int64_t n, const RowStore& s, void* y);

// The requantizing store fused into a micro-kernel's epilogue: one weight
// block's accumulators become output codes in registers (no int32 tile, no
// call per row). Row r's codes for pixels t < n go to y[r][t]; each is the
// StoreFn's value for acc = c + offset[r] - w_zp[r] * x_sum[t].
struct FusedStore {
  const int32_t* offset;    // [kQConvRows]
  const int32_t* w_zp;      // [kQConvRows]
  const float* multiplier;  // [kQConvRows]
  const int32_t* x_sum;     // [kTile] when any w_zp is non-zero, else null
  int32_t y_zp = 0;
  bool y_s8 = false;
  uint8_t* y[kQConvRows];  // u8 or s8 codes; rows past the last channel: scratch
  int64_t n = 0;           // pixels (<= 16 * nvec)
};
using FusedFn = void (*)(const uint8_t* x, const int8_t* w, int64_t K4, int nvec,
                         const FusedStore& s);

struct GemmIsa {
  GemmFn exact;  // exact_int32 (null: not provided)
  GemmFn pairs;  // mlas_u8s8_int16_pairs (null: not provided)
  StoreFn store;
  // The same micro-kernels with the requantizing store fused (null: gemm then
  // store). Used when the outputs are requantized codes.
  FusedFn fused_exact = nullptr, fused_pairs = nullptr;
};

void run_gemm(const QConvProblem& p, const GemmIsa& isa);

// Portable pieces (also the tails of the ISA versions).
void gemm_exact_portable(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c);
void gemm_pairs_portable(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c);
void store_portable(const int32_t* c, int64_t n, const RowStore& s, void* y);

// ISA versions (x8-qconv-gemm-<isa>.cpp); declared for every build, defined on x86-64.
void gemm_exact_avx512vnni(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c);
void gemm_pairs_avx512(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c);
void store_avx512(const int32_t* c, int64_t n, const RowStore& s, void* y);
void fused_exact_avx512vnni(const uint8_t* x, const int8_t* w, int64_t K4, int nvec,
                            const FusedStore& s);
void fused_pairs_avx512(const uint8_t* x, const int8_t* w, int64_t K4, int nvec,
                        const FusedStore& s);
void gemm_exact_avx2(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c);
void gemm_pairs_avx2(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c);
void store_avx2(const int32_t* c, int64_t n, const RowStore& s, void* y);
void fused_exact_avx2(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, const FusedStore& s);
void fused_pairs_avx2(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, const FusedStore& s);

// Depthwise (one input and one output channel per group), exact int32: one
// output row of n columns from the int16 plane of x - x_zp (zero borders):
// acc[t] = sum over (kh, kw) of row[kh*dh*wp + kw*dw + t*sw] * w[kh*kw_count + kw].
// Kernels may read up to one vector of columns past the last tap.
struct DwRow {
  const int16_t* row;  // the plane row of the window's top taps
  int64_t wp, kh, kw, dh, dw, sw;
  const int32_t* w;  // kh * kw weights (w - w_zp)
  int64_t n;
};
using DwRowFn = void (*)(const DwRow& r, int32_t* acc);
void dw_row_portable(const DwRow& r, int32_t* acc);
void dw_row_avx512(const DwRow& r, int32_t* acc);
void dw_row_avx2(const DwRow& r, int32_t* acc);
void dw_row_avx2_pairs(const DwRow& r, int32_t* acc);  // vpmaddwd, tap pairs
void dw_row_avx512vnni(const DwRow& r, int32_t* acc);  // vpdpwssd, tap pairs
// One plane of x - x_zp as int16, rows Wp apart, from H x W codes (element
// strides sh, sw); s8 codes are read as x ^ 0x80 (flip) with zero point zp + 128.
using DwFillFn = void (*)(const uint8_t* src, int64_t sh, int64_t sw, int64_t H, int64_t W,
                          int32_t zp, uint8_t flip, int16_t* dst, int64_t Wp);
void dw_fill_portable(const uint8_t* src, int64_t sh, int64_t sw, int64_t H, int64_t W, int32_t zp,
                      uint8_t flip, int16_t* dst, int64_t Wp);  // SSE2 where present
void dw_fill_avx512(const uint8_t* src, int64_t sh, int64_t sw, int64_t H, int64_t W, int32_t zp,
                    uint8_t flip, int16_t* dst, int64_t Wp);
void run_depthwise(const QConvProblem& p, DwRowFn row, StoreFn store, DwFillFn fill);

}  // namespace npukit::qconv
