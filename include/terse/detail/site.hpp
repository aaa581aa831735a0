#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <terse/delta.hpp>
#include <terse/detail/buffer.hpp>

// What every shared object must have a copy of its own: hidden on ELF and
// Mach-O; on Windows each DLL has its own copy of everything it defines.
#if defined(_WIN32)
#define TERSE_DETAIL_PER_OBJECT
#else
#define TERSE_DETAIL_PER_OBJECT [[gnu::visibility("hidden")]]
#endif

namespace terse::detail {

struct LimitState;

// One per shared object (program or library) that logs: its destructor runs
// when the object is unloaded (dlclose) or the process exits, and tells the
// runtime to stop updating the object's call sites, whose memory is about
// to go. Hidden, so that every shared object has its own and none is merged
// across objects (a merged, "unique" symbol would also keep a library from
// ever unloading).
struct ObjectGuard {
  constexpr ObjectGuard() = default;
  ObjectGuard(const ObjectGuard&) = delete;
  ObjectGuard& operator=(const ObjectGuard&) = delete;
  ~ObjectGuard();
  // Set by the destructor; a site registering after it (a later static
  // destructor that logs) is never updated again.
  std::atomic<bool> unloading{false};
};
TERSE_DETAIL_PER_OBJECT inline ObjectGuard g_object_guard;

// The level gate of a call site: the lowest level it logs at, plus one;
// zero until the site is first called. The logging macro reads it once and
// compares it with the site's constant level, so a disabled call costs one
// load and one branch; a site that has never run settles its gate first,
// before any argument is evaluated.
inline constexpr std::uint8_t kGateUnsettled = 0;
// With the flight recorder on (Config::flight_level) the gate opens for the
// levels it records too, and `write_gate`, in the same form, says from which
// level on a record goes to the file; below it the record is kept in memory.

// One per call site, a constant-initialised static created by the logging
// macro. Everything but `id` and the gates is fixed at compile time; `id` is
// assigned on the first call and read with a single load afterwards. The
// runtime copies the rest when the site registers and never reads the site
// again, so a library that logs may be unloaded (dlclose) with its records
// unwritten; it writes the gates only while the site's object is loaded.
// `encode_deltas` is code of the site's object: the runtime calls it only
// for objects that are never unloaded (the program itself).
struct Site {
  const char* format;
  const char* file;
  std::uint32_t line;
  std::uint8_t level;
  std::uint8_t arg_count;
  const std::uint8_t* arg_tags;
  // FORMAT.md §7.1's coding of the site's arguments, unrolled for its tags.
  wire::DeltaEncoder encode_deltas = nullptr;
  // Writes the type expressions of the site's structured arguments
  // (FORMAT.md §6 arg_types); null when it has neither structured nor
  // named arguments.
  void (*describe_types)(std::string&) = nullptr;
  // A rate-limited site's limit (limit.hpp); null for every other site.
  LimitState* limit = nullptr;
  // A terse::Context's site: not a call site but the layout of a context's
  // key and value, which its push records name (FORMAT.md §7.3).
  bool context = false;
  ObjectGuard* object = &g_object_guard;
  std::atomic<std::uint8_t> gate{kGateUnsettled};
  std::atomic<std::uint8_t> write_gate{kGateUnsettled};
  std::atomic<std::uint32_t> id{0};
};

// The site id a record of the site carries in its ring: with kRingFlightBit
// when it passed the gate but not the write gate. A write gate read while
// still unsettled (a racing first call) writes the record. `level` is the
// site's, a constant at the call: site.level would be read from the site's
// other cache line.
inline std::uint32_t ring_site_id(const Site& site, std::uint8_t level, std::uint32_t id) noexcept {
  bool recorded_only = level + 1u < site.write_gate.load(std::memory_order_relaxed);
  return recorded_only ? id | kRingFlightBit : id;
}

// Settles the gate of a site on its first call (one lock, once per site)
// and says whether `level` passes it.
bool settle_gate(Site& site, std::uint8_t level) noexcept;

// Whether a record of `level` passes the site's gate: the first thing a
// logging call does.
inline bool gate_allows(Site& site, std::uint8_t level) noexcept {
  std::uint8_t gate = site.gate.load(std::memory_order_relaxed);
  if (gate > level + 1u) return false;
  if (__builtin_expect(gate != kGateUnsettled, 1)) return true;
  return settle_gate(site, level);
}

// Gives the site its id (lock-free; concurrent first calls agree on one id). `names`
// holds the argument names of a site with named arguments (its first
// call's), or is null. Returns 0 when the site cannot be registered.
std::uint32_t register_site(Site& site, const char* const* names = nullptr) noexcept;

}  // namespace terse::detail
