#include "levels.hpp"

#include <algorithm>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "buffers.hpp"
#include "lifecycle.hpp"

namespace terse::detail {
namespace {

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
  Result<detail::LevelRule> rule = detail::parse_selector(detail::trim(selector));
  if (!rule)
    throw Error("terse: set_level(\"" + std::string(selector) + "\"): " + rule.why() +
                "; a selector is a path prefix "
                "(net/), a file (db/query.cpp) or a call site (db/query.cpp:120)");
  rule->level = level;
  detail::LevelState& s = detail::state();
  std::lock_guard lock(s.mutex);
  if (!s.running) return;
  detail::keep_rule(s.rules, std::move(*rule));
  detail::rewrite_gates(s);
}

void set_levels(std::string_view levels) {
  Result<detail::LevelSpec> spec = detail::parse_levels(levels);
  if (!spec)
    throw Error("terse: set_levels(\"" + std::string(levels) + "\"): " + spec.why() +
                "; accepted: " + detail::kLevelsSyntax);
  detail::levels_replace(*spec);
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
