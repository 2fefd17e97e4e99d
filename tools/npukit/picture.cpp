#include "picture.hpp"

#include <jpeglib.h>
#include <png.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <memory>

#include "npukit/error.hpp"

namespace npukit::cli {

namespace {

constexpr const char* kFn = "npukit run";
constexpr int64_t kMaxSide = 16384;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void check_size(const std::string& path, int64_t h, int64_t w) {
  check(h >= 1 && w >= 1 && h <= kMaxSide && w <= kMaxSide, kFn, "--input",
        "'" + path + "' of " + std::to_string(w) + "x" + std::to_string(h) + " pixels",
        "pictures of 1 to 16384 pixels a side");
}

Picture read_png(const std::string& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str()))
    throw Error(kFn, "--input", "'" + path + "'",
                std::string("a readable PNG file (libpng: ") + image.message + ")");
  // Frees libpng's state on every way out.
  std::unique_ptr<png_image, void (*)(png_image*)> guard(&image, png_image_free);
  Picture p;
  p.height = image.height;
  p.width = image.width;
  check_size(path, p.height, p.width);
  const bool gray = (image.format & PNG_FORMAT_FLAG_COLOR) == 0;
  image.format = gray ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;  // alpha composited on black
  p.channels = gray ? 1 : 3;
  p.pixels.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, p.pixels.data(), 0, nullptr))
    throw Error(kFn, "--input", "'" + path + "'",
                std::string("a readable PNG file (libpng: ") + image.message + ")");
  return p;
}

// libjpeg reports errors through a callback that must not return.
struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpeg_fail(j_common_ptr info) {
  auto* e = reinterpret_cast<JpegError*>(info->err);
  (*info->err->format_message)(info, e->message);
  std::longjmp(e->jump, 1);
}

// Plain C state only between setjmp and longjmp: nothing here has a destructor.
bool decode_jpeg(std::FILE* f, JpegError& err, uint8_t** out, int64_t* h, int64_t* w,
                 int64_t* channels) {
  jpeg_decompress_struct info;
  info.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_fail;
  err.mgr.output_message = [](j_common_ptr) {};  // warnings stay quiet
  *out = nullptr;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&info);
    std::free(*out);
    *out = nullptr;
    return false;
  }
  jpeg_create_decompress(&info);
  jpeg_stdio_src(&info, f);
  jpeg_read_header(&info, TRUE);
  info.out_color_space = info.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  if (info.image_width < 1 || info.image_height < 1 || info.image_width > kMaxSide ||
      info.image_height > kMaxSide) {
    std::snprintf(err.message, sizeof err.message, "%ux%u pixels (1 to 16384 a side)",
                  info.image_width, info.image_height);
    jpeg_destroy_decompress(&info);
    return false;
  }
  jpeg_start_decompress(&info);
  *h = info.output_height;
  *w = info.output_width;
  *channels = info.output_components;
  const size_t row = static_cast<size_t>(*w * *channels);
  *out = static_cast<uint8_t*>(std::malloc(row * static_cast<size_t>(*h)));
  if (!*out) {
    std::snprintf(err.message, sizeof err.message, "out of memory");
    jpeg_destroy_decompress(&info);
    return false;
  }
  while (info.output_scanline < info.output_height) {
    JSAMPROW r = *out + row * info.output_scanline;
    jpeg_read_scanlines(&info, &r, 1);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return true;
}

Picture read_jpeg(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  check(f != nullptr, kFn, "--input", "'" + path + "'", "a readable JPEG file");
  JpegError err{};
  uint8_t* data = nullptr;
  Picture p;
  if (!decode_jpeg(f.get(), err, &data, &p.height, &p.width, &p.channels))
    throw Error(kFn, "--input", "'" + path + "'",
                std::string("a readable JPEG file (libjpeg: ") + err.message + ")");
  std::unique_ptr<uint8_t, void (*)(void*)> owned(data, std::free);
  p.pixels.assign(data, data + p.height * p.width * p.channels);
  return p;
}

// Bilinear sample with pixel centres aligned (half-pixel mapping), edges clamped.
float sample(const Picture& p, int64_t c, double y, double x) {
  y = std::clamp(y, 0.0, static_cast<double>(p.height - 1));
  x = std::clamp(x, 0.0, static_cast<double>(p.width - 1));
  const auto y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x);
  const int64_t y1 = std::min(y0 + 1, p.height - 1), x1 = std::min(x0 + 1, p.width - 1);
  const double fy = y - static_cast<double>(y0), fx = x - static_cast<double>(x0);
  auto at = [&](int64_t yy, int64_t xx) {
    return static_cast<double>(p.pixels[static_cast<size_t>((yy * p.width + xx) * p.channels + c)]);
  };
  const double top = at(y0, x0) + (at(y0, x1) - at(y0, x0)) * fx;
  const double bottom = at(y1, x0) + (at(y1, x1) - at(y1, x0)) * fx;
  return static_cast<float>(top + (bottom - top) * fy);
}

Picture with_channels(const Picture& p, int64_t channels) {
  if (p.channels == channels) return p;
  Picture q{p.height, p.width, channels, {}};
  q.pixels.resize(static_cast<size_t>(p.height * p.width * channels));
  for (int64_t i = 0; i < p.height * p.width; ++i) {
    const uint8_t* s = &p.pixels[static_cast<size_t>(i * p.channels)];
    uint8_t* d = &q.pixels[static_cast<size_t>(i * channels)];
    if (channels == 1)  // ITU-R BT.601 luma
      d[0] = static_cast<uint8_t>(std::lround(0.299 * s[0] + 0.587 * s[1] + 0.114 * s[2]));
    else
      d[0] = d[1] = d[2] = s[0];
  }
  return q;
}

}  // namespace

bool is_picture_file(const std::string& path) {
  const std::string s = lower(path);
  auto ends = [&](const std::string& e) {
    return s.size() > e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
  };
  return ends(".png") || ends(".jpg") || ends(".jpeg");
}

Picture read_picture(const std::string& path) {
  unsigned char magic[8] = {};
  {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
    check(f != nullptr, kFn, "--input", "'" + path + "'", "a readable PNG or JPEG file");
    const size_t n = std::fread(magic, 1, sizeof magic, f.get());
    check(n >= 3, kFn, "--input", "'" + path + "'", "a PNG or JPEG file (it is too short)");
  }
  if (png_sig_cmp(magic, 0, 8) == 0) return read_png(path);
  if (magic[0] == 0xFF && magic[1] == 0xD8 && magic[2] == 0xFF) return read_jpeg(path);
  throw Error(kFn, "--input", "'" + path + "'", "a PNG or JPEG file (its first bytes are neither)");
}

Preprocess preprocess_from_name(const std::string& name) {
  if (name == "raw") return Preprocess::raw;
  if (name == "unit") return Preprocess::unit;
  if (name == "imagenet") return Preprocess::imagenet;
  throw Error(kFn, "--preprocess", "'" + name + "'", preprocess_names());
}

const char* preprocess_names() {
  return "raw, unit or imagenet";
}

Tensor picture_tensor(const Picture& picture, const onnx::ValueInfo& input, Preprocess rule) {
  const std::string param = "input " + input.name;
  check(input.shape.size() == 4, kFn, param.c_str(), "rank " + std::to_string(input.shape.size()),
        "a picture input of rank 4 ([N, C, H, W])");
  const int64_t c = input.shape[1];
  check(c == 1 || c == 3, kFn, param.c_str(), "C = " + std::to_string(c),
        "1 (gray) or 3 (RGB) channels for a picture");
  const bool is_u8 = input.dtype == DType::u8;
  check(is_u8 == (rule == Preprocess::raw) && (is_u8 || input.dtype == DType::f32), kFn,
        "--preprocess", rule == Preprocess::raw ? "raw" : "unit/imagenet",
        "raw for uint8 inputs, unit or imagenet for float inputs (the input is " +
            std::string(dtype_name(input.dtype)) + ")");
  const Picture p = with_channels(picture, c);
  const int64_t h = input.shape[2] > 0 ? input.shape[2] : p.height;
  const int64_t w = input.shape[3] > 0 ? input.shape[3] : p.width;
  Tensor t(input.dtype, {1, c, h, w});
  const double sy = static_cast<double>(p.height) / static_cast<double>(h);
  const double sx = static_cast<double>(p.width) / static_cast<double>(w);
  static constexpr double kMean[3] = {0.485, 0.456, 0.406}, kStd[3] = {0.229, 0.224, 0.225};
  for (int64_t k = 0; k < c; ++k)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        const float v = sample(p, k, (static_cast<double>(y) + 0.5) * sy - 0.5,
                               (static_cast<double>(x) + 0.5) * sx - 0.5);
        const size_t i = static_cast<size_t>((k * h + y) * w + x);
        if (rule == Preprocess::raw)
          t.data<uint8_t>()[i] = static_cast<uint8_t>(std::lround(v));
        else if (rule == Preprocess::unit)
          t.data<float>()[i] = v / 255.0f;
        else
          t.data<float>()[i] = static_cast<float>((v / 255.0 - kMean[k]) / kStd[k]);
      }
  return t;
}

}  // namespace npukit::cli
