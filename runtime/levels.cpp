#include "levels.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "buffers.hpp"
#include "environment.hpp"
#include "lifecycle.hpp"
#include "placement.hpp"
#include "signals.hpp"

namespace terse::detail {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kBlanks = " \t\r";
constexpr std::size_t kMostFileBytes = 64 * 1024;
constexpr auto kFilePollInterval = 250ms;
// `echo ... > file` truncates before it writes: a change is applied once two
// reads this far apart agree, so a half-written file is never applied.
constexpr auto kFileSettleTime = 20ms;

std::string_view trim(std::string_view text) {
  std::size_t first = text.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kBlanks) - first + 1);
}

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

bool parse_selector(std::string_view text, LevelRule& rule, std::string& error) {
  rule.path.assign(text);
  rule.line = 0;
  if (text.empty()) {
    error = "a selector is empty";
    return false;
  }
  std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return true;
  std::string_view digits = text.substr(colon + 1);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) {
    if (digits.empty()) {
      error = quoted(text) + " has no line number after ':'";
      return false;
    }
    return true;  // a ':' that is part of the path
  }
  std::string_view file = text.substr(0, colon);
  std::uint64_t line = 0;
  for (char c : digits) {
    line = line * 10 + static_cast<std::uint64_t>(c - '0');
    if (line > UINT32_MAX) break;
  }
  if (line == 0 || line > UINT32_MAX) {
    error = quoted(text) + ": " + quoted(digits) + " is not a line number";
    return false;
  }
  if (file.empty() || file.back() == '/') {
    error = quoted(text) + ": a call site is a file and a line";
    return false;
  }
  rule.path.assign(file);
  rule.line = static_cast<std::uint32_t>(line);
  return true;
}

void keep_rule(std::vector<LevelRule>& rules, LevelRule rule) {
  for (LevelRule& kept : rules) {
    if (kept.path == rule.path && kept.line == rule.line) {
      kept.level = rule.level;
      return;
    }
  }
  rules.push_back(std::move(rule));
}

const char* level_name(Level level) {
  static constexpr const char* kNames[] = {
#define TERSE_X(name, value) #name,
      TERSE_SCHEMA_LEVELS(TERSE_X)
#undef TERSE_X
          "off",
  };
  return kNames[static_cast<std::size_t>(level)];
}

// The table and every site whose gate follows it. Never destroyed: object
// guards run at exit and may come after any static destructor.
// A site's file and line are read from the site itself: it stays on the
// list only while its object is loaded.
struct Gate {
  Site* site;
};
struct LevelState {
  std::mutex mutex;
  bool running = false;
  bool started = false;              // start() ran once in this process
  Level before_start = Level::info;  // terse::keep_before_start()
  bool open_after_stop = false;      // Config::stderr_after_stop is not off
  Level default_level = Level::info;
  std::vector<LevelRule> rules;
  Level flight_level = Level::off;  // Config::flight_level
  std::vector<Gate> gates;
};
LevelState& state() noexcept {
  static auto* levels = new LevelState;
  return *levels;
}
// What terse::level() reads without the lock.
std::atomic<std::uint8_t> g_default_level{static_cast<std::uint8_t>(Level::off)};

struct GateValues {
  std::uint8_t gate;   // the lowest level that is written or recorded, plus one
  std::uint8_t write;  // the lowest level that is written, plus one
};

GateValues gate_values(const LevelState& s, const Site& site) noexcept {
  constexpr auto kClosed = static_cast<std::uint8_t>(static_cast<std::uint8_t>(Level::off) + 1);
  if (!s.running && !s.started) {
    // Nothing is recorded for a flight recorder there is not yet, and no
    // rule is known before start().
    auto kept = static_cast<std::uint8_t>(static_cast<std::uint8_t>(s.before_start) + 1);
    return {kept, kept};
  }
  if (!s.running && !s.open_after_stop) return {kClosed, kClosed};
  Level level = s.default_level;
  std::uint64_t best = 0;
  for (const LevelRule& rule : s.rules) {
    std::uint64_t match = rule_match(rule, site.file, site.line);
    if (match > best) {
      best = match;
      level = rule.level;
    }
  }
  // A module turned off is not recorded either.
  if (level == Level::off) return {kClosed, kClosed};
  auto write = static_cast<std::uint8_t>(static_cast<std::uint8_t>(level) + 1);
  if (!s.running) return {write, write};  // after stop(): printed or counted, never recorded
  auto flight = static_cast<std::uint8_t>(static_cast<std::uint8_t>(s.flight_level) + 1);
  return {std::min(write, flight), write};
}

// The write gate first: a call that sees the new gate and the old write
// gate only records (or writes) one record the way the old levels said.
void store_gate(Site& site, GateValues values) noexcept {
  site.write_gate.store(values.write, std::memory_order_relaxed);
  site.gate.store(values.gate, std::memory_order_relaxed);
}

// Relaxed: a logging thread needs the new gate soon, not in any order with
// other memory; the lock orders the writers.
void rewrite_gates(LevelState& s) noexcept {
  g_default_level.store(static_cast<std::uint8_t>(s.running ? s.default_level : Level::off), std::memory_order_relaxed);
  for (const Gate& gate : s.gates) store_gate(*gate.site, gate_values(s, *gate.site));
}

std::string format_levels(const LevelState& s) {
  std::string text = level_name(s.default_level);
  for (const LevelRule& rule : s.rules) {
    text += ',';
    text += rule.path;
    if (rule.line != 0) text += ':' + std::to_string(rule.line);
    text += '=';
    text += level_name(rule.level);
  }
  return text;
}

// The content, absent when there is no such file; `problem` says why it
// could not be read otherwise.
std::optional<std::string> read_small_file(const std::string& path, std::string& problem) {
  problem.clear();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) problem = std::strerror(errno);
    return std::nullopt;
  }
  std::string content;
  char chunk[4096];
  for (;;) {
    ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      problem = std::strerror(errno);
      break;
    }
    if (got == 0) break;
    content.append(chunk, static_cast<std::size_t>(got));
    if (content.size() > kMostFileBytes) {
      problem = "it is larger than 64 KiB";
      break;
    }
  }
  ::close(fd);
  if (!problem.empty()) return std::nullopt;
  return content;
}

struct Pending {
  Site* site;
  std::uint64_t count;
};

// Takes the counts of the rate-limited sites (of `object` only, unless null)
// that suppressed calls since their last record.
std::vector<Pending> take_suppressed(LevelState& s, const ObjectGuard* object) {
  std::vector<Pending> pending;
  for (const Gate& gate : s.gates) {
    Site& site = *gate.site;
    if (site.limit == nullptr || (object != nullptr && site.object != object)) continue;
    if (std::uint64_t count = site.limit->take_remaining()) pending.push_back({&site, count});
  }
  return pending;
}

// FORMAT.md §7 kind 3, one per site; its object is still loaded.
void write_suppressed(const std::vector<Pending>& pending) noexcept {
  for (const Pending& p : pending) {
    std::uint32_t id = register_site(*p.site);
    if (id == 0) continue;
    char args[1 + 10 + 10];
    char* end = args;
    *end++ = static_cast<char>(schema::ControlKind::suppressed);
    end = wire::write_varint(end, id);
    end = wire::write_varint(end, p.count);
    write_control(std::string_view(args, static_cast<std::size_t>(end - args)));
  }
}

using NoticeSignature = decltype(signature_of(std::string_view{}));
constexpr auto kNoticeTags = NoticeSignature::tags("{}");

// The site of terse's own records at level L; 0 when it cannot be registered.
template <Level L>
std::uint32_t notice_site() noexcept {
  static constinit Site site{"{}",
                             schema::kOwnFileName,
                             0,
                             static_cast<std::uint8_t>(L),
                             static_cast<std::uint8_t>(NoticeSignature::size),
                             kNoticeTags.data(),
                             &wire::encode_deltas<kNoticeTags>,
                             NoticeSignature::describer()};
  std::uint32_t id = site.id.load(std::memory_order_acquire);
  return id != 0 ? id : register_site(site);
}

template <Level L>
void notice_at(std::string_view text) noexcept {
  if (std::uint32_t id = notice_site<L>())
    log_impl<kNoticeTags>(id, {}, std::index_sequence_for<std::string_view>{}, text);
}

}  // namespace

const char* const kLevelsSyntax =
    "a default level (trace, debug, info, warn, error, critical or off) and SELECTOR=LEVEL items, comma-separated, "
    "where SELECTOR is a path prefix (net/), a file (db/query.cpp) or a call site (db/query.cpp:120)";

bool parse_levels(std::string_view text, LevelSpec& spec, std::string& error) {
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
        if (!parse_level(item, level)) {
          error = quoted(item) + " is not a level";
          return false;
        }
        if (parsed.default_level) {
          error = "two default levels, " + quoted(level_name(*parsed.default_level)) + " and " + quoted(item);
          return false;
        }
        parsed.default_level = level;
        continue;
      }
      std::string_view level_text = trim(item.substr(equals + 1));
      if (!parse_level(level_text, level)) {
        error = quoted(item) + ": " + quoted(level_text) + " is not a level";
        return false;
      }
      LevelRule rule;
      if (!parse_selector(trim(item.substr(0, equals)), rule, error)) {
        if (rule.path.empty()) error = quoted(item) + " has no selector before '='";
        return false;
      }
      rule.level = level;
      keep_rule(parsed.rules, std::move(rule));
    }
    line_start = line_end + 1;
  }
  spec = std::move(parsed);
  return true;
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

void levels_start(Level default_level, const LevelSpec& spec, Level flight_level) {
  LevelState& s = state();
  std::lock_guard lock(s.mutex);
  s.running = true;
  s.started = true;
  s.flight_level = flight_level;
  s.default_level = spec.default_level.value_or(default_level);
  s.rules = spec.rules;
  rewrite_gates(s);
}

void levels_stop(bool open_after_stop) {
  LevelState& s = state();
  std::lock_guard lock(s.mutex);
  s.running = false;
  s.open_after_stop = open_after_stop;
  rewrite_gates(s);
}

std::string levels_replace(const LevelSpec& spec) {
  LevelState& s = state();
  std::lock_guard lock(s.mutex);
  if (s.running) {
    if (spec.default_level) s.default_level = *spec.default_level;
    s.rules = spec.rules;
    rewrite_gates(s);
  }
  return format_levels(s);
}

bool settle_gate(Site& site, std::uint8_t level) noexcept {
  if (child_start_pending()) start_in_forked_child();
  try {
    LevelState& s = state();
    std::lock_guard lock(s.mutex);
    if (site.gate.load(std::memory_order_relaxed) == kGateUnsettled) {  // not by a racing first call
      // Kept first: should that run out of memory, the gate stays unsettled
      // and the next call tries again.
      if (!site.object->unloading.load(std::memory_order_relaxed)) s.gates.push_back({&site});
      store_gate(site, gate_values(s, site));
    }
  } catch (...) {
    return false;
  }
  return site.gate.load(std::memory_order_relaxed) <= level + 1u;
}

void report_suppressed() noexcept {
  std::vector<Pending> pending;
  try {
    LevelState& s = state();
    std::lock_guard lock(s.mutex);
    pending = take_suppressed(s, nullptr);
  } catch (...) {
    return;  // out of memory: the counts stay where they are
  }
  write_suppressed(pending);
}

void levels_before_fork() noexcept { state().mutex.lock(); }
void levels_after_fork_in_parent() noexcept { state().mutex.unlock(); }
void levels_after_fork_in_child(bool start_on_first_call) noexcept {
  LevelState& s = state();
  s.running = false;
  s.open_after_stop = false;  // the parent's stderr is not the child's to print on
  rewrite_gates(s);
  // Every site's next call goes to settle_gate, which starts the child's logger.
  if (start_on_first_call)
    for (const Gate& gate : s.gates) store_gate(*gate.site, {kGateUnsettled, kGateUnsettled});
  s.mutex.unlock();
}

std::uint32_t notice_site_id(Level level) noexcept {
  switch (level) {
    case Level::info:
      return notice_site<Level::info>();
    case Level::warn:
      return notice_site<Level::warn>();
    default:
      return notice_site<Level::error>();
  }
}

void log_notice(Level level, std::string_view text) noexcept {
  switch (level) {
    case Level::info:
      notice_at<Level::info>(text);
      break;
    case Level::warn:
      notice_at<Level::warn>(text);
      break;
    default:
      notice_at<Level::error>(text);
      break;
  }
}

ObjectGuard::~ObjectGuard() {
  unloading.store(true, std::memory_order_relaxed);
  LevelState& s = state();
  std::vector<Pending> pending;
  {
    std::lock_guard lock(s.mutex);
    try {
      pending = take_suppressed(s, this);
    } catch (...) {
      pending.clear();  // out of memory: these counts are lost with the object
    }
    std::erase_if(s.gates, [this](const Gate& g) { return g.site->object == this; });
  }
  // The object's memory is still there: its sites register and report as usual.
  write_suppressed(pending);
}

LevelsFileWatcher::LevelsFileWatcher(std::string path, std::function<void(const std::string&)> on_error)
    : path_(std::move(path)), on_error_(std::move(on_error)) {}

LevelsFileWatcher::~LevelsFileWatcher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LevelsFileWatcher::check() {
  std::string problem;
  std::optional<std::string> content = read_small_file(path_, problem);
  if (!first_check_ && content == last_ && problem == last_problem_) return;
  if (!first_check_ && content) {
    std::this_thread::sleep_for(kFileSettleTime);
    std::string again_problem;
    if (read_small_file(path_, again_problem) != content) return;  // still being written: the next look
  }
  bool first = std::exchange(first_check_, false);
  last_ = content;
  if (!problem.empty()) {
    if (problem != last_problem_) {
      std::string message =
          "levels file '" + path_ + "' cannot be read: " + problem + "; the levels in force stay: " + terse::levels();
      on_error_(message);
      log_notice(Level::error, message);
    }
    last_problem_ = problem;
    return;
  }
  last_problem_.clear();
  if (!content) {
    if (!first)
      log_notice(Level::info, "levels file '" + path_ + "' is gone; the levels in force stay: " + terse::levels());
    return;
  }
  LevelSpec spec;
  std::string error;
  if (!parse_levels(*content, spec, error)) {
    std::string message = "levels file '" + path_ + "' does not parse: " + error +
                          "; the levels in force stay: " + terse::levels() + " (accepted: " + kLevelsSyntax + ")";
    on_error_(message);
    log_notice(Level::error, message);
    return;
  }
  log_notice(Level::info, "levels from '" + path_ + "': " + levels_replace(spec));
}

void LevelsFileWatcher::start() {
  sigset_t previous_mask;
  block_async_signals(&previous_mask);  // inherited by the thread
  thread_ = std::thread([this] { run(); });
  pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  place_thread(thread_, "terse-levels");
}

void LevelsFileWatcher::run() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, kFilePollInterval, [this] { return stopping_; })) {
    lock.unlock();
    check();
    lock.lock();
  }
}

}  // namespace terse::detail

namespace terse {

void set_level(Level level) noexcept {
  detail::LevelState& s = detail::state();
  std::lock_guard lock(s.mutex);
  if (!s.running) return;
  s.default_level = level;
  detail::rewrite_gates(s);
}

void set_level(std::string_view selector, Level level) {
  detail::LevelRule rule;
  std::string error;
  if (!detail::parse_selector(detail::trim(selector), rule, error))
    throw Error("terse: set_level(\"" + std::string(selector) + "\"): " + error +
                "; a selector is a path prefix "
                "(net/), a file (db/query.cpp) or a call site (db/query.cpp:120)");
  rule.level = level;
  detail::LevelState& s = detail::state();
  std::lock_guard lock(s.mutex);
  if (!s.running) return;
  detail::keep_rule(s.rules, std::move(rule));
  detail::rewrite_gates(s);
}

void set_levels(std::string_view levels) {
  detail::LevelSpec spec;
  std::string error;
  if (!detail::parse_levels(levels, spec, error))
    throw Error("terse: set_levels(\"" + std::string(levels) + "\"): " + error +
                "; accepted: " + detail::kLevelsSyntax);
  detail::levels_replace(spec);
}

std::string levels() {
  detail::LevelState& s = detail::state();
  std::lock_guard lock(s.mutex);
  if (!s.running) return "off";
  return detail::format_levels(s);
}

void keep_before_start(Level level) noexcept {
  detail::LevelState& s = detail::state();
  std::lock_guard lock(s.mutex);
  s.before_start = level;
  if (!s.started) detail::rewrite_gates(s);
}

Level level() noexcept { return static_cast<Level>(detail::g_default_level.load(std::memory_order_relaxed)); }

}  // namespace terse
