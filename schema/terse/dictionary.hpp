// Dictionary entries (FORMAT.md §6), encoded into memory the caller owns:
// the collector appends them to its batch, and the crash path writes them
// from a signal handler, where nothing may allocate. An entry is written
// whole or not at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <terse/schema.hpp>
#include <terse/wire.hpp>

namespace terse::schema {

// A site entry's fields; `extension` is appended as it is (the 1.1
// arg_types and arg_names, already encoded).
struct SiteEntry {
  std::uint32_t id = 0;
  std::uint8_t level = 0;
  std::uint32_t line = 0;
  std::string_view file;
  std::string_view format;
  const std::uint8_t* arg_tags = nullptr;
  std::size_t arg_count = 0;
  std::string_view extension;
};

struct ThreadEntry {
  std::uint32_t index = 0;
  std::uint64_t os_tid = 0;
  std::string_view name;
};

namespace dictionary_detail {

constexpr std::size_t varint_size(std::uint64_t value) {
  std::size_t n = 1;
  for (; value >= 0x80; value >>= 7) ++n;
  return n;
}

constexpr std::size_t text_size(std::string_view text) { return varint_size(text.size()) + text.size(); }

inline char* put_text(char* out, std::string_view text) {
  out = wire::write_varint(out, text.size());
  if (!text.empty()) std::memcpy(out, text.data(), text.size());
  return out + text.size();
}

constexpr std::size_t body_size(const SiteEntry& e) {
  return varint_size(e.id) + 1 + varint_size(e.line) + text_size(e.file) + text_size(e.format) +
         varint_size(e.arg_count) + e.arg_count + e.extension.size();
}

constexpr std::size_t body_size(const ThreadEntry& e) {
  return varint_size(e.index) + varint_size(e.os_tid) + text_size(e.name);
}

inline char* put_body(char* out, const SiteEntry& e) {
  out = wire::write_varint(out, e.id);
  *out++ = static_cast<char>(e.level);
  out = wire::write_varint(out, e.line);
  out = put_text(out, e.file);
  out = put_text(out, e.format);
  out = wire::write_varint(out, e.arg_count);
  if (e.arg_count != 0) std::memcpy(out, e.arg_tags, e.arg_count);
  out += e.arg_count;
  if (!e.extension.empty()) std::memcpy(out, e.extension.data(), e.extension.size());
  return out + e.extension.size();
}

inline char* put_body(char* out, const ThreadEntry& e) {
  out = wire::write_varint(out, e.index);
  out = wire::write_varint(out, e.os_tid);
  return put_text(out, e.name);
}

constexpr DictKind kind_of(const SiteEntry&) { return DictKind::site; }
constexpr DictKind kind_of(const ThreadEntry&) { return DictKind::thread; }

}  // namespace dictionary_detail

// The bytes the whole entry takes: kind, length and body.
template <typename Entry>
constexpr std::size_t entry_size(const Entry& entry) {
  std::size_t body = dictionary_detail::body_size(entry);
  return 1 + dictionary_detail::varint_size(body) + body;
}

// Writes the entry at `out` and returns its end, or returns nullptr and
// writes nothing when it does not fit before `end`. Allocates nothing.
template <typename Entry>
char* encode_entry(const Entry& entry, char* out, const char* end) {
  std::size_t body = dictionary_detail::body_size(entry);
  std::size_t total = 1 + dictionary_detail::varint_size(body) + body;
  if (out == nullptr || end < out || static_cast<std::size_t>(end - out) < total) return nullptr;
  *out++ = static_cast<char>(dictionary_detail::kind_of(entry));
  out = wire::write_varint(out, body);
  return dictionary_detail::put_body(out, entry);
}

// The entry appended to `dictionary`.
template <typename Entry>
void append_entry(std::string& dictionary, const Entry& entry) {
  std::size_t at = dictionary.size();
  dictionary.resize(at + entry_size(entry));
  encode_entry(entry, dictionary.data() + at, dictionary.data() + dictionary.size());
}

// One entry of a dictionary payload as it is read: its kind, its body, and
// the offset in the payload where it ends.
struct EntryView {
  std::uint8_t kind = 0;
  std::string_view body;
  std::size_t end = 0;
};

// Calls visit(entry) for each entry of a dictionary payload, in order, for
// as long as visit returns true. False when an entry's kind or length runs
// past the payload's end (the entries before it were visited); kinds newer
// than the reader's are visited like any other (FORMAT.md §6 has them
// skipped).
template <typename Visit>
bool for_each_entry(std::string_view payload, Visit&& visit) {
  wire::ByteReader r(payload);
  while (!r.empty()) {
    EntryView entry;
    if (!r.le(entry.kind) || !r.length_prefixed(entry.body, payload.size())) return false;
    entry.end = static_cast<std::size_t>(r.position() - reinterpret_cast<const unsigned char*>(payload.data()));
    if (!visit(entry)) return true;
  }
  return true;
}

}  // namespace terse::schema
