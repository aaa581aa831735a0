// Levels per module (terse::set_level with a selector, TERSE_LEVEL, the
// levels file): the table of selectors and the gate of every registered
// call site, which the table's changes rewrite.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <terse/terse.hpp>

#include "level_selectors.hpp"

namespace terse::detail {

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

}  // namespace terse::detail
