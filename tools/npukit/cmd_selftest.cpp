#include <fmt/core.h>

#include <algorithm>
#include <exception>
#include <map>

#include "commands.hpp"
#include "selftest.hpp"

namespace npukit::cli {

namespace {

int run_selftest(bool verbose) {
  std::vector<SelftestCase> cases = fp32_selftest_cases();
  for (SelftestCase& c : quant_selftest_cases()) cases.push_back(std::move(c));
  struct Tally {
    int passed = 0, failed = 0;
  };
  std::map<std::pair<std::string, std::string>, Tally> table;
  int failed = 0;
  for (const SelftestCase& c : cases) {
    std::string problem;
    try {
      problem = c.run();
    } catch (const std::exception& e) {
      problem = std::string("threw: ") + e.what();
    }
    Tally& t = table[{c.op, c.profile}];
    if (problem.empty()) {
      ++t.passed;
      if (verbose) fmt::print("ok    {:<28} {:<12} {}\n", c.op, c.profile, c.what);
    } else {
      ++t.failed;
      ++failed;
      fmt::print("FAIL  {:<28} {:<12} {}: {}\n", c.op, c.profile, c.what, problem);
    }
  }
  fmt::print("\n{:<28} {:<12} {:>6} {:>6}  {}\n", "operator", "profile", "passed", "failed",
             "status");
  for (const auto& [key, t] : table)
    fmt::print("{:<28} {:<12} {:>6} {:>6}  {}\n", key.first, key.second, t.passed, t.failed,
               t.failed ? "FAIL" : "ok");
  fmt::print("\nselftest: {} passed, {} failed\n", static_cast<int>(cases.size()) - failed, failed);
  return failed ? 1 : 0;
}

}  // namespace

void add_selftest_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "selftest",
      "Check every operator under each of its profiles on built-in hand-computed cases; "
      "print a pass/fail table, exit 1 on any failure");
  static bool verbose = false;
  cmd->add_flag("-v,--verbose", verbose, "List every case, not only failures");
  add_threads_option(cmd);
  cmd->callback([] {
    const int rc = run_selftest(verbose);
    if (rc) throw CLI::RuntimeError(rc);
  });
}

}  // namespace npukit::cli
