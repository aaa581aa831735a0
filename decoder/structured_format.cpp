// Rendering structured values (FORMAT.md §8.1 "Rendering") as fmt 9.1
// renders the corresponding C++ types. Each formatter below mirrors one of
// fmt's: the same parse(), the same set_debug_format(), the same output, and
// the same composition rules, which decide the quoting:
//
//   - a range whose spec has no element part (`{}`, `{:n}`) calls
//     set_debug_format() on its element formatter, so strings and chars in it
//     are quoted; with one (`{::}`, `{::>5}`) it parses that instead;
//   - a range's element formatter is parsed only through such an element
//     spec, so ranges nested in ranges do not quote their strings;
//   - tuples, pairs (map entries) and variants quote string and char members
//     and write any other member with a fresh formatter, never parsed.
//
// Types fmt 9.1 cannot format (aggregates, enums, optionals, error codes,
// private values, user types, preformatted text) follow FORMAT.md's table.
#include <algorithm>
#include <vector>

#include "structured_format.hpp"

namespace terse::decoder::detail {

using schema::TypeNode;
using schema::TypeTag;

namespace {

thread_local std::size_t render_bytes_left = kMaxRenderedBytes;

// ---- scalars: fmt's own formatters of the "handed to fmt as" types ------------

template <typename T>
class ScalarFormatter final : public Formatter {
 public:
  explicit ScalarFormatter(std::uint8_t tag) : tag_(tag) {}

  const char* parse(fmt::format_parse_context& ctx) override { return formatter_.parse(ctx); }

  void set_debug() override {
    if constexpr (std::is_same_v<T, char> || std::is_same_v<T, fmt::string_view>) formatter_.set_debug_format();
  }
  void as_entry() override { set_debug(); }

  void format(wire::Reader& value, const Sink& out) const override {
    Arg a = take_scalar(value, tag_);
    fmt::format_context ctx = out.context();
    visit_scalar(a, [&](auto v) {
      if constexpr (std::is_same_v<decltype(v), T>) formatter_.format(v, ctx);
    });
  }

 private:
  fmt::formatter<T> formatter_;
  std::uint8_t tag_;
};

FormatterPtr make_scalar_formatter(std::uint8_t tag) {
  switch (static_cast<TypeTag>(tag)) {
    case TypeTag::i8:
    case TypeTag::i16:
    case TypeTag::i32: return std::make_unique<ScalarFormatter<int>>(tag);
    case TypeTag::i64: return std::make_unique<ScalarFormatter<long long>>(tag);
    case TypeTag::u8:
    case TypeTag::u16:
    case TypeTag::u32: return std::make_unique<ScalarFormatter<unsigned>>(tag);
    case TypeTag::u64: return std::make_unique<ScalarFormatter<unsigned long long>>(tag);
    case TypeTag::boolean: return std::make_unique<ScalarFormatter<bool>>(tag);
    case TypeTag::character: return std::make_unique<ScalarFormatter<char>>(tag);
    case TypeTag::f32: return std::make_unique<ScalarFormatter<float>>(tag);
    case TypeTag::f64: return std::make_unique<ScalarFormatter<double>>(tag);
    case TypeTag::f80:
    case TypeTag::f128: return std::make_unique<ScalarFormatter<long double>>(tag);
    case TypeTag::string: return std::make_unique<ScalarFormatter<fmt::string_view>>(tag);
    case TypeTag::pointer: return std::make_unique<ScalarFormatter<const void*>>(tag);
    case TypeTag::structured: break;
  }
  format_failure("unknown scalar type");
}

// ---- ranges and tuples (fmt/ranges.h) --------------------------------------------

// A truncated container shows what was kept, then how many there were.
void append_truncation(const Sink& out, std::uint32_t stored, std::uint64_t total) {
  fmt::format_to(fmt::appender(out.buffer), "{}... {} total", stored ? ", " : "", total);
}

// fmt's range_formatter: std::vector (and the like), std::set, std::map.
class RangeFormatter final : public Formatter {
 public:
  RangeFormatter(FormatterPtr element, std::string_view open, std::string_view close)
      : element_(std::move(element)), open_(open), close_(close) {}

  const char* parse(fmt::format_parse_context& ctx) override {
    const char* it = ctx.begin();
    const char* end = ctx.end();
    if (it == end || *it == '}') {
      element_->set_debug();
      return it;
    }
    if (*it == 'n') {
      open_ = close_ = {};
      ++it;
    }
    if (it == end || *it == '}') {
      element_->set_debug();
      return it;
    }
    if (*it != ':') format_failure("no other top-level range formatters supported");
    ctx.advance_to(it + 1);
    return element_->parse(ctx);
  }

  void format(wire::Reader& value, const Sink& out) const override {
    std::uint32_t word = take<std::uint32_t>(value);
    std::uint32_t stored = word & schema::kCountMask;
    std::uint64_t total = (word & schema::kCountTruncatedBit) ? take<std::uint64_t>(value) : stored;
    out.append(open_);
    for (std::uint32_t i = 0; i < stored; ++i) {
      if (i > 0) out.append(", ");
      element_->format(value, out);
      out.check();
    }
    if (total != stored) append_truncation(out, stored, total);
    out.append(close_);
  }

 private:
  FormatterPtr element_;
  std::string_view open_;
  std::string_view close_;
};

// fmt's tuple formatter (std::tuple, std::pair; a map's entries without
// brackets and with ": "), and the aggregates of FORMAT.md, which render
// like it with braces and member names.
class TupleFormatter final : public Formatter {
 public:
  TupleFormatter(std::vector<FormatterPtr> members, std::vector<std::string_view> names, std::string_view open,
                 std::string_view close, std::string_view separator)
      : members_(std::move(members)), names_(std::move(names)), open_(open), close_(close), separator_(separator) {
    for (auto& member : members_) member->as_entry();
  }

  void format(wire::Reader& value, const Sink& out) const override {
    out.append(open_);
    for (std::size_t k = 0; k < members_.size(); ++k) {
      if (k > 0) out.append(separator_);
      if (k < names_.size() && !names_[k].empty()) {
        out.append(names_[k]);
        out.append(": ");
      }
      members_[k]->format(value, out);
      out.check();
    }
    out.append(close_);
  }

 private:
  std::vector<FormatterPtr> members_;
  std::vector<std::string_view> names_;
  std::string_view open_, close_, separator_;
};

// ---- fmt/std.h -------------------------------------------------------------------

class VariantFormatter final : public Formatter {
 public:
  explicit VariantFormatter(std::vector<FormatterPtr> alternatives) : alternatives_(std::move(alternatives)) {
    for (auto& alternative : alternatives_) alternative->as_entry();
  }

  void format(wire::Reader& value, const Sink& out) const override {
    auto index = take<std::uint8_t>(value);
    out.append("variant(");
    // fmt 9.1 lets std::visit throw here; this is fmt 10's text.
    if (index == schema::kVariantValueless || index >= alternatives_.size()) {
      out.append("valueless by exception");
    } else {
      alternatives_[index]->format(value, out);
    }
    out.append(")");
  }

 private:
  std::vector<FormatterPtr> alternatives_;
};

class MonostateFormatter final : public Formatter {
 public:
  void format(wire::Reader&, const Sink& out) const override { out.append("monostate"); }
};

// Types formatted as text through fmt's string formatter, its spec applying
// to the whole text: std::thread::id (fmt's ostream formatter, which has no
// set_debug_format), and FORMAT.md's enums, private values, preformatted
// text and user types.
class TextFormatter : public Formatter {
 public:
  const char* parse(fmt::format_parse_context& ctx) override {
    has_spec_ = ctx.begin() != ctx.end() && *ctx.begin() != '}';
    return text_.parse(ctx);
  }

 protected:
  void write_text(std::string_view text, const Sink& out) const {
    if (!has_spec_) {
      out.append(text);
      return;
    }
    fmt::format_context ctx = out.context();
    text_.format(fmt::string_view(text.data(), text.size()), ctx);
  }
  bool has_spec() const { return has_spec_; }

 private:
  fmt::formatter<fmt::string_view> text_;
  bool has_spec_ = false;
};

class ThreadIdFormatter final : public TextFormatter {
 public:
  void format(wire::Reader& value, const Sink& out) const override {
    auto id = take<std::uint64_t>(value);
    // libstdc++'s operator<< for std::thread::id, which fmt 9.1 calls.
    if (id == 0) {
      write_text("thread::id of a non-executing thread", out);
    } else {
      write_text(fmt::format_int(id).str(), out);
    }
  }
};

// fmt 9.1's path formatter is its string formatter given the path quoted
// and escaped, set_debug_format included: a path in a range is quoted twice.
class PathFormatter final : public Formatter {
 public:
  const char* parse(fmt::format_parse_context& ctx) override { return text_.parse(ctx); }
  void set_debug() override { text_.set_debug_format(); }

  void format(wire::Reader& value, const Sink& out) const override {
    Arg a = take_scalar(value, static_cast<std::uint8_t>(TypeTag::string));
    fmt::memory_buffer quoted;
    fmt::format_to(fmt::appender(quoted), "{:?}", a.null_string ? std::string_view() : a.text);
    fmt::format_context ctx = out.context();
    text_.format(fmt::string_view(quoted.data(), quoted.size()), ctx);
  }

 private:
  fmt::formatter<fmt::string_view> text_;
};

// ---- FORMAT.md's own renderings ----------------------------------------------

// `optional(VALUE)` or `none`, as fmt 10's std::optional formatter with an
// empty spec (the only one FORMAT.md allows it): the value's formatter is
// set to debug and parsed with that empty spec, so a string is quoted. It
// is done at once, not in parse(), because fmt 10's ranges parse their
// elements' formatters where fmt 9.1's do not, and an optional should not
// print differently inside a range.
class OptionalFormatter final : public Formatter {
 public:
  explicit OptionalFormatter(FormatterPtr value) : value_(std::move(value)) {
    value_->set_debug();
    fmt::format_parse_context none({});
    value_->parse(none);
  }

  const char* parse(fmt::format_parse_context& ctx) override {
    if (ctx.begin() != ctx.end() && *ctx.begin() != '}') format_failure("an optional takes no format spec");
    return ctx.begin();
  }

  void format(wire::Reader& value, const Sink& out) const override {
    if (take<std::uint8_t>(value) == 0) {
      out.append("none");
      return;
    }
    out.append("optional(");
    value_->format(value, out);
    out.append(")");
  }

 private:
  FormatterPtr value_;
};

// `CATEGORY:VALUE`, as fmt 10's std::error_code formatter.
class ErrorCodeFormatter final : public Formatter {
 public:
  void format(wire::Reader& value, const Sink& out) const override {
    auto code = take<std::int32_t>(value);
    Arg category = take_scalar(value, static_cast<std::uint8_t>(TypeTag::string));
    fmt::format_to(fmt::appender(out.buffer), "{}:{}", category.null_string ? "(null)" : category.text, code);
  }
};

class EnumFormatter final : public TextFormatter {
 public:
  EnumFormatter(const SiteTypes& types, const TypeExpr& node) : types_(types), node_(node) {}

  void format(wire::Reader& value, const Sink& out) const override {
    Arg a = take_scalar(value, node_.rep);
    if (const Enumerator* e = find_enumerator(types_, node_, a)) {
      write_text(types_.view(e->name), out);
    } else if (a.tag <= static_cast<std::uint8_t>(TypeTag::i64)) {
      write_text(fmt::format_int(a.i).str(), out);
    } else {
      write_text(fmt::format_int(a.u).str(), out);
    }
  }

 private:
  const SiteTypes& types_;
  const TypeExpr& node_;
};

// The text is rendered first, then the spec applies to all of it.
void render_into(const Formatter& formatter, wire::Reader& value, const Sink& out, fmt::memory_buffer& text) {
  Sink inner{text, out.field};
  formatter.format(value, inner);
}

// A private value shows as `<private>`, `<private:3f9a1c>` or, stored in
// clear, as the value itself would.
class SecretFormatter final : public TextFormatter {
 public:
  explicit SecretFormatter(FormatterPtr value) : value_(std::move(value)) {}

  const char* parse(fmt::format_parse_context& ctx) override {
    // The value behaves as a field of its own with an empty spec would.
    fmt::format_parse_context none({});
    value_->parse(none);
    return TextFormatter::parse(ctx);
  }
  void set_debug() override { value_->set_debug(); }
  void as_entry() override { value_->as_entry(); }

  void format(wire::Reader& value, const Sink& out) const override {
    switch (static_cast<schema::PrivateMode>(take<std::uint8_t>(value))) {
      case schema::PrivateMode::omitted:
        write_text("<private>", out);
        return;
      case schema::PrivateMode::hashed: {
        auto hash = take<std::uint64_t>(value);
        write_text(fmt::format("<private:{:06x}>", hash >> 40), out);
        return;
      }
      case schema::PrivateMode::clear:
        if (!has_spec()) {
          value_->format(value, out);
        } else {
          fmt::memory_buffer text;
          render_into(*value_, value, out, text);
          write_text(std::string_view(text.data(), text.size()), out);
        }
        return;
    }
    format_failure("unknown private value mode");
  }

 private:
  FormatterPtr value_;
};

class PreformattedFormatter final : public TextFormatter {
 public:
  void format(wire::Reader& value, const Sink& out) const override {
    Arg a = take_scalar(value, static_cast<std::uint8_t>(TypeTag::string));
    write_text(a.null_string ? std::string_view("(null)") : a.text, out);
  }
};

// fmt::format(user format, fields...), each field handed to fmt as a
// top-level argument would be.
class UserFormatter final : public TextFormatter {
 public:
  UserFormatter(const SiteTypes& types, const TypeExpr& node) : types_(types), node_(node) {}

  void format(wire::Reader& value, const Sink& out) const override {
    const UserType& user = types_.users[node_.extra];
    if (!user.check.ok) format_failure("a user type's format string is unusable");
    std::vector<Arg> scalars(node_.count);
    std::vector<StructuredView> views(node_.count);
    std::vector<fmt::basic_format_arg<fmt::format_context>> args;
    args.reserve(node_.count);
    for (std::uint32_t k = 0; k < node_.count; ++k) {
      const TypeExpr& field = types_.child(node_, k);
      if (is_scalar_code(field.code)) {
        scalars[k] = take_scalar(value, field.code);
        args.push_back(visit_scalar(scalars[k], [](auto v) { return single_arg(v); }));
      } else {
        const unsigned char* begin = value.position();
        skip_value(types_, field, value);
        views[k] = StructuredView{&types_, types_.children[node_.first + k],
                                  std::string_view(reinterpret_cast<const char*>(begin),
                                                   static_cast<std::size_t>(value.position() - begin))};
        args.push_back(single_arg(views[k]));
      }
    }
    for (std::uint16_t index : user.check.dynamic_args) {
      const Arg& a = scalars[index];
      bool too_wide = a.tag >= static_cast<std::uint8_t>(TypeTag::i8) && a.tag <= static_cast<std::uint8_t>(TypeTag::i64)
                          ? a.i > kMaxWidthOrPrecision
                          : a.tag >= static_cast<std::uint8_t>(TypeTag::u8) &&
                                a.tag <= static_cast<std::uint8_t>(TypeTag::u64) &&
                                a.u > static_cast<std::uint64_t>(kMaxWidthOrPrecision);
      if (too_wide) format_failure("a user type's dynamic width or precision is over 65536");
    }
    std::string_view format = types_.view(user.format);
    fmt::memory_buffer text;
    fmt::vformat_to(fmt::appender(text), fmt::string_view(format.data(), format.size()),
                    fmt::basic_format_args<fmt::format_context>(args.data(), static_cast<int>(args.size())));
    write_text(std::string_view(text.data(), text.size()), out);
  }

 private:
  template <typename T>
  static fmt::basic_format_arg<fmt::format_context> single_arg(const T& value) {
    return fmt::basic_format_args<fmt::format_context>(fmt::make_format_args(value)).get(0);
  }

  const SiteTypes& types_;
  const TypeExpr& node_;
};

std::vector<FormatterPtr> member_formatters(const SiteTypes& types, const TypeExpr& node) {
  std::vector<FormatterPtr> members;
  members.reserve(node.count);
  for (std::uint32_t k = 0; k < node.count; ++k) members.push_back(make_formatter(types, types.child(node, k)));
  return members;
}

}  // namespace

void Sink::check() const {
  if (buffer.size() > render_bytes_left) format_failure("structured values render to more than 64 MiB");
}

void reset_render_budget() { render_bytes_left = kMaxRenderedBytes; }

FormatterPtr make_formatter(const SiteTypes& types, const TypeExpr& node) {
  if (is_scalar_code(node.code)) return make_scalar_formatter(node.code);
  switch (static_cast<TypeNode>(node.code)) {
    case TypeNode::sequence:
      return std::make_unique<RangeFormatter>(make_formatter(types, types.child(node, 0)), "[", "]");
    case TypeNode::set:
      return std::make_unique<RangeFormatter>(make_formatter(types, types.child(node, 0)), "{", "}");
    case TypeNode::map: {
      auto entry = std::make_unique<TupleFormatter>(member_formatters(types, node), std::vector<std::string_view>{},
                                                    "", "", ": ");
      return std::make_unique<RangeFormatter>(std::move(entry), "{", "}");
    }
    case TypeNode::tuple:
      return std::make_unique<TupleFormatter>(member_formatters(types, node), std::vector<std::string_view>{}, "(",
                                              ")", ", ");
    case TypeNode::aggregate: {
      std::vector<std::string_view> names;
      for (std::uint32_t k = 0; k < node.count; ++k) names.push_back(types.view(types.field_names[node.first + k]));
      return std::make_unique<TupleFormatter>(member_formatters(types, node), std::move(names), "{", "}", ", ");
    }
    case TypeNode::optional:
      return std::make_unique<OptionalFormatter>(make_formatter(types, types.child(node, 0)));
    case TypeNode::variant:
      return std::make_unique<VariantFormatter>(member_formatters(types, node));
    case TypeNode::enumeration:
      return std::make_unique<EnumFormatter>(types, node);
    case TypeNode::duration:
      return make_duration_formatter(node.rep, types.periods[node.extra]);
    case TypeNode::time_point:
      if (node.clock == static_cast<std::uint8_t>(schema::Clock::system))
        return make_system_time_formatter(node.rep, types.periods[node.extra]);
      return make_duration_formatter(node.rep, types.periods[node.extra]);
    case TypeNode::error_code:
      return std::make_unique<ErrorCodeFormatter>();
    case TypeNode::path:
      return std::make_unique<PathFormatter>();
    case TypeNode::thread_id:
      return std::make_unique<ThreadIdFormatter>();
    case TypeNode::monostate:
      return std::make_unique<MonostateFormatter>();
    case TypeNode::user:
      return std::make_unique<UserFormatter>(types, node);
    case TypeNode::secret:
      return std::make_unique<SecretFormatter>(make_formatter(types, types.child(node, 0)));
    case TypeNode::preformatted:
      return std::make_unique<PreformattedFormatter>();
  }
  format_failure("unknown type expression");
}

}  // namespace terse::decoder::detail

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

fmt::format_parse_context::iterator fmt::formatter<terse::decoder::detail::StructuredView>::parse(
    fmt::format_parse_context& ctx) {
  // The spec runs to the '}' that closes the field; `{...}` inside it are
  // argument references (check_format let nothing else through). Automatic
  // ones take their ids now, as fmt's own formatters would, and are written
  // out as explicit ids for the parse that format() does.
  const char* it = ctx.begin();
  const char* end = ctx.end();
  spec_.clear();
  while (it != end && *it != '}') {
    if (*it != '{') {
      spec_ += *it++;
      continue;
    }
    const char* id_begin = ++it;
    while (it != end && *it != '}' && *it != '{') ++it;
    if (it == end || *it != '}') throw fmt::format_error("invalid format string");
    std::string_view id(id_begin, static_cast<std::size_t>(it - id_begin));
    ++it;
    if (id.empty()) {
      fmt::format_to(std::back_inserter(spec_), "{{{}}}", ctx.next_arg_id());
      continue;
    }
    if (std::all_of(id.begin(), id.end(), is_digit)) {
      if (id.size() > 4) throw fmt::format_error("argument index too large");
      int index = 0;
      for (char c : id) index = index * 10 + (c - '0');
      ctx.check_arg_id(index);
    }
    // A name is looked up when the value's formatter resolves it.
    spec_ += '{';
    spec_ += id;
    spec_ += '}';
  }
  spec_ += '}';
  return it;
}

fmt::format_context::iterator fmt::formatter<terse::decoder::detail::StructuredView>::format(
    const terse::decoder::detail::StructuredView& view, fmt::format_context& ctx) const {
  using namespace terse::decoder::detail;
  FormatterPtr root = make_formatter(*view.types, view.types->nodes[view.node]);
  fmt::format_parse_context spec(fmt::string_view(spec_.data(), spec_.size()));
  if (root->parse(spec) != spec_.data() + spec_.size() - 1) throw fmt::format_error("unknown format specifier");
  fmt::memory_buffer text;
  Sink sink{text, ctx};
  terse::wire::Reader value(view.bytes);
  root->format(value, sink);
  sink.check();
  render_bytes_left -= text.size();
  return std::copy(text.begin(), text.end(), ctx.out());
}
