// A record's message as fmt::format printed it (render_message), and the
// plain path that spares fmt for sites of `{}` fields and scalar arguments,
// shared with the text line and the JSON object. Internal to the decoder's
// rendering files.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <terse/decoder.hpp>
#include <terse/schema.hpp>

#include "structured.hpp"
#include "text_put.hpp"

namespace terse::decoder::detail {

using schema::LevelValue;

inline bool is_structured(const Arg& a) { return a.tag == static_cast<std::uint8_t>(schema::TypeTag::structured); }

// Whether a record's message is FormatCheck::plain: the text between the
// fields as it is, and each argument as fmt writes it for `{}` (the
// compiled "{}" calls the same writers as fmt's runtime formatting does for
// an empty spec), so the bytes are the same without parsing the format
// string for every record.
inline bool renders_plain(const Record& record) {
  return record.kind == RecordKind::log && record.site->check.plain && record.site->types.roots.empty() &&
         record.site->arg_names.empty();
}

// Room for a plain message, or kNotWritten for a record renders_plain()
// does not take or with an argument only fmt writes (long double, pointer:
// rare). Arguments the format does not use are counted too: room to spare.
inline std::size_t plain_message_room(const Record& record) {
  if (!renders_plain(record)) return kNotWritten;
  std::size_t room = record.site->format.size();
  for (const Arg& a : record.args) {
    std::size_t n = scalar_text_room(a);
    if (n == kNotWritten) return kNotWritten;
    room += n;
  }
  return room;
}

// A plain message through a pointer, into room plain_message_room made.
inline char* put_plain_message(char* to, std::string_view format, std::span<const Arg> args) {
  const char* p = format.data();
  const char* end = p + format.size();
  for (std::size_t next = 0;; ++next) {
    const auto* open = static_cast<const char*>(std::memchr(p, '{', static_cast<std::size_t>(end - p)));
    if (open == nullptr) return put(to, p, static_cast<std::size_t>(end - p));
    to = put(to, p, static_cast<std::size_t>(open - p));
    to = put_scalar_text(to, args[next]);
    p = open + 2;
  }
}

// A plain message into `out`: false, having written nothing, for a record
// renders_plain() does not take or with an argument only fmt writes.
inline bool write_plain_message(TextOut& out, const Record& record) {
  std::size_t room = plain_message_room(record);
  if (room == kNotWritten) return false;
  out.advance(put_plain_message(out.room(room), record.site->format, record.args));
  return true;
}

}  // namespace terse::decoder::detail
