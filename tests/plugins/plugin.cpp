// A library that logs, loaded and unloaded again by plugin_test: its call
// sites (format, file, argument types) live in its own memory.
#include <string>
#include <vector>

#include <terse/std/containers.hpp>
#include <terse/terse.hpp>

extern "C" void plugin_log(int round, int count) {
  std::string name = "plugin-" + std::to_string(round);
  for (int i = 0; i < count; ++i) {
    switch (i % 4) {
      case 0:
        TERSE_INFO("round {} record {} from {}", round, i, name);
        break;
      case 1:
        TERSE_WARN("{}: value {:x} ratio {:.3f}", "loaded", i * 7, i / 4.0);
        break;
      case 2:
        TERSE_ERROR("items {}", std::vector<int>{round, i, i * 2});
        break;
      default:
        TERSE_DEBUG("named {who} at {at}", fmt::arg("who", name), fmt::arg("at", i));
        break;
    }
  }
}

// A rate-limited site: what it suppressed after its last record is written
// when the library is unloaded.
extern "C" void plugin_log_limited(int count) {
  for (int i = 0; i < count; ++i) TERSE_LOG_FIRST_N(terse::Level::warn, 2, "limited {}", i);
}

// Contexts whose sites (one per value type) are the library's own.
extern "C" void plugin_log_in_context(int round) {
  terse::Context ids("plugin", std::vector<int>{round, round * 2});
  terse::Context number("round", round);
  TERSE_INFO("round {} in context", round);
}
