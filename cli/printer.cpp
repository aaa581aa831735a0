#include "printer.hpp"

namespace terse::cli {

namespace {

reader::FormatOptions with_mask(reader::FormatOptions options, const Masker* mask) {
  if (mask) options.rewrite = [mask](std::string& text) { mask->apply(text); };
  return options;
}

}  // namespace

Printer::Printer(reader::FormatOptions options, const std::optional<std::regex>& grep, const Masker* mask)
    : formatter_(with_mask(std::move(options), mask)), grep_(grep) {}

bool Printer::print(const reader::Record& record, std::string& out) {
  if (!grep_) {
    formatter_.append(record, out);
    return true;
  }
  // Matching what is shown: a masked value cannot be found by --grep.
  message_.clear();
  formatter_.message(record, message_);
  if (!std::regex_search(message_, *grep_)) return false;
  formatter_.append(record, message_, out);
  return true;
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
