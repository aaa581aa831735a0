// The formatters behind fmt::formatter<StructuredView>: one object per node
// of a type expression, each behaving as fmt 9.1's formatter of the
// corresponding C++ type does (fmt/ranges.h, fmt/std.h, fmt/chrono.h), so
// that specs, quoting and nesting come out as the writer's fmt would print
// them. Internal to the structured_*.cpp files.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "structured.hpp"

namespace terse::decoder::detail {

[[noreturn]] inline void format_failure(const char* what) { throw fmt::format_error(what); }

// Where formatters write: a buffer of the caller's, and the field's context
// for what specs may refer to (dynamic widths, the locale).
struct Sink {
  fmt::memory_buffer& buffer;
  fmt::format_context& field;

  // A context on `buffer` for fmt's own formatters.
  fmt::format_context context() const {
    return fmt::format_context(fmt::appender(buffer), field.args(), field.locale());
  }
  void append(std::string_view text) const { buffer.append(text.data(), text.data() + text.size()); }
  // Throws once the record's rendering budget is spent.
  void check() const;
};

class Formatter {
 public:
  virtual ~Formatter() = default;
  // fmt's formatter::parse(): the spec begins at ctx.begin(); returns where it ends.
  virtual const char* parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  // fmt's set_debug_format(), which a range calls on its elements' formatter
  // when it gets no element spec; only some formatters have one.
  virtual void set_debug() {}
  // What fmt 9.1 does to a tuple element or variant alternative
  // (write_range_entry, write_variant_alternative): strings and chars are
  // quoted, everything else gets a fresh formatter whose parse never ran.
  virtual void as_entry() {}
  virtual void format(wire::ByteReader& value, const Sink& out) const = 0;
};
using FormatterPtr = std::unique_ptr<Formatter>;

// A scalar's fmt formatter, or the node's Kind's (structured_kind.hpp).
FormatterPtr make_formatter(const SiteTypes& types, const TypeExpr& node);
// One formatter per child of `node`, in order.
std::vector<FormatterPtr> member_formatters(const SiteTypes& types, const TypeExpr& node);

// Types formatted as text through fmt's string formatter, its spec applying
// to the whole text: std::thread::id (fmt's ostream formatter, which has no
// set_debug_format), std::bitset, and FORMAT.md's enums, private values,
// preformatted text and user types.
class TextFormatter : public Formatter {
 public:
  const char* parse(fmt::format_parse_context& ctx) override;

 protected:
  void write_text(std::string_view text, const Sink& out) const;
  bool has_spec() const { return has_spec_; }

 private:
  fmt::formatter<fmt::string_view> text_;
  bool has_spec_ = false;
};

// The text is rendered first, then a spec can apply to all of it.
void render_into(const Formatter& formatter, wire::ByteReader& value, const Sink& out, fmt::memory_buffer& text);

// Refuses, with `refusal` as the format error, a spec that holds more than
// fill, align and width (static or `{N}`), which is what fmt's formatters of
// text-like types with no spec of their own take.
void accept_only_fill_align_width(const fmt::format_parse_context& ctx, const char* refusal);

// Reads a value the checker has passed; a short read means the bytes
// changed under us, which fmt reports like any other formatting failure.
template <typename T>
T take(wire::ByteReader& r) {
  T value{};
  if (!r.le(value)) format_failure("structured value ends early");
  return value;
}

inline Arg take_scalar(wire::ByteReader& r, std::uint8_t tag) {
  Arg a;
  if (!read_scalar(r, tag, a)) format_failure("structured value ends early");
  return a;
}

}  // namespace terse::decoder::detail
