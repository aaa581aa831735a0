// The grammar of log file names, FORMAT.md §2.1: NAME-YYYYMMDD-NNN.tlog.
// The writer names its files with format_file_name(); it and every reader
// recognise them with parse_file_name(), so both sides agree on which files
// of a directory belong to a log.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace terse::schema {

inline constexpr std::string_view kFileSuffix = ".tlog";
inline constexpr std::size_t kDateDigits = 8;
// The sequence number is written with at least this many digits...
inline constexpr std::size_t kMinSequenceDigits = 3;
// ...and read with at most this many: nine digits always fit a u32, so a
// name never needs a wider number, and a name with more is not a log file's.
inline constexpr std::size_t kMaxSequenceDigits = 9;
inline constexpr std::uint32_t kMaxSequence = 999'999'999;

struct FileName {
  std::string_view prefix;  // NAME; may itself contain '-'
  std::string_view date;    // YYYYMMDD as written (digits, not checked as a date)
  std::uint32_t sequence = 0;
};

namespace file_name_detail {
constexpr bool all_digits(std::string_view text) {
  for (char c : text)
    if (c < '0' || c > '9') return false;
  return true;
}
}  // namespace file_name_detail

// The parts of a file name (no directory), or nothing when it is not a log
// file's name. The views point into `file`.
constexpr std::optional<FileName> parse_file_name(std::string_view file) {
  using file_name_detail::all_digits;
  if (file.size() < kFileSuffix.size() || file.substr(file.size() - kFileSuffix.size()) != kFileSuffix)
    return std::nullopt;
  std::string_view stem = file.substr(0, file.size() - kFileSuffix.size());
  std::size_t dash = stem.rfind('-');
  if (dash == std::string_view::npos) return std::nullopt;
  std::string_view digits = stem.substr(dash + 1);
  if (digits.empty() || digits.size() > kMaxSequenceDigits || !all_digits(digits)) return std::nullopt;
  stem = stem.substr(0, dash);
  if (stem.size() < kDateDigits + 1 || stem[stem.size() - kDateDigits - 1] != '-') return std::nullopt;
  std::string_view date = stem.substr(stem.size() - kDateDigits);
  if (!all_digits(date)) return std::nullopt;
  std::uint32_t sequence = 0;
  for (char c : digits) sequence = sequence * 10 + static_cast<std::uint32_t>(c - '0');
  return FileName{stem.substr(0, stem.size() - kDateDigits - 1), date, sequence};
}

// NAME-YYYYMMDD-NNN.tlog; `sequence` is at most kMaxSequence.
inline std::string format_file_name(std::string_view prefix, std::string_view date, std::uint32_t sequence) {
  char digits[kMaxSequenceDigits + 1];
  std::size_t count = 0;
  do {
    digits[count++] = static_cast<char>('0' + sequence % 10);
    sequence /= 10;
  } while (sequence != 0 && count < sizeof digits);
  while (count < kMinSequenceDigits) digits[count++] = '0';
  std::string name;
  name.reserve(prefix.size() + date.size() + count + 2 + kFileSuffix.size());
  name.append(prefix).append(1, '-').append(date).append(1, '-');
  while (count > 0) name.push_back(digits[--count]);
  name.append(kFileSuffix);
  return name;
}

}  // namespace terse::schema
