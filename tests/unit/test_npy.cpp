// .npy reading and writing against byte strings built from the NumPy format
// specification (magic, version, little-endian header length, dict header).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "npukit/npy.hpp"

namespace npukit {
namespace test_npy {
namespace {

std::string npy(int major, const std::string& dict, const std::string& data) {
  std::string h = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>((h.size() >> 8) & 0xff);
  if (major != 1) out += std::string(2, '\0');
  return out + h + data;
}

Tensor parse(const std::string& s) {
  return parse_npy(s.data(), s.size(), "test");
}

TEST(Npy, ReadsVersion1LittleEndianFloat) {
  float v[3] = {1.5f, -2.0f, 0.25f};
  const std::string s = npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                            std::string(reinterpret_cast<char*>(v), 12));
  Tensor t = parse(s);
  EXPECT_EQ(t.shape(), (Shape{3}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1.5f, -2.0f, 0.25f}));
}

TEST(Npy, ReadsVersion2BigEndianInt32) {
  const std::string data("\x00\x00\x01\x02\xff\xff\xff\xfe", 8);  // 258, -2 big-endian
  Tensor t = parse(npy(2, "{'descr': '>i4', 'fortran_order': False, 'shape': (1, 2), }", data));
  EXPECT_EQ(t.shape(), (Shape{1, 2}));
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{258, -2}));
}

TEST(Npy, Float64BecomesFloat32AndScalarsWork) {
  double d = 0.1;
  Tensor t = parse(npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                       std::string(reinterpret_cast<char*>(&d), 8)));
  EXPECT_EQ(t.dtype(), DType::f32);
  EXPECT_EQ(t.shape(), Shape{});
  EXPECT_EQ(t.to_vector<float>()[0], 0.1f);
}

TEST(Npy, RejectsFortranOrderTruncationAndUnknownTypes) {
  const std::string two(2, '\x01');
  EXPECT_THROW(parse(npy(1, "{'descr': '|u1', 'fortran_order': True, 'shape': (2,), }", two)),
               Error);
  EXPECT_THROW(parse(npy(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", two)),
               Error);
  EXPECT_THROW(parse(npy(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", two)),
               Error);
  EXPECT_THROW(parse("not an npy file"), Error);
  try {
    parse(npy(1, "{'descr': '|u1', 'fortran_order': True, 'shape': (2,), }", two));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fortran_order"), std::string::npos);
  }
}

TEST(Npy, WriteThenReadRoundTripsAndAligns) {
  Tensor t = Tensor::from<int8_t>({2, 2}, {-128, 0, 5, 127});
  const std::vector<char> bytes = format_npy(t);
  uint16_t hlen;
  std::memcpy(&hlen, bytes.data() + 8, 2);
  EXPECT_EQ((10 + hlen) % 64, 0);  // data starts 64-byte aligned
  EXPECT_EQ(bytes[6], 1);
  const std::string header(bytes.data() + 10, hlen);
  EXPECT_NE(header.find("'descr': '|i1'"), std::string::npos);
  EXPECT_NE(header.find("'shape': (2, 2)"), std::string::npos);
  Tensor back = parse_npy(bytes.data(), bytes.size());
  EXPECT_EQ(back.to_vector<int8_t>(), (std::vector<int8_t>{-128, 0, 5, 127}));
}

}  // namespace
}  // namespace test_npy
}  // namespace npukit
