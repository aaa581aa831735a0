// What an operator sets without a rebuild: TERSE_LEVEL, TERSE_LEVELS_FILE,
// TERSE_CONSOLE, TERSE_CONSOLE_FD and TERSE_DIR over the application's
// Config (see terse::start).
#pragma once

#include <terse/terse.hpp>

namespace terse::detail {

struct LevelSpec;

// The config with the environment applied, and TERSE_LEVEL's selectors;
// throws Error naming the variable and the values it accepts when one is
// set to something else.
Config apply_environment(Config config, LevelSpec& levels);

// "warn" -> Level::warn, case-insensitive; false for anything else.
bool parse_level(std::string_view text, Level& level);

}  // namespace terse::detail
