// The standard vocabulary types of fmt/std.h (variant, monostate, path,
// thread id) and those fmt 10 added and FORMAT.md renders its way
// (optional, error code).
#include <iterator>
#include <string>
#include <vector>

#include "structured_kind.hpp"

namespace terse::decoder::detail {

using schema::TypeTag;

namespace {

// Kinds whose expression is the code alone.
struct NoTypeFields {
  static bool read_type(TypeReader&, std::uint32_t, int) { return true; }
};

// ---- optional -------------------------------------------------------------------------

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

  void format(wire::ByteReader& value, const Sink& out) const override {
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

// JSON: the value, or null.
struct Optional {
  static bool read_type(TypeReader& in, std::uint32_t index, int depth) { return in.children(index, 1, depth, false); }
  static bool check_value(ValueChecker& checker, const TypeExpr& node, wire::ByteReader& r) {
    std::uint8_t present;
    if (!r.le(present) || present > 1) return false;
    return present == 0 || checker.value(checker.types().child(node, 0), r);
  }
  static void write_value(ValueWriter& w, const TypeExpr& node, wire::ByteReader& r) {
    std::uint8_t present = 0;
    r.le(present);
    if (present) {
      w.value(w.types().child(node, 0), r);
    } else {
      w.out().null();
    }
  }
  static FormatterPtr make_formatter(const SiteTypes& types, const TypeExpr& node) {
    return std::make_unique<OptionalFormatter>(detail::make_formatter(types, types.child(node, 0)));
  }
};

// ---- variant --------------------------------------------------------------------------

class VariantFormatter final : public Formatter {
 public:
  explicit VariantFormatter(std::vector<FormatterPtr> alternatives) : alternatives_(std::move(alternatives)) {
    for (auto& alternative : alternatives_) alternative->as_entry();
  }

  void format(wire::ByteReader& value, const Sink& out) const override {
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

// JSON: the alternative's value, null when valueless.
struct Variant {
  static bool read_type(TypeReader& in, std::uint32_t index, int depth) {
    std::uint64_t n;
    return in.count(n, schema::kMaxCompositeFields) && in.children(index, n, depth, false);
  }
  static bool check_value(ValueChecker& checker, const TypeExpr& node, wire::ByteReader& r) {
    std::uint8_t index;
    if (!r.le(index)) return false;
    if (index == schema::kVariantValueless) return true;
    return index < node.count && checker.value(checker.types().child(node, index), r);
  }
  static void write_value(ValueWriter& w, const TypeExpr& node, wire::ByteReader& r) {
    std::uint8_t index = schema::kVariantValueless;
    r.le(index);
    if (index < node.count) {
      w.value(w.types().child(node, index), r);
    } else {
      w.out().null();
    }
  }
  static FormatterPtr make_formatter(const SiteTypes& types, const TypeExpr& node) {
    return std::make_unique<VariantFormatter>(member_formatters(types, node));
  }
};

// ---- monostate ------------------------------------------------------------------------

class MonostateFormatter final : public Formatter {
 public:
  void format(wire::ByteReader&, const Sink& out) const override { out.append("monostate"); }
};

// JSON: null.
struct Monostate : NoTypeFields {
  static bool check_value(ValueChecker&, const TypeExpr&, wire::ByteReader&) { return true; }
  static void write_value(ValueWriter& w, const TypeExpr&, wire::ByteReader&) { w.out().null(); }
  static FormatterPtr make_formatter(const SiteTypes&, const TypeExpr&) {
    return std::make_unique<MonostateFormatter>();
  }
};

// ---- error code -----------------------------------------------------------------------

// `CATEGORY:VALUE`, as fmt 10's std::error_code formatter.
class ErrorCodeFormatter final : public Formatter {
 public:
  void format(wire::ByteReader& value, const Sink& out) const override {
    auto code = take<std::int32_t>(value);
    Arg category = take_scalar(value, static_cast<std::uint8_t>(TypeTag::string));
    fmt::format_to(fmt::appender(out.buffer), "{}:{}", category.null_string ? "(null)" : category.text, code);
  }
};

// JSON: {"category": "generic", "value": 2}.
struct ErrorCode : NoTypeFields {
  static bool check_value(ValueChecker&, const TypeExpr&, wire::ByteReader& r) { return r.skip(4) && skip_string(r); }
  static void write_value(ValueWriter& w, const TypeExpr&, wire::ByteReader& r) {
    Arg code;
    code.tag = static_cast<std::uint8_t>(TypeTag::i32);
    std::int32_t value = 0;
    r.le(value);
    code.i = value;
    Arg category;
    read_string(r, category);
    w.out().begin_object();
    w.out().member("category");
    w.string(category.null_string ? std::string_view("(null)") : category.text, false);
    w.out().member("value");
    w.out().scalar(code);
    w.out().end_object();
  }
  static FormatterPtr make_formatter(const SiteTypes&, const TypeExpr&) {
    return std::make_unique<ErrorCodeFormatter>();
  }
};

// ---- path -----------------------------------------------------------------------------

// fmt 9.1's path formatter is its string formatter given the path quoted
// and escaped, set_debug_format included: a path in a range is quoted twice.
class PathFormatter final : public Formatter {
 public:
  const char* parse(fmt::format_parse_context& ctx) override { return text_.parse(ctx); }
  void set_debug() override { text_.set_debug_format(); }

  void format(wire::ByteReader& value, const Sink& out) const override {
    Arg a = take_scalar(value, static_cast<std::uint8_t>(TypeTag::string));
    fmt::memory_buffer quoted;
    fmt::format_to(fmt::appender(quoted), "{:?}", a.null_string ? std::string_view() : a.text);
    fmt::format_context ctx = out.context();
    text_.format(fmt::string_view(quoted.data(), quoted.size()), ctx);
  }

 private:
  fmt::formatter<fmt::string_view> text_;
};

// JSON: a string (null for a null one), through the rewrite.
struct Path : NoTypeFields {
  static bool check_value(ValueChecker&, const TypeExpr&, wire::ByteReader& r) { return skip_string(r); }
  static void write_value(ValueWriter& w, const TypeExpr&, wire::ByteReader& r) { w.string_value(r); }
  static FormatterPtr make_formatter(const SiteTypes&, const TypeExpr&) { return std::make_unique<PathFormatter>(); }
};

// ---- thread id ------------------------------------------------------------------------

class ThreadIdFormatter final : public TextFormatter {
 public:
  void format(wire::ByteReader& value, const Sink& out) const override {
    auto id = take<std::uint64_t>(value);
    // libstdc++'s operator<< for std::thread::id, which fmt 9.1 calls.
    if (id == 0) {
      write_text("thread::id of a non-executing thread", out);
    } else {
      write_text(fmt::format_int(id).str(), out);
    }
  }
};

// JSON: the number (0 for no thread).
struct ThreadId : NoTypeFields {
  static bool check_value(ValueChecker&, const TypeExpr&, wire::ByteReader& r) { return r.skip(8); }
  static void write_value(ValueWriter& w, const TypeExpr&, wire::ByteReader& r) {
    Arg id;
    id.tag = static_cast<std::uint8_t>(TypeTag::u64);
    r.le(id.u);
    w.out().scalar(id);
  }
  static FormatterPtr make_formatter(const SiteTypes&, const TypeExpr&) {
    return std::make_unique<ThreadIdFormatter>();
  }
};

}  // namespace

const Kind& optional_kind() { return kind_from<Optional>(); }
const Kind& variant_kind() { return kind_from<Variant>(); }
const Kind& monostate_kind() { return kind_from<Monostate>(); }
const Kind& error_code_kind() { return kind_from<ErrorCode>(); }
const Kind& path_kind() { return kind_from<Path>(); }
const Kind& thread_id_kind() { return kind_from<ThreadId>(); }

}  // namespace terse::decoder::detail
