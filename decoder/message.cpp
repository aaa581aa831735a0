// Messages: a record's format string and arguments printed as fmt::format
// printed them in the program, or raw when fmt cannot.
#include <array>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/args.h>
#include <fmt/format.h>

#include <terse/decoder.hpp>
#include <terse/per_thread.hpp>
#include <terse/schema.hpp>

#include "message.hpp"
#include "structured.hpp"
#include "time_text.hpp"

// The rendering rule (a decoded message is byte for byte what fmt::format
// printed in the program) holds against fmt 9: this file and the structured
// formatters reproduce fmt 9.1's choices, several of which fmt 10 changed.
static_assert(FMT_VERSION >= 90000 && FMT_VERSION < 100000,
              "the decoder reproduces fmt 9's formatting; build it against fmt 9.x");

namespace terse::decoder {

using namespace detail;
using schema::TypeTag;

namespace {

// FORMAT.md §6: a site has at most 255 arguments.
constexpr std::size_t kMaxArgs = 255;

// One argument as fmt's own argument type, made through the public
// make_format_args so the record needs no allocation per argument.
template <typename T>
fmt::basic_format_arg<fmt::format_context> fmt_arg(const T& value) {
  return fmt::basic_format_args<fmt::format_context>(fmt::make_format_args(value)).get(0);
}

// Hands each argument to fmt as the type the writer's fmt::format would
// have seen after its own argument mapping, so the output is identical.
fmt::basic_format_arg<fmt::format_context> to_fmt_arg(const Arg& a) {
  return detail::visit_scalar(a, [](auto value) { return fmt_arg(value); });
}

// fmt keeps pointers to custom arguments while it formats: the views of a
// record's structured arguments live here, one per argument.
std::vector<detail::StructuredView>& structured_views(const Record& record) {
  auto& views = per_thread<std::vector<detail::StructuredView>>([] {});
  views.assign(record.args.size(), detail::StructuredView{});
  for (std::size_t i = 0; i < record.args.size(); ++i) {
    const Arg& a = record.args[i];
    if (is_structured(a)) views[i] = detail::StructuredView{&record.site->types, a.type, a.text};
  }
  return views;
}

// FORMAT.md §6: with argument names, `{name}` fields find their argument
// by name and `{0}` by position, as fmt::arg arguments do.
void format_named(fmt::memory_buffer& message, const Record& record, const std::vector<detail::StructuredView>& views) {
  const Site& site = *record.site;
  auto& store = per_thread<fmt::dynamic_format_arg_store<fmt::format_context>>([] {});
  store.clear();
  for (std::size_t i = 0; i < record.args.size(); ++i) {
    const std::string& name = site.arg_names[i];
    auto push = [&](const auto& value) {
      if (name.empty()) {
        store.push_back(value);
      } else {
        store.push_back(fmt::arg(name.c_str(), value));
      }
    };
    if (is_structured(record.args[i])) {
      push(std::cref(views[i]));
    } else {
      detail::visit_scalar(record.args[i], push);
    }
  }
  fmt::vformat_to(fmt::appender(message), fmt::string_view(site.format.data(), site.format.size()), store);
}

bool dynamic_value_in_bounds(const Arg& a) {
  switch (static_cast<TypeTag>(a.tag)) {
    case TypeTag::i8:
    case TypeTag::i16:
    case TypeTag::i32:
    case TypeTag::i64:
      return a.i <= kMaxWidthOrPrecision;  // negatives: fmt rejects them itself
    case TypeTag::u8:
    case TypeTag::u16:
    case TypeTag::u32:
    case TypeTag::u64:
      return a.u <= static_cast<std::uint64_t>(kMaxWidthOrPrecision);
    default:
      return true;  // not an integer: fmt rejects it itself
  }
}

// Sites with structured or named arguments. Kept out of line: it would
// otherwise be inlined into render_message and cost the scalar-only records
// their compact fast path.
[[gnu::noinline]] void format_structured(fmt::memory_buffer& message, const Record& record) {
  const Site& site = *record.site;
  detail::reset_render_budget();
  const auto& views = structured_views(record);
  if (!site.arg_names.empty()) {
    format_named(message, record, views);
    return;
  }
  auto& fmt_args = per_thread<std::vector<fmt::basic_format_arg<fmt::format_context>>>([] {});
  fmt_args.clear();
  for (std::size_t i = 0; i < record.args.size(); ++i)
    fmt_args.push_back(is_structured(record.args[i]) ? fmt_arg(views[i]) : to_fmt_arg(record.args[i]));
  fmt::vformat_to(fmt::appender(message), fmt::string_view(site.format.data(), site.format.size()),
                  fmt::basic_format_args<fmt::format_context>(fmt_args.data(), static_cast<int>(fmt_args.size())));
}

void append_raw(std::string& out, const Record& record) {
  const Site& site = *record.site;
  out += "<unformattable> ";
  out += site.format;
  detail::reset_render_budget();
  for (const Arg& a : record.args) {
    out += " | ";
    if (static_cast<TypeTag>(a.tag) == TypeTag::string) {
      out.append(a.text);
    } else if (is_structured(a)) {
      try {
        fmt::format_to(std::back_inserter(out), "{}", detail::StructuredView{&site.types, a.type, a.text});
      } catch (const fmt::format_error&) {
        out += '?';
      }
    } else {
      auto arg = to_fmt_arg(a);
      try {
        fmt::vformat_to(std::back_inserter(out), "{}", fmt::basic_format_args<fmt::format_context>(&arg, 1));
      } catch (const fmt::format_error&) {
        out += '?';
      }
    }
  }
}

}  // namespace

const char* level_name(std::uint8_t level) { return schema::level_name(level); }

const char* level_color(std::uint8_t level) {
  switch (static_cast<LevelValue>(level)) {
    case LevelValue::trace:
    case LevelValue::debug:
      return "\x1b[2m";  // dim
    case LevelValue::warn:
      return "\x1b[33m";  // yellow
    case LevelValue::error:
      return "\x1b[31m";  // red
    case LevelValue::critical:
      return "\x1b[1;31m";  // bold red
    default:
      return nullptr;
  }
}

namespace {

// Reports, and messages fmt itself writes: specs, structured and named
// arguments, long doubles and pointers, and formats it rejects.
[[gnu::noinline]] Result<> render_with_fmt(const Record& record, std::string& out, const TimeStyle* style) {
  if (record.kind == RecordKind::suppressed) {
    fmt::format_to(std::back_inserter(out), "{} call{} suppressed after the site's last record", record.suppressed,
                   record.suppressed == 1 ? "" : "s");
    return {};
  }
  if (record.kind == RecordKind::dropped) {
    TimeStyle zone = style ? *style : TimeStyle{};
    std::string first, last;
    append_time(first, record.dropped_first_ns, zone);
    append_time(last, record.dropped_last_ns, zone);
    fmt::format_to(std::back_inserter(out), "{} record{} dropped on thread {} between {} and {}", record.dropped_count,
                   record.dropped_count == 1 ? "" : "s", record.thread->shown_id(), first, last);
    return {};
  }
  const Site& site = *record.site;
  std::string why;
  if (!site.check.ok) {
    why = site.check.error;
  } else {
    for (std::uint16_t index : site.check.dynamic_args) {
      if (!dynamic_value_in_bounds(record.args[index])) {
        why = "dynamic width or precision over " + std::to_string(kMaxWidthOrPrecision);
        break;
      }
    }
  }
  if (why.empty()) {
    // fmt's own buffer grows without zero-filling, where a std::string
    // behind back_inserter is resized (and cleared) on every growth.
    auto& message = per_thread<fmt::memory_buffer>([] {});
    message.clear();
    try {
      if (site.types.roots.empty() && site.arg_names.empty() && record.args.size() <= kMaxArgs) {
        // A fixed array: this loop runs for every argument of every record.
        thread_local std::array<fmt::basic_format_arg<fmt::format_context>, kMaxArgs> fmt_args;
        std::size_t count = 0;
        for (const Arg& a : record.args) fmt_args[count++] = to_fmt_arg(a);
        fmt::vformat_to(fmt::appender(message), fmt::string_view(site.format.data(), site.format.size()),
                        fmt::basic_format_args<fmt::format_context>(fmt_args.data(), static_cast<int>(count)));
      } else {
        format_structured(message, record);
      }
      out.append(message.data(), message.size());
      return {};
    } catch (const fmt::format_error& e) {
      why = e.what();
    }
  }
  append_raw(out, record);
  return Failure{std::move(why)};
}

}  // namespace

Result<> render_message(const Record& record, std::string& out, const TimeStyle* style) {
  // Most records; a plain format passed the check and has no dynamic widths.
  // Sized exactly: no copy through TextOut's stack.
  if (std::size_t room = plain_message_room(record); room != kNotWritten) {
    Room message(out, room);
    message.finish(put_plain_message(message.begin(), record.site->format, record.args));
    return {};
  }
  return render_with_fmt(record, out, style);
}

}  // namespace terse::decoder
