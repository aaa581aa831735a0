#include "filters.hpp"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <optional>
#include <regex>

#include <CLI/CLI.hpp>

#include <terse/portable_libc.hpp>

namespace terse::cli {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

std::optional<std::uint8_t> parse_level(const std::string& text) {
  std::string name = lower(text);
  if (name == "warning") name = "warn";
  if (name == "err") name = "error";
  if (name == "crit" || name == "fatal") name = "critical";
  for (std::uint8_t level = 0; level < schema::kLevelCount; ++level)
    if (name == schema::level_name(level)) return level;
  return std::nullopt;
}

LevelRange parse_level_range(const std::string& text) {
  LevelRange range;
  auto one = [&](const std::string& name) {
    auto level = parse_level(name);
    if (!level)
      throw UsageError("unknown level '" + name + "' in --level '" + text +
                       "' (trace, debug, info, warn, error, critical; a range is LOW..HIGH)");
    return *level;
  };
  std::size_t dots = text.find("..");
  if (dots == std::string::npos) {
    range.low = one(text);
    return range;
  }
  std::string low = text.substr(0, dots), high = text.substr(dots + 2);
  if (!low.empty()) range.low = one(low);
  if (!high.empty()) range.high = one(high);
  if (range.low > range.high) throw UsageError("--level '" + text + "' is an empty range (LOW..HIGH, low first)");
  return range;
}

// ---- times ------------------------------------------------------------------

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

namespace {

// Seconds since the epoch of a civil time, read as UTC or as local time.
std::int64_t civil_to_seconds(int year, int month, int day, int hour, int minute, int second, bool utc) {
  tm t{};
  t.tm_year = year - 1900;
  t.tm_mon = month - 1;
  t.tm_mday = day;
  t.tm_hour = hour;
  t.tm_min = minute;
  t.tm_sec = second;
  t.tm_isdst = -1;
  return static_cast<std::int64_t>(utc ? utc_seconds(t) : mktime(&t));
}

// The calendar fields of a moment, in UTC or in local time.
tm civil_parts(std::int64_t seconds, bool utc) {
  time_t t = static_cast<time_t>(seconds);
  tm parts{};
  if (utc) {
    utc_calendar(t, parts);
  } else {
    local_calendar(t, parts);
  }
  return parts;
}

}  // namespace

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

double unit_seconds(const std::string& unit) {
  switch (unit[0]) {
    case 'u':
      return 1e-6;
    case 'm':
      return unit.rfind("ms", 0) == 0 ? 1e-3 : 60;
    case 'h':
      return 3600;
    case 'd':
      return 86400;
    case 'w':
      return 7 * 86400;
    default:
      return 1;
  }
}

// "-10m", "+5m", "1h ago", "30s" (ago unless '+').
std::optional<std::int64_t> parse_relative_time(const std::string& option, const std::string& input,
                                                const std::string& text, std::int64_t now) {
  static const std::regex relative(
      R"(([+-])?\s*(\d+(?:\.\d+)?)\s*(us|usec|ms|msec|s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hour|hours|d|day|days|w|week|weeks)(\s+ago)?)");
  std::smatch m;
  if (!std::regex_match(text, m, relative)) return std::nullopt;
  if (m[1] == "+" && m[4].matched) throw UsageError(option + " '" + input + "': '+' and 'ago' contradict");
  auto delta = static_cast<std::int64_t>(std::stod(m[2]) * unit_seconds(m[3]) * 1e9);
  return m[1] == "+" ? now + delta : now - delta;
}

// "2026-11-29 14:00:05.25", "14:00" (today), RFC 3339 with a zone.
std::optional<std::int64_t> parse_absolute_time(const std::string& option, const std::string& input,
                                                const std::string& text, bool utc, std::int64_t now) {
  static const std::regex absolute(
      R"((?:(\d{4})-(\d{2})-(\d{2}))?(?:(?:^|[t ])(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(z|utc|[+-]\d{2}:?\d{2})?)");
  std::smatch m;
  if (text.empty() || !std::regex_match(text, m, absolute) || !(m[1].matched || m[4].matched)) return std::nullopt;
  tm today = civil_parts(now / kSecond, utc);
  int year = m[1].matched ? std::stoi(m[1]) : today.tm_year + 1900;
  int month = m[1].matched ? std::stoi(m[2]) : today.tm_mon + 1;
  int day = m[1].matched ? std::stoi(m[3]) : today.tm_mday;
  int hour = m[4].matched ? std::stoi(m[4]) : 0;
  int minute = m[5].matched ? std::stoi(m[5]) : 0;
  int second = m[6].matched ? std::stoi(m[6]) : 0;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
    throw UsageError(option + " '" + input + "': no such date or time");
  std::int64_t fraction = 0;
  if (m[7].matched) {
    std::string digits = m[7];
    digits.resize(9, '0');
    fraction = std::stoll(digits);
  }
  bool zoned = m[8].matched;
  std::int64_t seconds = civil_to_seconds(year, month, day, hour, minute, second, utc || zoned);
  if (zoned && m[8] != "z" && m[8] != "utc") {
    std::string zone = m[8];
    zone.erase(std::remove(zone.begin(), zone.end(), ':'), zone.end());
    int offset = std::stoi(zone.substr(1, 2)) * 3600 + std::stoi(zone.substr(3, 2)) * 60;
    seconds -= zone[0] == '-' ? -offset : offset;
  }
  return seconds * kSecond + fraction;
}

}  // namespace

std::int64_t parse_time(const std::string& option, const std::string& input, bool utc, std::int64_t now) {
  std::string text = lower(input);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.erase(0, 1);
  auto midnight = [&](int days_from_today) {
    tm parts = civil_parts(now / kSecond, utc);
    return civil_to_seconds(parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday + days_from_today, 0, 0, 0, utc) *
           kSecond;
  };
  if (text == "now") return now;
  if (text == "today") return midnight(0);
  if (text == "yesterday") return midnight(-1);
  if (text == "tomorrow") return midnight(1);
  if (auto relative = parse_relative_time(option, input, text, now)) return *relative;
  if (auto absolute = parse_absolute_time(option, input, text, utc, now)) return *absolute;
  throw UsageError(option + " '" + input +
                   "' is not a time; try '2026-11-29 14:00', '2026-11-29T14:00:05Z', '-10m', '1h ago' or 'today'");
}

Filters make_filters(const FilterOptions& o, std::int64_t now) {
  Filters f;
  LevelRange levels;
  if (!o.level.empty()) levels = parse_level_range(o.level);
  if (!o.since.empty()) f.reader_filter.since_ns = parse_time("--since", o.since, o.utc, now);
  if (!o.until.empty()) f.reader_filter.until_ns = parse_time("--until", o.until, o.utc, now);
  if (f.reader_filter.since_ns > f.reader_filter.until_ns)
    throw UsageError("--since is later than --until: nothing can match");
  f.reader_filter.min_level = static_cast<reader::Level>(levels.low);
  f.reader_filter.max_level = static_cast<reader::Level>(levels.high);
  f.reader_filter.sites = o.sites;
  f.reader_filter.threads = o.threads;
  for (const std::string& item : o.contexts) {
    std::size_t equals = item.find('=');
    if (equals == std::string::npos || equals == 0)
      throw UsageError("bad --context '" + item + "': expected KEY=VALUE, e.g. --context request_id=42");
    f.reader_filter.context.emplace_back(item.substr(0, equals), item.substr(equals + 1));
  }
  if (!o.grep.empty()) {
    // As journalctl: a pattern without capitals ignores case.
    bool has_upper = std::any_of(o.grep.begin(), o.grep.end(), [](unsigned char c) { return std::isupper(c); });
    auto flags = std::regex::ECMAScript | std::regex::optimize;
    if (!has_upper) flags |= std::regex::icase;
    try {
      f.grep.emplace(o.grep, flags);
    } catch (const std::regex_error& e) {
      throw UsageError("bad --grep pattern '" + o.grep + "': " + e.what());
    }
  }
  return f;
}

void add_filter_options(CLI::App& command, FilterOptions& o, UntilOption until) {
  command.add_flag("--utc", o.utc, "Print (and read --since/--until) times in UTC instead of local time");
  command.add_option("--level", o.level, "Only this level and above (trace … critical), or a range LOW..HIGH");
  command.add_option("-S,--since", o.since, "Only records at or after this time");
  if (until == UntilOption::offered) command.add_option("-U,--until", o.until, "Only records at or before this time");
  command.add_option("--thread", o.threads, "Only this thread: OS thread id or name (repeatable)");
  command.add_option("--site", o.sites,
                     "Only call sites whose format string contains TEXT, or whose file or file:line is TEXT "
                     "(repeatable)");
  command.add_option("-g,--grep", o.grep,
                     "Only records whose message matches this regex (no capitals: case-insensitive)");
  command.add_option("--context", o.contexts,
                     "Only records logged within this terse::Context: KEY=VALUE, the value as `terse cat` prints it "
                     "(repeatable: all of them)");
  command.add_option("--mask", o.mask_path,
                     "Redact: a file of 'REGEX => REPLACEMENT' lines applied to messages and string arguments "
                     "(re-read when it changes while following)");
}

}  // namespace terse::cli
