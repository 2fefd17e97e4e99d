// The fast pool2d kernels against the reference, bit for bit: every kernel of
// the "pool2d" family that runs on this host, on thousands of seeded random
// problems (geometry, semantics, layouts, strides, special values, 1/2/3
// threads), plus the dispatch through npukit::pool2d at every ISA cap and
// under Impl::reference. A failure prints the seed, the case index and the
// whole configuration.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include "ops/cpu/f32-pool2d-s2.hpp"
#include "ops/cpu/pool2d_plan.hpp"
#include "unit/test_util.hpp"
#include "unit/variant_test_util.hpp"

namespace npukit {
namespace test_pool2d_fast {
namespace {

using cpu::Pool2dProblem;

struct SettingsGuard {
  ~SettingsGuard() {
    set_num_threads(0);
    set_max_isa(host_isa());
    set_impl(Impl::fast);
  }
};

struct Case {
  Shape shape;
  DType dtype = DType::f32;
  Pool2dParams p;
  int x_layout = 0, y_layout = 0;  // 0 NCHW, 1 NHWC, 2 NCHW with padded strides
  int values = 0;                  // 0 plain, 1 ties and zeros, 2 special values, 3 without NaN,
                                   // 4 without NaN but for one NaN in one or two planes,
                                   // 5 half the elements NaNs with random payloads
};

std::string describe(const Case& c) {
  const Pool2dParams& p = c.p;
  const Window2d& w = p.window;
  std::ostringstream s;
  s << dtype_name(c.dtype) << " x" << shape_text(c.shape) << " " << pool_mode_name(p.mode) << " k"
    << w.kernel_h << "x" << w.kernel_w << " s" << w.stride_h << "x" << w.stride_w << " d"
    << w.dilation_h << "x" << w.dilation_w << " ins" << w.ins_h << "x" << w.ins_w << " pads("
    << w.pad_top << "," << w.pad_bottom << "," << w.pad_left << "," << w.pad_right << ")"
    << (w.ceil_mode ? " ceil" : "") << (w.truncated_count ? " truncated_count" : "") << " "
    << avg_divisor_name(p.divisor) << " pad=" << pad_value_name(p.pad_value)
    << (p.nan == MaxNaN::propagate ? " nan=propagate" : " nan=ignore") << " "
    << fp32_accumulation_name(p.accumulation) << (p.flush_denormals ? " ftz" : "")
    << " coeff=" << p.coeff << (p.empty_max_is_zero ? " empty_max_is_zero" : "")
    << " loop=" << pool_loop_name(p.loop) << " nchwc_block=" << p.nchwc_block
    << " x_layout=" << c.x_layout << " y_layout=" << c.y_layout << " values=" << c.values;
  return s.str();
}

// Values that stress the semantics: signed zeros, infinities, NaNs with
// distinct payloads (quiet and signalling, both signs), denormals, the largest floats, and
// neighbours of d * 2^-126 (products with 1/d land next to the FTZ threshold).
float special_value(std::mt19937& g) {
  static const uint32_t bits[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
                                  0xffc00001, 0x7fa00123, 0x00000001, 0x80000001, 0x007fffff,
                                  0x807fffff, 0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff,
                                  0x3f800000, 0xbf800000, 0x00400000, 0xffa00456};
  const int pick = static_cast<int>(g() % 25);
  if (pick < 19) return std::bit_cast<float>(bits[pick]);
  const float d = static_cast<float>(1 + g() % 16);
  const float near = d * 0x1p-126f;
  const uint32_t b = std::bit_cast<uint32_t>(near) + (g() % 3) - 1;
  return (g() % 2 ? 1.0f : -1.0f) * std::bit_cast<float>(b);
}

// A NaN with a random payload: quiet or signalling, either sign.
float any_nan(std::mt19937& g) {
  const uint32_t sign = g() % 2 ? 0x80000000u : 0u, quiet = g() % 2 ? 0x00400000u : 0u;
  const uint32_t payload = 1u + static_cast<uint32_t>(g() % 0x3fffffu);
  return std::bit_cast<float>(sign | 0x7f800000u | quiet | payload);
}

void fill(const Case& c, const TensorView& x, std::mt19937& g) {
  std::uniform_real_distribution<float> uni(-4.0f, 4.0f);
  for (int64_t n = 0; n < x.dim(0); ++n)
    for (int64_t ch = 0; ch < x.dim(1); ++ch)
      for (int64_t h = 0; h < x.dim(2); ++h)
        for (int64_t w = 0; w < x.dim(3); ++w) {
          if (c.dtype != DType::f32) {
            const int r = static_cast<int>(g() % 256);
            const int v = c.values == 1 ? r % 5 - 2 : r;  // ties; low values stress padding
            if (c.dtype == DType::u8) x.at<uint8_t>(n, ch, h, w) = static_cast<uint8_t>(v);
            if (c.dtype == DType::s8) x.at<int8_t>(n, ch, h, w) = static_cast<int8_t>(v);
            continue;
          }
          float v = uni(g);
          if (c.values == 1) v = static_cast<float>(static_cast<int>(g() % 5) - 2) * 0.5f;
          if (c.values == 1 && g() % 4 == 0) v = -0.0f;
          if (c.values == 2 && g() % 3 == 0) v = special_value(g);
          if ((c.values == 3 || c.values == 4) && g() % 3 == 0)  // specials but no NaN
            do v = special_value(g);
            while (std::isnan(v));
          if (c.values == 5 && g() % 2 == 0) v = any_nan(g);  // NaNs meet in most windows
          x.at<float>(n, ch, h, w) = v;
        }
  if (c.values != 4 || c.dtype != DType::f32) return;
  // One NaN (quiet or signalling, either sign) at a random element of a random
  // plane, once or twice: the other planes of a pass stay NaN-free.
  static const uint32_t nans[] = {0x7fc00000, 0xffc00001, 0x7fa00123, 0xffa00456};
  for (int k = 0; k < 1 + static_cast<int>(g() % 2); ++k)
    x.at<float>(static_cast<int64_t>(g() % static_cast<uint32_t>(x.dim(0))),
                static_cast<int64_t>(g() % static_cast<uint32_t>(x.dim(1))),
                static_cast<int64_t>(g() % static_cast<uint32_t>(x.dim(2))),
                static_cast<int64_t>(g() % static_cast<uint32_t>(x.dim(3)))) =
        std::bit_cast<float>(nans[g() % 4]);
}

// A view over `buf` in the chosen layout (2: NCHW with gaps between rows,
// planes and images, so no stride equals the dense one).
TensorView make_view(std::vector<uint8_t>& buf, DType dt, const Shape& s, int layout) {
  const int64_t N = s[0], C = s[1], H = s[2], W = s[3];
  Shape st;
  if (layout == 0) st = contiguous_strides(s, Layout::nchw);
  if (layout == 1) st = contiguous_strides(s, Layout::nhwc);
  if (layout == 2) {
    const int64_t row = W + 3, plane = row * H + 5, image = plane * C + 7;
    st = {image, plane, row, 1};
  }
  const int64_t span = (N - 1) * st[0] + (C - 1) * st[1] + (H - 1) * st[2] + (W - 1) * st[3] + 1;
  const size_t bytes = static_cast<size_t>(span) * dtype_size(dt);
  buf.assign(bytes + 64, 0xa5);  // poison: elements that are not outputs must keep it
  return TensorView(buf.data(), dt, s, st);
}

Case random_case(std::mt19937& g) {
  auto pick = test::picker(g);
  Case c;
  const int shape_kind = static_cast<int>(g() % 10);
  const int64_t H = shape_kind == 0 ? 1 : pick(1, 12), W = shape_kind == 1 ? 1 : pick(1, 40);
  const int64_t C = g() % 10 == 0 ? pick(60, 70) : pick(1, 9);
  c.shape = {pick(1, 2), C, H, W};
  const int dt = static_cast<int>(g() % 10);
  c.dtype = dt < 7 ? DType::f32 : dt < 9 ? DType::u8 : DType::s8;
  Pool2dParams& p = c.p;
  p.mode = c.dtype != DType::f32 ? PoolMode::max : static_cast<PoolMode>(g() % 3);
  Window2d& w = p.window;
  w.kernel_h = pick(1, 4);
  w.kernel_w = pick(1, 4);
  w.stride_h = pick(1, 3);
  w.stride_w = g() % 3 == 0 ? 1 : g() % 2 ? 2 : pick(3, 4);
  w.dilation_h = g() % 4 == 0 ? 2 : 1;
  w.dilation_w = g() % 4 == 0 ? pick(2, 3) : 1;
  w.ins_h = g() % 6 == 0 ? pick(1, 2) : 0;
  w.ins_w = g() % 6 == 0 ? pick(1, 2) : 0;
  if (g() % 4 != 0) {
    w.pad_top = pick(0, 3);
    w.pad_bottom = pick(0, 3);
    w.pad_left = pick(0, 3);
    w.pad_right = pick(0, 3);
  }
  w.ceil_mode = g() % 3 == 0;
  w.truncated_count = !w.ceil_mode && g() % 6 == 0;
  if (w.truncated_count && g() % 3 == 0) w.pad_bottom = w.pad_right = -1;
  if (g() % 12 == 0) {  // global: the whole image
    w = Window2d{};
    w.kernel_h = H;
    w.kernel_w = W;
  }
  p.divisor = static_cast<AvgDivisor>(g() % 3);
  p.pad_value = static_cast<PadValue>(g() % 3);
  p.nan = static_cast<MaxNaN>(g() % 2);
  p.accumulation = static_cast<Fp32Accumulation>(g() % 2);
  p.flush_denormals = g() % 3 == 0;
  static const float coeffs[] = {1.0f, 0.37f, -2.5f, 0x1p-120f};
  p.coeff = coeffs[g() % 4];
  p.empty_max_is_zero = g() % 2 == 0;
  // ONNX Runtime's NCHWc loop, chosen directly or by a channel block.
  const int nchwc = static_cast<int>(g() % 8);
  if (nchwc == 0) p.loop = PoolLoop::mlas_nchwc;
  if (nchwc == 1) p.nchwc_block = g() % 2 ? C : 2;
  if (nchwc == 2) p.loop = PoolLoop::mlas;
  c.x_layout = static_cast<int>(g() % 3);
  c.y_layout = static_cast<int>(g() % 3);
  c.values = static_cast<int>(g() % 3);
  return c;
}

// Output bytes in logical order, padding gaps excluded.
std::vector<uint8_t> logical_bytes(const TensorView& y) {
  const size_t es = dtype_size(y.dtype());
  std::vector<uint8_t> out;
  for (int64_t n = 0; n < y.dim(0); ++n)
    for (int64_t c = 0; c < y.dim(1); ++c)
      for (int64_t h = 0; h < y.dim(2); ++h)
        for (int64_t w = 0; w < y.dim(3); ++w) {
          const uint8_t* e =
              static_cast<const uint8_t*>(y.raw()) +
              (n * y.stride(0) + c * y.stride(1) + h * y.stride(2) + w * y.stride(3)) *
                  static_cast<int64_t>(es);
          out.insert(out.end(), e, e + es);
        }
  return out;
}

// First differing element, as text, or "". Bit for bit, NaN payloads
// included: every order states x86's rule (the first NaN operand of an
// addition wins, quieted; fp32_semantics.hpp), so avg/sum NaNs are pinned too.
std::string first_difference(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                             DType dt, PoolMode) {
  const size_t es = dtype_size(dt);
  for (size_t i = 0; i < got.size(); i += es) {
    if (std::memcmp(&got[i], &want[i], es) == 0) continue;
    std::ostringstream s;
    s << "element " << i / es << ": got 0x" << std::hex;
    if (dt == DType::f32) {
      uint32_t a, b;
      std::memcpy(&a, &got[i], 4);
      std::memcpy(&b, &want[i], 4);
      s << a << ", reference 0x" << b << std::dec << " (" << std::bit_cast<float>(a) << " vs "
        << std::bit_cast<float>(b) << ")";
    } else {
      s << int(got[i]) << ", reference 0x" << int(want[i]);
    }
    return s.str();
  }
  return "";
}

// Bytes of the output buffer outside the view must keep their poison.
bool gaps_untouched(const std::vector<uint8_t>& buf, const TensorView& y) {
  std::vector<uint8_t> marked(buf.size(), 0);
  const size_t es = dtype_size(y.dtype());
  for (int64_t n = 0; n < y.dim(0); ++n)
    for (int64_t c = 0; c < y.dim(1); ++c)
      for (int64_t h = 0; h < y.dim(2); ++h)
        for (int64_t w = 0; w < y.dim(3); ++w) {
          const size_t at = static_cast<size_t>(n * y.stride(0) + c * y.stride(1) +
                                                h * y.stride(2) + w * y.stride(3)) *
                            es;
          for (size_t b = 0; b < es; ++b) marked[at + b] = 1;
        }
  for (size_t i = 0; i < buf.size(); ++i)
    if (!marked[i] && buf[i] != 0xa5) return false;
  return true;
}

struct Stats {
  int64_t cases = 0, runs = 0, elements = 0, nonzero = 0;
  int64_t lanes[3] = {0, 0, 0};              // cases per cpu::Lanes choice
  std::map<std::string, int64_t> by_kernel;  // runs per kernel name
};

// Runs every runnable, accepting kernel of the family on case `c` and
// compares with the reference; returns false after the first mismatch.
bool check_case(const Case& c, uint32_t seed, int index, Stats& st) {
  Shape ys;
  try {
    ys = pool2d_output_shape(c.shape, c.p);
  } catch (const Error&) {
    return true;  // an invalid window: covered by the bad-input tests
  }
  std::mt19937 g(seed * 7919u + static_cast<uint32_t>(index));
  std::vector<uint8_t> xbuf, refbuf, ybuf;
  const TensorView x = make_view(xbuf, c.dtype, c.shape, c.x_layout);
  fill(c, x, g);
  const TensorView ref = make_view(refbuf, c.dtype, ys, 0);
  const Pool2dProblem ref_problem{x, ref, c.p};
  set_num_threads(1);  // (OpenMP teams spin; the reference's result is thread-independent)
  pool2d_kernels().variants.back().run(ref_problem);
  const std::vector<uint8_t> want = logical_bytes(ref);
  ++st.cases;
  ++st.lanes[static_cast<int>(cpu::make_pool2d_plan(ref_problem).lanes)];
  // Threads 2 and 3 on every fourth case: OpenMP teams on a loaded machine
  // cost milliseconds per call, and the split is the same for every case.
  int threads = index % 4 == 0 ? 2 + index / 4 % 2 : 1;
  for (const auto& v : pool2d_kernels().variants) {
    if (v.reference || !KernelList<Pool2dProblem>::runnable(v)) continue;
    const TensorView y = make_view(ybuf, c.dtype, ys, c.y_layout);
    const Pool2dProblem pr{x, y, c.p};
    if (v.declines && v.declines(pr)) continue;
    set_num_threads(threads);
    if (threads > 1) threads = 5 - threads;  // alternate 2 and 3
    v.run(pr);
    const std::string diff = first_difference(logical_bytes(y), want, c.dtype, c.p.mode);
    const bool gaps = gaps_untouched(ybuf, y);
    EXPECT_TRUE(diff.empty() && gaps)
        << "kernel " << v.name << ", seed " << seed << ", case " << index << ", threads "
        << num_threads() << ": " << (diff.empty() ? "wrote outside the output view" : diff)
        << "\n  " << describe(c);
    if (!diff.empty() || !gaps) return false;
    ++st.runs;
    ++st.by_kernel[v.name];
    st.elements += static_cast<int64_t>(want.size() / dtype_size(c.dtype));
  }
  for (uint8_t b : want) st.nonzero += b != 0;
  return true;
}

TEST(Pool2dFast, EveryKernelMatchesReferenceOnRandomProblems) {
  SettingsGuard guard;
  const uint32_t seed = 20261126;
  std::mt19937 g(seed);
  Stats st;
  for (int i = 0; i < 3000; ++i)
    if (!check_case(random_case(g), seed, i, st)) break;
  std::printf("pool2d fast: seed %u, %lld cases, %lld kernel runs, %lld elements compared\n", seed,
              static_cast<long long>(st.cases), static_cast<long long>(st.runs),
              static_cast<long long>(st.elements));
  // Guard against a vacuous run: most cases valid, every fast kernel exercised.
  EXPECT_GT(st.cases, 1500);
  EXPECT_GT(st.runs, variant_test::scaled_to_runnable(pool2d_kernels(), st.cases));
  EXPECT_GT(st.nonzero, st.elements / 8);
  // Each way of filling lanes (column, channel, packed channel) is exercised.
  for (int64_t n : st.lanes) EXPECT_GT(n, 50);
}

// Shapes where the column-lane paths (stride 1 and 2, many full vectors plus
// tails) and the channel-lane paths (C across vector and block boundaries) run.
TEST(Pool2dFast, WideRowsAndManyChannels) {
  SettingsGuard guard;
  const uint32_t seed = 77;
  std::mt19937 g(seed);
  Stats st;
  for (int i = 0; i < 300; ++i) {
    Case c = random_case(g);
    c.shape = {1 + i % 2, i % 5 == 0 ? 130 : 3, 9 + i % 7, i % 5 == 0 ? 9 : 100 + i % 70};
    Window2d& w = c.p.window;
    w = Window2d{};
    w.kernel_h = w.kernel_w = 2 + i % 2;
    w.stride_h = w.stride_w = 1 + (i / 2) % 2;
    w.pad_top = w.pad_left = i % 2;
    w.pad_bottom = w.pad_right = (i / 3) % 2;
    w.ceil_mode = i % 4 == 0;
    if (!check_case(c, seed, i, st)) break;
  }
  EXPECT_GT(st.runs, variant_test::scaled_to_runnable(pool2d_kernels(), 300));
}

// The streaming kernels (f32-pool2d-nchw-stream.inc: k3s2, k3s1, k2s2 walk
// down the plane reusing shared window rows) on tall planes: many interior
// rows, column tails under masks, odd channel counts, batch 2, gapped NCHW
// strides, special values, every semantic of random_case, threads 1/2/3.
TEST(Pool2dFast, StreamingSquareWindowsOnTallPlanes) {
  SettingsGuard guard;
  const uint32_t seed = 9091;
  std::mt19937 g(seed);
  Stats st;
  const int64_t geometry[3][2] = {{3, 2}, {3, 1}, {2, 2}};
  for (int i = 0; i < 240; ++i) {
    Case c = random_case(g);
    c.dtype = DType::f32;
    if (c.p.mode != PoolMode::max && c.p.loop == PoolLoop::mlas) c.p.loop = PoolLoop::taps;
    const int64_t K = geometry[i % 3][0], S = geometry[i % 3][1];
    c.shape = {1 + i % 2, 1 + 2 * (i % 3), 20 + i % 23, 33 + (i * 7) % 90};
    Window2d& w = c.p.window;
    w = Window2d{};
    w.kernel_h = w.kernel_w = K;
    w.stride_h = w.stride_w = S;
    w.pad_top = w.pad_left = static_cast<int64_t>(g() % K);
    w.pad_bottom = w.pad_right = static_cast<int64_t>(g() % K);
    w.ceil_mode = g() % 3 == 0;
    c.x_layout = i % 4 == 3 ? 2 : 0;  // NCHW, sometimes with gaps between rows and planes
    c.y_layout = static_cast<int>(g() % 3);
    if (!check_case(c, seed, i, st)) break;
  }
  // Column lanes (the only path that streams) ran for most cases.
  EXPECT_GT(st.lanes[static_cast<int>(cpu::Lanes::column)], 150);
  EXPECT_GT(st.runs, variant_test::scaled_to_runnable(pool2d_kernels(), 240));
}

// Stride-2 windows (k3s2, k2s2) on NCHW rows wide enough for the full-vector
// kernel (f32-pool2d-nchw-stream.inc, f32_s2_interior): interior widths
// around multiples of 8 and 16 lanes (the last vector overlaps its
// neighbour), a left border output in lane 0 (pad_left 1) or not, right
// borders, ceil-mode overhang, tall and short planes, odd channel counts,
// batch 2, gapped NCHW strides, every semantic of random_case (taps, NCHWc,
// sequential and interleaved, FTZ, NaN rules), special values, threads 1/2/3.
TEST(Pool2dFast, StrideTwoRowsInFullVectors) {
  SettingsGuard guard;
  const uint32_t seed = 20261201;
  std::mt19937 g(seed);
  std::printf("StrideTwoRowsInFullVectors: seed %u\n", seed);
  Stats st;
  int64_t lead = 0;
  for (int i = 0; i < 400; ++i) {
    Case c = random_case(g);
    c.dtype = DType::f32;
    if (c.p.mode != PoolMode::max && c.p.loop == PoolLoop::mlas) c.p.loop = PoolLoop::taps;
    const int64_t K = i % 2 ? 3 : 2;
    const int64_t ow = 8 + static_cast<int64_t>(g() % 60);  // interior outputs per row, about
    c.shape = {1 + i % 2, 1 + 2 * static_cast<int64_t>(g() % 4), 2 + static_cast<int64_t>(g() % 20),
               2 * ow + static_cast<int64_t>(g() % 3)};
    Window2d& w = c.p.window;
    w = Window2d{};
    w.kernel_h = w.kernel_w = K;
    w.stride_h = w.stride_w = 2;
    w.pad_top = static_cast<int64_t>(g() % K);
    w.pad_left = g() % 3 ? 1 : 0;
    w.pad_bottom = static_cast<int64_t>(g() % K);
    w.pad_right = static_cast<int64_t>(g() % K);
    w.ceil_mode = g() % 3 == 0;
    c.x_layout = g() % 4 == 3 ? 2 : 0;
    c.y_layout = g() % 4 == 3 ? 2 : 0;
    lead += w.pad_left == 1;
    if (!check_case(c, seed, i, st)) break;
  }
  EXPECT_GT(st.lanes[static_cast<int>(cpu::Lanes::column)], 300);
  EXPECT_GT(lead, 150);
  EXPECT_GT(st.runs, variant_test::scaled_to_runnable(pool2d_kernels(), 1000));
}

// Channel lanes read in place (NHWC input and output: f32-pool2d-nhwc.inc
// for pixels whose taps are all input, f32_group for the rest): channel
// counts across the 4-vector block and the vector width (1..150), any
// window, stride, dilation and padding, batch 2, every semantic of
// random_case, special values, threads 1/2/3; NCHW outputs take the
// pixel-by-pixel path.
TEST(Pool2dFast, ChannelLanesOnInteriorPixels) {
  SettingsGuard guard;
  const uint32_t seed = 20261202;
  std::mt19937 g(seed);
  std::printf("ChannelLanesOnInteriorPixels: seed %u\n", seed);
  Stats st;
  for (int i = 0; i < 300; ++i) {
    Case c = random_case(g);
    c.dtype = DType::f32;
    const int64_t C = i % 3 == 0 ? 1 + static_cast<int64_t>(g() % 150) : 60 + i % 10;
    c.shape = {1 + i % 2, C, 3 + static_cast<int64_t>(g() % 10),
               3 + static_cast<int64_t>(g() % 14)};
    c.x_layout = 1;
    c.y_layout = g() % 5 == 0 ? 0 : 1;
    if (!check_case(c, seed, i, st)) break;
  }
  EXPECT_GT(st.lanes[static_cast<int>(cpu::Lanes::channel)], 200);
  EXPECT_GT(st.runs, variant_test::scaled_to_runnable(pool2d_kernels(), 500));
}

// Global pools over flat NCHW planes (f32-pool2d-nchw-global.inc: planes in
// lanes through transposes, element order kept): full and partial plane
// blocks, plane sizes below, at and above a vector, batch 2, every semantic
// of random_case (taps, NCHWc; MLAS's whole-image loop runs elsewhere),
// special values, threads 1/2/3.
TEST(Pool2dFast, GlobalPoolsOverFlatPlanes) {
  SettingsGuard guard;
  const uint32_t seed = 3131;
  std::mt19937 g(seed);
  Stats st;
  const int64_t channels[] = {16, 37, 64, 130, 8, 3};
  const int64_t sizes[][2] = {{7, 7}, {1, 1}, {3, 17}, {14, 14}, {4, 4}, {2, 9}};
  for (int i = 0; i < 180; ++i) {
    Case c = random_case(g);
    c.dtype = DType::f32;
    if (c.p.loop == PoolLoop::mlas) c.p.loop = PoolLoop::taps;
    const int64_t H = sizes[i % 6][0], W = sizes[i % 6][1];
    c.shape = {1 + i % 2, channels[(i / 6) % 6], H, W};
    c.p.window = Window2d{};
    c.p.window.kernel_h = H;
    c.p.window.kernel_w = W;
    c.x_layout = i % 5 == 4 ? 2 : 0;  // gapped planes take the packed path
    c.y_layout = static_cast<int>(g() % 3);
    if (!check_case(c, seed, i, st)) break;
  }
  EXPECT_GT(st.runs, variant_test::scaled_to_runnable(pool2d_kernels(), 180));
  EXPECT_GT(st.lanes[static_cast<int>(cpu::Lanes::packed_channel)], 100);
}

// Narrow NCHW planes (f32-pool2d-nchw-narrow.inc: the outputs of a row in
// lanes, borders included, every tap a masked load): rows narrower and wider
// than a vector (1..40 outputs: one or several chunks, partial last chunk),
// windows entirely in padding (pads up to the kernel), ceil-mode overhang,
// dilation on both axes, zero insertion between rows, batch 1-3, odd channel
// counts (plane groups of 4 with a remainder), gapped NCHW strides, every
// semantic of random_case (taps, NCHWc, MLAS's row-major loop), special values,
// threads 1/2/3 and every ISA the host runs.
TEST(Pool2dFast, NarrowPlanesWithBordersInLanes) {
  SettingsGuard guard;
  const uint32_t seed = 20261128;
  std::mt19937 g(seed);
  auto pick = test::picker(g);
  Stats st;
  int narrow = 0;
  for (int i = 0; i < 600; ++i) {
    Case c = random_case(g);
    c.dtype = DType::f32;
    const int64_t W = i % 7 == 0 ? pick(1, 40) : pick(4, 17);
    c.shape = {pick(1, 3), i % 5 == 0 ? pick(13, 37) : pick(1, 9), pick(1, 16), W};
    Window2d& w = c.p.window;
    w = Window2d{};
    w.kernel_h = pick(1, 4);
    w.kernel_w = pick(1, 4);
    w.stride_h = pick(1, 2);
    w.stride_w = 1;
    w.dilation_h = g() % 5 == 0 ? 2 : 1;
    w.dilation_w = g() % 5 == 0 ? 2 : 1;
    w.ins_h = g() % 6 == 0 ? 1 : 0;
    w.pad_top = pick(0, w.kernel_h);
    w.pad_bottom = pick(0, w.kernel_h);
    w.pad_left = pick(0, w.kernel_w);
    w.pad_right = pick(0, w.kernel_w);
    w.ceil_mode = g() % 3 == 0;
    if (c.p.loop == PoolLoop::mlas && (w.dilation_h > 1 || w.dilation_w > 1 || w.ins_h > 0))
      c.p.loop = PoolLoop::taps;  // (MLAS has neither)
    c.x_layout = i % 4 == 3 ? 2 : 0;
    c.y_layout = i % 4 == 1 ? 2 : 0;
    Shape ys;
    try {
      ys = pool2d_output_shape(c.shape, c.p);
    } catch (const Error&) {
      continue;
    }
    float dummy = 0.0f;  // the plan reads shapes and strides only
    const Pool2dProblem probe{
        TensorView(&dummy, DType::f32, c.shape, contiguous_strides(c.shape, Layout::nchw)),
        TensorView(&dummy, DType::f32, ys, contiguous_strides(ys, Layout::nchw)), c.p};
    narrow += cpu::make_pool2d_plan(probe).lanes == cpu::Lanes::packed_channel && ys[3] >= 8;
    if (!check_case(c, seed, i, st)) break;
  }
  // Most cases take the narrow path (packed channel lanes, rows of >= 8 outputs).
  EXPECT_GT(narrow, 200);
  EXPECT_GT(st.runs, variant_test::scaled_to_runnable(pool2d_kernels(), 600));
}

// ONNX Runtime's MLAS orders (PoolLoop::mlas) on wide and tall planes: column
// sums with stride_w 1 and 2 across vector widths and the scalar column tail,
// kernels past MLAS's 32 (row major), stride_w 3, and whole images.
TEST(Pool2dFast, MlasOrdersOnWideAndTallPlanes) {
  // Its kernels are AVX2/AVX-512 only: nothing to compare under a lower cap.
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "needs AVX2 kernels (NPUKIT_MAX_ISA is below avx2)";
  SettingsGuard guard;
  const uint32_t seed = 4242;
  std::mt19937 g(seed);
  auto pick = test::picker(g);
  Stats st;
  for (int i = 0; i < 400; ++i) {
    Case c = random_case(g);
    c.dtype = DType::f32;
    c.p.mode = g() % 2 ? PoolMode::max : PoolMode::avg;
    c.p.loop = PoolLoop::mlas;
    c.p.nchwc_block = 0;
    c.p.divisor = g() % 2 ? AvgDivisor::kernel_area : AvgDivisor::valid_count;
    const int64_t H = g() % 4 == 0 ? pick(1, 3) : pick(1, 40);
    const int64_t W = g() % 4 == 0 ? pick(1, 3) : pick(1, 300);
    c.shape = {pick(1, 2), pick(1, 3), H, W};
    Window2d& w = c.p.window;
    w = Window2d{};
    w.kernel_h = std::min(H, g() % 10 == 0 ? pick(30, 34) : pick(1, 6));
    w.kernel_w = std::min(W, g() % 10 == 0 ? pick(30, 34) : pick(1, 6));
    w.stride_h = pick(1, 3);
    w.stride_w = g() % 5 == 0 ? 3 : pick(1, 2);
    w.pad_top = pick(0, w.kernel_h - 1);
    w.pad_bottom = pick(0, w.kernel_h - 1);
    w.pad_left = pick(0, w.kernel_w - 1);
    w.pad_right = pick(0, w.kernel_w - 1);
    w.ceil_mode = g() % 3 == 0;
    if (g() % 8 == 0) {  // the whole image
      w = Window2d{};
      w.kernel_h = H;
      w.kernel_w = W;
    }
    c.x_layout = g() % 4 == 0 ? 1 : 0;
    c.y_layout = g() % 4 == 0 ? 2 : 0;
    if (!check_case(c, seed, i, st)) break;
  }
  EXPECT_GT(st.runs, variant_test::scaled_to_runnable(pool2d_kernels(), 300));
}

// Two NaNs meet in almost every window: the first operand's payload must come
// out of every addition and of sum pooling's product by coeff (a NaN coeff in
// half the sum cases), in the vector bodies and in the MLAS orders' scalar
// paths (column tails past W % 4, whole-image lanes), which a compiler may
// emit with swapped operands unless they are pinned.
TEST(Pool2dFast, NanPayloadsMeetInEveryPath) {
  SettingsGuard guard;
  const uint32_t seed = 20261127;
  std::mt19937 g(seed);
  auto pick = test::picker(g);
  Stats st;
  for (int i = 0; i < 500; ++i) {
    Case c = random_case(g);
    c.dtype = DType::f32;
    c.values = 5;
    if (c.p.mode == PoolMode::sum && g() % 2 == 0) c.p.coeff = any_nan(g);
    if (i % 3 == 0) {  // MLAS orders, W % 4 != 0 for the scalar columns
      c.p.mode = g() % 2 ? PoolMode::max : PoolMode::avg;
      c.p.loop = PoolLoop::mlas;
      c.p.nchwc_block = 0;
      c.p.divisor = g() % 2 ? AvgDivisor::kernel_area : AvgDivisor::valid_count;
      const int64_t H = pick(1, 6), W = 4 * pick(0, 3) + pick(1, 3);
      c.shape = {1, pick(1, 3), H, W};
      Window2d& w = c.p.window;
      w = Window2d{};
      w.kernel_h = g() % 3 == 0 ? H : std::min<int64_t>(H, pick(1, 4));
      w.kernel_w = w.kernel_h == H ? W : std::min<int64_t>(W, pick(1, 4));
      if (w.kernel_h != H) {
        w.stride_w = pick(1, 2);
        w.pad_left = pick(0, w.kernel_w - 1);
        w.pad_top = pick(0, w.kernel_h - 1);
      }
      c.x_layout = c.y_layout = 0;
    }
    if (!check_case(c, seed, i, st)) break;
  }
  EXPECT_GT(st.runs, variant_test::scaled_to_runnable(pool2d_kernels(), 300));
}

TEST(Pool2dFast, DispatchAtEveryIsaCapAndReferencePolicy) {
  SettingsGuard guard;
  const uint32_t seed = 5;
  std::mt19937 g(seed);
  int compared = 0;
  for (int i = 0; i < 200; ++i) {
    const Case c = random_case(g);
    Shape ys;
    try {
      ys = pool2d_output_shape(c.shape, c.p);
    } catch (const Error&) {
      continue;
    }
    std::mt19937 vg(seed + static_cast<uint32_t>(i));
    std::vector<uint8_t> xbuf, refbuf, ybuf;
    const TensorView x = make_view(xbuf, c.dtype, c.shape, c.x_layout);
    fill(c, x, vg);
    const TensorView ref = make_view(refbuf, c.dtype, ys, 0);
    set_impl(Impl::reference);
    EXPECT_TRUE(pool2d_kernels().choose(Pool2dProblem{x, ref, c.p}).reference);
    pool2d(x, ref, c.p);
    set_impl(Impl::fast);
    const std::vector<uint8_t> want = logical_bytes(ref);
    for (int isa = 0; isa <= static_cast<int>(host_isa()); ++isa) {
      set_max_isa(static_cast<Isa>(isa));
      set_num_threads(1 + (i + isa) % 3);
      const TensorView y = make_view(ybuf, c.dtype, ys, c.y_layout);
      pool2d(x, y, c.p);
      const std::string diff = first_difference(logical_bytes(y), want, c.dtype, c.p.mode);
      EXPECT_TRUE(diff.empty()) << "max_isa " << isa_name(static_cast<Isa>(isa)) << ", seed "
                                << seed << ", case " << i << ": " << diff << "\n  " << describe(c);
      if (!diff.empty()) return;
      ++compared;
    }
  }
  EXPECT_GT(compared, 200);
}

// NCHW planes too big to pack (>16 MB of scratch) with sparse windows: the
// channel lanes read in place (f32 gathers, byte lanes collected one by one).
TEST(Pool2dFast, HugePlanesReadChannelsInPlace) {
  SettingsGuard guard;
  const uint32_t seed = 9;
  std::mt19937 g(seed);
  Stats st;
  int index = 0;
  for (DType dt : {DType::f32, DType::u8, DType::s8}) {
    for (PoolMode mode : {PoolMode::max, PoolMode::avg}) {
      if (dt != DType::f32 && mode == PoolMode::avg) continue;
      Case c = random_case(g);
      c.dtype = dt;
      c.p.mode = dt == DType::f32 ? mode : PoolMode::max;
      c.shape = {1, 3, 610, 610};
      c.p.window = test::window(3, 2, 200, 300);
      c.p.window.pad_top = c.p.window.pad_left = 1;
      c.x_layout = 0;
      EXPECT_TRUE(check_case(c, seed, index++, st));
    }
  }
  EXPECT_GT(st.runs, variant_test::scaled_to_runnable(pool2d_kernels(), 3));
  EXPECT_EQ(st.lanes[static_cast<int>(cpu::Lanes::channel)], st.cases);
}

// Interleaved averages under FTZ: a tap times R = 1/3 whose exact product
// lies just below 2^-126 rounds up to 2^-126 in float, yet x86 FTZ flushes
// it (Fp32Arith::mul); every SIMD lane must take that rule, in column lanes
// (NCHW) and channel lanes (NHWC).
TEST(Pool2dFast, InterleavedFtzTininessRuleInEveryLane) {
  SettingsGuard guard;
  const Fp32Arith ftz{true};
  const float r = 1.0f / 3.0f;
  float tiny = 0.0f;
  for (uint32_t b = std::bit_cast<uint32_t>(3 * 0x1p-126f) - 64; tiny == 0.0f; ++b) {
    const float v = std::bit_cast<float>(b);
    if (ftz.mul(v, r) == 0.0f && v * r == 0x1p-126f) tiny = v;
  }
  Pool2dParams p;
  p.window = test::window(1, 3);
  p.accumulation = Fp32Accumulation::interleaved;
  p.flush_denormals = true;
  for (Layout layout : {Layout::nchw, Layout::nhwc}) {
    const Shape xs = layout == Layout::nchw ? Shape{1, 1, 2, 40} : Shape{1, 37, 2, 3};
    Tensor x(DType::f32, xs, layout);
    std::vector<float> v(static_cast<size_t>(x.numel()), tiny);
    for (size_t i = 0; i < v.size(); i += 5) v[i] = -tiny;
    copy(Tensor::from<float>(xs, v), x);
    const Shape ys = pool2d_output_shape(xs, p);
    Tensor want(DType::f32, ys), got(DType::f32, ys, layout);
    ref::pool2d_f32(x, want, p);
    for (const auto& k : pool2d_kernels().variants) {
      if (k.reference || !KernelList<Pool2dProblem>::runnable(k)) continue;
      if (k.declines && k.declines(Pool2dProblem{x, got, p})) continue;
      k.run(Pool2dProblem{x, got, p});
      EXPECT_TRUE(test::same_bits(got, want.to_vector<float>()))
          << k.name << " " << layout_name(layout);
    }
    // Every term flushes: the sums are signed zeros, not 3 * 2^-126 * R.
    for (float e : want.to_vector<float>()) EXPECT_EQ(e, 0.0f);
  }
}

// The fast kernels are what runs by default on this host.
TEST(Pool2dFast, FastKernelChosenByDefault) {
  SettingsGuard guard;
  Tensor x(DType::f32, {1, 4, 8, 8}), y(DType::f32, {1, 4, 4, 4});
  Pool2dParams p;
  p.window = test::window(2, 2, 2, 2);
  const auto& chosen = pool2d_kernels().choose(Pool2dProblem{x, y, p});
  EXPECT_FALSE(chosen.reference) << chosen.name;
  Tensor xb(DType::u8, {1, 4, 8, 8}), yb(DType::u8, {1, 4, 4, 4});
  p.mode = PoolMode::max;
  EXPECT_FALSE(pool2d_kernels().choose(Pool2dProblem{xb, yb, p}).reference);
}

// Global pools by quads and in channel lanes (f32-pool2d-nchw-global.inc):
// NCHW planes 4 elements x V planes per step (full groups of 4 x V planes,
// single groups, partial groups lane by lane; plane sizes with 0-3 elements
// after the last full quad) and NHWC channel blocks of 1-4 vectors with a
// partial last one; odd channel counts, batch 1-3, both layouts in and out,
// every semantic of random_case (taps, NCHWc), special values (NaN, +-inf,
// -0, denormals, FTZ), threads 1/2/3, every ISA variant the host runs.
TEST(Pool2dFast, GlobalPoolsByQuadsAndChannelLanes) {
  SettingsGuard guard;
  const uint32_t seed = 20261140;
  std::mt19937 g(seed);
  auto pick = test::picker(g);
  Stats st;
  const int64_t channels[] = {1, 3, 15, 16, 17, 37, 63, 64, 65, 130, 200};
  for (int i = 0; i < 400; ++i) {
    Case c = random_case(g);
    c.dtype = DType::f32;
    if (c.p.loop == PoolLoop::mlas)
      c.p.loop = PoolLoop::taps;  // (its whole-image order runs elsewhere)
    const int64_t H = i % 4 == 0 ? 7 : pick(1, 16), W = i % 4 == 0 ? 7 : pick(1, 16);
    c.shape = {pick(1, 3), channels[g() % 11], H, W};
    c.p.window = Window2d{};
    c.p.window.kernel_h = H;
    c.p.window.kernel_w = W;
    c.x_layout = i % 2;  // NCHW: quads; NHWC: channel lanes
    c.y_layout = static_cast<int>(g() % 3);
    if (!check_case(c, seed, i, st)) break;
  }
  EXPECT_GT(st.lanes[static_cast<int>(cpu::Lanes::packed_channel)] +
                st.lanes[static_cast<int>(cpu::Lanes::column)],
            150);
  EXPECT_GT(st.lanes[static_cast<int>(cpu::Lanes::channel)], 150);
  EXPECT_GT(st.runs, variant_test::scaled_to_runnable(pool2d_kernels(), 400));
}

// Stride-1 windows whose output rows are as long as the input rows over
// small NCHW planes (f32-pool2d-nchw-flat.inc: outputs of the flattened
// plane in lanes, every tap a masked load): planes 1x1..16x16 and 14x14,
// kernels 1-5 with pads left + right = kernel_w - 1 (top/bottom free: windows
// wholly in padding, uneven pads), odd channel counts (groups of 8 planes and
// a remainder), batch 1-3, every semantic of random_case (the kernel takes
// the sequential sum, max with pad <= start and the NCHWc loop; the others
// decline to other kernels), special values, threads 1/2/3, every ISA.
TEST(Pool2dFast, SameWindowsOverFlatPlanes) {
  SettingsGuard guard;
  const uint32_t seed = 20261141;
  std::mt19937 g(seed);
  auto pick = test::picker(g);
  Stats st;
  int flat = 0;
  for (int i = 0; i < 500; ++i) {
    Case c = random_case(g);
    c.dtype = DType::f32;
    const bool race = i % 5 == 0;  // the 14x14 k3s1p1 row
    const int64_t H = race ? 14 : pick(1, 16), W = race ? 14 : pick(1, 16);
    c.shape = {pick(1, 3), i % 3 == 0 ? pick(9, 37) : pick(1, 8), H, W};
    Window2d& w = c.p.window;
    w = Window2d{};
    w.kernel_h = race ? 3 : pick(1, 5);
    w.kernel_w = race ? 3 : pick(1, 5);
    w.pad_left = race ? 1 : pick(0, w.kernel_w - 1);
    w.pad_right = w.kernel_w - 1 - w.pad_left;
    w.pad_top = race ? 1 : pick(0, w.kernel_h);
    w.pad_bottom = race ? 1 : pick(0, w.kernel_h);
    w.ceil_mode = g() % 3 == 0;
    c.x_layout = i % 6 == 5 ? 2 : 0;
    c.y_layout = i % 6 == 4 ? 1 : 0;
    const bool orders = c.p.accumulation == Fp32Accumulation::sequential ||
                        c.p.mode == PoolMode::max || c.p.loop == PoolLoop::mlas_nchwc;
    flat += c.x_layout == 0 && c.y_layout == 0 && orders;
    if (!check_case(c, seed, i, st)) break;
  }
  EXPECT_GT(flat, 200);  // cases the flat kernel can take (most do)
  EXPECT_GT(st.runs, variant_test::scaled_to_runnable(pool2d_kernels(), 500));
}

// Stride-1 3x3 windows swept down small NCHW planes row by row
// (f32-pool2d-nchw-sweep.inc: each loaded row chunk feeds 3 output rows;
// the NCHWc max by window rows then columns on planes without NaN):
// widths 1-17 (one to three chunks of V lanes; a last chunk ending at the row's
// end overlaps the one before, a single one narrower than V is masked), heights
// 1-20, pads left + right = 2 in every split, top and bottom pads 0-3 (rows
// of windows wholly in padding), odd channel counts (passes of 2 or 4 planes
// with a repeated last plane), batch 1-3, gapped row strides in and
// out, every semantic of random_case (the sweep takes the sequential sum,
// max with pad <= start and the NCHWc loop; the others decline to other
// kernels), special values (NaN payloads, +-inf, -0, denormals, FTZ; and
// without NaN, so that the NCHWc max's row folds meet ties of +0 and -0,
// -inf and -FLT_MAX; and a NaN in one or two planes only, with the NCHWc max
// on every other such case, so that a pass's NaN plane is swept again tap by
// tap beside row-folded ones), threads 1/2/3, every ISA variant the host
// runs; each f32-pool2d-sweep3x3-nchw variant must run on the cases it can take.
TEST(Pool2dFast, SameWindowsSweptRowByRow) {
  SettingsGuard guard;
  const uint32_t seed = 20261150;
  std::mt19937 g(seed);
  auto pick = test::picker(g);
  Stats st;
  int sweep = 0;
  for (int i = 0; i < 600; ++i) {
    Case c = random_case(g);
    c.dtype = DType::f32;
    const bool race = i % 5 == 0;  // the 14x14 k3s1p1 row
    const int64_t H = race ? 14 : pick(1, 20), W = race ? 14 : pick(1, 17);
    c.shape = {pick(1, 3), i % 3 == 0 ? pick(9, 37) : pick(1, 8), H, W};
    Window2d& w = c.p.window;
    w = Window2d{};
    w.kernel_h = w.kernel_w = 3;
    w.pad_left = race ? 1 : pick(0, 2);
    w.pad_right = 2 - w.pad_left;
    w.pad_top = race ? 1 : pick(0, 3);
    w.pad_bottom = race ? 1 : pick(0, 3);
    w.ceil_mode = g() % 3 == 0;
    c.x_layout = i % 6 == 5 ? 2 : 0;
    c.y_layout = i % 6 == 4 ? 2 : i % 12 == 3 ? 1 : 0;
    if (i % 7 == 1) c.values = 3;
    if (i % 7 == 2) c.values = 1;
    if (i % 7 == 3) c.values = 4;
    if (i % 14 == 3) c.p.mode = PoolMode::max, c.p.loop = PoolLoop::mlas_nchwc;
    const bool orders = c.p.accumulation == Fp32Accumulation::sequential ||
                        c.p.mode == PoolMode::max || c.p.loop == PoolLoop::mlas_nchwc ||
                        c.p.nchwc_block > 0;
    sweep += c.y_layout != 1 && orders;
    if (!check_case(c, seed, i, st)) break;
  }
  EXPECT_GT(sweep, 300);  // cases the sweep can take
  EXPECT_GT(st.runs, variant_test::scaled_to_runnable(pool2d_kernels(), 600));
  // Real runs of the sweep (its variants' own run counts, not eligible cases).
  for (const auto& v : pool2d_kernels().variants) {
    if (std::string(v.name).find("sweep3x3") == std::string::npos) continue;
    if (!KernelList<Pool2dProblem>::runnable(v)) continue;
    std::printf("SameWindowsSweptRowByRow: seed %u, %s ran %lld cases\n", seed, v.name,
                static_cast<long long>(st.by_kernel[v.name]));
    EXPECT_GT(st.by_kernel[v.name], 200) << v.name;
  }
}

// Planes whose padded rows fit one AVX-512 vector (pad_left + W <= 16, 8..16
// outputs per row; f32-pool2d-nchw-flat.inc / -narrow.inc and the packed
// path share them): the 14x14 k3s1p1 race row, kernels 1-5 with dilation_w
// 1-3, stride_h 1-3 with dilation_h, pads up to the kernel (windows wholly in
// padding, ceil-mode overhang), odd channel counts and batch 1-3, padded NCHW
// strides, every semantic of random_case, special values, threads 1/2/3, both
// SIMD variants.
TEST(Pool2dFast, PaddedRowsWithinOneVector) {
  SettingsGuard guard;
  const uint32_t seed = 20261127;
  std::mt19937 g(seed);
  auto pick = test::picker(g);
  Stats st;
  int narrow = 0;
  for (int i = 0; i < 600; ++i) {
    Case c = random_case(g);
    c.dtype = DType::f32;
    const bool race = i % 6 == 0;  // the 14x14 k3s1p1 row
    Window2d& w = c.p.window;
    w = Window2d{};
    w.kernel_h = race ? 3 : pick(1, 5);
    w.kernel_w = race ? 3 : pick(1, 5);
    w.stride_h = race ? 1 : pick(1, 3);
    w.dilation_h = !race && g() % 4 == 0 ? 2 : 1;
    w.dilation_w = !race && g() % 4 == 0 ? pick(2, 3) : 1;
    w.pad_left = race ? 1 : pick(0, w.kernel_w);
    w.pad_right = race ? 1 : pick(0, w.kernel_w);
    w.pad_top = race ? 1 : pick(0, w.kernel_h);
    w.pad_bottom = race ? 1 : pick(0, w.kernel_h);
    w.ceil_mode = !race && g() % 3 == 0;
    const int64_t W = race ? 14 : pick(std::max<int64_t>(1, 8 - w.pad_left), 16 - w.pad_left);
    const int64_t H = race ? 14 : pick(1, 17);
    c.shape = {pick(1, 3), i % 3 == 0 ? pick(9, 37) : pick(1, 8), H, W};
    if (c.p.loop == PoolLoop::mlas && w.dilation_w > 1) c.p.loop = PoolLoop::taps;
    c.x_layout = i % 5 == 4 ? 2 : 0;
    c.y_layout = i % 5 == 3 ? 2 : 0;
    Shape ys;
    try {
      ys = pool2d_output_shape(c.shape, c.p);
    } catch (const Error&) {
      continue;
    }
    const bool orders = c.p.accumulation == Fp32Accumulation::sequential ||
                        c.p.mode == PoolMode::max || c.p.loop != PoolLoop::taps ||
                        c.p.nchwc_block > 0;
    narrow += orders && ys[3] >= 8 && ys[3] <= 16 && H * w.kernel_w <= 96;
    if (!check_case(c, seed, i, st)) break;
  }
  EXPECT_GT(narrow, 250);  // cases in the narrow-plane geometry with a fast order
  EXPECT_GT(st.runs, variant_test::scaled_to_runnable(pool2d_kernels(), 600));
}

// One random case of the whole-plane stride-2 kernels: K x K windows (K = 2
// for even i, 3 for odd) at stride 2 with output rows of ow_min ..
// ow_min + ow_span - 1 all-input outputs, pads 0..K-1 on every side, ceil
// mode, ONNX Runtime's truncated count, channel counts that fill NCHWc blocks
// or not, batch 1-2, gapped NCHW strides in and out, every semantic of
// random_case (the rest must decline).
Case stride_two_case(std::mt19937& g, int i, int64_t ow_min, int64_t ow_span) {
  Case c = random_case(g);
  c.dtype = DType::f32;
  if (c.p.loop == PoolLoop::mlas || i % 3 == 0) c.p.loop = PoolLoop::mlas_nchwc;
  if (i % 4 == 1) c.p.flush_denormals = false;
  if (i % 4 == 2) c.p.accumulation = Fp32Accumulation::sequential;
  const int64_t K = i % 2 ? 3 : 2;
  const int64_t ow = ow_min + static_cast<int64_t>(g() % static_cast<uint32_t>(ow_span));
  const int64_t C = i % 5 == 0 ? 16 * (1 + static_cast<int64_t>(g() % 2)) : 1 + g() % 9;
  c.shape = {1 + static_cast<int64_t>(g() % 2), C, 1 + static_cast<int64_t>(g() % 24),
             2 * ow + static_cast<int64_t>(g() % 3)};
  Window2d& w = c.p.window;
  w = Window2d{};
  w.kernel_h = w.kernel_w = K;
  w.stride_h = w.stride_w = 2;
  w.pad_top = static_cast<int64_t>(g() % K);
  w.pad_left = static_cast<int64_t>(g() % K);
  w.pad_bottom = static_cast<int64_t>(g() % K);
  w.pad_right = static_cast<int64_t>(g() % K);
  w.ceil_mode = g() % 3 == 0;
  w.truncated_count = !w.ceil_mode && g() % 5 == 0;
  c.x_layout = g() % 4 == 3 ? 2 : 0;
  c.y_layout = g() % 4 == 3 ? 2 : 0;
  return c;
}

// Each of the stride-2 kernels ran at least `least` of the cases, where it can run.
void expect_stride_two_runs(const Stats& st, int64_t least, const char* test) {
  for (const char* name : {"f32-pool2d-stride2-nchw-avx512", "f32-pool2d-stride2-nchw-avx2"}) {
    const auto& list = pool2d_kernels().variants;
    const auto v = std::find_if(list.begin(), list.end(),
                                [&](const auto& k) { return std::string(k.name) == name; });
    ASSERT_NE(v, list.end()) << name;
    const auto ran = st.by_kernel.find(name);
    const int64_t runs = ran == st.by_kernel.end() ? 0 : ran->second;
    std::printf("%s: %s ran %lld times\n", test, name, static_cast<long long>(runs));
    if (KernelList<Pool2dProblem>::runnable(*v)) {
      EXPECT_GT(runs, least) << name;
    }
  }
}

// The whole-plane stride-2 kernels (f32-pool2d-stride2-nchw-*: f32-pool2d-s2.inc)
// on output rows of 8-70 all-input outputs (one vector, several, the last one
// overlapping; the left border output in lane 0 or alone; padded and
// ceil-mode rows at the top and bottom), stride_two_case's semantics, special
// values, threads 1/2/3.
TEST(Pool2dFast, StrideTwoWholePlanes) {
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "needs AVX2 kernels (NPUKIT_MAX_ISA is below avx2)";
  if (impl() == Impl::reference) GTEST_SKIP() << "NPUKIT_IMPL=reference: no fast kernel runs";
  SettingsGuard guard;
  const uint32_t seed = 20261203;
  std::mt19937 g(seed);
  std::printf("StrideTwoWholePlanes: seed %u\n", seed);
  Stats st;
  for (int i = 0; i < 500; ++i)
    if (!check_case(stride_two_case(g, i, 8, 63), seed, i, st)) break;
  expect_stride_two_runs(st, 100, "StrideTwoWholePlanes");
}

// Wide rows (64-200 all-input outputs): 4-13 vectors of 16 lanes, 8-25 of 8,
// walked in one pass of up to 8 vectors or in several equal passes.
TEST(Pool2dFast, StrideTwoWideRowsInPasses) {
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "needs AVX2 kernels (NPUKIT_MAX_ISA is below avx2)";
  if (impl() == Impl::reference) GTEST_SKIP() << "NPUKIT_IMPL=reference: no fast kernel runs";
  SettingsGuard guard;
  const uint32_t seed = 20261206;
  std::mt19937 g(seed);
  std::printf("StrideTwoWideRowsInPasses: seed %u\n", seed);
  Stats st;
  for (int i = 0; i < 160; ++i)
    if (!check_case(stride_two_case(g, i, 64, 137), seed, i, st)) break;
  expect_stride_two_runs(st, 30, "StrideTwoWideRowsInPasses");
}

// Calls moving 24 MB or more prefetch 16 KB ahead (f32-pool2d-s2.hpp): the
// prefetching passes (4 vectors on wide rows; 2-3 on rows of 20 outputs) of a
// 2x2 average divided by a multiply, a 3x3 max with padding and a 3x3 average
// on tensors past the threshold, every kernel against the reference, special
// values, 1-3 threads.
TEST(Pool2dFast, StrideTwoStreamingCallsPrefetch) {
  if (max_isa() < Isa::avx2) GTEST_SKIP() << "needs AVX2 kernels (NPUKIT_MAX_ISA is below avx2)";
  if (impl() == Impl::reference) GTEST_SKIP() << "NPUKIT_IMPL=reference: no fast kernel runs";
  SettingsGuard guard;
  const uint32_t seed = 20261204;
  std::printf("StrideTwoStreamingCallsPrefetch: seed %u\n", seed);
  Stats st;
  const Shape shapes[] = {{2, 64, 224, 224}, {1, 131, 223, 225}, {16, 256, 33, 40}};
  for (int i = 0; i < 3; ++i) {
    Case c;
    c.dtype = DType::f32;
    c.shape = shapes[i];
    c.p.mode = i == 1 ? PoolMode::max : PoolMode::avg;
    c.p.loop = i == 1 ? PoolLoop::taps : PoolLoop::mlas_nchwc;
    const int64_t K = i == 0 ? 2 : 3;
    c.p.window = test::window(K, K, 2, 2);
    if (K == 3) test::set_pads(c.p.window, 1, 1, 1, 1);
    c.values = 2;
    const Shape ys = pool2d_output_shape(c.shape, c.p);
    std::vector<uint8_t> xb, yb;
    const Pool2dProblem pr{make_view(xb, DType::f32, c.shape, 0), make_view(yb, DType::f32, ys, 0),
                           c.p};
    EXPECT_EQ(cpu::f32_s2_prefetch_ahead(pr), cpu::kS2PrefetchAhead) << describe(c);
    ASSERT_TRUE(check_case(c, seed, 4 * i, st));  // 2 or 3 threads
    if (i < 2) {
      ASSERT_TRUE(check_case(c, seed, 4 * i + 1, st));  // 1 thread
    }
  }
  for (const char* name : {"f32-pool2d-stride2-nchw-avx512", "f32-pool2d-stride2-nchw-avx2"}) {
    const auto& list = pool2d_kernels().variants;
    const auto v = std::find_if(list.begin(), list.end(),
                                [&](const auto& k) { return std::string(k.name) == name; });
    ASSERT_NE(v, list.end()) << name;
    if (KernelList<Pool2dProblem>::runnable(*v)) {
      EXPECT_GE(st.by_kernel[name], 3) << name;
    }
  }
  // Below the threshold nothing is prefetched.
  Tensor x(DType::f32, {1, 256, 56, 56}), y(DType::f32, {1, 256, 28, 28});
  Pool2dParams p;
  p.window = test::window(2, 2, 2, 2);
  EXPECT_EQ(cpu::f32_s2_prefetch_ahead(Pool2dProblem{x, y, p}), 0);
}

// What the stride-2 kernel leaves to the general one, each with its reason.
TEST(Pool2dFast, StrideTwoWholePlanesDeclineWithReasons) {
  Tensor x(DType::f32, {1, 3, 40, 40}), y(DType::f32, {1, 3, 20, 20});
  Pool2dParams p;
  p.window = test::window(2, 2, 2, 2);
  const auto why = [&](const Pool2dParams& q, const Tensor& xt, const Tensor& yt, int64_t lanes) {
    const char* r = cpu::f32_s2_declines(Pool2dProblem{xt, yt, q}, lanes);
    return std::string(r ? r : "");
  };
  EXPECT_EQ(why(p, x, y, 16), "");
  EXPECT_EQ(why(p, x, y, 32), "fewer all-input outputs per row than one vector");
  EXPECT_EQ(std::string(cpu::f32_s2_avx512_declines(Pool2dProblem{x, y, p})),
            "2x2 windows (the 8-lane kernel is faster on them)");
  Pool2dParams q = p;
  q.accumulation = Fp32Accumulation::interleaved;
  EXPECT_EQ(why(q, x, y, 16), "interleaved accumulation");
  q = p;
  q.flush_denormals = true;
  EXPECT_EQ(why(q, x, y, 16), "flush_denormals");
  q = p;
  q.mode = PoolMode::sum;
  EXPECT_EQ(why(q, x, y, 16), "sum pooling");
  q = p;
  q.window = test::window(2, 2, 1, 1);
  Tensor y1(DType::f32, {1, 3, 39, 39});
  EXPECT_EQ(why(q, x, y1, 16), "stride not 2x2");
  EXPECT_EQ(why(p, Tensor(DType::f32, {1, 3, 40, 40}, Layout::nhwc),
                Tensor(DType::f32, {1, 3, 20, 20}, Layout::nhwc), 16),
            "columns not contiguous (not NCHW)");
  Tensor xi(DType::u8, {1, 3, 40, 40}), yi(DType::u8, {1, 3, 20, 20});
  EXPECT_EQ(why(p, xi, yi, 16), "not f32");
}

}  // namespace
}  // namespace test_pool2d_fast
}  // namespace npukit
