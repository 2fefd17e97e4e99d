// The --threads option of the commands that compute: the same setting as
// NPUKIT_NUM_THREADS (which it overrides), applied as soon as it is parsed.
#include "commands.hpp"
#include "npukit/parallel.hpp"

namespace npukit::cli {

void add_threads_option(CLI::App* cmd) {
  cmd->add_option_function<int>(
         "--threads", [](int n) { npukit::set_num_threads(n); },
         "Worker threads, 0 to 1024 (0 = every CPU this process may use; default: "
         "NPUKIT_NUM_THREADS, else 0). Results do not depend on it")
      ->check(CLI::Range(0, 1024))
      ->trigger_on_parse();
}

}  // namespace npukit::cli
