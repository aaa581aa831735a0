// The C library's calendar and file calls that both sides of terse use, spelled once for every
// OS: Windows' C library has neither the thread-safe _r functions, timegm, tm_gmtoff nor
// O_CLOEXEC, opens files as text unless told otherwise, and counts bytes in an unsigned int.
#pragma once

#include <fcntl.h>
#include <sys/types.h>
#ifdef _WIN32
#include <io.h>
#include <stdio.h>

#include <chrono>
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

// open() with kOpenFlags. On Windows the file is also opened with every sharing mode, delete
// included, as a POSIX descriptor is: a reader following a file lets the writer's retention
// remove it and a cursor's rename replace it, and the writer's open file lets readers in.
// (The C library's open() shares reading and writing but never deletion.) Defined in
// decoder/portable_libc_windows.cpp there, which every library of terse carries.
#ifdef _WIN32
int open_path(const char* path, int flags, int mode = 0) noexcept;
#else
inline int open_path(const char* path, int flags, mode_t mode = 0) noexcept {
  return ::open(path, flags | kOpenFlags, mode);
}
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

// Lets the next read() of a file that ended see what was appended since. Windows' C library
// remembers the end of a file once read() met it and returns 0 from then on, however much is
// appended, until the descriptor is positioned again.
inline void forget_end_of_file([[maybe_unused]] int fd) noexcept {
#ifdef _WIN32
  ::_lseeki64(fd, 0, SEEK_CUR);
#endif
}

#ifdef _WIN32
// Seconds since the epoch of calendar fields read as UTC, before 1970 too (Windows'
// _mkgmtime refuses those).
inline std::time_t fields_as_utc(const std::tm& fields) noexcept {
  using namespace std::chrono;
  const sys_days day = sys_days{year{fields.tm_year + 1900} / month{static_cast<unsigned>(fields.tm_mon + 1)} / 1} +
                       days{fields.tm_mday - 1};
  return static_cast<std::time_t>(
      (day.time_since_epoch() + hours{fields.tm_hour} + minutes{fields.tm_min} + std::chrono::seconds{fields.tm_sec})
          .count());
}
#endif

// Calendar fields of `seconds` since the epoch, in UTC or in the local time zone; false when
// the C library cannot represent them. Thread-safe.
inline bool utc_calendar(std::time_t seconds, std::tm& out) noexcept {
#ifdef _WIN32
  // Windows' gmtime_s refuses times before 1970; the proleptic calendar has them all.
  using namespace std::chrono;
  const sys_seconds moment{std::chrono::seconds(seconds)};
  const sys_days day = floor<days>(moment);
  const year_month_day date{day};
  if (!date.ok()) return false;
  const hh_mm_ss<std::chrono::seconds> time{moment - day};
  out = std::tm{};
  out.tm_year = static_cast<int>(date.year()) - 1900;
  out.tm_mon = static_cast<int>(static_cast<unsigned>(date.month())) - 1;
  out.tm_mday = static_cast<int>(static_cast<unsigned>(date.day()));
  out.tm_hour = static_cast<int>(time.hours().count());
  out.tm_min = static_cast<int>(time.minutes().count());
  out.tm_sec = static_cast<int>(time.seconds().count());
  out.tm_wday = static_cast<int>(weekday{day}.c_encoding());
  out.tm_yday = static_cast<int>((day - sys_days{date.year() / January / 1}).count());
  return true;
#else
  return gmtime_r(&seconds, &out) != nullptr;
#endif
}
inline bool local_calendar(std::time_t seconds, std::tm& out) noexcept {
#ifdef _WIN32
  if (localtime_s(&out, &seconds) == 0) return true;
  // Windows' C library has no local time before 1970: the zone's offset at the epoch stands
  // in for the one it had then.
  std::tm epoch{};
  std::time_t zero = 0;
  if (seconds >= 0 || localtime_s(&epoch, &zero) != 0) return false;
  std::time_t offset = fields_as_utc(epoch);
  if (!utc_calendar(seconds + offset, out)) return false;
  out.tm_isdst = 0;
  return true;
#else
  return localtime_r(&seconds, &out) != nullptr;
#endif
}

// Seconds since the epoch of calendar fields in UTC (timegm); -1 when out of range.
inline std::time_t utc_seconds(std::tm& fields) noexcept {
#ifdef _WIN32
  return fields_as_utc(fields);
#else
  return timegm(&fields);
#endif
}

// How far local time is ahead of UTC at `seconds`, whose local calendar fields are `local`.
inline std::int64_t utc_offset_seconds(std::time_t seconds, const std::tm& local) noexcept {
#ifdef _WIN32
  return static_cast<std::int64_t>(fields_as_utc(local)) - static_cast<std::int64_t>(seconds);
#else
  (void)seconds;
  return local.tm_gmtoff;
#endif
}

}  // namespace terse
