// The formatters behind fmt::formatter<StructuredView>: one object per node
// of a type expression, each behaving as fmt 9.1's formatter of the
// corresponding C++ type does (fmt/ranges.h, fmt/std.h, fmt/chrono.h), so
// that specs, quoting and nesting come out as the writer's fmt would print
// them. Internal to structured_format.cpp and structured_chrono.cpp.
#pragma once

#include <memory>

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
  fmt::format_context context() const { return fmt::format_context(fmt::appender(buffer), field.args(), field.locale()); }
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
  virtual void format(wire::Reader& value, const Sink& out) const = 0;
};
using FormatterPtr = std::unique_ptr<Formatter>;

FormatterPtr make_formatter(const SiteTypes& types, const TypeExpr& node);

// structured_chrono.cpp: durations and time points, through fmt/chrono.h.
FormatterPtr make_duration_formatter(std::uint8_t rep, const Period& period);
FormatterPtr make_system_time_formatter(std::uint8_t rep, const Period& period);

// Reads a value the checker has passed; a short read means the bytes
// changed under us, which fmt reports like any other formatting failure.
template <typename T>
T take(wire::Reader& r) {
  T value{};
  if (!r.le(value)) format_failure("structured value ends early");
  return value;
}

inline Arg take_scalar(wire::Reader& r, std::uint8_t tag) {
  Arg a;
  if (!read_scalar(r, tag, a)) format_failure("structured value ends early");
  return a;
}

}  // namespace terse::decoder::detail
