// Each subcommand of the `npukit` program lives in its own file and adds
// itself to the application through one of these functions.
#pragma once

#include <CLI/CLI.hpp>

namespace npukit::cli {

void add_selftest_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_isa_command(CLI::App& app);
void add_npu_command(CLI::App& app);

// --threads N (npukit::set_num_threads) on a command.
void add_threads_option(CLI::App* cmd);

}  // namespace npukit::cli
