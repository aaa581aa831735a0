// A record as one JSON object, as `terse cat -o json` and the shipper
// write it.
#include <cmath>
#include <cstring>
#include <iterator>
#include <string>

#include <fmt/format.h>

#include <terse/decoder.hpp>
#include <terse/schema.hpp>

#include "message.hpp"
#include "structured.hpp"
#include "text_put.hpp"
#include "time_text.hpp"

namespace terse::decoder {

using namespace detail;
using schema::TypeTag;

void append_json_string(std::string& out, std::string_view text) {
  Room room(out, json_string_room(text.size()));
  room.finish(put_json_string(room.begin(), text));
}

void detail::append_json_scalar(std::string& out, const Arg& a) {
  if (std::size_t size = json_scalar_room(a); size != kNotWritten) {
    Room room(out, size);
    room.finish(put_json_scalar(room.begin(), a));
    return;
  }
  switch (static_cast<TypeTag>(a.tag)) {
    case TypeTag::f80:
    case TypeTag::f128:
      if (std::isfinite(a.f80)) {
        fmt::format_to(std::back_inserter(out), "{}", a.f80);
      } else {
        Room room(out, kMostFloatChars);
        room.finish(put_json_non_finite(room.begin(), static_cast<double>(a.f80)));
      }
      return;
    case TypeTag::pointer:
      fmt::format_to(std::back_inserter(out), "\"{}\"",
                     reinterpret_cast<const void*>(static_cast<std::uintptr_t>(a.u)));
      return;
    default:
      break;  // structured: not a scalar, see append_json_value
  }
  out += "null";
}

namespace {

// Literal keys and punctuation of a plain JSON object, and the room its
// optional keys take: an upper bound, not a count.
constexpr std::size_t kJsonObjectFixedRoom = 128;

// append_json_record's object for a log record render_message writes
// through format_plain: sized, then written through a pointer. False,
// having written nothing, for any other record.
bool append_plain_json_record(std::string& out, const Record& record, const TimeStyle& style) {
  if (record.kind != RecordKind::log || !renders_plain(record)) return false;
  const Site& site = *record.site;
  std::size_t message_room = plain_message_room(record);
  if (message_room == kNotWritten) return false;
  std::size_t args_room = 0;
  for (const Arg& a : record.args) {
    std::size_t n = json_scalar_room(a);
    if (n == kNotWritten) return false;
    args_room += n + 1;
  }
  // The whole message first: an escape looks at a whole UTF-8 sequence,
  // which may span a literal and an argument.
  thread_local std::string message;
  message.clear();
  Room message_text(message, message_room);
  message_text.finish(put_plain_message(message_text.begin(), site.format, record.args));

  std::int64_t seconds, nanos;
  split(record.unix_ns, seconds, nanos);
  const Rfc3339Second& second = rfc3339_second(seconds, style.utc);
  std::size_t size = kJsonObjectFixedRoom + second.prefix.size() + 9 + second.zone.size() + kMostLevelChars +
                     2 * kMostIntegerChars + json_string_room(site.file.size()) + json_string_room(message.size()) +
                     args_room + kMostIntegerChars;
  Room room(out, size);
  char* to = room.begin();
  to = put(to, "{\"time\":\"", 9);
  to = put(to, second.prefix);
  put_nanos(to, static_cast<std::uint32_t>(nanos));
  to = put(to + 9, second.zone);
  to = put(to, "\",\"level\":\"", 11);
  to = put(to, level_name(site.level), std::strlen(level_name(site.level)));
  to = put(to, "\",\"thread\":", 11);
  to = put_decimal(to, record.thread->shown_id());
  to = put(to, ",\"file\":", 8);
  to = put_json_string(to, site.file);
  to = put(to, ",\"line\":", 8);
  to = put_decimal(to, std::uint64_t{site.line});
  to = put(to, ",\"message\":", 11);
  to = put_json_string(to, message);
  to = put(to, ",\"args\":[", 9);
  for (std::size_t i = 0; i < record.args.size(); ++i) {
    if (i > 0) *to++ = ',';
    to = put_json_scalar(to, record.args[i]);
  }
  *to++ = ']';
  if (record.suppressed > 0) {
    to = put(to, ",\"suppressed\":", 14);
    to = put_decimal(to, record.suppressed);
  }
  if (record.flight) to = put(to, ",\"flight\":true", 14);
  if (record.context.empty()) {
    to = put(to, "}\n", 2);
    room.finish(to);
    return true;
  }
  room.finish(to);
  append_json_context(out, record.context);
  out += "}\n";
  return true;
}

}  // namespace

void append_json_record(std::string& out, const Record& record, const TimeStyle& style) {
  if (append_plain_json_record(out, record, style)) return;
  thread_local std::string message;
  message.clear();
  render_message(record, message, nullptr, &style);
  append_json_record(out, record, style, message, TextRewrite{});
}

void append_json_record(std::string& out, const Record& record, const TimeStyle& style, std::string_view message,
                        const TextRewrite& rewrite) {
  bool is_log = record.site != nullptr;
  out += "{\"time\":\"";
  append_time_rfc3339(out, record.unix_ns, style);
  out += "\",\"level\":\"";
  out += is_log ? level_name(record.site->level) : "warn";
  out += "\",\"thread\":";
  append_integer(out, record.thread->shown_id());
  out += ",\"file\":";
  append_json_string(out, is_log ? std::string_view(record.site->file) : std::string_view(schema::kOwnFileName));
  out += ",\"line\":";
  append_integer(out, is_log ? record.site->line : 0u);
  out += ",\"message\":";
  append_json_string(out, message);
  out += ",\"args\":";
  if (record.kind == RecordKind::dropped) {
    fmt::format_to(std::back_inserter(out), "[{}]}}\n", record.dropped_count);
    return;
  }
  if (record.kind == RecordKind::suppressed) {
    fmt::format_to(std::back_inserter(out), "[],\"suppressed\":{}}}\n", record.suppressed);
    return;
  }
  // With argument names, "args" is an object: by name, or by position
  // (a decimal string) for an argument given without one.
  const Site& site = *record.site;
  bool named = !site.arg_names.empty();
  out += named ? '{' : '[';
  if (!site.types.roots.empty()) detail::reset_render_budget();  // user types render their text
  for (std::size_t i = 0; i < record.args.size(); ++i) {
    const Arg& a = record.args[i];
    if (i > 0) out += ',';
    if (named) {
      const std::string& name = site.arg_names[i];
      if (name.empty()) {
        fmt::format_to(std::back_inserter(out), "\"{}\":", i);
      } else {
        append_json_string(out, name);
        out += ':';
      }
    }
    if (is_structured(a)) {
      detail::append_json_value(out, detail::StructuredView{&site.types, a.type, a.text}, rewrite);
    } else if (rewrite && a.tag == static_cast<std::uint8_t>(TypeTag::string) && !a.null_string) {
      std::string text(a.text);
      rewrite(text);
      append_json_string(out, text);
    } else {
      detail::append_json_scalar(out, a);
    }
  }
  out += named ? '}' : ']';
  if (record.suppressed > 0) fmt::format_to(std::back_inserter(out), ",\"suppressed\":{}", record.suppressed);
  if (record.flight) out += ",\"flight\":true";
  append_json_context(out, record.context);
  out += "}\n";
}
}  // namespace terse::decoder
