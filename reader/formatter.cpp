// terse::reader::Formatter over the decoder's line patterns and JSON writer.
#include <optional>
#include <stdexcept>
#include <utility>

#include <terse/decoder.hpp>
#include <terse/reader.hpp>

#include "reader_detail.hpp"

namespace terse::reader {

const char* default_pattern() { return decoder::kDefaultPattern; }

struct Formatter::Impl {
  FormatOptions options;
  std::optional<decoder::LinePattern> pattern;  // none: JSON
  decoder::TimeStyle style;
};

namespace {

const decoder::Record& raw(const Record& record) { return *detail::Access::data(record).record; }

// "args" of a record written without its arguments holds [] or {}: the
// first ,"args": is the key itself, since every quote inside the string
// values before it is escaped.
void null_args(std::string& json, std::size_t from) {
  std::size_t key = json.find(",\"args\":", from);
  if (key == std::string::npos) return;
  json.replace(key + 8, 2, "null");
}

}  // namespace

Formatter::Formatter(FormatOptions options) {
  auto impl = std::make_shared<Impl>();
  impl->style.utc = options.utc;
  impl->style.digits = options.time_digits;
  impl->style.color = options.color;
  if (options.time_digits < 0 || options.time_digits > 9)
    throw std::invalid_argument("time_digits is " + std::to_string(options.time_digits) + ": it must be 0 to 9");
  // LinePattern's own message names what is wrong with the pattern.
  if (!options.json) impl->pattern.emplace(options.pattern);
  impl->options = std::move(options);
  impl_ = std::move(impl);
}

const FormatOptions& Formatter::options() const { return impl_->options; }

bool Formatter::message(const Record& record, std::string& out) const {
  std::size_t start = out.size();
  bool ok = decoder::render_message(raw(record), out, &impl_->style).ok();
  if (const auto& rewrite = impl_->options.rewrite) {
    std::string text = out.substr(start);
    rewrite(text);
    out.replace(start, std::string::npos, text);
  }
  return ok;
}

void Formatter::append(const Record& record, std::string& out) const {
  const Impl& m = *impl_;
  if (!m.options.rewrite && m.options.json_args) {
    if (m.pattern) {
      m.pattern->append(out, raw(record), m.style);
    } else {
      decoder::append_json_record(out, raw(record), m.style);
    }
    return;
  }
  std::string text;
  message(record, text);
  append(record, text, out);
}

void Formatter::append(const Record& record, std::string_view message, std::string& out) const {
  const Impl& m = *impl_;
  if (m.pattern) {
    m.pattern->append(out, raw(record), m.style, message);
    return;
  }
  if (m.options.json_args || raw(record).kind != decoder::RecordKind::log) {
    decoder::append_json_record(out, raw(record), m.style, message, m.options.rewrite);
    return;
  }
  decoder::Record bare = raw(record);
  bare.args = {};
  std::size_t start = out.size();
  decoder::append_json_record(out, bare, m.style, message, decoder::TextRewrite{});
  null_args(out, start);
}

}  // namespace terse::reader
