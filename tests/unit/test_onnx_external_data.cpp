// ONNX external data through the C++ API: Model::load reads the tensor file
// next to the model; Model::from_bytes has no directory and refuses it with a
// message saying so. (tests/python/test_onnx_external_data.py covers the
// hostile entries.)
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "npukit/onnx/model.hpp"
#include "test_util.hpp"

namespace npukit::test {
namespace test_onnx_external_data {
namespace {

// onnx.save_model(y = x + c, x and c float [2], c = [1, 2]) with
// save_as_external_data=True, location="c.bin", size_threshold=0.
const unsigned char kModel[] = {
    8,   8,   58,  109, 10,  14, 10, 1,  120, 10,  1,   99,  18,  1,   121, 34,  3,   65,  100, 100,
    18,  1,   103, 42,  54,  8,  2,  16, 1,   66,  1,   99,  106, 17,  10,  8,   108, 111, 99,  97,
    116, 105, 111, 110, 18,  5,  99, 46, 98,  105, 110, 106, 11,  10,  6,   111, 102, 102, 115, 101,
    116, 18,  1,   48,  106, 11, 10, 6,  108, 101, 110, 103, 116, 104, 18,  1,   56,  112, 1,   90,
    15,  10,  1,   120, 18,  10, 10, 8,  8,   1,   18,  4,   10,  2,   8,   2,   98,  15,  10,  1,
    121, 18,  10,  10,  8,   8,  1,  18, 4,   10,  2,   8,   2,   66,  4,   10,  0,   16,  17};

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/npukit_ext_XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::remove((path + "/m.onnx").c_str());
    std::remove((path + "/c.bin").c_str());
    rmdir(path.c_str());
  }
};

void write(const std::string& path, const void* data, size_t size) {
  std::ofstream(path, std::ios::binary)
      .write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
}

TEST(OnnxExternalData, LoadReadsTheFileNextToTheModel) {
  TempDir d;
  write(d.path + "/m.onnx", kModel, sizeof(kModel));
  const float c[2] = {1.0f, 2.0f};
  write(d.path + "/c.bin", c, sizeof(c));
  onnx::Model m = onnx::Model::load(d.path + "/m.onnx");
  Tensor x = Tensor::from<float>({2}, {3.0f, 4.0f});
  const std::vector<Tensor> y = m.run({x.view()});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].to_vector<float>(), (std::vector<float>{4.0f, 6.0f}));
}

TEST(OnnxExternalData, MissingFileIsANamedError) {
  TempDir d;
  write(d.path + "/m.onnx", kModel, sizeof(kModel));
  EXPECT_TRUE(raises([&] { onnx::Model::load(d.path + "/m.onnx"); }, "npukit::onnx::Model::load",
                     "model", "m.onnx"));
  try {
    onnx::Model::load(d.path + "/m.onnx");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("initializer 'c': external data location 'c.bin'"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

TEST(OnnxExternalData, FromBytesRefusesExternalData) {
  try {
    onnx::Model::from_bytes(kModel, sizeof(kModel));
    FAIL() << "from_bytes accepted external data";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("initializer 'c'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a model given as bytes cannot reach"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace test_onnx_external_data
}  // namespace npukit::test
