#include "time_text.hpp"

#include <ctime>
#include <string>

#include <fmt/format.h>

#include <terse/decoder.hpp>
#include <terse/per_thread.hpp>
#include <terse/portable_libc.hpp>

namespace terse::decoder {
namespace detail {
namespace {

struct CivilTime {
  tm parts{};
  long offset_seconds = 0;
};

// local_calendar is slow and the same second repeats for many records.
const CivilTime& civil(std::int64_t seconds, bool utc) {
  thread_local std::int64_t cached_seconds = INT64_MIN;
  thread_local bool cached_utc = false;
  thread_local CivilTime cached;
  if (seconds != cached_seconds || utc != cached_utc) {
    time_t t = static_cast<time_t>(seconds);
    cached = CivilTime{};
    if (utc) {
      utc_calendar(t, cached.parts);
    } else {
      local_calendar(t, cached.parts);
      cached.offset_seconds = static_cast<long>(utc_offset_seconds(t, cached.parts));
    }
    cached_seconds = seconds;
    cached_utc = utc;
  }
  return cached;
}

}  // namespace

const std::string& time_prefix(std::int64_t seconds, bool utc) {
  thread_local std::int64_t cached_seconds = INT64_MIN;
  thread_local bool cached_utc = false;
  auto& cached_prefix = per_thread<std::string>([] {});
  if (seconds != cached_seconds || utc != cached_utc) {
    const tm& t = civil(seconds, utc).parts;
    cached_prefix = fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
                                t.tm_hour, t.tm_min, t.tm_sec);
    cached_seconds = seconds;
    cached_utc = utc;
  }
  return cached_prefix;
}

const Rfc3339Second& rfc3339_second(std::int64_t seconds, bool utc) {
  thread_local std::int64_t cached_seconds = INT64_MIN;
  thread_local bool cached_utc = false;
  auto& cached = per_thread<Rfc3339Second>([] {});
  if (seconds != cached_seconds || utc != cached_utc) {
    const CivilTime& c = civil(seconds, utc);
    const tm& t = c.parts;
    cached.prefix = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
                                t.tm_hour, t.tm_min, t.tm_sec);
    if (utc || c.offset_seconds == 0) {
      cached.zone = 'Z';
    } else {
      long offset = c.offset_seconds;
      char sign = offset < 0 ? '-' : '+';
      if (offset < 0) offset = -offset;
      cached.zone = fmt::format("{}{:02}:{:02}", sign, offset / 3600, offset / 60 % 60);
    }
    cached_seconds = seconds;
    cached_utc = utc;
  }
  return cached;
}

}  // namespace detail

void append_time(std::string& out, std::int64_t unix_ns, const TimeStyle& style) {
  detail::append_time_to(out, unix_ns, style);
}

void append_time_rfc3339(std::string& out, std::int64_t unix_ns, const TimeStyle& style) {
  std::int64_t seconds, nanos;
  detail::split(unix_ns, seconds, nanos);
  const detail::Rfc3339Second& second = detail::rfc3339_second(seconds, style.utc);
  out += second.prefix;
  detail::append_nanos(out, nanos, 9);
  out += second.zone;
}

}  // namespace terse::decoder
