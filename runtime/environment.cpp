#include "environment.hpp"

#include <cstdlib>
#include <string>

#include "levels.hpp"
#include "platform.hpp"

namespace terse::detail {
namespace {

bool same_text(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (x != b[i]) return false;
  }
  return true;
}

const char* variable(const char* name) { return std::getenv(name); }

[[noreturn]] void bad_value(const char* name, std::string_view value, const char* accepted) {
  throw Error(std::string("terse: ") + name + "='" + std::string(value) + "' is not valid; accepted: " + accepted);
}

}  // namespace

bool parse_level(std::string_view text, Level& level) {
  for (int value = 0; value <= static_cast<int>(Level::off); ++value) {
    if (same_text(text, level_name(static_cast<Level>(value)))) {
      level = static_cast<Level>(value);
      return true;
    }
  }
  return false;
}

Config apply_environment(Config config, LevelSpec& levels) {
  levels = LevelSpec{};
  if (!config.read_environment) return config;
  if (const char* text = variable("TERSE_LEVEL")) {
    Result<LevelSpec> parsed = parse_levels(text);
    if (!parsed)
      throw Error(std::string("terse: TERSE_LEVEL='") + text + "' is not valid: " + parsed.why() +
                  "; accepted: " + kLevelsSyntax);
    levels = std::move(*parsed);
    if (levels.default_level) config.level = *levels.default_level;
  }
  if (const char* text = variable("TERSE_LEVELS_FILE")) config.levels_file = text;
  if (const char* text = variable("TERSE_CONSOLE")) {
    std::string_view value = text;
    static constexpr std::pair<const char*, Console> kModes[] = {
        {"off", Console::off},
        {"text", Console::text},
        {"color", Console::color},
        {"colour", Console::color},
        {"json", Console::json},
        {"auto", Console::automatic},
        {"automatic", Console::automatic},
    };
    bool known = false;
    for (const auto& [name, mode] : kModes) {
      if (same_text(value, name)) {
        config.console = mode;
        known = true;
      }
    }
    if (!known) bad_value("TERSE_CONSOLE", value, "off, text, color, json or auto");
  }
  if (const char* text = variable("TERSE_CONSOLE_FD")) {
    std::string_view value = text;
    int fd = -1;
    if (same_text(value, "stdout")) {
      fd = 1;
    } else if (same_text(value, "stderr")) {
      fd = 2;
    } else if (!value.empty() && value.size() <= 6 && value.find_first_not_of("0123456789") == std::string_view::npos) {
      fd = std::stoi(std::string(value));
    }
    if (fd < 0) bad_value("TERSE_CONSOLE_FD", value, "stdout, stderr or an open descriptor's number");
    if (!descriptor_open(fd))
      bad_value("TERSE_CONSOLE_FD", value, "stdout, stderr or an open descriptor's number (this one is not open)");
    config.console_fd = fd;
  }
  // Set but empty means something: no files.
  if (const char* text = variable("TERSE_DIR")) config.directory = text;
  if (const char* text = variable("TERSE_ENCRYPT_TO")) config.encrypt_to = text;
  if (const char* text = variable("TERSE_SIGN_WITH")) config.sign_with = text;
  return config;
}

}  // namespace terse::detail
