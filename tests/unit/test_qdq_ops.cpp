// The integer operators ONNX Runtime's QDQ fusion creates: QLinearMul (MLAS's
// x86 arithmetic) and the lookup-table operators (QLinearConcat,
// QLinearLeakyRelu, QLinearSigmoid). Hand-computed cases, the edges of ORT's
// conversions, broadcasting against a naive loop on seeded random shapes, and
// every bad-input error. (Bit-exactness with ORT itself: tests/python/test_qdq_*.py.)
#include <random>

#include "test_util.hpp"

namespace npukit {
namespace test_qdq_ops {
namespace {

using test::raises;

Tensor codes_u8(const Shape& s, std::vector<uint8_t> v) {
  return Tensor::from<uint8_t>(s, v);
}

QLinearMulParams ort_mul(float as, int32_t az, float bs, int32_t bz, float cs, int32_t cz) {
  QLinearMulParams p{as, bs, cs, az, bz, cz};
  apply_profile(p, Profile::onnxruntime);
  return p;
}

TEST(QLinearMul, HandComputedU8) {
  // ratio = 0.5 * 0.25 / 0.125 = 1: c = (a - 10)(b - 20) + 100, saturated.
  const auto p = ort_mul(0.5f, 10, 0.25f, 20, 0.125f, 100);
  Tensor a = codes_u8({4}, {10, 12, 15, 0});
  Tensor b = codes_u8({4}, {77, 23, 60, 30});
  Tensor c(DType::u8, {4});
  qlinear_mul(a, b, c, p);
  // 0 + 100; 2*3 + 100; 5*40 + 100 = 300 -> 255; -10*10 + 100 = 0.
  EXPECT_EQ(c.to_vector<uint8_t>(), (std::vector<uint8_t>{100, 106, 255, 0}));
}

TEST(QLinearMul, TiesRoundToEvenAfterAddingTheZeroPoint) {
  // ratio 0.5: products 1, 3, 5 give 0.5, 1.5, 2.5 (+ zp 0) -> 0, 2, 2; with zp 1 -> 2, 2, 4.
  for (int32_t zp : {0, 1}) {
    const auto p = ort_mul(1.0f, 0, 0.5f, 0, 1.0f, zp);
    Tensor a = codes_u8({3}, {1, 3, 5});
    Tensor b = codes_u8({1}, {1});
    Tensor c(DType::u8, {3});
    qlinear_mul(a, b, c, p);
    const std::vector<uint8_t> want =
        zp == 0 ? std::vector<uint8_t>{0, 2, 2} : std::vector<uint8_t>{2, 2, 4};
    EXPECT_EQ(c.to_vector<uint8_t>(), want) << "zp " << zp;
  }
}

TEST(QLinearMul, OutOfInt32GivesTheIndefiniteInteger) {
  // ratio overflows to +inf: x86 cvtps2dq returns INT32_MIN, which saturates to
  // the lowest code even for a positive product (and 0 * inf = NaN does the same).
  const auto p = ort_mul(1e20f, 0, 1e20f, 0, 1e-20f, 0);
  Tensor a = codes_u8({2}, {1, 0});
  Tensor b = codes_u8({2}, {1, 1});
  Tensor c(DType::u8, {2});
  qlinear_mul(a, b, c, p);
  EXPECT_EQ(c.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0}));
  QLinearMulParams onnx_def = p;
  onnx_def.arith = QMulArith::dequant_mul_quant;  // ONNX: +inf saturates to the top
  qlinear_mul(a, b, c, onnx_def);
  EXPECT_EQ(c.to_vector<uint8_t>()[0], 255);
}

TEST(QLinearMul, SignedCodes) {
  const auto p = ort_mul(1.0f, -3, 1.0f, 2, 2.0f, -1);
  Tensor a = Tensor::from<int8_t>({3}, {-128, 5, 127});
  Tensor b = Tensor::from<int8_t>({3}, {2, -10, 127});
  Tensor c(DType::s8, {3});
  qlinear_mul(a, b, c, p);
  // (-125)(0)/2 - 1 = -1; 8*(-12)/2 - 1 = -49; 130*125/2 - 1 -> 127.
  EXPECT_EQ(c.to_vector<int8_t>(), (std::vector<int8_t>{-1, -49, 127}));
}

TEST(QLinearMul, BroadcastMatchesANaiveLoop) {
  const uint32_t seed = 4242;
  std::mt19937 gen(seed);
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3, 4, 5}, {3, 1, 5}}, {{1, 4, 1, 3}, {2, 1, 5, 1}}, {{7}, {}}, {{3, 1}, {1, 6}}};
  for (const auto& [sa, sb] : shapes) {
    const Shape sc = broadcast_shape(sa, sb);
    Tensor a(DType::u8, sa), b(DType::u8, sb), c(DType::u8, sc);
    for (int64_t i = 0; i < a.numel(); ++i) a.data<uint8_t>()[i] = static_cast<uint8_t>(gen());
    for (int64_t i = 0; i < b.numel(); ++i) b.data<uint8_t>()[i] = static_cast<uint8_t>(gen());
    const auto p = ort_mul(0.02f, 128, 0.03f, 100, 0.05f, 120);
    qlinear_mul(a, b, c, p);
    // Naive: index each output back into a and b (right-aligned axes).
    const float ratio = p.a_scale * p.b_scale / p.c_scale;
    const auto idx = [](const Shape& s, const Shape& out, int64_t flat) {
      std::vector<int64_t> coord(out.size());
      for (size_t d = out.size(); d-- > 0;) {
        coord[d] = flat % out[d];
        flat /= out[d];
      }
      int64_t off = 0;
      for (size_t d = 0; d < s.size(); ++d) {
        const size_t od = out.size() - s.size() + d;
        off = off * s[d] + (s[d] == 1 ? 0 : coord[od]);
      }
      return off;
    };
    for (int64_t i = 0; i < c.numel(); ++i) {
      const int32_t da = a.data<uint8_t>()[idx(sa, sc, i)] - 128;
      const int32_t db = b.data<uint8_t>()[idx(sb, sc, i)] - 100;
      const float v = static_cast<float>(da * db) * ratio + 120.0f;
      const int32_t want = std::clamp(static_cast<int32_t>(std::nearbyint(v)), 0, 255);
      ASSERT_EQ(c.data<uint8_t>()[i], want)
          << "seed " << seed << " a " << shape_text(sa) << " b " << shape_text(sb) << " at " << i;
    }
  }
}

TEST(QLinearMul, BadInput) {
  auto p = ort_mul(1.0f, 0, 1.0f, 0, 1.0f, 0);
  Tensor a(DType::u8, {2, 3}), b(DType::u8, {4}), c(DType::u8, {2, 3});
  EXPECT_TRUE(raises([&] { qlinear_mul(a, b, c, p); }, "npukit::qlinear_mul", "b"));
  Tensor b8(DType::s8, {3});
  EXPECT_TRUE(raises([&] { qlinear_mul(a, b8, c, p); }, "npukit::qlinear_mul", "b.dtype"));
  Tensor b3(DType::u8, {3});
  p.c_zero_point = 256;
  EXPECT_TRUE(raises([&] { qlinear_mul(a, b3, c, p); }, "npukit::qlinear_mul", "c_zero_point"));
  p.c_zero_point = 0;
  p.b_scale = 0.0f;
  EXPECT_TRUE(raises([&] { qlinear_mul(a, b3, c, p); }, "npukit::qlinear_mul", "b_scale"));
  QLinearMulParams q;
  EXPECT_TRUE(raises([&] { apply_profile(q, Profile::tflite); }, "npukit::qlinear_mul", "profile"));
}

QLookupParams lookup(DType t, float xs, int32_t xz, float ys, int32_t yz, QLookupFunction f) {
  QLookupParams p;
  p.dtype = t;
  p.x_scale = xs;
  p.x_zero_point = xz;
  p.y_scale = ys;
  p.y_zero_point = yz;
  p.function = f;
  apply_profile(p, Profile::onnxruntime);
  return p;
}

TEST(QLookup, IdentityRequantization) {
  // Same quantization: the identity. Twice the scale, zp 0: 2b saturated.
  auto same = qlinear_lookup_table(lookup(DType::u8, 0.1f, 7, 0.1f, 7, QLookupFunction::identity));
  auto twice = qlinear_lookup_table(lookup(DType::u8, 0.2f, 0, 0.1f, 0, QLookupFunction::identity));
  for (int v = 0; v < 256; ++v) {
    EXPECT_EQ(same[static_cast<size_t>(v)], v);
    EXPECT_EQ(twice[static_cast<size_t>(v)], std::min(2 * v, 255));
  }
}

TEST(QLookup, SignedTablesAreIndexedByTheByte) {
  // s8: byte 0x80 is code -128, byte 0x7f is 127; halving the scale halves the code
  // (ties to even: -127/2 = -63.5 -> -64).
  auto t = qlinear_lookup_table(lookup(DType::s8, 0.5f, 0, 1.0f, 0, QLookupFunction::identity));
  EXPECT_EQ(static_cast<int8_t>(t[0x80]), -64);
  EXPECT_EQ(static_cast<int8_t>(t[0x81]), -64);  // -127 * 0.5 = -63.5 -> -64
  EXPECT_EQ(static_cast<int8_t>(t[0x7f]), 64);   // 63.5 -> 64
  EXPECT_EQ(static_cast<int8_t>(t[0x05]), 2);    // 2.5 -> 2
}

TEST(QLookup, LeakyReluAndSigmoidHandCases) {
  auto p = lookup(DType::u8, 1.0f, 128, 1.0f, 128, QLookupFunction::leaky_relu);
  p.alpha = 0.5f;
  auto lr = qlinear_lookup_table(p);
  EXPECT_EQ(lr[100], 114);  // -28 * 0.5 = -14
  EXPECT_EQ(lr[200], 200);
  EXPECT_EQ(lr[0], 64);  // -128 * 0.5
  auto sg =
      qlinear_lookup_table(lookup(DType::u8, 0.1f, 128, 1.0f / 256, 0, QLookupFunction::sigmoid));
  EXPECT_EQ(sg[128], 128);  // sigmoid(0) = 0.5 exactly
  EXPECT_EQ(sg[255], 255);  // sigmoid(12.7) * 256 saturates
  EXPECT_EQ(sg[0], 0);      // sigmoid(-12.8) * 256 = 0.0007
  EXPECT_EQ(ref::mlas_logistic(0.0f, QLogistic::mlas_fma3), 0.5f);
  EXPECT_EQ(ref::mlas_logistic(100.0f, QLogistic::mlas_fma3), 1.0f);
  EXPECT_EQ(ref::mlas_logistic(-100.0f, QLogistic::mlas_portable),
            ref::mlas_logistic(-18.0f, QLogistic::mlas_portable));
  EXPECT_TRUE(std::isnan(ref::mlas_logistic(test::kNaN, QLogistic::mlas_fma3)));
}

TEST(QLookup, ConcatCopiesOrMaps) {
  Tensor a = codes_u8({2, 1, 2}, {1, 2, 3, 4});
  Tensor b = codes_u8({2, 2, 2}, {10, 20, 30, 40, 50, 60, 70, 80});
  QLookupTable half =
      qlinear_lookup_table(lookup(DType::u8, 0.5f, 0, 1.0f, 0, QLookupFunction::identity));
  Tensor y(DType::u8, {2, 3, 2});
  qlinear_concat({a.view(), b.view()}, {std::nullopt, half}, y.view(), 1);
  EXPECT_EQ(y.to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 2, 5, 10, 15, 20, 3, 4, 25, 30, 35, 40}));
  Tensor z(DType::u8, {2, 1, 6});
  qlinear_concat({a.view(), a.view(), a.view()}, {half, std::nullopt, half}, z.view(), -1);
  EXPECT_EQ(z.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 1, 2, 0, 1, 2, 2, 3, 4, 2, 2}));
}

TEST(QLookup, BadInput) {
  auto p = lookup(DType::u8, 1.0f, 0, 1.0f, 0, QLookupFunction::identity);
  p.y_zero_point = -1;
  EXPECT_TRUE(
      raises([&] { qlinear_lookup_table(p); }, "npukit::qlinear_lookup_table", "y_zero_point"));
  p.y_zero_point = 0;
  p.x_scale = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(raises([&] { qlinear_lookup_table(p); }, "npukit::qlinear_lookup_table", "x_scale"));
  p.x_scale = 1.0f;
  p.dtype = DType::f32;
  EXPECT_TRUE(raises([&] { qlinear_lookup_table(p); }, "npukit::qlinear_lookup_table", "dtype"));
  QLookupParams q;
  EXPECT_TRUE(raises([&] { apply_profile(q, Profile::pytorch); }, "npukit::qlinear_lookup_table",
                     "profile"));
  Tensor a(DType::u8, {2, 3}), y(DType::u8, {2, 3}), s(DType::s8, {2, 3});
  const QLookupTable t{};
  EXPECT_TRUE(raises([&] { qlinear_lookup(a, s, t); }, "npukit::qlinear_lookup", "y.dtype"));
  EXPECT_TRUE(raises([&] { qlinear_concat({a.view()}, {}, y.view(), 0); }, "npukit::qlinear_concat",
                     "tables"));
  Tensor y2(DType::u8, {2, 4});
  EXPECT_TRUE(raises([&] { qlinear_concat({a.view()}, {std::nullopt}, y2.view(), 0); },
                     "npukit::qlinear_concat", "y"));
}

}  // namespace
}  // namespace test_qdq_ops
}  // namespace npukit
