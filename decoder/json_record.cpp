// A record as one JSON object, as `terse cat -o json` and the shipper
// write it.
#include <cmath>
#include <cstring>
#include <iterator>
#include <string>

#include <fmt/format.h>

#include <terse/decoder.hpp>
#include <terse/per_thread.hpp>
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

namespace {

// A scalar as JSON: through the pointer where the room is known, else
// (long double, pointer: rare) as fmt writes it.
[[gnu::always_inline]] inline void write_json_scalar(TextOut& json, const Arg& a) {
  if (std::size_t room = json_scalar_room(a); room != kNotWritten) {
    json.advance(put_json_scalar(json.room(room), a));
    return;
  }
  switch (static_cast<TypeTag>(a.tag)) {
    case TypeTag::f80:
    case TypeTag::f128:
      if (std::isfinite(a.f80)) {
        fmt::format_to(std::back_inserter(json.flush()), "{}", a.f80);
      } else {
        json.advance(put_json_non_finite(json.room(kMostFloatChars), static_cast<double>(a.f80)));
      }
      return;
    case TypeTag::pointer:
      fmt::format_to(std::back_inserter(json.flush()), "\"{}\"",
                     reinterpret_cast<const void*>(static_cast<std::uintptr_t>(a.u)));
      return;
    default:
      break;  // structured: not a scalar, see append_json_value
  }
  json += "null";
}

}  // namespace

void detail::append_json_scalar(std::string& out, const Arg& a) {
  TextOut json(out);
  write_json_scalar(json, a);
}

void append_json_record(std::string& out, const Record& record, const TimeStyle& style) {
  auto& message = per_thread<std::string>([] {});
  message.clear();
  render_message(record, message, &style);
  append_json_record(out, record, style, message, TextRewrite{});
}

namespace {

// "args": an array, or with argument names an object, by name or by
// position (a decimal string) for an argument given without one.
void append_json_args(TextOut& json, const Record& record, const TextRewrite& rewrite) {
  const Site& site = *record.site;
  bool named = !site.arg_names.empty();
  json += named ? '{' : '[';
  if (!site.types.roots.empty()) reset_render_budget();  // user types render their text
  for (std::size_t i = 0; i < record.args.size(); ++i) {
    const Arg& a = record.args[i];
    if (i > 0) json += ',';
    if (named) {
      const std::string& name = site.arg_names[i];
      if (name.empty()) {
        json += '"';
        json.decimal(i);
        json += "\":";
      } else {
        json.json_string(name);
        json += ':';
      }
    }
    if (is_structured(a)) {
      append_json_value(json.flush(), StructuredView{&site.types, a.type, a.text}, rewrite);
    } else if (rewrite && a.tag == static_cast<std::uint8_t>(TypeTag::string) && !a.null_string) {
      std::string text(a.text);
      rewrite(text);
      json.json_string(text);
    } else {
      write_json_scalar(json, a);
    }
  }
  json += named ? '}' : ']';
}

}  // namespace

void append_json_record(std::string& out, const Record& record, const TimeStyle& style, std::string_view message,
                        const TextRewrite& rewrite) {
  bool is_log = record.site != nullptr;
  TextOut json(out);
  std::int64_t seconds, nanos;
  split(record.unix_ns, seconds, nanos);
  const Rfc3339Second& second = rfc3339_second(seconds, style.utc);
  json += "{\"time\":\"";
  json += second.prefix;
  char* fraction = json.room(9);
  put_nanos(fraction, static_cast<std::uint32_t>(nanos));
  json.advance(fraction + 9);
  json += second.zone;
  json += "\",\"level\":\"";
  json += is_log ? level_name(record.site->level) : "warn";
  json += "\",\"thread\":";
  json.decimal(record.thread->shown_id());
  json += ",\"file\":";
  json.json_string(is_log ? std::string_view(record.site->file) : std::string_view(schema::kOwnFileName));
  json += ",\"line\":";
  json.decimal(is_log ? record.site->line : 0u);
  json += ",\"message\":";
  json.json_string(message);
  json += ",\"args\":";
  if (record.kind == RecordKind::dropped) {
    json += '[';
    json.decimal(record.dropped_count);
    json += "]}\n";
    return;
  }
  if (record.kind == RecordKind::suppressed) {
    json += "[],\"suppressed\":";
    json.decimal(record.suppressed);
    json += "}\n";
    return;
  }
  append_json_args(json, record, rewrite);
  if (record.suppressed > 0) {
    json += ",\"suppressed\":";
    json.decimal(record.suppressed);
  }
  if (record.flight) json += ",\"flight\":true";
  if (!record.context.empty()) append_json_context(json.flush(), record.context);
  json += "}\n";
}

}  // namespace terse::decoder
