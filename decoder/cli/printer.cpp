#include "printer.hpp"

#include "cursor.hpp"

namespace terse::cli {

Printer::Printer(std::optional<decoder::LinePattern> pattern, decoder::TimeStyle style,
                 const std::optional<std::regex>& grep, const Masker* mask)
    : pattern_(std::move(pattern)), style_(style), grep_(grep), mask_(mask) {
  if (mask_) rewrite_ = [this](std::string& text) { mask_->apply(text); };
}

bool Printer::print(const decoder::Record& record, std::string& out) {
  if (grep_ || mask_) {
    message_.clear();
    decoder::render_message(record, message_, nullptr, &style_);
    // Matching what is shown: a masked value cannot be found by --grep.
    if (mask_) mask_->apply(message_);
    if (grep_ && !std::regex_search(message_, *grep_)) return false;
    if (pattern_) {
      pattern_->append(out, record, style_, message_);
    } else {
      decoder::append_json_record(out, record, style_, message_, rewrite_);
    }
    return true;
  }
  if (pattern_) {
    pattern_->append(out, record, style_);
  } else {
    decoder::append_json_record(out, record, style_);
  }
  return true;
}

void add_cursor_key(std::string& object, const std::vector<InputPosition>& positions) {
  add_cursor_key(object, encode_cursor(positions));
}

void add_cursor_key(std::string& object, std::string_view cursor) {
  bool line = !object.empty() && object.back() == '\n';
  object.resize(object.size() - (line ? 2 : 1));
  object += ",\"cursor\":\"";
  object += cursor;
  object += line ? "\"}\n" : "\"}";
}

std::string json_schema_header(bool with_cursor) {
  std::string line = R"j({"schema":"terse.record/1","fields":{)j"
                     R"j("time":"string: RFC 3339, nanoseconds, zone offset (Z with --utc)",)j"
                     R"j("level":"string: trace, debug, info, warn, error or critical",)j"
                     R"j("thread":"integer: OS thread id",)j"
                     R"j("file":"string: source file of the call site (terse for a drop report)",)j"
                     R"j("line":"integer: source line of the call site",)j"
                     R"j("message":"string: the formatted message",)j"
                     R"j("args":"array: the arguments as JSON values (a drop report: [records dropped])",)j"
                     R"j("suppressed":"integer, only when not 0: calls a rate-limited call site suppressed )j"
                     R"j(since its previous record (a report at stop: after its last)",)j"
                     R"j("flight":"true, only for a record of the flight recorder: kept in memory and written )j"
                     R"j(when a trigger or a crash came, not in the normal stream",)j"
                     R"j("context":"object, only when not empty: the terse::Context fields open on the thread, )j"
                     R"j(key to value")j";
  if (with_cursor) line += R"j(,"cursor":"string: opaque; --after-cursor resumes after this record")j";
  return line + "}}\n";
}

}  // namespace terse::cli
