// The flight recorder's memory (Config::flight_level): for each thread, the
// newest records that were recorded instead of written, as the collector
// took them from the thread's ring, until a trigger writes them out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace terse::detail {

inline constexpr std::size_t kMinFlightBytes = std::size_t{1} << 10;
inline constexpr std::size_t kMaxFlightBytes = std::size_t{64} << 20;

class FlightRecorder {
 public:
  struct Entry {
    std::uint64_t ticks;
    std::uint32_t site_id;
    std::uint32_t thread_index;
    std::string_view args;
  };

  // Each thread keeps the newest records whose sizes (16 bytes of header
  // and the arguments, as in its ring) add up to at most `bytes_per_thread`.
  explicit FlightRecorder(std::size_t bytes_per_thread) : limit_(bytes_per_thread) {}

  // Returns how many older records of the thread gave way to it (itself
  // included, when it alone is over the limit).
  std::uint64_t keep(std::uint32_t thread_index, std::uint32_t site_id, std::uint64_t ticks, const char* args,
                     std::uint32_t size);
  bool empty() const { return held_ == 0; }
  // Everything held, all threads merged by time; valid until clear().
  const std::vector<Entry>& in_time_order();
  void clear();
  // The thread's buffer is gone: its records are kept for a later trigger
  // while it is one of the few threads that ended last. Returns how many
  // records of another ended thread gave way.
  std::uint64_t thread_ended(std::uint32_t thread_index);

 private:
  struct ThreadRecords {
    // Entries back to back: ticks(u64) site_id(u32) size(u32) args(size).
    std::vector<char> bytes;
    std::size_t start = 0;  // where the oldest entry still held begins
    std::size_t count = 0;
  };
  static constexpr std::size_t kEntryHeader = 16;
  static constexpr std::size_t kEndedThreadsKept = 64;

  std::size_t limit_;
  std::unordered_map<std::uint32_t, ThreadRecords> threads_;
  std::deque<std::uint32_t> ended_;  // oldest first
  std::size_t held_ = 0;             // records, all threads
  std::vector<Entry> merged_;
};

}  // namespace terse::detail
