#include "cli_helpers.hpp"

namespace terse::test {

int run_writer(const std::vector<std::string>& args) {
  std::vector<std::string> argv{TERSE_LIVE_WRITER_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return exit_code(run_process(argv));
}

std::vector<std::string> cli(std::vector<std::string> args) {
  args.insert(args.begin(), TERSE_CLI_PATH);
  return args;
}

}  // namespace terse::test
