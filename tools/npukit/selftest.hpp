// `npukit selftest`: every operator under every profile on built-in cases
// whose answers are known by construction (hand-computed), printed as a table.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace npukit::cli {

struct SelftestCase {
  std::string op;       // operator name, e.g. "pool2d"
  std::string profile;  // semantics profile, or "-" for profile-free operators
  std::string what;     // one line: what the case checks
  // Returns an empty string on success, else what differed.
  std::function<std::string()> run;
};

// Case lists, one per operator family (each in its own file).
std::vector<SelftestCase> fp32_selftest_cases();
std::vector<SelftestCase> quant_selftest_cases();

}  // namespace npukit::cli
