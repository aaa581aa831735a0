// TERSE_LEVEL, TERSE_CONSOLE and TERSE_DIR over the Config at start(); a bad
// value is an error that names the variable and what it accepts.
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <terse/terse.hpp>

#include "json_reader.hpp"
#include "sink_helpers.hpp"
#include "test_support.hpp"

using namespace terse;
using namespace terse::test;

namespace {

// Starts with TERSE_* unset but for what a test sets after.
struct CleanEnvironment {
  ScopedEnv level{"TERSE_LEVEL", std::nullopt};
  ScopedEnv console{"TERSE_CONSOLE", std::nullopt};
  ScopedEnv dir{"TERSE_DIR", std::nullopt};
  ScopedEnv levels_file{"TERSE_LEVELS_FILE", std::nullopt};
};

// test_config() with the environment read, as by default.
Config env_config(const std::string& directory) {
  Config config = test_config(directory);
  config.read_environment = true;
  return config;
}

}  // namespace

TEST_CASE("TERSE_LEVEL sets the level over the Config; set_level() still changes it") {
  CleanEnvironment clean;
  TempDir dir("env-level");
  ScopedEnv level("TERSE_LEVEL", std::string("WARN"));
  Config config = env_config(dir.path());
  config.level = Level::trace;
  start(config);
  CHECK(terse::level() == Level::warn);
  TERSE_INFO("not logged {}", 1);
  TERSE_WARN("logged {}", 2);
  set_level(Level::info);
  TERSE_INFO("logged {}", 3);
  stop();
  require_messages(decode_dir(dir.path()), {"logged 2", "logged 3"});
}

TEST_CASE("bad values are errors at start that name the variable and the values it takes") {
  CleanEnvironment clean;
  TempDir dir("env-bad");
  Config config = env_config(dir.path());
  {
    ScopedEnv level("TERSE_LEVEL", std::string("verbose"));
    std::string error = start_error(config);
    CHECK(error.find("TERSE_LEVEL='verbose'") != std::string::npos);
    CHECK(error.find("trace, debug, info, warn, error, critical or off") != std::string::npos);
  }
  {
    ScopedEnv level("TERSE_LEVEL", std::string("info,net/=verbose"));
    CHECK(start_error(config).find("TERSE_LEVEL='info,net/=verbose' is not valid: 'net/=verbose'") !=
          std::string::npos);
  }
  {
    ScopedEnv console("TERSE_CONSOLE", std::string("loud"));
    std::string error = start_error(config);
    CHECK(error.find("TERSE_CONSOLE='loud'") != std::string::npos);
    CHECK(error.find("off, text, color, json or auto") != std::string::npos);
  }
  {
    ScopedEnv no_files("TERSE_DIR", std::string());
    CHECK(start_error(config).find("records would go nowhere") != std::string::npos);
  }
  for (const char* fd : {"3x", "-1", "", "1000"}) {
    ScopedEnv console_fd("TERSE_CONSOLE_FD", std::string(fd));
    std::string error = start_error(config);
    CHECK(error.find("TERSE_CONSOLE_FD='" + std::string(fd) + "'") != std::string::npos);
    CHECK(error.find("stdout, stderr or an open descriptor's number") != std::string::npos);
  }
  {
    // read_environment = false: none of them is even looked at.
    ScopedEnv level("TERSE_LEVEL", std::string("verbose"));
    ScopedEnv console("TERSE_CONSOLE", std::string("loud"));
    Config own = config;
    own.read_environment = false;
    CHECK(start_error(own) == "started");
  }
}

TEST_CASE("TERSE_DIR moves the files; set but empty with TERSE_CONSOLE=json writes JSON lines and no file") {
  CleanEnvironment clean;
  TempDir dir("env-dir");
  std::string configured = dir / "configured";
  std::string moved = dir / "moved";
  {
    ScopedEnv to("TERSE_DIR", moved);
    start(env_config(configured));
    TERSE_INFO("where am I {}", 1);
    stop();
    CHECK_FALSE(std::filesystem::exists(configured));
    require_messages(decode_dir(moved), {"where am I 1"});
  }
  {
    // The container set-up: TERSE_DIR= TERSE_CONSOLE=json.
    ScopedEnv no_files("TERSE_DIR", std::string());
    ScopedEnv json("TERSE_CONSOLE", std::string("json"));
    ConsolePipe console;
    ScopedEnv console_fd("TERSE_CONSOLE_FD", std::to_string(console.write_fd()));
    Config config = env_config(configured);
    start(config);
    TERSE_INFO("to stdout {}", 2);
    TERSE_WARN("and {}", "more");
    stop();
    CHECK_FALSE(std::filesystem::exists(configured));
    std::vector<std::string> lines = split_lines(console.finish());
    REQUIRE(lines.size() == 2);
    auto first = parse_json(lines[0]);
    REQUIRE(first);
    CHECK(first->members["message"].text == "to stdout 2");
    auto second = parse_json(lines[1]);
    REQUIRE(second);
    CHECK(second->members["level"].text == "warn");
  }
}

TEST_CASE("TERSE_CONSOLE names each mode") {
  CleanEnvironment clean;
  ScopedEnv no_color("NO_COLOR", std::nullopt);
  ScopedEnv term("TERM", std::string("xterm"));
  for (const char* mode : {"off", "text", "color", "json", "auto"}) {
    INFO(mode);
    ScopedEnv console_mode("TERSE_CONSOLE", std::string(mode));
    TempDir dir("env-console");
    ConsolePipe console;
    Config config = env_config(dir.path());
    config.console = Console::off;
    config.console_fd = console.write_fd();
    start(config);
    TERSE_ERROR("shown {}", mode);
    stop();
    std::string shown = console.finish();
    std::string name = mode;
    CHECK(shown.empty() == (name == "off"));
    CHECK((shown.find("\x1b[31m") != std::string::npos) == (name == "color"));
    CHECK((shown.rfind("{\"time\":", 0) == 0) == (name == "json"));
  }
}
