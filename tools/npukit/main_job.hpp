// The main job: `npukit run` without a model evaluates the bundled
// Fashion-MNIST models (fp32 and int8) on the bundled images or on the full
// test set, under every profile the int8 model's operators support.
#pragma once

#include <string>

namespace npukit::cli {

struct MainJobOptions {
  std::string dataset;     // "" = the bundled 1,000 images; "fashion-mnist" = full test set
  std::string models_dir;  // "" = the bundled models
  int64_t batch = 100;
  bool json = false;
};

int run_main_job(const MainJobOptions& o);

}  // namespace npukit::cli
