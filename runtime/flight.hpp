// The flight recorder's memory (Config::flight_level): for each thread, the
// newest records that were recorded instead of written, as the collector
// took them from the thread's ring, until a trigger writes them out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
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
    std::uint32_t site_id;  // 0: a context push or pop (FORMAT.md §7.3)
    std::uint32_t thread_index;
    std::string_view args;
  };

  // Each thread keeps the newest records whose sizes (16 bytes of header
  // and the arguments, as in its ring) add up to at most `bytes_per_thread`.
  explicit FlightRecorder(std::size_t bytes_per_thread) : limit_(bytes_per_thread) {}

  // A recorded record. Returns how many older records of the thread gave
  // way to it (itself included, when it alone is over the limit).
  std::uint64_t keep(std::uint32_t thread_index, std::uint32_t site_id, std::uint64_t ticks, std::string_view args);
  // A context push or pop of the thread (its control record's args), which
  // the recorded records of the thread need to be read in their contexts.
  // Returns as keep() does.
  std::uint64_t keep_context(std::uint32_t thread_index, bool push, std::uint64_t serial, std::uint64_t ticks,
                             std::string_view args);
  bool empty() const { return held_ == 0; }
  // Everything held of the threads with recorded records, all merged by
  // time: first the pushes of the contexts open before their oldest record,
  // then their records with the pushes and pops among them. Valid until clear().
  const std::vector<Entry>& in_time_order();
  void clear();
  // The thread's buffer is gone: its records are kept for a later trigger
  // while it is one of the few threads that ended last. Returns how many
  // records of another ended thread gave way.
  std::uint64_t thread_ended(std::uint32_t thread_index);

 private:
  enum class Kind : std::uint32_t { record, push, pop };
  struct OpenContext {
    std::uint64_t serial;
    std::uint64_t ticks;
    std::string args;
  };
  struct ThreadRecords {
    // Entries back to back: ticks(u64) serial(u64) site_id(u32) size(u32)
    // kind(u32) pad(u32) args(size).
    std::vector<char> bytes;
    std::size_t start = 0;    // where the oldest entry still held begins
    std::size_t held = 0;     // bytes of the entries held, as their limit counts them
    std::size_t records = 0;  // recorded records among them
    // The contexts open before the oldest entry held.
    std::vector<OpenContext> open_before;
  };
  struct Header {
    std::uint64_t ticks;
    std::uint64_t serial;
    std::uint32_t site_id;
    std::uint32_t size;
    Kind kind;
    std::uint32_t pad;
  };
  static constexpr std::size_t kCountedHeader = 16;  // what a record's header takes in its ring
  static constexpr std::size_t kEndedThreadsKept = 64;

  std::uint64_t append(std::uint32_t thread_index, const Header& header, std::string_view args);
  static void apply(ThreadRecords& t, const Header& header, std::string_view args);

  std::size_t limit_;
  std::unordered_map<std::uint32_t, ThreadRecords> threads_;
  std::deque<std::uint32_t> ended_;  // oldest first
  std::size_t held_ = 0;             // recorded records, all threads
  std::vector<Entry> merged_;
};

}  // namespace terse::detail
