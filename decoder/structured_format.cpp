// Rendering structured values (FORMAT.md §8.1 "Rendering") as fmt 9.1
// renders the corresponding C++ types. Each kind's formatter mirrors one of
// fmt's (structured_kind.hpp says where they live): the same parse(), the
// same set_debug_format(), the same output, and the same composition rules,
// which decide the quoting:
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
// This file holds the scalars, the pieces kinds share and the entry point
// fmt calls.
#include <algorithm>
#include <vector>

#include "structured_kind.hpp"

namespace terse::decoder::detail {

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

  void format(wire::ByteReader& value, const Sink& out) const override {
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
    case TypeTag::i32:
      return std::make_unique<ScalarFormatter<int>>(tag);
    case TypeTag::i64:
      return std::make_unique<ScalarFormatter<long long>>(tag);
    case TypeTag::u8:
    case TypeTag::u16:
    case TypeTag::u32:
      return std::make_unique<ScalarFormatter<unsigned>>(tag);
    case TypeTag::u64:
      return std::make_unique<ScalarFormatter<unsigned long long>>(tag);
    case TypeTag::boolean:
      return std::make_unique<ScalarFormatter<bool>>(tag);
    case TypeTag::character:
      return std::make_unique<ScalarFormatter<char>>(tag);
    case TypeTag::f32:
      return std::make_unique<ScalarFormatter<float>>(tag);
    case TypeTag::f64:
      return std::make_unique<ScalarFormatter<double>>(tag);
    case TypeTag::f80:
    case TypeTag::f128:
      return std::make_unique<ScalarFormatter<long double>>(tag);
    case TypeTag::string:
      return std::make_unique<ScalarFormatter<fmt::string_view>>(tag);
    case TypeTag::pointer:
      return std::make_unique<ScalarFormatter<const void*>>(tag);
    case TypeTag::structured:
      break;
  }
  format_failure("unknown scalar type");
}

}  // namespace

void Sink::check() const {
  if (buffer.size() > render_bytes_left) format_failure("structured values render to more than 64 MiB");
}

void reset_render_budget() { render_bytes_left = kMaxRenderedBytes; }

const char* TextFormatter::parse(fmt::format_parse_context& ctx) {
  has_spec_ = ctx.begin() != ctx.end() && *ctx.begin() != '}';
  return text_.parse(ctx);
}

void TextFormatter::write_text(std::string_view text, const Sink& out) const {
  if (!has_spec_) {
    out.append(text);
    return;
  }
  fmt::format_context ctx = out.context();
  text_.format(fmt::string_view(text.data(), text.size()), ctx);
}

void render_into(const Formatter& formatter, wire::ByteReader& value, const Sink& out, fmt::memory_buffer& text) {
  Sink inner{text, out.field};
  formatter.format(value, inner);
}

void accept_only_fill_align_width(const fmt::format_parse_context& ctx, const char* refusal) {
  const char* it = ctx.begin();
  const char* end = ctx.end();
  if (it == end || *it == '}') return;
  auto align = [](char c) { return c == '<' || c == '>' || c == '^'; };
  auto lead = static_cast<unsigned char>(*it);
  std::ptrdiff_t fill = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : 4;
  if (end - it > fill && align(it[fill]) && *it != '{') {
    it += fill + 1;
  } else if (align(*it)) {
    ++it;
  }
  if (it != end && *it == '{') {
    while (it != end && *it != '}') ++it;
    if (it != end) ++it;
  } else {
    while (it != end && *it >= '0' && *it <= '9') ++it;
  }
  if (it != end && *it != '}') format_failure(refusal);
}

std::vector<FormatterPtr> member_formatters(const SiteTypes& types, const TypeExpr& node) {
  std::vector<FormatterPtr> members;
  members.reserve(node.count);
  for (std::uint32_t k = 0; k < node.count; ++k) members.push_back(make_formatter(types, types.child(node, k)));
  return members;
}

FormatterPtr make_formatter(const SiteTypes& types, const TypeExpr& node) {
  if (is_scalar_code(node.code)) return make_scalar_formatter(node.code);
  if (const Kind* kind = kind_of(node.code)) return kind->make_formatter(types, node);
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
  terse::wire::ByteReader value(view.bytes);
  root->format(value, sink);
  sink.check();
  render_bytes_left -= text.size();
  return std::copy(text.begin(), text.end(), ctx.out());
}
