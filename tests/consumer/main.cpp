// Uses the installed npukit: 2x2 max pool of [[1,2],[3,4]] must be 4.
#include <npukit/npukit.hpp>

#include <cstdio>

int main() {
  npukit::Tensor x = npukit::Tensor::from<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  npukit::Pool2dParams p;
  p.mode = npukit::PoolMode::max;
  p.window.kernel_h = p.window.kernel_w = 2;
  npukit::Tensor y(npukit::DType::f32, npukit::pool2d_output_shape(x.shape(), p));
  npukit::pool2d(x, y, p);
  std::printf("npukit %s: max = %g\n", NPUKIT_VERSION_STRING, y.data<float>()[0]);
  return y.data<float>()[0] == 4.0f ? 0 : 1;
}
