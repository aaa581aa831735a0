// terse: reads .tlog files back as text or JSON lines, follows live ones,
// filters, merges by time, shows statistics, verifies files and ships them.
// Here only the top level: each command lives in its own file (commands.hpp).
#include <signal.h>
#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#endif

#include <cstdio>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"

namespace {

const char* const kMainFooter = R"(Examples:
  terse cat logs/                          every .tlog file of the directory, oldest first
  terse cat -f logs/ | grep --line-buffered ERROR
  terse cat -f logs/ other-logs/           several inputs: one stream in time order
  terse cat --level warn --since "1h ago" logs/
  terse cat --json logs/ | jq .message
  terse stats logs/
  terse verify logs/app-20261129-001.tlog
  terse ship --brokers k1:9092 --topic app-logs --cursor-file app.cursor logs/
  terse keygen logs-key                    a key pair for sealed logs; then cat --key logs-key

Run 'terse COMMAND --help' for a command's options; 'man terse' for more.)";

// A bare `--color` means always, as with ls and grep, also when an input
// follows it (`terse cat --color logs/`); `--color WHEN` and `--color=WHEN`
// work as before.
std::vector<char*> bare_color_as_always(int argc, char** argv) {
  static char always[] = "--color=always";
  std::vector<char*> args(argv, argv + argc);
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (std::string_view(args[i]) != "--color") continue;
    std::string_view next = i + 1 < args.size() ? args[i + 1] : "";
    if (next != "auto" && next != "always" && next != "never") args[i] = always;
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace terse::cli;
#ifdef _WIN32
  // Log files come in on stdin and text goes out as it is, with no CR-LF translation either
  // way; a reader that went away shows as a failed write, as below.
  _setmode(_fileno(stdin), _O_BINARY);
  _setmode(_fileno(stdout), _O_BINARY);
#else
  // A reader that went away shows as EPIPE where the output is written.
  ::signal(SIGPIPE, SIG_IGN);
#endif
  CLI::App app{"terse: read, follow, filter, check and summarise terse binary log files, and ship them to Kafka"};
  // Options are -x and --name on Windows too, as the manual says; CLI11 would take /x there,
  // and with it every absolute path that starts with a slash. Set before the subcommands,
  // which copy it.
  app.allow_windows_style_options(false);
  app.require_subcommand(1);
  app.footer(kMainFooter);
  app.set_version_flag("--version", "terse " TERSE_VERSION_STRING);
  CatOptions cat_options;
  VerifyOptions verify_options;
  StatsOptions stats_options;
  ShipOptions ship_options;
  KeygenOptions keygen_options;
  auto* cat = add_cat_command(app, cat_options);
  auto* verify = add_verify_command(app, verify_options);
  auto* stats = add_stats_command(app, stats_options);
  auto* ship = add_ship_command(app, ship_options);
  auto* keygen = add_keygen_command(app, keygen_options);
  if (argc < 2) {  // no command: what there is to do
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  }
  std::vector<char*> args = bare_color_as_always(argc, argv);
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (*cat) return run_cat(cat_options);
  if (*verify) return run_verify(verify_options);
  if (*stats) return run_stats(stats_options);
  if (*ship) return run_ship(ship_options);
  if (*keygen) return run_keygen(keygen_options);
  return kExitUsage;
}
