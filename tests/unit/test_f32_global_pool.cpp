// f32 global max over NCHW planes (src/ops/cpu/f32-globalpool*): every
// runnable f32-globalpool-max-nchw-* variant of the "pool2d" list against the
// reference, bit for bit (NaN payloads included), on seeded random problems:
// planes of 1 to 400 elements (under, at and over a vector, 7x7), channel
// counts across the 16-plane blocks, batches, gaps between planes, strided
// outputs, inputs that end at a PROT_NONE page, values with NaN (several
// payloads), +-inf, +-0, denormals and -FLT_MAX, planes whose max is a zero,
// every max rule (taps loop with propagate / ignore, -inf / -FLT_MAX start,
// FTZ; MLAS's NCHWc loop) and 1-3 threads; then the public call at every ISA
// cap and with the reference forced. A failure prints the seed, the case and
// the configuration.

#include <cfloat>
#include <cstring>
#include <random>
#include <sstream>
#include <stdexcept>

#include "ops/cpu/f32-globalpool.hpp"
#include "ops/cpu/pool2d_plan.hpp"
#include "unit/guarded_bytes.hpp"
#include "unit/test_util.hpp"
#include "unit/variant_test_util.hpp"

namespace npukit {
namespace test_f32_global_pool {
namespace {

using cpu::Pool2dProblem;

struct Restore {
  ~Restore() {
    set_num_threads(0);
    set_max_isa(host_isa());
    set_impl(Impl::fast);
  }
};

float bits_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// One value: mostly normal numbers; `special` (0-100) percent from the special set.
float random_value(std::mt19937& g, int special, bool non_positive) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  if (static_cast<int>(g() % 100) < special) {
    switch (g() % 10) {
      case 0:
        return bits_float(0x7fc00000u | (g() & 0x3fffffu) | (g() % 2 ? 0x80000000u : 0u));  // NaN
      case 1:
        return test::kInf;
      case 2:
        return -test::kInf;
      case 3:
        return 0.0f;
      case 4:
        return -0.0f;
      case 5:
        return bits_float(1 + g() % 0x7fffffu);  // +denormal
      case 6:
        return bits_float(0x80000000u | (1 + g() % 0x7fffffu));  // -denormal
      case 7:
        return -FLT_MAX;
      case 8:
        return FLT_MIN;
      default:
        return bits_float((0x7f800001u + g() % 0x3fffffu) |
                          (g() % 2 ? 0x80000000u : 0u));  // signalling NaN, either sign
    }
  }
  const float v = normal(g);
  return non_positive ? -std::fabs(v) : v;
}

struct Case {
  Shape shape;
  int64_t plane_gap = 0, y_stride = 1;
  int rule = 0;     // 0 pytorch, 1 onnxruntime (NCHWc when C fills blocks), 2 bm1684, 3 random
  int special = 0;  // percent of special values
  int zeros = 0;    // percent of planes of zeros and negatives (max is a zero)
  std::string text(const Pool2dParams& p) const {
    std::ostringstream s;
    s << "x" << shape_text(shape) << " plane gap " << plane_gap << " y stride " << y_stride
      << " rule " << rule << " (nan " << static_cast<int>(p.nan) << " pad_value "
      << static_cast<int>(p.pad_value) << " flush " << p.flush_denormals << " loop "
      << static_cast<int>(effective_pool_loop(p, shape[1])) << ") special " << special
      << "% zero-max planes " << zeros << "%";
    return s.str();
  }
};

Case random_case(std::mt19937& g) {
  Case c;
  static const int64_t sides[][2] = {{7, 7}, {1, 1}, {1, 5}, {4, 4},   {3, 5},  {2, 8}, {1, 17},
                                     {5, 7}, {6, 8}, {9, 9}, {20, 20}, {1, 33}, {3, 11}};
  const auto& hw = sides[g() % (sizeof sides / sizeof sides[0])];
  const int64_t cs[] = {1, 3, 15, 16, 17, 31, 32, 33, 48, 64, 70};
  c.shape = {1 + static_cast<int64_t>(g() % 3), cs[g() % 11], hw[0], hw[1]};
  if (g() % 4 == 0) c.shape[3] = 1 + static_cast<int64_t>(g() % 100);  // any size 1..100 per row
  if (g() % 2) std::swap(c.shape[2], c.shape[3]);
  c.plane_gap = g() % 3 == 0 ? static_cast<int64_t>(g() % 5) : 0;
  c.y_stride = g() % 4 == 0 ? 3 : 1;
  c.rule = static_cast<int>(g() % 4);
  const int specials[] = {0, 1, 5, 30};
  c.special = specials[g() % 4];
  c.zeros = g() % 3 == 0 ? 30 : 0;
  return c;
}

Pool2dParams params_of(const Case& c, std::mt19937& g) {
  Pool2dParams p = global_pool2d_params(c.shape, PoolMode::max);
  const Profile profiles[] = {Profile::pytorch, Profile::onnxruntime, Profile::bm1684};
  if (c.rule < 3) {
    apply_global_profile(p, profiles[c.rule]);
  } else {
    p.nan = g() % 2 ? MaxNaN::propagate : MaxNaN::ignore;
    const PadValue pads[] = {PadValue::neg_inf, PadValue::neg_flt_max, PadValue::zero};
    p.pad_value = pads[g() % 3];
    p.flush_denormals = g() % 2;
    p.nchwc_block = g() % 4 == 0 ? 1 : 0;  // 1: every C is a multiple (the NCHWc loop)
  }
  return p;
}

// NCHW x with plane_gap floats after every plane, the data ending at a guard page.
struct Input {
  std::unique_ptr<test::GuardedBytes> mem;  // the floats end at a guard page
  TensorView x;
};

Input make_input(const Case& c, std::mt19937& g) {
  const int64_t N = c.shape[0], C = c.shape[1], hw = c.shape[2] * c.shape[3];
  const int64_t cs = hw + c.plane_gap;
  const int64_t count = (N - 1) * C * cs + (C - 1) * cs + hw;
  Input in;
  in.mem = std::make_unique<test::GuardedBytes>(static_cast<size_t>(count) * sizeof(float));
  float* d = in.mem->as<float>();
  for (int64_t i = 0; i < count; ++i) d[i] = bits_float(0x7fa5a5a5u);  // NaN in the gaps
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch) {
      const bool zero_plane = static_cast<int>(g() % 100) < c.zeros;
      float* plane = d + n * C * cs + ch * cs;
      for (int64_t e = 0; e < hw; ++e) {
        float v = random_value(g, c.special, zero_plane);
        if (zero_plane && g() % 4 == 0) v = g() % 2 ? 0.0f : -0.0f;
        plane[e] = v;
      }
    }
  in.x = TensorView(d, DType::f32, c.shape, {C * cs, cs, c.shape[3], 1});
  return in;
}

// Bit for bit, NaN payloads included.
std::string first_difference(const TensorView& got, const TensorView& want) {
  for (int64_t n = 0; n < got.dim(0); ++n)
    for (int64_t ch = 0; ch < got.dim(1); ++ch) {
      const float fa = got.at<float>(n, ch, 0, 0), fb = want.at<float>(n, ch, 0, 0);
      const uint32_t a = float_bits(fa), b = float_bits(fb);
      if (a != b) {
        std::ostringstream s;
        s << "output (" << n << ", " << ch << "): got 0x" << std::hex << a << ", reference 0x" << b;
        return s.str();
      }
    }
  return "";
}

// One case through every variant of the list `only`, each against the
// reference, also checking that the output's gaps keep their filler; false
// after a difference (reported with `label`).
bool variants_match(const Case& c, const Input& in, const Pool2dParams& p, const char* only,
                    int threads, const std::string& label, variant_test::Runs& runs) {
  const Shape ys = {c.shape[0], c.shape[1], 1, 1};
  const Shape y_strides = {c.shape[1] * c.y_stride, c.y_stride, 1, 1};
  std::vector<float> want_buf(static_cast<size_t>(c.shape[0] * c.shape[1] * c.y_stride), 7.0f);
  const TensorView want(want_buf.data(), DType::f32, ys, y_strides);
  set_num_threads(1);
  ref::pool2d_f32(in.x, want, p);
  std::vector<float> got_buf;
  const auto make = [&] {
    got_buf.assign(want_buf.size(), 7.0f);
    return Pool2dProblem{in.x, TensorView(got_buf.data(), DType::f32, ys, y_strides), p};
  };
  const auto compare = [&](const Pool2dProblem& pr) {
    std::string d = first_difference(pr.y, want);
    for (size_t k = 0; d.empty() && k < got_buf.size(); ++k)
      if (k % static_cast<size_t>(c.y_stride) != 0 && got_buf[k] != 7.0f)
        d = "wrote into the output's gap at " + std::to_string(k);
    return d;
  };
  variant_test::Options opt;
  opt.only = only;
  opt.threads = threads;
  return variant_test::run_every_variant(pool2d_kernels(), make, compare, label, runs, opt);
}

// One max case through every f32-globalpool-max variant.
bool max_case_matches(const Case& c, const Input& in, const Pool2dParams& p, int threads,
                      const std::string& where, variant_test::Runs& runs) {
  return variants_match(c, in, p, "f32-globalpool-max", threads, where + " " + c.text(p), runs);
}

TEST(F32GlobalMaxFast, EveryVariantEqualsReferenceBitForBit) {
  Restore restore;
  const uint32_t seed = 20261127;
  std::printf("f32 global max: seed %u\n", seed);
  std::mt19937 g(seed);
  variant_test::Runs runs;
  int64_t redo_cases = 0;
  for (int i = 0; i < 1500; ++i) {
    const Case c = random_case(g);
    const Pool2dParams p = params_of(c, g);
    const Input in = make_input(c, g);
    redo_cases += c.special > 0 || c.zeros > 0;
    const std::string where = "seed " + std::to_string(seed) + " case " + std::to_string(i);
    if (!max_case_matches(c, in, p, 1 + i % 3, where, runs)) break;
  }
  variant_test::print_runs("f32 global max", runs);
  EXPECT_GT(redo_cases, 500);
  variant_test::expect_each_ran(pool2d_kernels(), runs, 600,
                                variant_test::name_has("f32-globalpool-max"));
}

// Gap-free planes of the sizes with a fixed pass on AVX-512 (gf_fixed_pass:
// 36, 49, 64, ..., 225 floats, as squares, single rows or columns), channel
// counts around the 16-plane passes and 256-plane chunks, batches, strided
// outputs, special values and zero-max planes, every rule, 1-3 threads; a
// third of the cases hold normal numbers and exactly one NaN (the pass's NaN
// check must see every row, the last one of an odd count included).
TEST(F32GlobalMaxFast, FixedSizePackedPlanesEqualReferenceBitForBit) {
  Restore restore;
  const uint32_t seed = 20261401;
  std::printf("f32 global max of fixed-size gap-free planes: seed %u\n", seed);
  std::mt19937 g(seed);
  variant_test::Runs runs;
  const int64_t channels[] = {1, 15, 16, 17, 31, 32, 33, 48, 255, 256, 257, 300, 2048};
  int64_t one_nan_cases = 0;
  for (int i = 0; i < 600; ++i) {
    Case c = random_case(g);
    const int64_t side = 6 + static_cast<int64_t>(g() % 10);  // 6 .. 15
    const int64_t C = channels[g() % 13] / (side > 10 ? 8 : 1) + 1;
    c.shape = {1 + static_cast<int64_t>(g() % 3), C, side, side};
    if (g() % 4 == 0) c.shape = {c.shape[0], C, 1, side * side};
    if (g() % 8 == 0) c.shape = {c.shape[0], C, side * side, 1};
    c.plane_gap = 0;
    const bool one_nan = i % 3 == 0;
    if (one_nan) c.special = c.zeros = 0;
    const Pool2dParams p = params_of(c, g);
    Input in = make_input(c, g);
    std::string where = "seed " + std::to_string(seed) + " case " + std::to_string(i);
    if (one_nan) {
      const int64_t count = in.x.numel();
      const int64_t at = static_cast<int64_t>(g() % static_cast<uint32_t>(count));
      in.x.data<float>()[at] = bits_float(0x7fc00000u | (g() & 0x3fffffu));
      where += " one NaN at element " + std::to_string(at);
      ++one_nan_cases;
    }
    if (!max_case_matches(c, in, p, 1 + i % 3, where, runs)) break;
  }
  variant_test::print_runs("f32 global max of fixed-size gap-free planes", runs);
  EXPECT_EQ(one_nan_cases, 200);
  variant_test::expect_each_ran(pool2d_kernels(), runs, 400,
                                variant_test::name_has("f32-globalpool-max"));
}

// The fixed passes' integer max (GfBitsMax: a signed max of the floats' bits,
// trusted only where a plane's result is a positive integer, else the pass
// runs again with vmaxps): passes that mix planes of every kind below, so
// that one all-negative plane sends its 15 neighbours through the float pass
// too, under every rule and 1-3 threads.
float edge_value(std::mt19937& g, int kind, int64_t e, int64_t at) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const float neg = -std::fabs(normal(g)) - 1e-3f;
  switch (kind) {
    case 1:  // all negative: -inf, -FLT_MAX and -denormals among them
      return g() % 8 == 0   ? -test::kInf
             : g() % 8 == 0 ? -FLT_MAX
             : g() % 8 == 0 ? bits_float(0x80000000u | (1 + g() % 0x7fffffu))
                            : neg;
    case 2:  // negatives and one +0 or -0 (a zero max)
      return e == at ? (g() % 2 ? 0.0f : -0.0f) : neg;
    case 3:  // positives and one -NaN, which a positive integer max hides
      return e == at ? bits_float(0xffc00000u | (g() & 0x3fffffu)) : std::fabs(normal(g));
    case 4:  // one +NaN (bits above +inf)
      return e == at ? bits_float(0x7fc00000u | (g() & 0x3fffffu)) : normal(g);
    case 5:  // a positive denormal max among negatives (FTZ flushes it)
      return e == at ? bits_float(1 + g() % 0x7fffffu) : neg;
    case 6:  // the smallest positives against large negatives
      return e == at ? (g() % 2 ? FLT_MIN : bits_float(1)) : (g() % 2 ? -FLT_MAX : -test::kInf);
    case 7:  // +inf among negatives
      return e == at ? test::kInf : neg;
    case 8:  // signs around zero: +-1 ulp above zero, +-0
      return bits_float((g() % 2 ? 0x80000000u : 0u) | (g() % 3 == 0 ? 0u : 1 + g() % 4));
    default:  // normal numbers
      return normal(g);
  }
}

TEST(F32GlobalMaxFast, IntegerMaxEdgesEqualReferenceBitForBit) {
  Restore restore;
  const uint32_t seed = 20261501;
  std::printf("f32 global max, integer-max edges of the fixed passes: seed %u\n", seed);
  std::mt19937 g(seed);
  variant_test::Runs runs;
  const int64_t channels[] = {16, 17, 32, 33, 64, 256, 257};
  for (int i = 0; i < 400; ++i) {
    Case c = random_case(g);
    const int64_t side = 6 + static_cast<int64_t>(g() % 10);  // 6 .. 15: the fixed sizes
    c.shape = {1 + static_cast<int64_t>(g() % 2), channels[g() % 7], side, side};
    c.plane_gap = 0;
    c.special = c.zeros = 0;
    const Pool2dParams p = params_of(c, g);
    Input in = make_input(c, g);
    const int64_t hw = side * side, planes = c.shape[0] * c.shape[1];
    // Most planes normal, the rest of one edge kind each (a pass's 16 planes mix).
    const int odd_share = 1 + static_cast<int>(g() % 4);  // of 8
    std::string kinds;
    for (int64_t k = 0; k < planes; ++k) {
      const int kind = static_cast<int>(g() % 8) < odd_share ? 1 + static_cast<int>(g() % 8) : 0;
      const int64_t at = static_cast<int64_t>(g() % static_cast<uint32_t>(hw));
      float* plane = in.x.data<float>() + k * hw;
      for (int64_t e = 0; e < hw; ++e) plane[e] = edge_value(g, kind, e, at);
      if (k < 40) kinds += static_cast<char>('0' + kind);
    }
    const std::string where = "seed " + std::to_string(seed) + " case " + std::to_string(i) +
                              " plane kinds " + kinds + "...";
    if (!max_case_matches(c, in, p, 1 + i % 3, where, runs)) break;
  }
  variant_test::print_runs("f32 global max, integer-max edges", runs);
  variant_test::expect_each_ran(pool2d_kernels(), runs, 300,
                                variant_test::name_has("f32-globalpool-max"));
}

// Averages and sums: the reference's order (each plane summed from +0 element
// by element, then one division by hw or a product by coeff) under every rule
// the fast variants take (taps loop without FTZ, MLAS's NCHWc loop) and the
// ones they must decline (FTZ, bm1684's interleaved sums, MLAS's plain loop).
Pool2dParams avg_params_of(const Case& c, std::mt19937& g) {
  const bool sum = g() % 4 == 0;
  Pool2dParams p = global_pool2d_params(c.shape, sum ? PoolMode::sum : PoolMode::avg);
  const Profile profiles[] = {Profile::pytorch, Profile::onnxruntime, Profile::bm1684};
  if (c.rule < 3) {
    apply_global_profile(p, profiles[c.rule]);
  } else {
    const AvgDivisor divisors[] = {AvgDivisor::kernel_area, AvgDivisor::valid_count,
                                   AvgDivisor::clipped_window};
    p.divisor = divisors[g() % 3];
    p.flush_denormals = g() % 4 == 0;
    p.nchwc_block = g() % 3 == 0 ? 1 : 0;  // 1: every C is a multiple (the NCHWc loop)
  }
  if (sum) p.coeff = g() % 8 == 0 ? random_value(g, 50, false) : 0.37f;
  return p;
}

// One average/sum case through every f32-globalpool-avg variant.
bool avg_case_matches(const Case& c, std::mt19937& g, int threads, const std::string& where,
                      variant_test::Runs& runs) {
  const Pool2dParams p = avg_params_of(c, g);
  const Input in = make_input(c, g);
  return variants_match(c, in, p, "f32-globalpool-avg", threads,
                        where + " " + c.text(p) + " mode " + pool_mode_name(p.mode) +
                            " accumulation " + std::to_string(static_cast<int>(p.accumulation)),
                        runs);
}

TEST(F32GlobalAvgFast, EveryVariantEqualsReferenceBitForBit) {
  Restore restore;
  const uint32_t seed = 20261129;
  std::printf("f32 global avg/sum: seed %u\n", seed);
  std::mt19937 g(seed);
  variant_test::Runs runs;
  for (int i = 0; i < 1500; ++i) {
    const Case c = random_case(g);
    const std::string where = "seed " + std::to_string(seed) + " case " + std::to_string(i);
    if (!avg_case_matches(c, g, 1 + i % 3, where, runs)) break;
  }
  variant_test::print_runs("f32 global avg/sum", runs);
  // The declines above are real cases too: FTZ, interleaved sums, MLAS's loop.
  EXPECT_GT(runs.declines(), 200);
  // (The odd-size kernel takes few of these planes: its own test below.)
  variant_test::expect_each_ran(pool2d_kernels(), runs, 500, [](const std::string& name) {
    return name.find("f32-globalpool-avg") != std::string::npos &&
           name.find("-odd-") == std::string::npos;
  });
}

// Gap-free planes of the odd square sizes (f32-globalpool-avg-odd-nchw-avx512:
// its per-lane barrel shift of the rows of 16 planes), as squares and as
// single rows or columns: channel counts around the 16-plane groups and the
// 256-plane chunks, batches, strided outputs, special values.
TEST(F32GlobalAvgFast, OddSquarePlanesEqualReferenceBitForBit) {
  Restore restore;
  const uint32_t seed = 20261302;
  std::printf("f32 global avg/sum of odd square planes: seed %u\n", seed);
  std::mt19937 g(seed);
  variant_test::Runs runs;
  const int64_t channels[] = {1, 15, 16, 17, 31, 32, 48, 64, 70, 255, 256, 257, 300, 2048};
  for (int i = 0; i < 700; ++i) {
    Case c = random_case(g);
    const int64_t side = 3 + 2 * static_cast<int64_t>(g() % 7);  // 3 .. 15
    const int64_t C = channels[g() % 14] / (side > 7 ? 8 : 1) + 1;
    c.shape = {1 + static_cast<int64_t>(g() % 3), C, side, side};
    if (g() % 4 == 0) c.shape = {c.shape[0], C, 1, side * side};
    if (g() % 8 == 0) c.shape = {c.shape[0], C, side * side, 1};
    c.plane_gap = 0;
    const std::string where = "seed " + std::to_string(seed) + " case " + std::to_string(i);
    if (!avg_case_matches(c, g, 1 + i % 3, where, runs)) break;
  }
  variant_test::print_runs("f32 global avg/sum of odd square planes", runs);
  variant_test::expect_each_ran(pool2d_kernels(), runs, 250,
                                variant_test::name_has("f32-globalpool-avg"));
}

// The public call on the race's shape and odd ones, at every ISA cap the host
// runs, with the reference forced, 1-3 threads, NCHW and NHWC, max and
// average (NHWC: f32_global_channels' 16-vector blocks (AVX-512: 256
// channels, AVX2: 128) and the 4-vector remainder).
TEST(F32GlobalMaxFast, PublicCallAtEveryIsaCapAndThreadCount) {
  Restore restore;
  const uint32_t seed = 20261128;
  std::mt19937 g(seed);
  const Shape shapes[] = {
      {1, 2048, 7, 7}, {2, 300, 17, 17}, {3, 5, 1, 1}, {1, 1000, 3, 30}, {2, 256, 1, 9}};
  int compared = 0;
  for (const Shape& s : shapes)
    for (Layout layout : {Layout::nchw, Layout::nhwc})
      for (Profile profile : {Profile::onnxruntime, Profile::pytorch, Profile::bm1684})
        for (int special : {0, 5})
          for (PoolMode mode : {PoolMode::max, PoolMode::avg}) {
            Tensor dense(DType::f32, s);
            float* d = dense.data<float>();
            for (int64_t i = 0; i < dense.numel(); ++i) d[i] = random_value(g, special, false);
            Tensor x(DType::f32, s, layout);
            copy(dense, x);
            Pool2dParams p = global_pool2d_params(s, mode);
            apply_global_profile(p, profile);
            const Shape ys = {s[0], s[1], 1, 1};
            Tensor want(DType::f32, ys, layout);
            set_impl(Impl::reference);
            pool2d(x, want, p);
            set_impl(Impl::fast);
            for (Isa cap : {Isa::portable, Isa::avx2, Isa::avx512}) {
              if (cap > host_isa()) continue;
              set_max_isa(cap);
              for (int threads = 1; threads <= 3; ++threads) {
                set_num_threads(threads);
                Tensor y(DType::f32, ys, layout);
                pool2d(x, y, p);
                const std::string where = "seed " + std::to_string(seed) + " cap " + isa_name(cap) +
                                          " threads " + std::to_string(threads) + " " +
                                          layout_name(layout) + " x" + shape_text(s) + " profile " +
                                          profile_name(profile) + " special " +
                                          std::to_string(special) + "% " + pool_mode_name(mode);
                // NaN payloads bit for bit: every order states x86's rule
                // (first NaN operand wins, quieted; fp32_semantics.hpp).
                ASSERT_EQ(first_difference(y.view(), want.view()), "") << where;
                ++compared;
              }
            }
          }
  EXPECT_GT(compared, 200);
}

}  // namespace
}  // namespace test_f32_global_pool
}  // namespace npukit
