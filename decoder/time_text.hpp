// Record times as text: "2026-11-29 14:03:07.123456789" for lines and
// RFC 3339 for JSON, the civil part of a second computed once for the
// records that share it. Internal to the decoder's rendering files.
#pragma once

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <string>

#include <terse/decoder.hpp>

#include "text_put.hpp"

namespace terse::decoder::detail {

// The whole seconds and nanoseconds (never negative) of a time.
inline void split(std::int64_t unix_ns, std::int64_t& seconds, std::int64_t& nanos) {
  seconds = unix_ns / 1'000'000'000;
  nanos = unix_ns % 1'000'000'000;
  if (nanos < 0) {
    nanos += 1'000'000'000;
    --seconds;
  }
}

// "2026-11-29 14:03:07." for the second; consecutive records share their
// second, so it is formatted once.
const std::string& time_prefix(std::int64_t seconds, bool utc);

// "2026-11-29T14:03:07." and the zone ("Z", "+01:00") of a second, which
// the records of that second share.
struct Rfc3339Second {
  std::string prefix, zone;
};
const Rfc3339Second& rfc3339_second(std::int64_t seconds, bool utc);

// The first `shown` of the 9 digits of a fraction of a second.
template <typename Out>
void append_nanos(Out& out, std::int64_t nanos, std::size_t shown) {
  char digits[9];
  put_nanos(digits, static_cast<std::uint32_t>(nanos));
  out.append(digits, shown);
}

inline void append_nanos(TextOut& out, std::int64_t nanos, std::size_t shown) {
  char* at = out.room(9);
  put_nanos(at, static_cast<std::uint32_t>(nanos));
  out.advance(at + shown);
}

// append_time into any text writer (a std::string, TextOut).
template <typename Out>
void append_time_to(Out& out, std::int64_t unix_ns, const TimeStyle& style) {
  std::int64_t seconds, nanos;
  split(unix_ns, seconds, nanos);
  const std::string& prefix = time_prefix(seconds, style.utc);
  int shown = std::clamp(style.digits, 0, 9);
  if (shown == 0) {
    out.append(prefix.data(), prefix.size() - 1);  // no '.'
    return;
  }
  out.append(prefix.data(), prefix.size());
  append_nanos(out, nanos, static_cast<std::size_t>(shown));
}

}  // namespace terse::decoder::detail
