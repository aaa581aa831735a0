// Helpers for the CLI tests: the writer process, and the CLI's command line.
// A CLI running beside the test is a Process (tests/support/process.hpp)
// with its output on a pipe.
#pragma once

#include <string>
#include <vector>

#include "file_helpers.hpp"

namespace terse::test {

// Runs tests/cli/live_writer with `args` to completion; its exit code.
int run_writer(const std::vector<std::string>& args);

// `terse` (the one this build made) with `args`.
std::vector<std::string> cli(std::vector<std::string> args);

}  // namespace terse::test
