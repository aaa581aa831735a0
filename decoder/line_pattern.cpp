// The text line of `terse cat` and the console: a --format pattern's
// pieces, parsed once, filled in for each record.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include <terse/decoder.hpp>
#include <terse/schema.hpp>

#include "message.hpp"
#include "text_put.hpp"
#include "time_text.hpp"

namespace terse::decoder {

using namespace detail;

LinePattern::LinePattern(std::string pattern) {
  // fmt is the judge of what a valid pattern is; the pieces below only
  // spare it the named-argument lookups on every line.
  try {
    std::string probe;
    fmt::vformat_to(
        std::back_inserter(probe), pattern,
        fmt::make_format_args(fmt::arg("time", ""), fmt::arg("level", ""), fmt::arg("thread", 0u), fmt::arg("file", ""),
                              fmt::arg("line", 0u), fmt::arg("message", ""), fmt::arg("context", "")));
  } catch (const fmt::format_error& e) {
    throw std::invalid_argument("bad --format pattern '" + pattern + "': " + e.what() +
                                " (placeholders: {time} {level} {thread} {file} {line} {message} {context})");
  }
  static const std::pair<std::string_view, Field> kFields[] = {
      {"time", Field::time}, {"level", Field::level},     {"thread", Field::thread},  {"file", Field::file},
      {"line", Field::line}, {"message", Field::message}, {"context", Field::context}};
  std::string literal;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if ((c == '{' || c == '}') && i + 1 < pattern.size() && pattern[i + 1] == c) {
      literal += c;
      ++i;
      continue;
    }
    if (c != '{') {
      literal += c;
      continue;
    }
    std::size_t close = pattern.find('}', i);
    std::string_view inside(pattern.data() + i + 1, close - i - 1);
    std::size_t colon = inside.find(':');
    std::string_view name = inside.substr(0, colon);
    Field field = Field::literal;
    for (const auto& [known, value] : kFields)
      if (name == known) field = value;
    if (field == Field::context) has_context_field_ = true;
    if (!literal.empty()) pieces_.push_back({Field::literal, std::move(literal)});
    literal.clear();
    pieces_.push_back(
        {field, colon == std::string_view::npos ? std::string() : "{" + std::string(inside.substr(colon)) + "}"});
    i = close;
  }
  if (!literal.empty()) pieces_.push_back({Field::literal, std::move(literal)});
  plain_ = !has_context_field_;
  for (const Piece& piece : pieces_) {
    if (piece.field != Field::literal && !piece.text.empty()) plain_ = false;
    switch (piece.field) {
      case Field::literal:
        fixed_room_ += piece.text.size();
        break;
      case Field::time:
        ++count_.time;
        break;
      case Field::level:
        fixed_room_ += kMostLevelChars;
        break;
      case Field::thread:
      case Field::line:
        fixed_room_ += kMostIntegerChars;
        break;
      case Field::file:
        ++count_.file;
        break;
      case Field::message:
        ++count_.message;
        break;
      case Field::context:
        break;
    }
  }
}

void LinePattern::append(std::string& out, const Record& record, const TimeStyle& style) const {
  append_line(out, record, style, nullptr);
}

void LinePattern::append(std::string& out, const Record& record, const TimeStyle& style,
                         std::string_view message) const {
  append_line(out, record, style, &message);
}

bool LinePattern::append_plain_line(std::string& out, const Record& record, const TimeStyle& style,
                                    const std::string_view* rendered) const {
  // A log record without suppressed calls or context fields: the pieces are
  // exactly those of the pattern.
  if (!plain_ || record.kind != RecordKind::log || record.suppressed > 0 || !record.context.empty()) return false;
  std::size_t message_room = rendered                ? rendered->size()
                             : renders_plain(record) ? plain_message_room(record)
                                                     : kNotWritten;
  if (message_room == kNotWritten) return false;
  const Site& site = *record.site;
  std::int64_t seconds, nanos;
  split(record.unix_ns, seconds, nanos);
  const std::string& prefix = time_prefix(seconds, style.utc);
  auto shown = static_cast<std::size_t>(std::clamp(style.digits, 0, 9));
  std::size_t size = fixed_room_ + count_.time * (prefix.size() + 9) + count_.file * site.file.size() +
                     count_.message * message_room + 1;
  Room room(out, size);
  char* to = room.begin();
  for (const Piece& piece : pieces_) {
    switch (piece.field) {
      case Field::literal:
        to = put(to, piece.text);
        break;
      case Field::time:
        if (shown == 0) {
          to = put(to, prefix.data(), prefix.size() - 1);  // no '.'
        } else {
          to = put(to, prefix);
          put_nanos(to, static_cast<std::uint32_t>(nanos));
          to += shown;
        }
        break;
      case Field::level: {
        const char* color = style.color ? level_color(site.level) : nullptr;
        if (color) to = put(to, color, std::strlen(color));
        to = put(to, level_name(site.level), std::strlen(level_name(site.level)));
        if (color) to = put(to, "\x1b[0m", 4);
        if (record.flight) to = put(to, kFlightMarker, std::strlen(kFlightMarker));
        break;
      }
      case Field::thread:
        to = put_decimal(to, record.thread->shown_id());
        break;
      case Field::file:
        to = put(to, site.file);
        break;
      case Field::line:
        to = put_decimal(to, std::uint64_t{site.line});
        break;
      case Field::message:
        to = rendered ? put(to, *rendered) : put_plain_message(to, site.format, record.args);
        break;
      case Field::context:
        break;  // not in a plain pattern
    }
  }
  *to++ = '\n';
  room.finish(to);
  return true;
}

void LinePattern::append_line(std::string& out, const Record& record, const TimeStyle& style,
                              const std::string_view* rendered) const {
  if (append_plain_line(out, record, style, rendered)) return;
  // Log records and suppressed-calls reports have a site; drop reports do not.
  bool is_log = record.site != nullptr;
  // The pieces without a spec go through `line`; everything else is written
  // to `out` after flushing it, so the order is kept.
  Staged line(out);
  auto put_with_spec = [&line](const Piece& piece, const auto& value) {
    if constexpr (std::is_integral_v<std::decay_t<decltype(value)>>) {
      if (piece.text.empty()) {
        append_integer(line, value);
        return;
      }
    }
    std::string& text = line.flush();
    if (piece.text.empty()) {
      fmt::format_to(std::back_inserter(text), "{}", value);
    } else {
      fmt::vformat_to(std::back_inserter(text), piece.text, fmt::make_format_args(value));
    }
  };
  for (const Piece& piece : pieces_) {
    switch (piece.field) {
      case Field::literal:
        line += piece.text;
        break;
      case Field::time:
        if (piece.text.empty()) {
          append_time_to(line, record.unix_ns, style);
        } else {
          std::string time;
          append_time(time, record.unix_ns, style);
          put_with_spec(piece, time);
        }
        break;
      case Field::level: {
        std::uint8_t level = is_log ? record.site->level : static_cast<std::uint8_t>(LevelValue::warn);
        std::string_view name = level_name(level);
        const char* color = style.color ? level_color(level) : nullptr;
        if (color) line += color;
        if (piece.text.empty()) {
          line += name;
        } else {
          put_with_spec(piece, name);
        }
        if (color) line += "\x1b[0m";
        if (record.flight) line += kFlightMarker;
        break;
      }
      case Field::thread:
        put_with_spec(piece, record.thread->shown_id());
        break;
      case Field::file: {
        std::string_view file = is_log ? std::string_view(record.site->file) : std::string_view(schema::kOwnFileName);
        if (piece.text.empty()) {
          line += file;
        } else {
          put_with_spec(piece, file);
        }
        break;
      }
      case Field::line:
        put_with_spec(piece, is_log ? record.site->line : 0u);
        break;
      case Field::message:
        if (rendered) {
          if (piece.text.empty()) {
            line += *rendered;
          } else {
            put_with_spec(piece, *rendered);
          }
        } else if (piece.text.empty()) {
          if (renders_plain(record)) {
            format_plain(line, record.site->format, record.args);  // as render_message() would
          } else {
            render_message(record, line.flush(), nullptr, &style);
          }
        } else {
          std::string message;
          render_message(record, message, nullptr, &style);
          put_with_spec(piece, message);
        }
        if (record.kind == RecordKind::log && record.suppressed > 0)
          fmt::format_to(std::back_inserter(line.flush()), " [{} suppressed]", record.suppressed);
        if (!has_context_field_ && !record.context.empty()) {
          std::string& text = line.flush();
          text += " {";
          append_context_text(text, record.context);
          text += '}';
        }
        break;
      case Field::context:
        if (piece.text.empty()) {
          append_context_text(line.flush(), record.context);
        } else {
          std::string text;
          append_context_text(text, record.context);
          put_with_spec(piece, text);
        }
        break;
    }
  }
  line += '\n';
}

}  // namespace terse::decoder
