// When the several-planes-per-pass s8/u8 max pooling kernels apply, and their
// per-call plan: groups, tap offsets and the mask table (x8-maxpool2d-same.hpp).
#include <algorithm>
#include <atomic>
#include <numeric>

#include "x8-maxpool2d-same.hpp"

namespace npukit::cpu {

namespace {

// Largest group (bytes: its scratch stays in L1) and mask table (bytes) per call.
constexpr int64_t kMaxGroupBytes = 16384;
constexpr int64_t kMaxTableBytes = 131072;
// Groups of at least this many bytes, when the mask period is shorter.
constexpr int64_t kMinGroupBytes = 2048;

// Whether the planes of `v` (N x C x H x W) are one gapless NCHW byte run.
bool dense_nchw(const TensorView& v) {
  const int64_t HW = v.dim(2) * v.dim(3);
  return v.stride(1) == HW && (v.dim(0) == 1 || v.stride(0) == v.dim(1) * HW);
}

// Sets bits [begin, end) of a bitset.
void set_bits(uint64_t* w, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end;) {
    const int64_t bit = i % 64, n = std::min<int64_t>(64 - bit, end - i);
    w[i / 64] |= (n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1) << bit;
    i += n;
  }
}

// out[i], i < words: bit b set iff ((64 i + b) mod period) is in [begin, end).
// One period plus a word is laid out once; each word is then 64 bits of it
// from offset (64 i) mod period (cheap for any period, unlike a loop per row).
void periodic_mask(uint64_t* out, int64_t words, int64_t period, int64_t begin, int64_t end) {
  const int64_t span = period + 64;
  std::vector<uint64_t> rep(static_cast<size_t>(span / 64 + 2), 0);
  for (int64_t k = 0; k < span; k += period)
    set_bits(rep.data(), std::min(span, k + begin), std::min(span, k + end));
  const int64_t step = 64 % period;  // one division per mask, not per word
  int64_t q = 0;                     // (64 i) mod period
  for (int64_t i = 0; i < words; ++i) {
    const uint64_t lo = rep[static_cast<size_t>(q / 64)], hi = rep[static_cast<size_t>(q / 64 + 1)];
    const int64_t sh = q % 64;
    out[i] = sh == 0 ? lo : (lo >> sh) | (hi << (64 - sh));
    q += step;
    if (q >= period) q -= period;
  }
}

// Offsets of the taps of one axis relative to the output's own position, in
// elements (kernel k at k*dilation - pad_begin); the centre (0) is left out.
std::vector<int64_t> axis_offsets(int64_t kernel, int64_t dilation, int64_t pad) {
  std::vector<int64_t> out;
  for (int64_t k = 0; k < kernel; ++k)
    if (k * dilation != pad) out.push_back(k * dilation - pad);
  return out;
}

// Stream groups (L vectors, a whole number of planes unless the tensor is
// shorter) when x and y are gapless and one mask period fits; else planes.
struct Groups {
  bool stream;
  int64_t L;
};
Groups choose_groups(const Pool2dProblem& pr, int64_t lanes) {
  const int64_t HW = pr.x.dim(2) * pr.x.dim(3);
  const int64_t vectors = (pr.x.dim(0) * pr.x.dim(1) * HW + lanes - 1) / lanes;
  const int64_t period = HW / std::gcd(HW, lanes);  // vectors
  if (dense_nchw(pr.x) && dense_nchw(pr.y) && std::min(period, vectors) * lanes <= kMaxGroupBytes) {
    const int64_t repeat = std::max<int64_t>(1, kMinGroupBytes / (period * lanes));
    const int64_t fit = std::max<int64_t>(1, kMaxGroupBytes / (period * lanes));
    return {true, std::min(vectors, period * std::min(repeat, fit))};
  }
  return {false, (HW + lanes - 1) / lanes};
}

}  // namespace

const char* x8_same_declines(const Pool2dProblem& pr, int64_t lanes) {
  const TensorView &x = pr.x, &y = pr.y;
  if (x.dtype() == DType::f32) return "not s8/u8";
  if (pr.p.mode != PoolMode::max) return "not max pooling";
  const int64_t H = x.dim(2), W = x.dim(3);
  if (y.dim(2) != H || y.dim(3) != W) return "output size differs from the input's";
  if (x.stride(3) != 1 || x.stride(2) != W || y.stride(3) != 1 || y.stride(2) != W)
    return "planes are not contiguous (NCHW rows back to back)";
  const Window2d& w = pr.p.window;
  if (w.stride_h != 1 || w.stride_w != 1) return "stride is not 1";
  if (w.ins_h != 0 || w.ins_w != 0) return "zero insertion";
  // Output size = input size with stride 1: the pads total the dilated kernel
  // minus one, so every tap is on the input or in the padding.
  if (w.pad_top < 0 || w.pad_left < 0 || w.pad_bottom < 0 || w.pad_right < 0)
    return "negative padding";
  if (w.pad_top + w.pad_bottom != (w.kernel_h - 1) * w.dilation_h ||
      w.pad_left + w.pad_right != (w.kernel_w - 1) * w.dilation_w)
    return "pads do not total the dilated kernel minus one";
  if (w.pad_top % w.dilation_h != 0 || w.pad_left % w.dilation_w != 0)
    return "no tap at the output's own position (pad not a multiple of the dilation)";
  const int64_t L = choose_groups(pr, lanes).L;
  if (lanes * L > kMaxGroupBytes) return "plane larger than 16 KB (the row kernels take it)";
  // Row, column and padding masks; a 64-bit word per AVX-512 vector, a byte
  // per lane below.
  const int64_t masks = w.kernel_h + w.kernel_w - 1;
  if (masks * L * (lanes == 64 ? 8 : lanes) > kMaxTableBytes)
    return "window too large for the mask table";
  return nullptr;
}

bool x8_same_vbmi_plan(const X8SamePlan& pl) {
  return pl.col_taps.size() == 2 && pl.col_taps[0] < 0 && pl.col_taps[0] >= -64 &&
         pl.col_taps[1] > 0 && pl.col_taps[1] <= 64;
}

namespace {
std::atomic<bool> g_allow_vbmi{true};
}  // namespace

void x8_same_allow_vbmi(bool allow) {
  g_allow_vbmi.store(allow, std::memory_order_relaxed);
}

bool x8_same_vbmi_usable() {
#if defined(__x86_64__)
  static const bool vbmi = __builtin_cpu_supports("avx512vbmi");
  return vbmi && g_allow_vbmi.load(std::memory_order_relaxed);
#else
  return false;
#endif
}

X8SamePlan make_x8_same_plan(const Pool2dProblem& pr, int64_t lanes) {
  const TensorView& x = pr.x;
  const Window2d& w = pr.p.window;
  const int64_t H = x.dim(2), W = x.dim(3), HW = H * W;
  X8SamePlan pl;
  pl.lanes = lanes;
  pl.HW = HW;
  pl.total = x.dim(0) * x.dim(1) * HW;
  const Groups g = choose_groups(pr, lanes);
  pl.stream = g.stream;
  pl.L = g.L;
  pl.group_bytes = pl.stream ? lanes * pl.L : HW;
  pl.groups = pl.stream ? (pl.total + pl.group_bytes - 1) / pl.group_bytes : x.dim(0) * x.dim(1);
  pl.row_taps = axis_offsets(w.kernel_w, w.dilation_w, w.pad_left);
  const std::vector<int64_t> dy = axis_offsets(w.kernel_h, w.dilation_h, w.pad_top);
  for (int64_t d : dy) pl.col_taps.push_back(d * W);
  for (int64_t o : pl.row_taps)
    pl.row_lo = std::min(pl.row_lo, o), pl.row_hi = std::max(pl.row_hi, o);
  for (int64_t o : pl.col_taps)
    pl.col_lo = std::min(pl.col_lo, o), pl.col_hi = std::max(pl.col_hi, o);
  // Padding wins a window only when it pads with zero and codes go below 0.
  pl.zero_pad = pr.p.pad_value == PadValue::zero && x.dtype() == DType::s8 &&
                (!pl.row_taps.empty() || !pl.col_taps.empty());

  // Lane q of a group is plane position q % HW (groups start on a plane).
  pl.words = (lanes * pl.L + 63) / 64;
  pl.bits.assign(static_cast<size_t>(pl.masks() * pl.words), 0);
  int64_t m = 0;
  for (int64_t d : pl.row_taps)  // on the row: 0 <= column + d < W
    periodic_mask(pl.bits.data() + m++ * pl.words, pl.words, W, std::max<int64_t>(0, -d),
                  std::min(W, W - d));
  for (int64_t d : dy)  // on the plane: 0 <= row + d < H
    periodic_mask(pl.bits.data() + m++ * pl.words, pl.words, HW, std::max<int64_t>(0, -d) * W,
                  std::min(H, H - d) * W);
  if (pl.zero_pad) {  // the lanes with a tap off the plane
    uint64_t* edge = pl.bits.data() + m * pl.words;
    for (int64_t i = 0; i < pl.words; ++i) {
      uint64_t all = ~uint64_t{0};
      for (int64_t k = 0; k < m; ++k) all &= pl.bits[static_cast<size_t>(k * pl.words + i)];
      edge[i] = ~all;
    }
  }
  return pl;
}

}  // namespace npukit::cpu
