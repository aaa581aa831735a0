// The level selectors' grammar (Config::levels, TERSE_LEVELS, the levels
// file, set_level): pure functions over text.
#include "level_selectors.hpp"

#include <algorithm>
#include <utility>

#include "environment.hpp"

namespace terse::detail {
namespace {

constexpr std::string_view kBlanks = " \t\r";

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

}  // namespace

void keep_rule(std::vector<LevelRule>& rules, LevelRule rule) {
  for (LevelRule& kept : rules) {
    if (kept.path == rule.path && kept.line == rule.line) {
      kept.level = rule.level;
      return;
    }
  }
  rules.push_back(std::move(rule));
}

std::string_view trim(std::string_view text) {
  std::size_t first = text.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kBlanks) - first + 1);
}

Result<LevelRule> parse_selector(std::string_view text) {
  if (text.empty()) return Failure{"a selector is empty"};
  LevelRule rule;
  rule.path.assign(text);
  std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return rule;
  std::string_view digits = text.substr(colon + 1);
  if (digits.empty()) return Failure{quoted(text) + " has no line number after ':'"};
  if (digits.find_first_not_of("0123456789") != std::string_view::npos) return rule;  // a ':' that is part of the path
  std::string_view file = text.substr(0, colon);
  std::uint64_t line = 0;
  for (char c : digits) {
    line = line * 10 + static_cast<std::uint64_t>(c - '0');
    if (line > UINT32_MAX) break;
  }
  if (line == 0 || line > UINT32_MAX) return Failure{quoted(text) + ": " + quoted(digits) + " is not a line number"};
  if (file.empty() || file.back() == '/') return Failure{quoted(text) + ": a call site is a file and a line"};
  rule.path.assign(file);
  rule.line = static_cast<std::uint32_t>(line);
  return rule;
}

const char* level_name(Level level) {
  return level == Level::off ? "off" : schema::level_name(static_cast<std::uint8_t>(level));
}

const char* const kLevelsSyntax =
    "a default level (trace, debug, info, warn, error, critical or off) and SELECTOR=LEVEL items, comma-separated, "
    "where SELECTOR is a path prefix (net/), a file (db/query.cpp) or a call site (db/query.cpp:120)";

Result<LevelSpec> parse_levels(std::string_view text) {
  LevelSpec parsed;
  std::size_t line_start = 0;
  while (line_start <= text.size()) {
    std::size_t line_end = std::min(text.find('\n', line_start), text.size());
    std::string_view line = text.substr(line_start, line_end - line_start);
    line = line.substr(0, std::min(line.find('#'), line.size()));
    std::size_t item_start = 0;
    while (item_start <= line.size()) {
      std::size_t item_end = std::min(line.find(',', item_start), line.size());
      std::string_view item = trim(line.substr(item_start, item_end - item_start));
      item_start = item_end + 1;
      if (item.empty()) continue;
      std::size_t equals = item.find('=');
      Level level{};
      if (equals == std::string_view::npos) {
        if (!parse_level(item, level)) return Failure{quoted(item) + " is not a level"};
        if (parsed.default_level)
          return Failure{"two default levels, " + quoted(level_name(*parsed.default_level)) + " and " + quoted(item)};
        parsed.default_level = level;
        continue;
      }
      std::string_view level_text = trim(item.substr(equals + 1));
      if (!parse_level(level_text, level)) return Failure{quoted(item) + ": " + quoted(level_text) + " is not a level"};
      std::string_view selector = trim(item.substr(0, equals));
      if (selector.empty()) return Failure{quoted(item) + " has no selector before '='"};
      Result<LevelRule> rule = parse_selector(selector);
      if (!rule) return Failure{rule.why()};
      rule->level = level;
      keep_rule(parsed.rules, std::move(*rule));
    }
    line_start = line_end + 1;
  }
  return parsed;
}

std::uint64_t rule_match(const LevelRule& rule, std::string_view file, std::uint32_t line) noexcept {
  if (rule.line != 0 && rule.line != line) return 0;
  std::string_view selector = rule.path;
  bool directory = selector.back() == '/';
  // At the start of the path or just after any '/', on whole components.
  for (std::size_t at = 0; at < file.size();) {
    std::string_view rest = file.substr(at);
    if (rest.starts_with(selector)) {
      bool whole = rest.size() == selector.size();
      bool covers = rule.line != 0 ? whole : directory || whole || rest[selector.size()] == '/';
      if (covers) {
        std::uint64_t kind = rule.line != 0 ? 3 : whole ? 2 : 1;
        return kind << 32 | selector.size();
      }
    }
    std::size_t slash = file.find('/', at);
    if (slash == std::string_view::npos) break;
    at = slash + 1;
  }
  return 0;
}

}  // namespace terse::detail
