// The C library's calendar and file calls that both sides of terse use, spelled once for every
// OS: Windows' C library has neither the thread-safe _r functions, timegm, tm_gmtoff nor
// O_CLOEXEC, opens files as text unless told otherwise, and counts bytes in an unsigned int.
#pragma once

#include <fcntl.h>
#include <sys/types.h>
#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <ctime>

namespace terse {

// What every open() of terse adds: the descriptor is not handed to programs the process
// starts, and (Windows) its bytes are read and written as they are, with no CR-LF
// translation.
#ifdef _WIN32
inline constexpr int kOpenFlags = O_NOINHERIT | O_BINARY;
#else
inline constexpr int kOpenFlags = O_CLOEXEC;
#endif

// read() and write(), async-signal-safe. Windows moves at most INT_MAX bytes a call: a larger
// one does part, as any call may.
inline ssize_t read_some(int fd, void* to, std::size_t bytes) noexcept {
#ifdef _WIN32
  return ::_read(fd, to, static_cast<unsigned>(std::min<std::size_t>(bytes, INT_MAX)));
#else
  return ::read(fd, to, bytes);
#endif
}
inline ssize_t write_some(int fd, const void* from, std::size_t bytes) noexcept {
#ifdef _WIN32
  return ::_write(fd, from, static_cast<unsigned>(std::min<std::size_t>(bytes, INT_MAX)));
#else
  return ::write(fd, from, bytes);
#endif
}

// Calendar fields of `seconds` since the epoch, in UTC or in the local time zone; false when
// the C library cannot represent them. Thread-safe.
inline bool utc_calendar(std::time_t seconds, std::tm& out) noexcept {
#ifdef _WIN32
  return gmtime_s(&out, &seconds) == 0;
#else
  return gmtime_r(&seconds, &out) != nullptr;
#endif
}
inline bool local_calendar(std::time_t seconds, std::tm& out) noexcept {
#ifdef _WIN32
  return localtime_s(&out, &seconds) == 0;
#else
  return localtime_r(&seconds, &out) != nullptr;
#endif
}

// Seconds since the epoch of calendar fields in UTC (timegm); -1 when out of range.
inline std::time_t utc_seconds(std::tm& fields) noexcept {
#ifdef _WIN32
  return _mkgmtime(&fields);
#else
  return timegm(&fields);
#endif
}

// How far local time is ahead of UTC at `seconds`, whose local calendar fields are `local`.
inline std::int64_t utc_offset_seconds(std::time_t seconds, const std::tm& local) noexcept {
#ifdef _WIN32
  std::tm fields = local;
  return static_cast<std::int64_t>(_mkgmtime(&fields)) - static_cast<std::int64_t>(seconds);
#else
  (void)seconds;
  return local.tm_gmtoff;
#endif
}

}  // namespace terse
