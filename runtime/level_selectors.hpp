// The level selectors' grammar: TERSE_LEVEL, Config::levels, the levels
// file and set_level() all say which levels apply where in these words.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <terse/result.hpp>
#include <terse/terse.hpp>

namespace terse::detail {

struct LevelRule {
  std::string path;        // a prefix, a file, or the file of a call site
  std::uint32_t line = 0;  // non-zero: that call site only
  Level level = Level::info;
};

// TERSE_LEVEL's syntax: items separated by ',' (or newlines), each a level
// (the default) or SELECTOR=LEVEL; '#' starts a comment to the end of the
// line; spaces around items are ignored.
struct LevelSpec {
  std::optional<Level> default_level;
  std::vector<LevelRule> rules;  // one per selector, the last given
};
// Fails saying which item is wrong and why when `text` does not parse.
Result<LevelSpec> parse_levels(std::string_view text);
// What terse::set_levels() and the environment's errors say is accepted.
extern const char* const kLevelsSyntax;

// Whether `rule` covers a site of `file` at `line`, and how well: 0 when it
// does not, more for a better match: a call site over its file, a file over
// a prefix, then the longer selector.
std::uint64_t rule_match(const LevelRule& rule, std::string_view file, std::uint32_t line) noexcept;

// A selector alone (a path prefix, a file, or FILE:LINE) as a rule's path
// and line; fails saying why when it is not one.
Result<LevelRule> parse_selector(std::string_view text);
// Adds `rule` to `rules`, in place of one with the same selector: the last
// given wins.
void keep_rule(std::vector<LevelRule>& rules, LevelRule rule);
// `text` without the blanks around it.
std::string_view trim(std::string_view text);
// The level's name as the selectors spell it ("info", "off").
const char* level_name(Level level);

}  // namespace terse::detail
