// Reads a format string from a file before fmt ever sees it: fmt trusts its
// format strings, and a hostile one could ask for a width of two billion.
#include <string>

#include <terse/decoder.hpp>
#include <terse/schema.hpp>

namespace terse::decoder {
namespace {

class Parser {
 public:
  Parser(std::string_view format, std::span<const std::uint8_t> tags, std::span<const std::string> names,
         FormatCheck& check)
      : f_(format), tags_(tags), names_(names), check_(check) {}

  bool run() {
    while (i_ < f_.size()) {
      char c = f_[i_];
      if (c == '}') {
        if (i_ + 1 < f_.size() && f_[i_ + 1] == '}') {
          i_ += 2;
          continue;
        }
        return fail("unmatched '}'");
      }
      if (c != '{') {
        ++i_;
        continue;
      }
      if (i_ + 1 < f_.size() && f_[i_ + 1] == '{') {
        i_ += 2;
        continue;
      }
      ++i_;
      if (!field()) return false;
    }
    return true;
  }

  bool fail(std::string why) {
    check_.error = why + " at byte " + std::to_string(i_);
    return false;
  }

 private:
  bool at(char c) const { return i_ < f_.size() && f_[i_] == c; }
  static bool digit(char c) { return c >= '0' && c <= '9'; }

  static bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

  // An argument reference: digits, a name (fmt's identifier grammar) that
  // is one of the site's argument names, or nothing for the next automatic
  // one. Names, as in fmt, leave the automatic numbering alone.
  bool arg_id(std::size_t& id) {
    if (i_ < f_.size() && name_start(f_[i_])) {
      std::size_t begin = i_;
      while (i_ < f_.size() && (name_start(f_[i_]) || digit(f_[i_]))) ++i_;
      std::string_view name = f_.substr(begin, i_ - begin);
      for (std::size_t k = 0; k < names_.size(); ++k) {
        if (names_[k] == name) {
          id = k;
          return true;
        }
      }
      return fail("refers to an argument named '" + std::string(name) + "', which the call site does not have");
    }
    if (i_ < f_.size() && digit(f_[i_])) {
      if (automatic_ == Mode::yes) return fail("mixes automatic and manual argument indexing");
      automatic_ = Mode::no;
      std::size_t value = 0;
      while (i_ < f_.size() && digit(f_[i_])) {
        value = value * 10 + static_cast<std::size_t>(f_[i_++] - '0');
        if (value > 1000) return fail("argument index too large");
      }
      id = value;
    } else {
      if (automatic_ == Mode::no) return fail("mixes automatic and manual argument indexing");
      automatic_ = Mode::yes;
      id = next_auto_++;
    }
    if (id >= tags_.size())
      return fail("refers to argument " + std::to_string(id) + " of " + std::to_string(tags_.size()));
    return true;
  }

  bool number(int& value) {
    long long v = 0;
    while (i_ < f_.size() && digit(f_[i_])) {
      v = v * 10 + (f_[i_++] - '0');
      if (v > kMaxWidthOrPrecision) return fail("width or precision over " + std::to_string(kMaxWidthOrPrecision));
    }
    value = static_cast<int>(v);
    return true;
  }

  // A width or a precision: digits, or {id} naming an integer argument.
  bool dynamic_or_number() {
    if (at('{')) {
      ++i_;
      std::size_t id;
      if (!arg_id(id)) return false;
      if (!at('}')) return fail("unterminated dynamic width or precision");
      ++i_;
      check_.dynamic_args.push_back(static_cast<std::uint16_t>(id));
      return true;
    }
    int ignored;
    return number(ignored);
  }

  static std::size_t utf8_length(unsigned char lead) {
    if (lead < 0x80) return 1;
    if ((lead >> 5) == 0x6) return 2;
    if ((lead >> 4) == 0xE) return 3;
    if ((lead >> 3) == 0x1E) return 4;
    return 0;
  }
  static bool align_char(char c) { return c == '<' || c == '>' || c == '^'; }

  // A structured argument's formatter parses its own spec (ranges nest
  // element specs, durations take chrono specs): any text up to the closing
  // '}', but every number in it is bounded like a width, and every `{...}`
  // in it is an argument reference, bounded when the record renders.
  bool structured_spec() {
    while (i_ < f_.size()) {
      char c = f_[i_];
      if (c == '}') {
        ++i_;
        return true;
      }
      if (c == '{') {
        ++i_;
        std::size_t id;
        if (!arg_id(id)) return false;
        if (!at('}')) return fail("unterminated argument reference in a format spec");
        ++i_;
        check_.dynamic_args.push_back(static_cast<std::uint16_t>(id));
        continue;
      }
      if (digit(c)) {
        int ignored;
        if (!number(ignored)) return false;
        continue;
      }
      ++i_;
    }
    return fail("unterminated replacement field");
  }

  // [[fill]align][sign]["#"]["0"][width]["." precision]["L"][type] "}"
  bool field() {
    std::size_t id;
    if (!arg_id(id)) return false;
    if (at('}')) {
      ++i_;
      return true;
    }
    if (!at(':')) return fail("unsupported replacement field");
    ++i_;
    if (tags_[id] == static_cast<std::uint8_t>(schema::TypeTag::structured)) return structured_spec();
    std::size_t fill = i_ < f_.size() ? utf8_length(static_cast<unsigned char>(f_[i_])) : 0;
    if (fill > 0 && i_ + fill < f_.size() && align_char(f_[i_ + fill]) && f_[i_] != '{' && f_[i_] != '}') {
      i_ += fill + 1;
    } else if (i_ < f_.size() && align_char(f_[i_])) {
      ++i_;
    }
    if (at('+') || at('-') || at(' ')) ++i_;
    if (at('#')) ++i_;
    if (at('0')) ++i_;
    if (!dynamic_or_number()) return false;
    if (at('.')) {
      ++i_;
      if (!at('{') && !(i_ < f_.size() && digit(f_[i_]))) return fail("missing precision");
      if (!dynamic_or_number()) return false;
    }
    if (at('L')) ++i_;
    if (i_ < f_.size() && f_[i_] != '}') ++i_;  // the presentation type; fmt checks which ones apply
    if (!at('}')) return fail("unsupported format spec");
    ++i_;
    return true;
  }

  enum class Mode { unknown, yes, no };
  std::string_view f_;
  std::span<const std::uint8_t> tags_;
  std::span<const std::string> names_;
  FormatCheck& check_;
  std::size_t i_ = 0;
  std::size_t next_auto_ = 0;
  Mode automatic_ = Mode::unknown;
};

}  // namespace

FormatCheck check_format(std::string_view format, std::span<const std::uint8_t> tags,
                         std::span<const std::string> names) {
  FormatCheck check;
  for (std::uint8_t tag : tags) {
    if (schema::type_tag_size(tag) < 0) {
      check.error = "unknown argument type tag " + std::to_string(tag);
      return check;
    }
  }
  Parser parser(format, tags, names, check);
  check.ok = parser.run();
  if (check.ok) {
    // Every '{' opens a "{}" and every '}' closes one: no escapes, specs or ids.
    check.plain = true;
    for (std::size_t i = 0; i < format.size() && check.plain; ++i) {
      if (format[i] == '}') check.plain = false;
      if (format[i] == '{') check.plain = i + 1 < format.size() && format[++i] == '}';
    }
  }
  return check;
}

}  // namespace terse::decoder
