// The .npy format: magic "\x93NUMPY", major and minor version bytes, a
// little-endian header length (2 bytes in 1.0, 4 bytes in 2.0 and 3.0), then
// a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}
// padded with spaces and a newline so the data starts 64-byte aligned.
#include "npukit/npy.hpp"
#include "npukit/read_file.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>

#include "npukit/error.hpp"

namespace npukit {

namespace {

constexpr const char* kRead = "npukit::read_npy";

[[noreturn]] void bad(const std::string& source, const std::string& what,
                      const std::string& allowed) {
  fail(kRead, "file", "'" + source + "' (" + what + ")", allowed);
}

// The value text after `'key':` in the header dict.
std::string dict_value(const std::string& header, const std::string& key, const std::string& src) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) k = header.find("\"" + key + "\"");
  if (k == std::string::npos) bad(src, "header has no '" + key + "'", "a valid .npy header");
  size_t p = header.find(':', k);
  if (p == std::string::npos) bad(src, "malformed header", "a valid .npy header");
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  if (p >= header.size()) bad(src, "malformed header", "a valid .npy header");
  const char open = header[p];
  size_t end;
  if (open == '\'' || open == '"') {
    end = header.find(open, p + 1);
    if (end == std::string::npos) bad(src, "malformed header", "a valid .npy header");
    return header.substr(p + 1, end - p - 1);
  }
  if (open == '(') {
    end = header.find(')', p);
    if (end == std::string::npos) bad(src, "malformed header", "a valid .npy header");
    return header.substr(p, end - p + 1);
  }
  end = header.find_first_of(",}", p);
  if (end == std::string::npos) bad(src, "malformed header", "a valid .npy header");
  std::string v = header.substr(p, end - p);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

Shape parse_shape(const std::string& text, const std::string& src) {
  Shape s;
  size_t i = 1;  // after '('
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size() || text[i] == ')') break;
    if (text[i] < '0' || text[i] > '9') bad(src, "shape " + text, "non-negative integer sizes");
    int64_t v = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      v = v * 10 + (text[i] - '0');
      if (v > (int64_t{1} << 40)) bad(src, "shape " + text, "sizes below 2^40");
      ++i;
    }
    s.push_back(v);
  }
  return s;
}

struct Descr {
  DType dtype;
  size_t size;  // bytes per element in the file
  bool swap;    // big-endian data
  bool is_f64;  // converted to f32
};

Descr parse_descr(const std::string& d, const std::string& src) {
  const std::string allowed =
      "'<f4', '<f8', '|u1', '|i1', '<i2', '<i4', '<i8', '|b1' (or their big-endian '>' forms)";
  if (d.size() < 3) bad(src, "dtype '" + d + "'", allowed);
  const char order = d[0];
  const std::string code = d.substr(1);
  const bool swap = order == '>';
  if (order != '<' && order != '>' && order != '|' && order != '=')
    bad(src, "dtype '" + d + "'", allowed);
  if (code == "f4") return {DType::f32, 4, swap, false};
  if (code == "f8") return {DType::f32, 8, swap, true};
  if (code == "u1") return {DType::u8, 1, false, false};
  if (code == "i1") return {DType::s8, 1, false, false};
  if (code == "i2") return {DType::s16, 2, swap, false};
  if (code == "i4") return {DType::s32, 4, swap, false};
  if (code == "i8") return {DType::s64, 8, swap, false};
  if (code == "b1") return {DType::b8, 1, false, false};
  bad(src, "dtype '" + d + "'", allowed);
}

}  // namespace

Tensor parse_npy(const void* data, size_t size, const std::string& src) {
  const auto* b = static_cast<const unsigned char*>(data);
  if (size < 10 || std::memcmp(b, "\x93NUMPY", 6) != 0)
    bad(src, "no .npy magic", "a NumPy .npy file");
  const int major = b[6];
  size_t header_len, start;
  if (major == 1) {
    header_len = b[8] | (size_t{b[9]} << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) bad(src, "truncated header", "a complete .npy file");
    header_len = b[8] | (size_t{b[9]} << 8) | (size_t{b[10]} << 16) | (size_t{b[11]} << 24);
    start = 12;
  } else {
    bad(src, "format version " + std::to_string(major) + "." + std::to_string(b[7]),
        "versions 1.0, 2.0 and 3.0");
  }
  if (start + header_len > size) bad(src, "truncated header", "a complete .npy file");
  const std::string header(reinterpret_cast<const char*>(b + start), header_len);
  const Descr d = parse_descr(dict_value(header, "descr", src), src);
  const std::string fortran = dict_value(header, "fortran_order", src);
  if (fortran != "False")
    bad(src, "fortran_order " + fortran,
        "C order (fortran_order False; save with np.ascontiguousarray)");
  const Shape shape = parse_shape(dict_value(header, "shape", src), src);
  if (shape.size() > static_cast<size_t>(kMaxRank))
    bad(src, "shape " + shape_text(shape), "rank 0 to 8");
  int64_t numel = 1;
  for (int64_t s : shape) {
    // Checked: a header may claim any sizes (found by the npy fuzzer).
    if (s < 0 || __builtin_mul_overflow(numel, s, &numel) || numel > (int64_t{1} << 40))
      bad(src, "shape " + shape_text(shape), "fewer than 2^40 elements");
  }
  const size_t bytes = static_cast<size_t>(numel) * d.size;
  const size_t offset = start + header_len;
  if (size - offset < bytes)
    bad(src,
        "data truncated: " + std::to_string(size - offset) + " bytes for shape " +
            shape_text(shape) + " of " + std::to_string(bytes),
        "a complete .npy file");
  Tensor t(d.dtype, shape);
  const unsigned char* p = b + offset;
  auto* out = static_cast<unsigned char*>(t.view().raw());
  for (int64_t i = 0; i < numel; ++i) {
    unsigned char e[8];
    std::memcpy(e, p + static_cast<size_t>(i) * d.size, d.size);
    if (d.swap) std::reverse(e, e + d.size);
    if (d.is_f64) {
      double v;
      std::memcpy(&v, e, 8);
      const auto f = static_cast<float>(v);
      std::memcpy(out + 4 * i, &f, 4);
    } else {
      std::memcpy(out + static_cast<size_t>(i) * d.size, e, d.size);
    }
  }
  return t;
}

Tensor read_npy(const std::string& path) {
  const std::vector<char> bytes =
      read_file_bounded(kRead, "path", path, UINT64_MAX, "a readable .npy file");
  return parse_npy(bytes.data(), bytes.size(), path);
}

std::vector<char> format_npy(const TensorView& t) {
  const char* descr = "";
  switch (t.dtype()) {
    case DType::f32:
      descr = "<f4";
      break;
    case DType::u8:
      descr = "|u1";
      break;
    case DType::s8:
      descr = "|i1";
      break;
    case DType::s16:
      descr = "<i2";
      break;
    case DType::s32:
      descr = "<i4";
      break;
    case DType::s64:
      descr = "<i8";
      break;
    case DType::b8:
      descr = "|b1";
      break;
  }
  std::string shape = "(";
  for (int i = 0; i < t.rank(); ++i)
    shape += std::to_string(t.dim(i)) + (t.rank() == 1 ? ",)" : i + 1 < t.rank() ? ", " : ")");
  if (t.rank() == 0) shape += ")";
  std::string header =
      std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that magic + version + length + header ends on a 64-byte boundary, with '\n' last.
  const bool v2 = header.size() + 1 + 10 > 65535;
  const size_t prefix = v2 ? 12 : 10;
  header.append(63 - (prefix + header.size()) % 64, ' ');
  header.push_back('\n');
  std::vector<char> out = {'\x93', 'N', 'U', 'M', 'P', 'Y', static_cast<char>(v2 ? 2 : 1), 0};
  const size_t n = header.size();
  out.push_back(static_cast<char>(n & 0xff));
  out.push_back(static_cast<char>((n >> 8) & 0xff));
  if (v2) {
    out.push_back(static_cast<char>((n >> 16) & 0xff));
    out.push_back(static_cast<char>((n >> 24) & 0xff));
  }
  out.insert(out.end(), header.begin(), header.end());
  Tensor dense(t.dtype(), t.shape());
  copy(t, dense.view());
  const auto* p = static_cast<const char*>(dense.view().raw());
  out.insert(out.end(), p, p + dense.numel() * static_cast<int64_t>(dtype_size(t.dtype())));
  return out;
}

void write_npy(const std::string& path, const TensorView& t) {
  const std::vector<char> bytes = format_npy(t);
  std::ofstream f(path, std::ios::binary);
  check(f.good(), "npukit::write_npy", "path", "'" + path + "'", "a writable file");
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  check(f.good(), "npukit::write_npy", "path", "'" + path + "'", "a writable file (write failed)");
}

}  // namespace npukit
