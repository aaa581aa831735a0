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

namespace {

// A field with a spec is fmt's to write, into the string itself.
template <typename T>
void put_with_spec(TextOut& line, const std::string& spec, const T& value) {
  fmt::vformat_to(std::back_inserter(line.flush()), spec, fmt::make_format_args(value));
}

}  // namespace

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
}

void LinePattern::append(std::string& out, const Record& record, const TimeStyle& style) const {
  append_line(out, record, style, nullptr);
}

void LinePattern::append(std::string& out, const Record& record, const TimeStyle& style,
                         std::string_view message) const {
  append_line(out, record, style, &message);
}

void LinePattern::append_message(detail::TextOut& line, const Piece& piece, const Record& record,
                                 const TimeStyle& style, const std::string_view* rendered) const {
  if (!piece.text.empty()) {
    std::string message;
    if (rendered) {
      message = *rendered;
    } else {
      render_message(record, message, &style);
    }
    put_with_spec(line, piece.text, message);
  } else if (rendered) {
    line += *rendered;
  } else if (!write_plain_message(line, record)) {
    render_message(record, line.flush(), &style);
  }
  if (record.kind == RecordKind::log && record.suppressed > 0) {
    line += " [";
    line.decimal(record.suppressed);
    line += " suppressed]";
  }
  if (!has_context_field_ && !record.context.empty()) {
    line += " {";
    append_context_text(line.flush(), record.context);
    line += '}';
  }
}

void LinePattern::append_line(std::string& out, const Record& record, const TimeStyle& style,
                              const std::string_view* rendered) const {
  // Log records and suppressed-calls reports have a site; drop reports do not.
  bool is_log = record.site != nullptr;
  TextOut line(out);
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
          put_with_spec(line, piece.text, time);
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
          put_with_spec(line, piece.text, name);
        }
        if (color) line += "\x1b[0m";
        if (record.flight) line += kFlightMarker;
        break;
      }
      case Field::thread:
        if (piece.text.empty()) {
          line.decimal(record.thread->shown_id());
        } else {
          put_with_spec(line, piece.text, record.thread->shown_id());
        }
        break;
      case Field::file: {
        std::string_view file = is_log ? std::string_view(record.site->file) : std::string_view(schema::kOwnFileName);
        if (piece.text.empty()) {
          line += file;
        } else {
          put_with_spec(line, piece.text, file);
        }
        break;
      }
      case Field::line:
        if (piece.text.empty()) {
          line.decimal(is_log ? record.site->line : 0u);
        } else {
          put_with_spec(line, piece.text, is_log ? record.site->line : 0u);
        }
        break;
      case Field::message:
        append_message(line, piece, record, style, rendered);
        break;
      case Field::context:
        if (piece.text.empty()) {
          append_context_text(line.flush(), record.context);
        } else {
          std::string text;
          append_context_text(text, record.context);
          put_with_spec(line, piece.text, text);
        }
        break;
    }
  }
  line += '\n';
}

}  // namespace terse::decoder
