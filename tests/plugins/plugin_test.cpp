// A library that logs and is then unloaded (dlclose) while its records still
// wait to be written: every record decodes, in the process's one file.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace terse::test;

namespace {

constexpr int kRounds = 3;
constexpr int kPerRound = 1000;

std::vector<std::string> expected_plugin_messages(int round) {
  std::string name = "plugin-" + std::to_string(round);
  std::vector<std::string> messages;
  for (int i = 0; i < kPerRound; ++i) {
    switch (i % 4) {
      case 0:
        messages.push_back(fmt::format("round {} record {} from {}", round, i, name));
        break;
      case 1:
        messages.push_back(fmt::format("{}: value {:x} ratio {:.3f}", "loaded", i * 7, i / 4.0));
        break;
      case 2:
        messages.push_back(fmt::format("items {}", std::vector<int>{round, i, i * 2}));
        break;
      default:
        messages.push_back(fmt::format("named {who} at {at}", fmt::arg("who", name), fmt::arg("at", i)));
        break;
    }
  }
  return messages;
}

// Exit codes of the child: what went wrong before the records were checked.
enum ChildFailure { kOpenFailed = 10, kSymbolMissing = 11, kCloseFailed = 12, kStillLoaded = 13 };

// Loads the plugin, logs through it and unloads it at once, before the IO
// thread has had a chance to write those records.
int run_round(int round) {
  void* plugin = ::dlopen(TERSE_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  if (plugin == nullptr) return kOpenFailed;
  auto plugin_log = reinterpret_cast<void (*)(int, int)>(::dlsym(plugin, "plugin_log"));
  if (plugin_log == nullptr) return kSymbolMissing;
  plugin_log(round, kPerRound);
  if (::dlclose(plugin) != 0) return kCloseFailed;
  // Really gone, its memory unmapped: not kept by RTLD_NODELETE or a unique symbol.
  if (::dlopen(TERSE_PLUGIN_PATH, RTLD_NOW | RTLD_NOLOAD) != nullptr) return kStillLoaded;
  return 0;
}

// Runs `body` in a child process, which has a logger of its own, and
// requires it to end normally.
template <typename Body>
void in_child(Body body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    body();
    std::_Exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  INFO("child exit code (128 + signal when killed; 10-13: see ChildFailure): " << exit_code(status));
  REQUIRE(exit_code(status) == 0);
}

}  // namespace

TEST_CASE("records of an unloaded library are written and decode") {
  TempDir dir;
  in_child([&] {
    terse::start(test_config(dir.path()));
    TERSE_INFO("main {}", "before");
    for (int round = 1; round <= kRounds; ++round) {
      if (int failure = run_round(round)) std::_Exit(failure);
    }
    TERSE_INFO("main {}", "after");
    terse::stop();
  });

  std::vector<std::string> expected{"main before"};
  for (int round = 1; round <= kRounds; ++round) {
    std::vector<std::string> messages = expected_plugin_messages(round);
    expected.insert(expected.end(), messages.begin(), messages.end());
  }
  expected.push_back("main after");

  require_messages(decode_dir(dir.path()), expected);
}

TEST_CASE("levels change after a library is unloaded: its sites' memory is left alone, and a new load follows them") {
  TempDir dir;
  in_child([&] {
    terse::Config config = test_config(dir.path());
    config.level = terse::Level::warn;
    terse::start(config);
    terse::set_level("tests/plugins/", terse::Level::debug);
    for (int round = 1; round <= kRounds; ++round) {
      if (int failure = run_round(round)) std::_Exit(failure);
      // Rewrites every known site's gate: an unloaded one would be a write
      // into unmapped memory.
      terse::set_levels(round % 2 == 1 ? "warn" : "warn,tests/plugins/=debug");
    }
    TERSE_WARN("main {}", "after");
    terse::stop();
  });

  std::vector<std::string> expected;
  for (int round = 1; round <= kRounds; ++round) {
    std::vector<std::string> messages = expected_plugin_messages(round);
    bool debug = round % 2 == 1;  // rounds 1 and 3 load under "tests/plugins/=debug"
    for (int i = 0; i < kPerRound; ++i) {
      if (debug || i % 4 == 1 || i % 4 == 2) expected.push_back(messages[static_cast<std::size_t>(i)]);
    }
  }
  expected.push_back("main after");
  require_messages(decode_dir(dir.path()), expected);
}

TEST_CASE("an unloaded library's rate-limited sites write what they suppressed before they go") {
  TempDir dir;
  in_child([&] {
    terse::start(test_config(dir.path()));
    void* plugin = ::dlopen(TERSE_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (plugin == nullptr) std::_Exit(kOpenFailed);
    auto log_limited = reinterpret_cast<void (*)(int)>(::dlsym(plugin, "plugin_log_limited"));
    if (log_limited == nullptr) std::_Exit(kSymbolMissing);
    log_limited(7);
    if (::dlclose(plugin) != 0) std::_Exit(kCloseFailed);
    TERSE_INFO("main {}", "after");
    terse::stop();
  });
  Decoded decoded = decode_dir(dir.path());
  require_messages(decoded,
                   {"limited 0", "limited 1", "5 calls suppressed after the site's last record", "main after"});
  CHECK(decoded.lines[2].suppressed_report);
  CHECK(decoded.lines[2].file == "tests/plugins/plugin.cpp");
}

TEST_CASE("a library's contexts unload with it, and its records decode with them") {
  TempDir dir;
  in_child([&] {
    terse::start(test_config(dir.path()));
    for (int round = 1; round <= 2; ++round) {
      void* plugin = ::dlopen(TERSE_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
      if (plugin == nullptr) std::_Exit(kOpenFailed);
      auto log_in_context = reinterpret_cast<void (*)(int)>(::dlsym(plugin, "plugin_log_in_context"));
      if (log_in_context == nullptr) std::_Exit(kSymbolMissing);
      log_in_context(round);
      if (::dlclose(plugin) != 0) std::_Exit(kCloseFailed);
      // The context sites are the library's, not unique symbols that would keep it loaded.
      if (::dlopen(TERSE_PLUGIN_PATH, RTLD_NOW | RTLD_NOLOAD) != nullptr) std::_Exit(kStillLoaded);
    }
    TERSE_INFO("main {}", "after");
    terse::stop();
  });
  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  std::vector<std::pair<std::string, std::string>> got;
  for (const Line& line : decoded.lines) got.emplace_back(line.message, line.context);
  CHECK(got == std::vector<std::pair<std::string, std::string>>{{"round 1 in context", "plugin=[1, 2] round=1"},
                                                                {"round 2 in context", "plugin=[2, 4] round=2"},
                                                                {"main after", ""}});
}
