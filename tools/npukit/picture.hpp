// Pictures as model inputs: `npukit run MODEL --input x=photo.png` reads a PNG
// or JPEG (Debian's libpng and libjpeg), fits it to the input's declared
// height and width and turns it into the input tensor by a named rule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npukit/onnx/model.hpp"
#include "npukit/tensor.hpp"

namespace npukit::cli {

// Interleaved 8-bit pixels, `channels` 1 (gray) or 3 (RGB) per pixel.
struct Picture {
  int64_t height = 0, width = 0, channels = 0;
  std::vector<uint8_t> pixels;
};

// True for names ending in .png, .jpg or .jpeg (any case).
bool is_picture_file(const std::string& path);
// Reads a PNG or JPEG (recognized by its first bytes); at most 16384 pixels a side.
Picture read_picture(const std::string& path);

// How pixels become input values (docs/cli.md, "Pictures as inputs"):
//   raw       uint8 codes as they are (uint8 inputs)
//   unit      float pixel / 255 (float inputs; the default)
//   imagenet  float (pixel / 255 - mean) / std with ImageNet's mean and std per RGB channel
enum class Preprocess { raw, unit, imagenet };
Preprocess preprocess_from_name(const std::string& name);
const char* preprocess_names();

// A [1, C, H, W] tensor for `input`: C 1 (luma) or 3 (RGB) as the input
// declares, resized (bilinear, pixel centres aligned) to a fixed declared H
// and W, otherwise kept at the picture's size.
Tensor picture_tensor(const Picture& picture, const onnx::ValueInfo& input, Preprocess rule);

}  // namespace npukit::cli
