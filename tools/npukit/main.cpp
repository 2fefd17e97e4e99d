// The `npukit` command-line program.
#include <cstdio>
#include <exception>

#include "commands.hpp"
#include "npukit/error.hpp"
#include "npukit/version.hpp"

namespace {

int run(int argc, char** argv) {
  CLI::App app{
      "npukit: neural-network operators with the exact semantics of NPUs and runtimes.\n"
      "Run `npukit <command> --help` for the options of a command.",
      "npukit"};
  app.set_version_flag("--version", std::string("npukit ") + NPUKIT_VERSION_STRING);
  app.require_subcommand(1);
  npukit::cli::add_selftest_command(app);
  npukit::cli::add_run_command(app);
  npukit::cli::add_info_command(app);
  npukit::cli::add_compare_command(app);
  npukit::cli::add_isa_command(app);
  npukit::cli::add_npu_command(app);
  if (argc == 1) {  // no command: show what there is, and fail like any usage error
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const npukit::Error& e) {
    std::fprintf(stderr, "npukit: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npukit: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

// Nothing escapes main: setting up the commands can throw too (allocation).
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npukit: error: %s\n", e.what());
  } catch (...) {
    std::fputs("npukit: error: an unknown exception\n", stderr);
  }
  return 1;
}
