// Matrix multiplication: the 2-D seed form with bias and result_add, and the
// numpy broadcasting form for ranks 1 to 4.
#include "unit/test_util.hpp"

namespace npukit {
namespace test_matmul {
namespace {

using test::iota4;
using test::raises;
using test::same_bits;

// a = [[1,2,3],[4,5,6]], b = [[7,8],[9,10],[11,12]]:
// a*b = [[1*7+2*9+3*11, 1*8+2*10+3*12], [4*7+5*9+6*11, 4*8+5*10+6*12]] = [[58,64],[139,154]].
const Tensor kA = Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6});
const Tensor kB = Tensor::from<float>({3, 2}, {7, 8, 9, 10, 11, 12});

TEST(Matmul, Plain) {
  Tensor y(DType::f32, {2, 2});
  matmul(kA, kB, Tensor(), y);
  EXPECT_TRUE(same_bits(y, {58, 64, 139, 154}));
}

TEST(Matmul, BiasAndResultAdd) {
  // + bias [1, 2] -> [[59, 66], [140, 156]]; then result_add onto y = 1000 -> 1059 ...
  Tensor y(DType::f32, {2, 2});
  const Tensor bias = Tensor::from<float>({2}, {1, 2});
  matmul(kA, kB, bias, y, {true, false});
  EXPECT_TRUE(same_bits(y, {59, 66, 140, 156}));
  y = Tensor::from<float>({2, 2}, {1000, 1000, 1000, 1000});
  matmul(kA, kB, bias, y, {true, true});
  EXPECT_TRUE(same_bits(y, {1059, 1066, 1140, 1156}));
  // result_add without bias, bias of shape (1, N).
  y = Tensor::from<float>({2, 2}, {1, 1, 1, 1});
  matmul(kA, kB, Tensor(), y, {false, true});
  EXPECT_TRUE(same_bits(y, {59, 65, 140, 155}));
  matmul(kA, kB, Tensor::from<float>({1, 2}, {-58, -64}), y, {true, false});
  EXPECT_TRUE(same_bits(y, {0, 0, 81, 90}));
}

TEST(Matmul, OneByOneAndStridedOperands) {
  Tensor y(DType::f32, {1, 1});
  matmul(Tensor::from<float>({1, 1}, {3}), Tensor::from<float>({1, 1}, {-2}), Tensor(), y);
  EXPECT_TRUE(same_bits(y, {-6}));
  // b given as a transposed view of [[7,9,11],[8,10,12]] equals kB.
  const Tensor bt = Tensor::from<float>({2, 3}, {7, 9, 11, 8, 10, 12});
  const TensorView bv(bt.view().raw(), DType::f32, {3, 2}, {1, 3});
  Tensor y2(DType::f32, {2, 2});
  matmul(kA, bv, Tensor(), y2);
  EXPECT_TRUE(same_bits(y2, {58, 64, 139, 154}));
}

TEST(MatmulBroadcast, Shapes) {
  EXPECT_EQ(matmul_broadcast_shape({3}, {3}), Shape{});
  EXPECT_EQ(matmul_broadcast_shape({2, 3}, {3}), (Shape{2}));
  EXPECT_EQ(matmul_broadcast_shape({3}, {3, 4}), (Shape{4}));
  EXPECT_EQ(matmul_broadcast_shape({2, 3}, {3, 4}), (Shape{2, 4}));
  EXPECT_EQ(matmul_broadcast_shape({5, 2, 3}, {3, 4}), (Shape{5, 2, 4}));
  EXPECT_EQ(matmul_broadcast_shape({2, 3}, {5, 3, 4}), (Shape{5, 2, 4}));
  EXPECT_EQ(matmul_broadcast_shape({2, 1, 3, 4}, {5, 4, 2}), (Shape{2, 5, 3, 2}));
  EXPECT_EQ(matmul_broadcast_shape({5, 1, 2, 3}, {1, 4, 3, 6}), (Shape{5, 4, 2, 6}));
  EXPECT_EQ(matmul_broadcast_shape({1, 2, 3, 4}, {4}), (Shape{1, 2, 3}));
  EXPECT_EQ(matmul_broadcast_shape({4}, {2, 3, 4, 5}), (Shape{2, 3, 5}));
}

TEST(MatmulBroadcast, ShapeErrors) {
  const char* fn = "npukit::matmul_broadcast";
  EXPECT_TRUE(raises([] { matmul_broadcast_shape({2, 3}, {4, 2}); }, fn, "b", "[4, 2]"));
  EXPECT_TRUE(raises([] { matmul_broadcast_shape({2, 2, 3}, {3, 3, 4}); }, fn, "b", "[3, 3, 4]"));
  EXPECT_TRUE(raises([] { matmul_broadcast_shape({}, {3}); }, fn, "a", "[]"));
  EXPECT_TRUE(raises([] { matmul_broadcast_shape({1, 1, 1, 1, 3}, {3}); }, fn, "a"));
  EXPECT_TRUE(raises([] { matmul_broadcast_shape({3}, {1, 1, 1, 1, 3}); }, fn, "b"));
  EXPECT_TRUE(raises([] { matmul_broadcast_shape({0, 3}, {3, 2}); }, fn, "a", "[0, 3]"));
  EXPECT_TRUE(raises([] { matmul_broadcast_shape({2, 0}, {0, 2}); }, fn, "a", "[2, 0]"));
  EXPECT_TRUE(raises([] { matmul_broadcast_shape({2, 3}, {3, 0}); }, fn, "b", "[3, 0]"));
}

Tensor run_bcast(const Tensor& a, const Tensor& b) {
  Tensor y(DType::f32, matmul_broadcast_shape(a.shape(), b.shape()));
  matmul_broadcast(a, b, y);
  return y;
}

TEST(MatmulBroadcast, VectorTimesVector) {
  // [1,2,3] . [4,5,6] = 4 + 10 + 18 = 32, a 0-D result.
  const Tensor y =
      run_bcast(Tensor::from<float>({3}, {1, 2, 3}), Tensor::from<float>({3}, {4, 5, 6}));
  EXPECT_EQ(y.shape(), Shape{});
  EXPECT_TRUE(same_bits(y, {32}));
}

TEST(MatmulBroadcast, MatrixAndVector) {
  // kA (2x3) @ [1, 0, -1] = [1-3, 4-6] = [-2, -2]; [1, 1] @ kA = [5, 7, 9].
  EXPECT_TRUE(same_bits(run_bcast(kA, Tensor::from<float>({3}, {1, 0, -1})), {-2, -2}));
  EXPECT_TRUE(same_bits(run_bcast(Tensor::from<float>({2}, {1, 1}), kA), {5, 7, 9}));
}

TEST(MatmulBroadcast, BatchedTimesMatrix) {
  // a (2,2,2) = [[[1,2],[3,4]], [[5,6],[7,8]]], b = [[1,0],[0,2]] scales column 2 by 2:
  // [[[1,4],[3,8]], [[5,12],[7,16]]].
  const Tensor a = iota4({2, 2, 2});
  const Tensor b = Tensor::from<float>({2, 2}, {1, 0, 0, 2});
  EXPECT_TRUE(same_bits(run_bcast(a, b), {1, 4, 3, 8, 5, 12, 7, 16}));
  // The same b on the left: b @ a[i] doubles row 2: [[1,2],[6,8]], [[5,6],[14,16]].
  EXPECT_TRUE(same_bits(run_bcast(b, a), {1, 2, 6, 8, 5, 6, 14, 16}));
}

TEST(MatmulBroadcast, VectorWithBatches) {
  // [1, 2] @ b (2,2,3), b[0] = [[1,2,3],[4,5,6]], b[1] = [[0,1,0],[1,0,1]]:
  //   [1+8, 2+10, 3+12] = [9, 12, 15];  [0+2, 1+0, 0+2] = [2, 1, 2].
  const Tensor b = Tensor::from<float>({2, 2, 3}, {1, 2, 3, 4, 5, 6, 0, 1, 0, 1, 0, 1});
  const Tensor y = run_bcast(Tensor::from<float>({2}, {1, 2}), b);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_TRUE(same_bits(y, {9, 12, 15, 2, 1, 2}));
  // a (2,2,2) of 1..8 @ [1, 1]: row sums [[3, 7], [11, 15]].
  const Tensor y2 = run_bcast(iota4({2, 2, 2}), Tensor::from<float>({2}, {1, 1}));
  EXPECT_EQ(y2.shape(), (Shape{2, 2}));
  EXPECT_TRUE(same_bits(y2, {3, 7, 11, 15}));
}

TEST(MatmulBroadcast, FourDimensionalBroadcast) {
  // a (2,1,1,2): a[0] = [[1,2]], a[1] = [[3,4]]; b (1,3,2,1): b[0][j] = column (j+1, 1).
  // y (2,3,1,1) = a_i . b_j: a0: 1*1+2 = 3, 1*2+2 = 4, 1*3+2 = 5; a1: 3+4 = 7, 6+4 = 10, 9+4 = 13.
  const Tensor a = iota4({2, 1, 1, 2});
  const Tensor b = Tensor::from<float>({1, 3, 2, 1}, {1, 1, 2, 1, 3, 1});
  const Tensor y = run_bcast(a, b);
  EXPECT_EQ(y.shape(), (Shape{2, 3, 1, 1}));
  EXPECT_TRUE(same_bits(y, {3, 4, 5, 7, 10, 13}));
}

TEST(MatmulBroadcast, ThreeDimensionalAgainstFourDimensional) {
  // a (2,1,2) = [[[1,1]], [[1,-1]]] against b (3,1,2,1) with b[k] = column (k, 1):
  // batch axes (1, 2) and (3, 1) broadcast to (3, 2); y[k][i] = a_i . (k, 1):
  //   k 0: [1, -1]; k 1: [2, 0]; k 2: [3, 1].
  const Tensor a = Tensor::from<float>({2, 1, 2}, {1, 1, 1, -1});
  const Tensor b = Tensor::from<float>({3, 1, 2, 1}, {0, 1, 1, 1, 2, 1});
  const Tensor y = run_bcast(a, b);
  EXPECT_EQ(y.shape(), (Shape{3, 2, 1, 1}));
  EXPECT_TRUE(same_bits(y, {1, -1, 2, 0, 3, 1}));
}

TEST(MatmulBroadcast, WrongOutputIsAnError) {
  const char* fn = "npukit::matmul_broadcast";
  Tensor y(DType::f32, {2, 3});
  EXPECT_TRUE(raises([&] { matmul_broadcast(kA, kB, y); }, fn, "y", "[2, 3]"));
  Tensor big(DType::f32, {2, 4});
  const TensorView strided(big.view().raw(), DType::f32, {2, 2}, {4, 1});
  EXPECT_TRUE(raises([&] { matmul_broadcast(kA, kB, strided); }, fn, "y"));
  const Tensor ai(DType::s32, {2, 3});
  Tensor y2(DType::f32, {2, 2});
  EXPECT_TRUE(raises([&] { matmul_broadcast(ai, kB, y2); }, fn, "a.dtype", "s32"));
}

}  // namespace
}  // namespace test_matmul
}  // namespace npukit
