// Every kernel of the integer convolution list (qconv_kernels(): depthwise,
// VNNI / AVX-512 / AVX2 / portable GEMM, both accumulations) against the
// reference variant, output byte for byte, over seeded random geometries
// (groups, depthwise, dilation, pads, 1x1, strides, odd channels, batches,
// NHWC inputs, 1-wide images), u8/s8 operands, per-channel weight scales and
// zero points, extreme scales and codes, QLinearConv and ConvInteger, with 1,
// 2 and 3 threads. A failure prints the seed and the case.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>

#include "npukit/kernels.hpp"
#include "npukit/ops/quantized.hpp"
#include "npukit/parallel.hpp"
#include "ops/cpu/qconv_problem.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_qconv_fast {
namespace {

struct Case {
  int64_t n, ic, h, w, oc, kh, kw, groups, sh, sw, dh, dw, pt, pb, pl, pr;
  DType xd, wd;
  bool per_channel, nhwc, bias, pairs, extreme_codes, extreme_scales;
  bool symmetric;  // weight zero points 0 (s8) or 128 (u8): the NHWC GEMM's case
  bool y_nhwc;     // channels-last y (the runner's int8 layout)
};

std::string text(const Case& c, uint32_t seed, int it) {
  char b[400];
  std::snprintf(b, sizeof b,
                "seed %u case %d: x %s [%ld,%ld,%ld,%ld]%s w %s oc %ld k %ldx%ld groups %ld "
                "stride %ldx%ld dilation %ldx%ld pads t%ld b%ld l%ld r%ld per_channel %d bias %d "
                "accumulation %s extreme codes %d scales %d symmetric w %d y %s",
                seed, it, dtype_name(c.xd), (long)c.n, (long)c.ic, (long)c.h, (long)c.w,
                c.nhwc ? " nhwc" : "", dtype_name(c.wd), (long)c.oc, (long)c.kh, (long)c.kw,
                (long)c.groups, (long)c.sh, (long)c.sw, (long)c.dh, (long)c.dw, (long)c.pt,
                (long)c.pb, (long)c.pl, (long)c.pr, c.per_channel, c.bias,
                c.pairs ? "mlas_u8s8_int16_pairs" : "exact_int32", c.extreme_codes,
                c.extreme_scales, c.symmetric, c.y_nhwc ? "nhwc" : "nchw");
  return b;
}

// Fills t (any layout) with random codes; `extreme` picks only the two ends.
void fill_codes(Tensor& t, std::mt19937& rng, bool extreme) {
  const bool s = t.dtype() == DType::s8;
  std::uniform_int_distribution<int> any(s ? -128 : 0, s ? 127 : 255), coin(0, 1);
  auto* p = static_cast<uint8_t*>(t.view().raw());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int v = extreme ? (coin(rng) ? (s ? -128 : 0) : (s ? 127 : 255)) : any(rng);
    p[i] = static_cast<uint8_t>(v);
  }
}

Case random_case(std::mt19937& rng, int it) {
  auto r = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Case c{};
  const int kind = static_cast<int>(r(0, 5));  // 0 depthwise, 1 grouped, 2 1x1, 3 FC-like, else any
  c.n = r(1, 3);
  if (kind == 0) {
    c.groups = r(1, 19), c.ic = c.groups, c.oc = c.groups;
    if (it % 4 == 1) c.groups = c.ic = c.oc = r(64, 150);  // whole and partial 64-channel chunks
  } else if (kind == 1) {
    c.groups = r(2, 4), c.ic = c.groups * r(1, 6), c.oc = c.groups * r(1, 11);
  } else {
    c.groups = 1, c.ic = r(1, 40), c.oc = r(1, 35);
  }
  c.kh = r(1, 4), c.kw = r(1, 4), c.sh = r(1, 3), c.sw = r(1, 3), c.dh = r(1, 2), c.dw = r(1, 2);
  c.pt = r(0, 2), c.pb = r(0, 2), c.pl = r(0, 2), c.pr = r(0, 2);
  if (kind == 2) c.kh = c.kw = 1, c.sh = c.sw = 1, c.pt = c.pb = c.pl = c.pr = 0;
  c.h = r(std::max<int64_t>(1, (c.kh - 1) * c.dh + 1 - c.pt - c.pb), 23);
  c.w = r(std::max<int64_t>(1, (c.kw - 1) * c.dw + 1 - c.pl - c.pr), 23);
  if (it % 7 == 0) c.w = std::max<int64_t>(1, (c.kw - 1) * c.dw + 1 - c.pl - c.pr);  // narrow
  if (it % 7 == 3) c.w = r(33, 90), c.sw = r(1, 2);  // wide rows: the vector gathers run
  if (kind == 3) {  // a fully connected layer as a convolution: window = image, no pads
    c.n = r(1, 70), c.ic = r(1, 70), c.h = r(1, 3), c.w = r(1, 3), c.kh = c.h, c.kw = c.w;
    c.sh = c.sw = c.dh = c.dw = 1, c.pt = c.pb = c.pl = c.pr = 0;
  }
  c.xd = r(0, 1) ? DType::u8 : DType::s8;
  c.wd = r(0, 1) ? DType::u8 : DType::s8;
  c.per_channel = r(0, 1);
  c.nhwc = r(0, 3) == 0;
  c.y_nhwc = c.nhwc ? r(0, 2) != 0 : r(0, 4) == 0;
  c.bias = r(0, 3) != 0;
  c.pairs = r(0, 1);
  c.extreme_codes = it % 5 == 0;
  c.extreme_scales = it % 6 == 1;
  c.symmetric = it % 3 == 2;
  return c;
}

struct Built {
  Tensor x, w, bias;
  QLinearConvParams p;
};

Built build(const Case& c, std::mt19937& rng) {
  auto r = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Built b;
  b.x = Tensor(c.xd, {c.n, c.ic, c.h, c.w}, c.nhwc ? Layout::nhwc : Layout::nchw);
  b.w = Tensor(c.wd, {c.oc, c.ic / c.groups, c.kh, c.kw});
  fill_codes(b.x, rng, c.extreme_codes);
  fill_codes(b.w, rng, c.extreme_codes);
  QLinearConvParams& p = b.p;
  p.window.kernel_h = c.kh, p.window.kernel_w = c.kw;
  p.window.stride_h = c.sh, p.window.stride_w = c.sw;
  p.window.dilation_h = c.dh, p.window.dilation_w = c.dw;
  p.window.pad_top = c.pt, p.window.pad_bottom = c.pb, p.window.pad_left = c.pl,
  p.window.pad_right = c.pr;
  p.groups = c.groups;
  const bool xs = c.xd == DType::s8, ws = c.wd == DType::s8;
  auto zp = [&](bool s) {
    return static_cast<int32_t>(c.extreme_codes ? (r(0, 1) ? (s ? -128 : 0) : (s ? 127 : 255))
                                                : r(s ? -128 : 0, s ? 127 : 255));
  };
  p.x_zero_point = zp(xs);
  p.y_zero_point = zp(xs);
  const int64_t K = c.ic / c.groups * c.kh * c.kw;
  // Scales that put typical accumulators across the output range (so outputs
  // are neither all zero nor all saturated), or extreme ones.
  auto scale = [&] { return std::uniform_real_distribution<float>(0.5f, 2.0f)(rng); };
  p.x_scale = c.extreme_scales ? 1e-30f : 0.02f * scale();
  p.y_scale = c.extreme_scales ? 3e-37f : p.x_scale * 0.05f * std::sqrt(float(K)) * 60.0f;
  const int64_t nw = c.per_channel ? c.oc : 1;
  p.w.scale.clear();
  p.w.zero_point.clear();
  for (int64_t o = 0; o < nw; ++o) {
    p.w.scale.push_back(c.extreme_scales ? (o % 2 ? 1e-8f : 3e-9f) : 0.05f * scale());
    if (c.symmetric)
      p.w.zero_point.push_back(ws ? 0 : 128);
    else
      p.w.zero_point.push_back(ws && !c.extreme_codes && r(0, 2) == 0 ? 0 : zp(ws));
  }
  p.w.axis = 0;
  p.has_bias = c.bias;
  b.bias = Tensor(DType::s32, {c.oc});
  for (int64_t o = 0; o < c.oc; ++o)
    b.bias.data<int32_t>()[o] = static_cast<int32_t>(r(-20000, 20000));
  p.accumulation = c.pairs ? IntAccumulation::mlas_u8s8_int16_pairs : IntAccumulation::exact_int32;
  return b;
}

std::vector<uint8_t> bytes(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.view().raw());
  return {p, p + t.numel() * static_cast<int64_t>(dtype_size(t.dtype()))};
}

// Runs every runnable, accepting variant on `q` (whose y is overwritten) and
// compares its bytes with the reference's; returns the names that ran.
std::set<std::string> check_all(QConvProblem q, Tensor& y, const std::string& what) {
  std::set<std::string> ran;
  const auto& list = qconv_kernels();
  std::memset(y.view().raw(), 0x5a, static_cast<size_t>(y.numel()) * dtype_size(y.dtype()));
  list.variants.back().run(q);
  const std::vector<uint8_t> want = bytes(y);
  for (const auto& v : list.variants) {
    if (v.reference || !KernelList<QConvProblem>::runnable(v) || v.isa > host_isa()) continue;
    if (v.declines && v.declines(q)) continue;
    std::memset(y.view().raw(), 0xa5, static_cast<size_t>(y.numel()) * dtype_size(y.dtype()));
    v.run(q);
    const std::vector<uint8_t> got = bytes(y);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i] && bad++ == 0) first = i;
    EXPECT_EQ(bad, 0u) << v.name << " " << what << ": " << bad << " bytes differ, first at byte "
                       << first;
    ran.insert(v.name);
  }
  return ran;
}

TEST(QConvFast, EveryKernelMatchesTheReference) {
  const uint32_t seed = 20261126;
  std::mt19937 rng(seed);
  test::SettingsRestore restore;
  std::set<std::string> ran;
  int informative = 0;
  for (int it = 0; it < 300; ++it) {
    const Case c = random_case(rng, it);
    Built b = build(c, rng);
    const Shape out = qlinear_conv_output_shape(b.x.shape(), b.w.shape(), b.p);
    Tensor y(c.xd, out, c.y_nhwc ? Layout::nhwc : Layout::nchw);
    const std::string what = text(c, seed, it);
    set_num_threads(1 + it % 3);
    QConvProblem q = qlinear_conv_problem(b.x, b.w, b.bias, y, b.p);
    for (const auto& n : check_all(q, y, what + " (QLinearConv)")) ran.insert(n);
    // Also through a pack made in advance (the ONNX runner's path).
    const auto pk = pack_qlinear_conv_weights(b.w, b.p, c.xd);
    q.packed = pk.get();
    check_all(q, y, what + " (QLinearConv, packed once)");
    // With the requantization data packed at load time (bias too), and with
    // one packed for other parameters, which the call must not use.
    const auto pke = pack_qlinear_conv_weights(b.w, b.bias, b.p, c.xd);
    EXPECT_TRUE(pke->epilogue && qconv_epilogue_matches(*pke->epilogue, q)) << what;
    q.packed = pke.get();
    check_all(q, y, what + " (QLinearConv, requantization packed)");
    QLinearConvParams other = b.p;
    other.y_scale *= 1.5f;
    other.x_zero_point ^= 1;
    const auto pko = pack_qlinear_conv_weights(b.w, b.bias, other, c.xd);
    EXPECT_FALSE(qconv_epilogue_matches(*pko->epilogue, q)) << what;
    q.packed = pko.get();
    check_all(q, y, what + " (QLinearConv, other parameters packed)");
    // Weak-test guard: count cases whose outputs take several values.
    std::set<uint8_t> distinct;
    for (uint8_t v : bytes(y)) distinct.insert(v);
    informative += distinct.size() > 3;
    // ConvInteger on the same operands (exact accumulation, int32 outputs).
    ConvIntegerParams ci;
    ci.window = b.p.window;
    ci.groups = b.p.groups;
    ci.x_zero_point = b.p.x_zero_point;
    ci.w_zero_point = b.p.w.zero_point;
    Tensor yi(DType::s32, out);
    for (const auto& n :
         check_all(conv_integer_problem(b.x, b.w, yi, ci), yi, what + " (ConvInteger)"))
      ran.insert(n);
    if (HasFailure()) break;
  }
  EXPECT_GT(informative, 200) << "too many cases with near-constant outputs";
  // Every listed kernel this host can run was exercised (the row kernels,
  // 1-2 channels on channels-last y, by test_qconv_rowpairs.cpp).
  for (const auto& v : qconv_kernels().variants) {
    if (!v.reference && KernelList<QConvProblem>::runnable(v) && v.isa <= host_isa() &&
        std::string(v.name).find("-rowpairs-") == std::string::npos &&
        std::string(v.name).find("-rowquads-") == std::string::npos) {
      EXPECT_TRUE(ran.count(v.name)) << v.name << " never ran";
    }
  }
}

TEST(QConvFast, DepthwiseRowsOfEveryWidth) {
  // MobileNet-like depthwise layers (3x3 and 5x5, strides 1 and 2, pads 0-2,
  // dilation 1 and 2) on rows of 1 to 80 columns, so every vector kernel's
  // blocks (16 or 32 columns) and every tail length run; extreme codes
  // every third case (|x - x_zp| = |w - w_zp| = 255); every fourth case 64-100
  // channels with symmetric weights (the quad kernel's chunks and tails).
  const uint32_t seed = 611;
  std::mt19937 rng(seed);
  test::SettingsRestore restore;
  std::set<std::string> ran;
  for (int it = 0; it < 120; ++it) {
    auto r = [&](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    Case c{};
    c.n = r(1, 2), c.groups = r(1, 5), c.ic = c.groups, c.oc = c.groups;
    c.kh = c.kw = r(0, 3) ? 3 : 5;
    c.sh = c.sw = r(1, 2);
    c.dh = c.dw = r(0, 4) ? 1 : 2;
    c.pt = c.pb = c.pl = c.pr = r(0, 2);
    const int64_t span = (c.kw - 1) * c.dw + 1;
    c.w = std::max<int64_t>(span - 2 * c.pl, 1 + it % 80 * c.sw);
    c.h = std::max<int64_t>(span - 2 * c.pt, r(1, 6));
    c.xd = r(0, 1) ? DType::u8 : DType::s8;
    c.wd = r(0, 1) ? DType::u8 : DType::s8;
    c.per_channel = r(0, 1);
    c.nhwc = r(0, 2) != 0;
    c.y_nhwc = c.nhwc ? r(0, 3) != 0 : r(0, 3) == 0;
    c.bias = r(0, 1);
    c.extreme_codes = it % 3 == 0;
    if (it % 4 == 2) {  // the quad kernel's case: symmetric weights, 64+ channels
      c.symmetric = true;
      c.groups = c.ic = c.oc = r(64, 100);
    }
    Built b = build(c, rng);
    Tensor y(c.xd, qlinear_conv_output_shape(b.x.shape(), b.w.shape(), b.p),
             c.y_nhwc ? Layout::nhwc : Layout::nchw);
    set_num_threads(1 + it % 3);
    for (const auto& n : check_all(qlinear_conv_problem(b.x, b.w, b.bias, y, b.p), y,
                                   text(c, seed, it) + " (depthwise rows)"))
      ran.insert(n);
    if (HasFailure()) break;
  }
  for (const auto& v : qconv_kernels().variants) {
    if (std::string(v.name).find("-dw-") != std::string::npos &&
        KernelList<QConvProblem>::runnable(v) && v.isa <= host_isa()) {
      EXPECT_TRUE(ran.count(v.name)) << v.name << " never ran";
    }
  }
}

TEST(QConvFast, DepthwiseColumnQuadsOnEveryChunkAndWindow) {
  // x8-qconv-dw-nhwc-cols's own geometry: channel counts across its 64/32/16
  // chunks and their tails (1-20, around 32, 48, 64 and multiples), every
  // window of 1-4 rows by 1-4 columns, strides 1-3, dilations 1-2 (half the
  // cases stride_h = dilation_h = 1: output rows in pairs, odd row counts
  // leaving a last row alone), each pad
  // 0-3 (padding columns and rows, windows reaching past both sides), rows
  // of 1 to 70 columns, few rows (column parts), batches, u8/s8 x and w,
  // symmetric weights (a tenth not: it must decline), through the call's own
  // pack and the load-time one, 1-3 threads.
  const uint32_t seed = 20261212;
  std::mt19937 rng(seed);
  auto r = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  test::SettingsRestore restore;
  const int64_t channels[] = {1,  2,  3,  5,  8,  15, 16,  17,  20,  31,  32,  33,  47, 48,
                              49, 63, 64, 65, 80, 96, 112, 127, 128, 144, 150, 160, 192};
  const char* const name = "x8-qconv-dw-nhwc-cols-avx512vnni";
  const auto& variants = qconv_kernels().variants;
  const auto kernel = std::find_if(variants.begin(), variants.end(),
                                   [&](const auto& k) { return std::string(k.name) == name; });
  ASSERT_NE(kernel, variants.end());
  const bool runs = KernelList<QConvProblem>::runnable(*kernel) && kernel->isa <= host_isa();
  int ran = 0, informative = 0;
  for (int it = 0; it < 160; ++it) {
    Case c{};
    c.n = r(1, 2);
    c.groups = c.ic = c.oc = channels[r(0, static_cast<int64_t>(std::size(channels)) - 1)];
    c.kh = r(1, 4), c.kw = r(1, 4), c.sh = r(1, 3), c.sw = r(1, 3), c.dh = r(1, 2), c.dw = r(1, 2);
    if (it % 2) c.sh = c.dh = 1;  // output rows in pairs (at most 3 window rows)
    c.pt = r(0, 3), c.pb = r(0, 3), c.pl = r(0, 3), c.pr = r(0, 3);
    const int64_t h_min = std::max<int64_t>(1, (c.kh - 1) * c.dh + 1 - c.pt - c.pb);
    const int64_t w_min = std::max<int64_t>(1, (c.kw - 1) * c.dw + 1 - c.pl - c.pr);
    c.h = r(h_min, h_min + (it % 4 ? 8 : 1));  // few rows every fourth case
    c.w = r(w_min, it % 5 ? 70 : w_min + 2);
    c.xd = r(0, 1) ? DType::u8 : DType::s8;
    c.wd = r(0, 1) ? DType::u8 : DType::s8;
    c.per_channel = r(0, 1), c.bias = r(0, 3) != 0;
    c.nhwc = c.y_nhwc = true;
    c.extreme_codes = it % 3 == 0;
    c.extreme_scales = it % 17 == 5;
    c.symmetric = it % 10 != 9;
    Built b = build(c, rng);
    Tensor y(c.xd, qlinear_conv_output_shape(b.x.shape(), b.w.shape(), b.p), Layout::nhwc);
    set_num_threads(1 + it % 3);
    QConvProblem q = qlinear_conv_problem(b.x, b.w, b.bias, y, b.p);
    const std::string what = text(c, seed, it) + " (column quads)";
    const bool cols = check_all(q, y, what).count(name) > 0;
    const auto pke = pack_qlinear_conv_weights(b.w, b.bias, b.p, c.xd);
    q.packed = pke.get();
    check_all(q, y, what + " (requantization packed)");
    // (build() may draw symmetric zero points when not asked to.)
    const int32_t sym = c.wd == DType::u8 ? 128 : 0;
    const bool symmetric = std::all_of(b.p.w.zero_point.begin(), b.p.w.zero_point.end(),
                                       [&](int32_t z) { return z == sym; });
    if (runs && !c.extreme_scales) {
      EXPECT_EQ(cols, symmetric) << what << ": the column-quad kernel "
                                 << (cols ? "took" : "declined") << " it";
    }
    ran += cols;
    std::set<uint8_t> distinct;
    for (uint8_t v : bytes(y)) distinct.insert(v);
    informative += distinct.size() > 3;
    if (HasFailure()) break;
  }
  EXPECT_GT(informative, 100) << "too many cases with near-constant outputs";
  // Below its ISA the other depthwise kernels were checked on these cases.
  if (!runs) GTEST_SKIP() << name << " is not runnable here (needs AVX-512 VNNI)";
  EXPECT_GT(ran, 120) << name << " ran too rarely";
}

TEST(QConvFast, ChannelsLastGemmOnNetworkLikeLayers) {
  // The NHWC GEMM's own geometry: output channels across one and several
  // 64-channel blocks with a tail, odd channel counts (quad padding), 3x3
  // and 7x7 windows with strides 1-2, small maps (7x7, 14x14: pixel blocks of
  // 6 with a remainder) and wider ones, batches, NHWC inputs, symmetric s8 /
  // u8 weights.
  const uint32_t seed = 9091;
  std::mt19937 rng(seed);
  auto r = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  test::SettingsRestore restore;
  std::set<std::string> ran;
  for (int it = 0; it < 60; ++it) {
    Case c{};
    c.n = r(1, 2), c.groups = 1, c.ic = r(1, 70), c.oc = r(1, 150);
    c.kh = c.kw = r(0, 3) == 0 ? 7 : 3;
    c.sh = c.sw = r(1, 2), c.dh = c.dw = r(0, 4) == 0 ? 2 : 1;
    c.pt = c.pb = c.pl = c.pr = c.kh / 2;
    c.pr = r(0, c.pr);
    c.h = r(std::max<int64_t>(1, (c.kh - 1) * c.dh + 1 - 2 * c.pt), 15), c.w = r(5, 15);
    // Every fourth case: rows of 16 columns or more with two or more blocks of
    // 16 channels (the copy's 16 x 16 blocks along a row, as on 56x56 maps).
    if (it % 4 == 3) c.w = r(16, 40), c.ic = r(32, 70), c.h = std::min<int64_t>(c.h, 8);
    c.w = std::max(c.w, (c.kw - 1) * c.dw + 1 - c.pl - c.pr);
    c.h = std::max(c.h, (c.kh - 1) * c.dh + 1 - 2 * c.pt);
    c.xd = r(0, 1) ? DType::u8 : DType::s8;
    c.wd = r(0, 2) ? DType::s8 : DType::u8;
    c.per_channel = r(0, 1), c.nhwc = r(0, 2) == 0, c.bias = r(0, 3) != 0;
    c.y_nhwc = r(0, 1);
    c.extreme_codes = it % 5 == 0, c.extreme_scales = it % 7 == 1;
    c.symmetric = true;
    Built b = build(c, rng);
    Tensor y(c.xd, qlinear_conv_output_shape(b.x.shape(), b.w.shape(), b.p),
             c.y_nhwc ? Layout::nhwc : Layout::nchw);
    set_num_threads(1 + it % 3);
    const std::string what = text(c, seed, it) + " (NHWC GEMM)";
    QConvProblem q = qlinear_conv_problem(b.x, b.w, b.bias, y, b.p);
    for (const auto& n : check_all(q, y, what)) ran.insert(n);
    const auto pk = pack_qlinear_conv_weights(b.w, b.p, c.xd);
    q.packed = pk.get();
    check_all(q, y, what + " packed once");
    if (HasFailure()) break;
  }
  for (const auto& v : qconv_kernels().variants) {
    const std::string name = v.name;  // the pair kernel has its own test (below)
    if (name.find("-gemm-nhwc-") != std::string::npos && name.find("pairs") == std::string::npos &&
        KernelList<QConvProblem>::runnable(v) && v.isa <= host_isa()) {
      EXPECT_TRUE(ran.count(v.name)) << v.name << " never ran";
    }
  }
}

// Sets every code of t to a value drawn from [lo, hi].
void fill_range(Tensor& t, std::mt19937& rng, int lo, int hi) {
  std::uniform_int_distribution<int> any(lo, hi);
  auto* p = static_cast<uint8_t*>(t.view().raw());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<uint8_t>(any(rng));
}

TEST(QConvFast, PairsChannelsLastGemmSaturatesAsMlas) {
  // x8-qconv-pairs-gemm-nhwc's own geometry under MLAS's int16 pairs (u8 x,
  // symmetric s8 w, as ONNX Runtime runs resnet18/mobilenet_v2 int8 on AVX2
  // hosts): even channel counts around quads (C % 4 == 2: a quad's second
  // pair is padding) and 16/64-channel blocks, output channels across blocks
  // with tails, 1x1 / 3x3 / 7x7 and odd windows, strides, dilations, pads
  // (padding taps read x_zp, up to 255), channels-last x and/or y, batches,
  // 1-3 threads; a third of the cases with codes that saturate pairs (x near
  // 255, w near +127 or -128 per channel), a third with extreme codes. Odd
  // channel counts must decline (their pairs span taps). Guards: the kernel
  // takes every even case it can run, and saturation changed the bytes of
  // many cases (against the exact sum).
  const uint32_t seed = 20261128;
  std::mt19937 rng(seed);
  auto r = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  test::SettingsRestore restore;
  const char* const name = "x8-qconv-pairs-gemm-nhwc-avx2";
  const auto& variants = qconv_kernels().variants;
  const auto kernel = std::find_if(variants.begin(), variants.end(),
                                   [&](const auto& k) { return std::string(k.name) == name; });
  ASSERT_NE(kernel, variants.end());
  const bool runs = KernelList<QConvProblem>::runnable(*kernel) && kernel->isa <= host_isa();
  const int64_t channels[] = {2, 4, 6, 10, 14, 16, 18, 30, 32, 34, 62, 64, 66, 96, 130};
  int even = 0, took = 0, odd_taken = 0, saturated = 0;
  for (int it = 0; it < 90; ++it) {
    Case c{};
    c.n = r(1, 2), c.groups = 1;
    c.ic = it % 9 == 4 ? 2 * r(0, 20) + 1 : channels[r(0, std::size(channels) - 1)];
    c.oc = r(0, 2) ? r(1, 80) : r(100, 150);
    const int64_t kind = r(0, 4);
    c.kh = c.kw = kind == 0 ? 1 : kind == 1 ? 7 : 3;
    if (kind == 4) c.kh = r(1, 4), c.kw = r(1, 4);
    c.sh = r(1, 2), c.sw = r(1, 2), c.dh = r(0, 4) ? 1 : 2, c.dw = r(0, 4) ? 1 : 2;
    c.pt = r(0, c.kh / 2 + 1), c.pb = r(0, c.kh / 2), c.pl = r(0, c.kw / 2 + 1),
    c.pr = r(0, c.kw / 2);
    c.h = std::max<int64_t>((c.kh - 1) * c.dh + 1 - c.pt - c.pb, r(1, 12));
    c.w = std::max<int64_t>((c.kw - 1) * c.dw + 1 - c.pl - c.pr, r(1, it % 4 ? 14 : 40));
    c.xd = DType::u8, c.wd = DType::s8, c.pairs = true, c.symmetric = true;
    c.per_channel = r(0, 3) != 0, c.bias = r(0, 3) != 0;
    c.nhwc = r(0, 2) != 0;
    c.y_nhwc = c.nhwc ? r(0, 1) != 0 : true;
    c.extreme_codes = it % 3 == 0, c.extreme_scales = it % 11 == 7;
    Built b = build(c, rng);
    if (it % 3 == 1) {  // pairs that saturate: x near 255, each channel's w near one end
      fill_range(b.x, rng, 200, 255);
      for (int64_t o = 0; o < c.oc; ++o) {
        Tensor wo = Tensor(DType::s8, {1, c.ic, c.kh, c.kw});
        r(0, 1) ? fill_range(wo, rng, 100, 127) : fill_range(wo, rng, 128, 156);  // -128..-100
        std::memcpy(b.w.data<int8_t>() + o * wo.numel(), wo.data<int8_t>(),
                    static_cast<size_t>(wo.numel()));
      }
    }
    const Shape out = qlinear_conv_output_shape(b.x.shape(), b.w.shape(), b.p);
    Tensor y(c.xd, out, c.y_nhwc ? Layout::nhwc : Layout::nchw);
    set_num_threads(1 + it % 3);
    const std::string what = text(c, seed, it) + " (NHWC pairs)";
    QConvProblem q = qlinear_conv_problem(b.x, b.w, b.bias, y, b.p);
    ASSERT_TRUE(q.pairs) << what;
    const bool took_it = check_all(q, y, what).count(name) > 0;
    even += c.ic % 2 == 0, took += took_it, odd_taken += took_it && c.ic % 2 != 0;
    const auto pk = pack_qlinear_conv_weights(b.w, b.bias, b.p, c.xd);  // the runner's pack
    q.packed = pk.get();
    check_all(q, y, what + " packed once");
    // The same operands summed exactly: saturation must have changed some bytes.
    QLinearConvParams exact = b.p;
    exact.accumulation = IntAccumulation::exact_int32;
    Tensor ye(c.xd, out, c.y_nhwc ? Layout::nhwc : Layout::nchw);
    qconv_reference(qlinear_conv_problem(b.x, b.w, b.bias, ye, exact));
    saturated += bytes(ye) != bytes(y);
    if (HasFailure()) break;
  }
  EXPECT_EQ(odd_taken, 0) << "an odd channel count ran on " << name;
  if (runs) {
    EXPECT_EQ(took, even) << name << " declined cases it should take";
  }
  EXPECT_GT(even, 70);
  EXPECT_GT(saturated, 20) << "too few cases where the pair saturation mattered";
}

TEST(QConvFast, ChannelsLastOperandsOnNetworkLayers) {
  // The runner's int8 layout (channels-last x and/or y) on resnet18's and
  // mobilenet_v2's layer kinds at reduced map sizes: first layers with 3
  // channels (x NCHW, y NHWC), 1x1 expansions and projections (OC 24-320:
  // partial 64-channel blocks), 3x3 depthwise with strides 1 and 2 (C 32-960,
  // odd C too), 3x3 and 1x1-stride-2 convolutions, the classifier as a 1x1
  // convolution on a 1x1 map (NCHW x: the same bytes), batches of 1-2, s8
  // symmetric and u8 (zero point 128) weights, asymmetric and per-tensor
  // weights on the depthwise ones; threads 1-3.
  struct Layer {
    int64_t ic, oc, k, s, pad, map, groups;
    bool x_nhwc;
  };
  const Layer layers[] = {
      {3, 32, 3, 2, 1, 30, 1, false},
      {3, 64, 7, 2, 3, 30, 1, false},
      {32, 32, 3, 1, 1, 14, 32, true},
      {16, 96, 1, 1, 0, 14, 1, true},
      {96, 96, 3, 2, 1, 14, 96, true},
      {96, 24, 1, 1, 0, 7, 1, true},
      {24, 144, 1, 1, 0, 9, 1, true},
      {144, 144, 3, 1, 1, 9, 144, true},
      {144, 32, 1, 1, 0, 9, 1, true},
      {192, 192, 3, 2, 1, 13, 192, true},
      {160, 960, 1, 1, 0, 4, 1, true},
      {960, 960, 3, 1, 1, 5, 960, true},
      {960, 320, 1, 1, 0, 3, 1, true},
      {320, 1280, 1, 1, 0, 2, 1, true},
      {64, 64, 3, 1, 1, 11, 1, true},
      {64, 128, 3, 2, 1, 11, 1, true},
      {64, 128, 1, 2, 0, 11, 1, true},
      {256, 256, 3, 1, 1, 4, 1, true},
      {37, 37, 3, 2, 1, 9, 37, true},
      {20, 45, 1, 1, 0, 5, 1, true},
      {1280, 1000, 1, 1, 0, 1, 1, false},  // the classifier on a 1x1 map
      // mobilenet_v2's other 1x1 shapes (maps of 25-64 pixels: partial
      // 6-pixel tiles), K not a multiple of 4, OC past whole vectors.
      {32, 192, 1, 1, 0, 8, 1, true},
      {64, 384, 1, 1, 0, 6, 1, true},
      {96, 576, 1, 1, 0, 5, 1, true},
      {576, 96, 1, 1, 0, 5, 1, true},
      {192, 32, 1, 1, 0, 8, 1, true},
      {384, 64, 1, 1, 0, 6, 1, true},
      {960, 160, 1, 1, 0, 3, 1, true},
      {22, 50, 1, 1, 0, 7, 1, true},
      {7, 200, 1, 1, 0, 5, 1, true},
      // Full-size 7x7 and 14x14 layers: few rows, so the depthwise rows are
      // cut into column parts and the 49-pixel GEMM into runs of 5 + 4 blocks.
      {960, 960, 3, 1, 1, 7, 960, true},
      {576, 576, 3, 2, 1, 14, 576, true},
      {960, 160, 1, 1, 0, 7, 1, true},
  };
  const uint32_t seed = 1309;
  std::mt19937 rng(seed);
  test::SettingsRestore restore;
  std::set<std::string> ran;
  int it = 0;
  for (const Layer& l : layers)
    for (int variant = 0; variant < 3; ++variant, ++it) {
      Case c{};
      c.n = variant == 2 ? 2 : 1, c.ic = l.ic, c.oc = l.oc, c.groups = l.groups;
      c.kh = c.kw = l.k, c.sh = c.sw = l.s, c.dh = c.dw = 1;
      c.pt = c.pb = c.pl = c.pr = l.pad;
      c.h = l.map, c.w = l.map + variant;  // odd widths too
      c.xd = variant == 1 ? DType::s8 : DType::u8;
      c.wd = variant == 2 ? DType::u8 : DType::s8;
      c.per_channel = variant != 1;
      c.nhwc = l.x_nhwc || variant == 2;
      c.y_nhwc = true;
      c.bias = true;
      c.extreme_codes = it % 5 == 4;
      c.symmetric = l.groups == 1 || variant == 0;
      Built b = build(c, rng);
      Tensor y(c.xd, qlinear_conv_output_shape(b.x.shape(), b.w.shape(), b.p), Layout::nhwc);
      set_num_threads(1 + it % 3);
      const std::string what = text(c, seed, it) + " (network layer, channels-last)";
      QConvProblem q = qlinear_conv_problem(b.x, b.w, b.bias, y, b.p);
      const auto pk = pack_qlinear_conv_weights(b.w, b.p, c.xd);
      q.packed = pk.get();
      const std::set<std::string> names = check_all(q, y, what);
      for (const auto& n : names) ran.insert(n);
      // The runner's choice (the first accepting variant) is a channels-last one.
      if (kernel_allowed(Isa::avx512_vnni, false)) {
        EXPECT_TRUE(names.count(l.groups == 1 ? "x8-qconv-gemm-nhwc-avx512vnni"
                                              : "x8-qconv-dw-nhwc-avx512vnni"))
            << what;
      }
      if (kernel_allowed(Isa::avx2, false)) {  // the layout pass's kernels on AVX2 hosts
        EXPECT_TRUE(
            names.count(l.groups == 1 ? "x8-qconv-gemm-nhwc-avx2" : "x8-qconv-dw-nhwc-avx2"))
            << what;
      }
      // Weak-test guard: outputs take many values.
      std::set<uint8_t> distinct;
      for (uint8_t v : bytes(y)) distinct.insert(v);
      EXPECT_GT(distinct.size(), 3u) << what;
      if (HasFailure()) return;
    }
  for (const char* name :
       {"x8-qconv-dw-nhwc-avx512vnni", "x8-qconv-dw-nhwc-avx512", "x8-qconv-dw-nhwc-avx2",
        "x8-qconv-dw-nhwc-portable", "x8-qconv-gemm-nhwc-avx2", "x8-qconv-gemm-nhwc-portable"}) {
    const auto& vs = qconv_kernels().variants;
    const auto v = std::find_if(vs.begin(), vs.end(),
                                [&](const auto& k) { return k.name == std::string(name); });
    ASSERT_NE(v, vs.end()) << name;
    if (KernelList<QConvProblem>::runnable(*v) && v->isa <= host_isa()) {
      EXPECT_TRUE(ran.count(name)) << name << " never ran";
    }
  }
}

TEST(QConvFast, DepthwisePackOfOtherZeroPointsIsNotUsed) {
  // The channels-last depthwise form is packed with the zero points of its
  // time (a run-time zero point input may differ): a call with other ones
  // must not use it.
  const uint32_t seed = 515;
  std::mt19937 rng(seed);
  Case c{};
  c.n = 1, c.ic = c.oc = c.groups = 32, c.kh = c.kw = 3, c.sh = c.sw = 1, c.dh = c.dw = 1;
  c.pt = c.pb = c.pl = c.pr = 1, c.h = 6, c.w = 7;
  c.xd = DType::u8, c.wd = DType::u8, c.per_channel = true, c.nhwc = c.y_nhwc = true;
  c.bias = true;
  Built b = build(c, rng);
  QLinearConvParams other = b.p;
  for (int32_t& z : other.w.zero_point) z = (z + 77) % 256;
  const auto pk = pack_qlinear_conv_weights(b.w, other, c.xd);
  Tensor y(c.xd, qlinear_conv_output_shape(b.x.shape(), b.w.shape(), b.p), Layout::nhwc);
  QConvProblem q = qlinear_conv_problem(b.x, b.w, b.bias, y, b.p);
  q.packed = pk.get();
  const auto ran = check_all(q, y, text(c, seed, 0) + " (packed with other zero points)");
  if (kernel_allowed(Isa::avx512, false)) {
    EXPECT_TRUE(ran.count("x8-qconv-dw-nhwc-avx512"));
  }
}

TEST(QConvFast, LargestSumsAtTheInt32Limit) {
  // K = 33021 products of magnitude 255 * 255 (s8 codes at one end, zero
  // points at the other): the accumulator ends 23 below INT32_MAX; and the
  // MLAS pair sums of u8 255 x s8 -128 saturate every pair.
  test::SettingsRestore restore;
  for (const bool pairs : {false, true}) {
    const DType xd = pairs ? DType::u8 : DType::s8;
    const int64_t ic = 3669;
    Tensor x(xd, {1, ic, 3, 3}), w(DType::s8, {9, ic, 3, 3});
    std::memset(x.view().raw(), pairs ? 255 : 127, static_cast<size_t>(x.numel()));
    std::memset(w.view().raw(), pairs ? 0x80 : 127, static_cast<size_t>(w.numel()));
    QLinearConvParams p;
    p.window.kernel_h = p.window.kernel_w = 3;
    p.x_zero_point = pairs ? 0 : -128;
    p.w.zero_point = {pairs ? 0 : -128};
    p.accumulation = pairs ? IntAccumulation::mlas_u8s8_int16_pairs : IntAccumulation::exact_int32;
    ConvIntegerParams ci;
    ci.window = p.window;
    ci.x_zero_point = p.x_zero_point;
    ci.w_zero_point = p.w.zero_point;
    Tensor yi(DType::s32, {1, 9, 1, 1});
    const QConvProblem q = conv_integer_problem(x, w, yi, ci);
    check_all(q, yi, pairs ? "int32 limit (pairs operands, exact)" : "int32 limit");
    EXPECT_EQ(yi.data<int32_t>()[0], pairs ? 33021 * 255 * -128 : 33021 * 65025);
    Tensor y(xd, {1, 9, 1, 1});
    p.y_scale = 1e6f;
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      check_all(qlinear_conv_problem(x, w, Tensor(), y, p), y, "int32 limit, requantized");
    }
  }
}

TEST(QConvFast, CodesAroundTheAvx2SplitPoint) {
  // The AVX2 exact GEMM splits x' into x' & 0x80 and x' & 0x7f and its pair
  // sums reach -32768 (128 * -128 * 2): activations only at the split's
  // edges (0, 1, 127, 128, 129, 254, 255 as u8 codes; s8 codes flip to
  // these), weights at theirs (-128, -127, -1, 0, 1, 126, 127), ICs that
  // leave partial quads and maps whose rows leave partial vectors (the
  // fused epilogue's and the depthwise rows' last lanes).
  const uint32_t seed = 4242;
  std::mt19937 rng(seed);
  test::SettingsRestore restore;
  std::set<std::string> ran;
  const uint8_t x_edges[] = {0, 1, 127, 128, 129, 254, 255};
  const int8_t w_edges[] = {-128, -127, -1, 0, 1, 126, 127};
  for (int it = 0; it < 60; ++it) {
    Case c = random_case(rng, it);
    c.extreme_codes = false, c.extreme_scales = false;
    Built b = build(c, rng);
    std::uniform_int_distribution<int> pick(0, 6);
    auto* xp = static_cast<uint8_t*>(b.x.view().raw());
    for (int64_t i = 0; i < b.x.numel(); ++i)
      xp[i] = static_cast<uint8_t>(x_edges[pick(rng)] ^ (c.xd == DType::s8 ? 0x80 : 0));
    auto* wp = static_cast<uint8_t*>(b.w.view().raw());
    for (int64_t i = 0; i < b.w.numel(); ++i)
      wp[i] = static_cast<uint8_t>(w_edges[pick(rng)] ^ (c.wd == DType::u8 ? 0x80 : 0));
    Tensor y(c.xd, qlinear_conv_output_shape(b.x.shape(), b.w.shape(), b.p),
             c.y_nhwc ? Layout::nhwc : Layout::nchw);
    set_num_threads(1 + it % 3);
    for (const auto& n : check_all(qlinear_conv_problem(b.x, b.w, b.bias, y, b.p), y,
                                   text(c, seed, it) + " (split edges)"))
      ran.insert(n);
    if (HasFailure()) break;
  }
  for (const char* name : {"x8-qconv-gemm-nchw-avx2", "x8-qconv-dw-nchw-avx2"}) {
    if (kernel_allowed(Isa::avx2, false)) {  // (not under NPUKIT_MAX_ISA=portable)
      EXPECT_TRUE(ran.count(name)) << name << " never ran";
    }
  }
}

TEST(QConvFast, RequantizedValuesBeyondTheInt32Range) {
  // Per-channel multipliers from 1e-4 to 1e7 on whole 64-channel blocks of
  // channels-last operands: float(acc) * m then lies far past +-2^31 on some
  // channels (the conversion would give INT_MIN there), inside the code
  // range on others; the fast kernels clamp partly by saturating packs.
  const uint32_t seed = 4242;
  std::mt19937 rng(seed);
  test::SettingsRestore restore;
  int it = 0;
  for (const int64_t oc : {64, 128, 96})
    for (const DType xd : {DType::u8, DType::s8})
      for (const int64_t groups : {int64_t{1}, oc}) {
        Case c{};
        c.n = 1 + it % 2, c.ic = groups == 1 ? 24 : oc, c.oc = oc, c.groups = groups;
        c.kh = c.kw = groups == 1 ? 1 + 2 * (it % 2) : 3;
        c.sh = c.sw = c.dh = c.dw = 1, c.pt = c.pb = c.pl = c.pr = c.kh / 2;
        c.h = 5, c.w = 6, c.xd = xd, c.wd = it % 3 == 0 ? DType::u8 : DType::s8;
        c.per_channel = true, c.nhwc = true, c.y_nhwc = true, c.bias = true, c.symmetric = true;
        Built b = build(c, rng);
        for (int64_t o = 0; o < oc; ++o)  // m = x_scale * w_scale / y_scale
          b.p.w.scale[static_cast<size_t>(o)] =
              b.p.y_scale / b.p.x_scale * std::pow(10.0f, static_cast<float>(o % 12) - 4.0f);
        Tensor y(xd, qlinear_conv_output_shape(b.x.shape(), b.w.shape(), b.p), Layout::nhwc);
        set_num_threads(1 + it % 3);
        const std::string what = text(c, seed, it) + " (multipliers 1e-4..1e7)";
        check_all(qlinear_conv_problem(b.x, b.w, b.bias, y, b.p), y, what);
        // Weak-test guard: both ends of the code range and values between.
        std::set<uint8_t> distinct;
        for (uint8_t v : bytes(y)) distinct.insert(v);
        const uint8_t lo = xd == DType::s8 ? 0x80 : 0, hi = xd == DType::s8 ? 0x7f : 0xff;
        EXPECT_TRUE(distinct.count(lo) && distinct.count(hi) && distinct.size() > 10) << what;
        ++it;
        if (HasFailure()) return;
      }
}

TEST(QConvFast, ForcedReferenceAndIsaCapsGiveTheSameBytes) {
  // The public entry point under NPUKIT_IMPL / NPUKIT_MAX_ISA's settings.
  const uint32_t seed = 77;
  std::mt19937 rng(seed);
  const Impl saved_impl = impl();
  const Isa saved_isa = max_isa();
  for (int it = 0; it < 40; ++it) {
    const Case c = random_case(rng, it);
    Built b = build(c, rng);
    const Shape out = qlinear_conv_output_shape(b.x.shape(), b.w.shape(), b.p);
    const Layout yl = c.y_nhwc ? Layout::nhwc : Layout::nchw;
    Tensor want(c.xd, out, yl), got(c.xd, out, yl);
    set_impl(Impl::reference);
    qlinear_conv(b.x, b.w, b.bias, want, b.p);
    set_impl(Impl::fast);
    for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512, Isa::avx512_vnni}) {
      if (isa > host_isa()) continue;
      set_max_isa(isa);
      qlinear_conv(b.x, b.w, b.bias, got, b.p);
      EXPECT_EQ(bytes(got), bytes(want)) << text(c, seed, it) << " max isa " << isa_name(isa);
    }
    set_max_isa(saved_isa);
  }
  set_impl(saved_impl);
  set_max_isa(saved_isa);
}

}  // namespace
}  // namespace test_qconv_fast
}  // namespace npukit
