// The console (Config::console): the same lines `terse cat` prints, rendered
// on terse's threads, in the file's order; JSON lines without files; a
// console nobody reads or that closed holds up neither the callers nor the
// file.
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <terse/terse.hpp>

#include "cli_helpers.hpp"
#include "json_reader.hpp"
#include "sink_helpers.hpp"
#include "test_support.hpp"

using namespace terse;
using namespace terse::test;

namespace {

// What `terse cat ARGS...` prints to stdout.
std::string cat_output(std::vector<std::string> args) {
  TempDir out("console-cat");
  std::string path = out / "stdout";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  args.insert(args.begin(), "cat");
  int status = run_process(cli(args), fd);
  ::close(fd);
  REQUIRE(exit_code(status) == 0);
  return read_file(path);
}

// A mix of levels, types and widths, from two threads.
void log_a_mix(int count) {
  auto body = [count](int worker) {
    for (int i = 0; i < count; ++i) {
      TERSE_DEBUG("debug {} of worker {}", i, worker);
      TERSE_INFO("request {} from {} took {:.3f} ms, {:>6}|{:<4}|", i, worker, i * 0.125, "right", 'c');
      if (i % 7 == 0) TERSE_WARN("queue depth {} over limit {:#x}", i * 3, 255);
      if (i % 50 == 0)
        TERSE_ERROR("error {} with text '{}' and {}", i, std::string(static_cast<std::size_t>(i % 13), 'x'),
                    i % 2 == 0);
      if (i % 200 == 0) TERSE_CRITICAL("critical {} {:e}", i, 31415.9265);
    }
  };
  std::thread other(body, 1);
  body(0);
  other.join();
}

std::size_t count_lines_with(const std::vector<std::string>& lines, const std::string& text) {
  std::size_t n = 0;
  for (const auto& line : lines) n += line.find(text) != std::string::npos;
  return n;
}

}  // namespace

TEST_CASE("the text console prints what terse cat prints of the same file, line by line") {
  TempDir dir("console-text");
  ConsolePipe console;
  Config config = test_config(dir.path());
  config.console = Console::text;
  config.console_level = Level::info;
  config.console_fd = console.write_fd();
  start(config);
  log_a_mix(500);
  stop();
  std::string shown = console.finish();
  std::string printed = cat_output({"--level", "info", "--color", "never", dir.path()});
  std::vector<std::string> shown_lines = split_lines(shown);
  std::vector<std::string> printed_lines = split_lines(printed);
  REQUIRE(printed_lines.size() > 1000);
  REQUIRE(shown_lines.size() == printed_lines.size());
  for (std::size_t i = 0; i < shown_lines.size(); ++i) {
    INFO("line " << i);
    REQUIRE(shown_lines[i] == printed_lines[i]);
  }
  CHECK(count_lines_with(shown_lines, "debug ") == 0);
}

TEST_CASE("colour: levels as terse cat --color always colours them; NO_COLOR and a pipe turn it off") {
  ScopedEnv term("TERM", std::string("xterm"));
  struct Case {
    Console mode;
    std::optional<std::string> no_color;
    bool coloured;
  };
  for (Case c : {Case{Console::color, std::nullopt, true}, Case{Console::color, std::string("1"), false},
                 Case{Console::automatic, std::nullopt, false}}) {
    ScopedEnv no_color("NO_COLOR", c.no_color);
    TempDir dir("console-color");
    ConsolePipe console;
    Config config = test_config(dir.path());
    config.console = c.mode;
    config.console_level = Level::trace;
    config.console_fd = console.write_fd();
    start(config);
    log_a_mix(50);
    stop();
    std::string shown = console.finish();
    std::string printed = cat_output({"--color", c.coloured ? "always" : "never", dir.path()});
    CHECK(shown == printed);
    CHECK((shown.find("\x1b[31m") != std::string::npos) == c.coloured);    // error: red
    CHECK((shown.find("\x1b[1;31m") != std::string::npos) == c.coloured);  // critical: bold red
    CHECK((shown.find("\x1b[33m") != std::string::npos) == c.coloured);    // warn: yellow
    CHECK((shown.find("\x1b[2m") != std::string::npos) == c.coloured);     // debug: dim
  }
}

TEST_CASE("automatic is colour on a terminal") {
  ScopedEnv term("TERM", std::string("xterm"));
  ScopedEnv no_color("NO_COLOR", std::nullopt);
  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  REQUIRE(master >= 0);
  REQUIRE(::grantpt(master) == 0);
  REQUIRE(::unlockpt(master) == 0);
  int terminal = ::open(::ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  REQUIRE(terminal >= 0);
  termios raw{};
  REQUIRE(::tcgetattr(terminal, &raw) == 0);
  ::cfmakeraw(&raw);  // the bytes as written: no \r added to each line
  REQUIRE(::tcsetattr(terminal, TCSANOW, &raw) == 0);
  std::mutex mutex;
  std::string shown;
  std::thread reader([&] {
    char chunk[4096];
    ssize_t n;
    while ((n = ::read(master, chunk, sizeof chunk)) > 0) {
      std::lock_guard lock(mutex);
      shown.append(chunk, static_cast<std::size_t>(n));
    }
  });
  TempDir dir("console-tty");
  Config config = test_config(dir.path());
  config.console = Console::automatic;
  config.console_fd = terminal;
  start(config);
  TERSE_ERROR("on a terminal {}", 1);
  stop();
  std::string expected = cat_output({"--color", "always", dir.path()});
  for (int waited_ms = 0; waited_ms < 5000; waited_ms += 10) {
    {
      std::lock_guard lock(mutex);
      if (shown.size() >= expected.size()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::close(terminal);  // the reader sees the end (EIO) once the terminal is gone
  reader.join();
  ::close(master);
  CHECK(shown == expected);
  CHECK(shown.find("\x1b[31merror\x1b[0m") != std::string::npos);
}

TEST_CASE("the JSON console prints the objects terse cat -o json prints") {
  TempDir dir("console-json");
  ConsolePipe console;
  Config config = test_config(dir.path());
  config.console = Console::json;
  config.console_level = Level::warn;
  config.console_fd = console.write_fd();
  start(config);
  log_a_mix(300);
  stop();
  std::string shown = console.finish();
  CHECK(shown == cat_output({"-o", "json", "--level", "warn", dir.path()}));
  std::vector<std::string> lines = split_lines(shown);
  REQUIRE(lines.size() > 100);
  for (const auto& line : lines) {
    auto object = parse_json(line);
    REQUIRE(object);
    for (const char* key : {"time", "level", "thread", "file", "line", "message", "args"})
      REQUIRE(object->members.count(key) == 1);
    CHECK(object->members["level"].text != "info");
  }
}

TEST_CASE("without a directory no file is written: JSON lines are all there is") {
  ConsolePipe console;
  Config config;
  config.read_environment = false;
  config.directory = "";
  config.console = Console::json;
  config.console_fd = console.write_fd();
  start(config);
  const int count = 2000;
  for (int i = 0; i < count; ++i) TERSE_INFO("item {} of {}: {}", i, count, std::string("name-") + std::to_string(i));
  flush();
  Stats stats = terse::stats();
  stop();
  CHECK(stats.files_opened == 0);
  CHECK(stats.bytes_out == 0);
  CHECK(stats.console_records == count);
  CHECK(stats.console_not_shown == 0);
  std::vector<std::string> lines = split_lines(console.finish());
  REQUIRE(lines.size() == count);
  for (int i = 0; i < count; ++i) {
    auto object = parse_json(lines[static_cast<std::size_t>(i)]);
    REQUIRE(object);
    REQUIRE(object->members["message"].text == fmt::format("item {} of {}: {}", i, count, "name-" + std::to_string(i)));
    REQUIRE(object->members["level"].text == "info");
    REQUIRE(object->members["args"].items.size() == 3);
  }
}

TEST_CASE("a console nobody reads holds up neither the callers nor the file, and says what it skipped") {
  TempDir dir("console-stalled");
  ConsolePipe console(false);  // nobody reads: the pipe fills after 64 KiB
  Config config = test_config(dir.path());
  config.console = Console::text;
  config.console_fd = console.write_fd();
  start(config);
  const auto per_thread = static_cast<int>(scaled(100'000, 5000));
  auto body = [per_thread](int worker) {
    for (int i = 0; i < per_thread; ++i) TERSE_INFO("worker {} record {} with some text to fill the pipe", worker, i);
  };
  std::thread other(body, 1);
  body(0);
  other.join();
  flush();  // returns although the console is stalled
  Stats stats = terse::stats();
  auto total = static_cast<std::uint64_t>(2 * per_thread);
  CHECK(stats.records_written == total);
  CHECK(stats.console_not_shown > 0);
  CHECK(stats.console_records + stats.console_not_shown == total);

  // Once somebody reads, the console says how many it skipped.
  console.start_reading();
  stop();
  std::vector<std::string> lines = split_lines(console.finish());
  std::uint64_t said_not_shown = 0;
  std::uint64_t shown = 0;
  std::regex notice(R"(warn \[\d+\] terse:0 (\d+) records not shown on the console: it could not keep up$)");
  for (const auto& line : lines) {
    std::smatch m;
    if (std::regex_search(line, m, notice)) {
      said_not_shown += std::stoull(m[1]);
    } else {
      ++shown;
    }
  }
  CHECK(shown == stats.console_records);
  CHECK(said_not_shown == stats.console_not_shown);
  Decoded decoded = decode_dir(dir.path());
  CHECK(decoded.intact());
  CHECK(decoded.lines.size() == total);
}

TEST_CASE("a console whose reader left ends quietly; the process and the file go on") {
  TempDir dir("console-closed");
  ConsolePipe console(false);
  console.close_read_end();  // `app 2>&1 | head`, after head exited
  std::vector<std::string> errors;
  Config config = test_config(dir.path());
  config.console = Console::text;
  config.console_fd = console.write_fd();
  config.on_error = [&errors](const std::string& e) { errors.push_back(e); };
  start(config);
  std::vector<std::string> expected;
  for (int i = 0; i < 3000; ++i) {
    TERSE_INFO("record {}", i);
    expected.push_back(fmt::format("record {}", i));
    if (i % 1000 == 0) flush();
  }
  stop();  // the process was not killed by SIGPIPE to get here
  require_messages(decode_dir(dir.path()), expected);
  CHECK(errors.empty());  // EPIPE is said nowhere
}

TEST_CASE("console lines go out in one write per batch, not one per record") {
  TempDir dir("console-writes");
  ConsolePipe console;
  Config config = test_config(dir.path());
  config.console = Console::text;
  config.console_fd = console.write_fd();
  start(config);
  const int count = 20'000;
  for (int i = 0; i < count; ++i) TERSE_INFO("burst record {}", i);
  flush();
  Stats stats = terse::stats();
  stop();
  CHECK(stats.console_records == count);
  CHECK(stats.console_writes > 0);
  CHECK(stats.console_writes <= 20);
  CHECK(split_lines(console.finish()).size() == count);
}

TEST_CASE("bad console settings are errors at start") {
  TempDir dir("console-bad");
  Config config = test_config(dir.path());
  config.console = Console::text;
  config.console_format = "{time} {nonsense}";
  REQUIRE_THROWS_WITH(start(config), Catch::Contains("console_format"));
  config.console_format.clear();
  config.console_fd = 1000;
  REQUIRE_THROWS_WITH(start(config), Catch::Contains("console_fd 1000"));
  config.console_fd = 2;
  config.directory.clear();
  config.console = Console::off;
  REQUIRE_THROWS_WITH(start(config), Catch::Contains("records would go nowhere"));
}
