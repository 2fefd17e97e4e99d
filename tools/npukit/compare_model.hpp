// `npukit compare MODEL.onnx --input ... --profiles a,b,c`: run one model under
// several profiles and show, layer by layer, where their results part ways
// (a table on stdout, optionally an SVG heat map of layers x profiles).
#pragma once

#include <string>
#include <vector>

namespace npukit::cli {

struct ModelCompareOptions {
  std::string model;
  std::vector<std::string> inputs;  // NAME=FILE as for npukit run
  std::string preprocess;
  std::vector<std::string> profiles;  // empty: every profile; the first is the reference
  bool fallback = false;
  std::string svg;  // heat map file, "" for none
};

// 0 when at least two profiles ran, 1 otherwise.
int run_model_compare(const ModelCompareOptions& o);

}  // namespace npukit::cli
