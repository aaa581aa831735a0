#include "flight.hpp"

#include <algorithm>
#include <cstring>

namespace terse::detail {

std::uint64_t FlightRecorder::keep(std::uint32_t thread_index, std::uint32_t site_id, std::uint64_t ticks,
                                   std::string_view args) {
  Header header{ticks, 0, site_id, static_cast<std::uint32_t>(args.size()), Kind::record, 0};
  return append(thread_index, header, args);
}

std::uint64_t FlightRecorder::keep_context(std::uint32_t thread_index, bool push, std::uint64_t serial,
                                           std::uint64_t ticks, std::string_view args) {
  Header header{ticks, serial, 0, static_cast<std::uint32_t>(args.size()), push ? Kind::push : Kind::pop, 0};
  return append(thread_index, header, args);
}

// A push or pop that leaves the window moves into the contexts open before it.
void FlightRecorder::apply(ThreadRecords& t, const Header& header, std::string_view args) {
  if (header.kind == Kind::push) {
    t.open_before.push_back({header.serial, header.ticks, std::string(args)});
  } else if (header.kind == Kind::pop) {
    std::erase_if(t.open_before, [&](const OpenContext& c) { return c.serial == header.serial; });
  }
}

std::uint64_t FlightRecorder::append(std::uint32_t thread_index, const Header& header, std::string_view args) {
  std::size_t counted = kCountedHeader + args.size();
  ThreadRecords& t = threads_[thread_index];
  if (counted > limit_) {
    if (header.kind != Kind::record) apply(t, header, args);
    return header.kind == Kind::record ? 1 : 0;
  }
  std::uint64_t given_way = 0;
  // Oldest first, until the new one fits.
  while (t.held + counted > limit_) {
    Header old;
    std::memcpy(&old, t.bytes.data() + t.start, sizeof old);
    std::string_view old_args(t.bytes.data() + t.start + sizeof old, old.size);
    if (old.kind == Kind::record) {
      --t.records;
      --held_;
      ++given_way;
    } else {
      apply(t, old, old_args);
    }
    t.start += sizeof old + old.size;
    t.held -= kCountedHeader + old.size;
  }
  // The bytes given way are reclaimed once they are as many as the limit,
  // so a thread's memory stays within about twice its limit.
  if (t.start >= limit_) {
    t.bytes.erase(t.bytes.begin(), t.bytes.begin() + static_cast<std::ptrdiff_t>(t.start));
    t.start = 0;
  }
  std::size_t at = t.bytes.size();
  t.bytes.resize(at + sizeof header + args.size());
  std::memcpy(t.bytes.data() + at, &header, sizeof header);
  if (!args.empty()) std::memcpy(t.bytes.data() + at + sizeof header, args.data(), args.size());
  t.held += counted;
  if (header.kind == Kind::record) {
    ++t.records;
    ++held_;
  }
  return given_way;
}

const std::vector<FlightRecorder::Entry>& FlightRecorder::in_time_order() {
  merged_.clear();
  for (const auto& [index, t] : threads_) {
    if (t.records == 0) continue;
    for (const OpenContext& c : t.open_before) merged_.push_back({c.ticks, 0, index, c.args});
    std::size_t at = t.start;
    while (at < t.bytes.size()) {
      Header h;
      std::memcpy(&h, t.bytes.data() + at, sizeof h);
      merged_.push_back({h.ticks, h.site_id, index, std::string_view(t.bytes.data() + at + sizeof h, h.size)});
      at += sizeof h + h.size;
    }
  }
  // Each thread's entries are in time order already; stable keeps them so
  // where two threads' timestamps tie or a thread's go backwards.
  std::stable_sort(merged_.begin(), merged_.end(), [](const Entry& a, const Entry& b) { return a.ticks < b.ticks; });
  return merged_;
}

void FlightRecorder::clear() {
  merged_.clear();
  for (auto& [index, t] : threads_) {
    // What was pushed and popped in the window is the context of what comes next.
    std::size_t at = t.start;
    while (at < t.bytes.size()) {
      Header h;
      std::memcpy(&h, t.bytes.data() + at, sizeof h);
      if (h.kind != Kind::record) apply(t, h, std::string_view(t.bytes.data() + at + sizeof h, h.size));
      at += sizeof h + h.size;
    }
    // What a busy thread grew to past its limit goes back.
    if (t.bytes.capacity() > limit_) {
      std::vector<char>().swap(t.bytes);
    } else {
      t.bytes.clear();
    }
    t.start = 0;
    t.held = 0;
    t.records = 0;
  }
  held_ = 0;
  // An ended thread has nothing more to record.
  for (std::uint32_t index : ended_) threads_.erase(index);
  ended_.clear();
}

std::uint64_t FlightRecorder::thread_ended(std::uint32_t thread_index) {
  auto it = threads_.find(thread_index);
  if (it == threads_.end()) return 0;
  if (it->second.records == 0) {
    threads_.erase(it);
    return 0;
  }
  ended_.push_back(thread_index);
  if (ended_.size() > kEndedThreadsKept) {
    auto oldest = threads_.find(ended_.front());
    ended_.pop_front();
    if (oldest != threads_.end()) {
      std::uint64_t lost = oldest->second.records;
      held_ -= oldest->second.records;
      threads_.erase(oldest);
      return lost;
    }
  }
  return 0;
}

}  // namespace terse::detail
