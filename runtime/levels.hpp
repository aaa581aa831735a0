// Levels per module (terse::set_level with a selector, TERSE_LEVEL, the
// levels file): the table of selectors and the gate of every registered
// call site, which the table's changes rewrite.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

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
// False, with `error` saying which item is wrong and why, when it does not parse.
bool parse_levels(std::string_view text, LevelSpec& spec, std::string& error);
// What terse::set_levels() and the environment's errors say is accepted.
extern const char* const kLevelsSyntax;

// Whether `rule` covers a site of `file` at `line`, and how well: 0 when it
// does not, more for a better match: a call site over its file, a file over
// a prefix, then the longer selector.
std::uint64_t rule_match(const LevelRule& rule, std::string_view file, std::uint32_t line) noexcept;

// start() and stop(): the levels in force, and whether anything logs at all;
// records from flight_level up to below a site's level are recorded, not written.
void levels_start(Level default_level, const LevelSpec& spec, Level flight_level);
// Gates stay as they are after stop() where open_after_stop (Config::stderr_after_stop
// is not off), closed otherwise.
void levels_stop(bool open_after_stop);
// Replaces the selectors and (when given) the default; returns the new
// levels in TERSE_LEVEL's syntax. Does nothing when not running.
std::string levels_replace(const LevelSpec& spec);

// Writes, from the calling thread, how many calls each rate-limited site
// suppressed since its last record (FORMAT.md §7 kind 3): at stop(), as an
// unloading library does for its own sites.
void report_suppressed() noexcept;

// fork(): the table's lock is held across it. The child logs nothing
// until it starts, which start_on_first_call has its first call do: every
// site goes to settle_gate again.
void levels_before_fork() noexcept;
void levels_after_fork_in_parent() noexcept;
void levels_after_fork_in_child(bool start_on_first_call) noexcept;

// A record from terse itself (file "terse"), past every gate: what became
// of a levels file, for instance. Discarded when the logger is not running.
void log_notice(Level level, std::string_view text) noexcept;
// The site of those records (its arguments: one string), for a record the
// writer puts into a file itself; 0 when it cannot be registered.
std::uint32_t notice_site_id(Level level) noexcept;

// Reads Config::levels_file at start and, on a thread of its own, whenever
// its content changes.
class LevelsFileWatcher {
 public:
  LevelsFileWatcher(std::string path, std::function<void(const std::string&)> on_error);
  ~LevelsFileWatcher();
  LevelsFileWatcher(const LevelsFileWatcher&) = delete;
  LevelsFileWatcher& operator=(const LevelsFileWatcher&) = delete;

  // Reads the file now; at start this comes before the first call is logged.
  void check();
  void start();

 private:
  void run();

  std::string path_;
  std::function<void(const std::string&)> on_error_;
  std::optional<std::string> last_;  // the content last seen, absent while the file is
  std::string last_problem_;         // why it could not be read, last time
  bool first_check_ = true;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace terse::detail
