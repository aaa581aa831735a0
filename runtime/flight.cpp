#include "flight.hpp"

#include <algorithm>
#include <cstring>

namespace terse::detail {

std::uint64_t FlightRecorder::keep(std::uint32_t thread_index, std::uint32_t site_id, std::uint64_t ticks,
                                   const char* args, std::uint32_t size) {
  std::size_t entry_size = kEntryHeader + size;
  if (entry_size > limit_) return 1;
  ThreadRecords& t = threads_[thread_index];
  std::uint64_t given_way = 0;
  // Oldest first, until the new one fits.
  while (t.bytes.size() - t.start + entry_size > limit_) {
    std::uint32_t old_size;
    std::memcpy(&old_size, t.bytes.data() + t.start + 12, 4);
    t.start += kEntryHeader + old_size;
    --t.count;
    --held_;
    ++given_way;
  }
  // The bytes given way are reclaimed once they are as many as those held,
  // so a thread's memory stays under twice its limit.
  if (t.start >= limit_) {
    t.bytes.erase(t.bytes.begin(), t.bytes.begin() + static_cast<std::ptrdiff_t>(t.start));
    t.start = 0;
  }
  std::size_t at = t.bytes.size();
  t.bytes.resize(at + entry_size);
  char* out = t.bytes.data() + at;
  std::memcpy(out, &ticks, 8);
  std::memcpy(out + 8, &site_id, 4);
  std::memcpy(out + 12, &size, 4);
  if (size > 0) std::memcpy(out + kEntryHeader, args, size);
  ++t.count;
  ++held_;
  return given_way;
}

const std::vector<FlightRecorder::Entry>& FlightRecorder::in_time_order() {
  merged_.clear();
  merged_.reserve(held_);
  for (const auto& [index, t] : threads_) {
    std::size_t at = t.start;
    while (at < t.bytes.size()) {
      Entry e;
      std::uint32_t size;
      std::memcpy(&e.ticks, t.bytes.data() + at, 8);
      std::memcpy(&e.site_id, t.bytes.data() + at + 8, 4);
      std::memcpy(&size, t.bytes.data() + at + 12, 4);
      e.thread_index = index;
      e.args = std::string_view(t.bytes.data() + at + kEntryHeader, size);
      merged_.push_back(e);
      at += kEntryHeader + size;
    }
  }
  // Each thread's records are in time order already; stable keeps them so
  // where two threads' timestamps tie or a thread's go backwards.
  std::stable_sort(merged_.begin(), merged_.end(), [](const Entry& a, const Entry& b) { return a.ticks < b.ticks; });
  return merged_;
}

void FlightRecorder::clear() {
  merged_.clear();
  for (auto& [index, t] : threads_) {
    // What a busy thread grew to past its limit goes back.
    if (t.bytes.capacity() > limit_) {
      std::vector<char>().swap(t.bytes);
    } else {
      t.bytes.clear();
    }
    t.start = 0;
    t.count = 0;
  }
  held_ = 0;
  // An ended thread has nothing more to record.
  for (std::uint32_t index : ended_) threads_.erase(index);
  ended_.clear();
}

std::uint64_t FlightRecorder::thread_ended(std::uint32_t thread_index) {
  auto it = threads_.find(thread_index);
  if (it == threads_.end()) return 0;
  if (it->second.count == 0) {
    threads_.erase(it);
    return 0;
  }
  ended_.push_back(thread_index);
  if (ended_.size() > kEndedThreadsKept) {
    auto oldest = threads_.find(ended_.front());
    ended_.pop_front();
    if (oldest != threads_.end()) {
      std::uint64_t lost = oldest->second.count;
      held_ -= oldest->second.count;
      threads_.erase(oldest);
      return lost;
    }
  }
  return 0;
}

}  // namespace terse::detail
