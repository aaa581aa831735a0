// The kinds fmt 9.1 has no formatter for, rendered as FORMAT.md's table
// says: enums, user types, private values and preformatted text. Each is
// text through fmt's string formatter, its spec applying to the whole text.
#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "structured_kind.hpp"

namespace terse::decoder::detail {

using schema::TypeTag;

namespace {

// ---- enumeration ----------------------------------------------------------------------

// FORMAT.md bounds each enum, not their sum: without this a site of 4096
// enums could ask for 2^28 enumerators from a 64 MiB frame.
constexpr std::size_t kMaxEnumeratorsPerSite = 1 << 20;

class EnumFormatter final : public TextFormatter {
 public:
  EnumFormatter(const SiteTypes& types, const TypeExpr& node) : types_(types), node_(node) {}

  void format(wire::ByteReader& value, const Sink& out) const override {
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

// JSON: the enumerator's name, or the number when it has none; as a map's
// key, the number quoted.
struct Enumeration {
  static bool read_type(TypeReader& in, std::uint32_t index, int) {
    std::uint8_t underlying;
    TextRef name;
    std::uint64_t n;
    if (!in.input().le(underlying)) return in.fail("an enum type ends early");
    if (!integer_tag(underlying)) return in.fail("an enum's underlying type is tag " + hex_byte(underlying));
    if (!in.text(name) || !in.count(n, schema::kMaxEnumerators)) return false;
    std::vector<Enumerator>& enumerators = in.types().enumerators;
    if (n > kMaxEnumeratorsPerSite - enumerators.size())
      return in.fail("the type expressions list more than " + std::to_string(kMaxEnumeratorsPerSite) + " enumerators");
    std::size_t first = enumerators.size();
    for (std::uint64_t k = 0; k < n; ++k) {
      std::uint64_t zigzag;
      Enumerator e;
      if (!in.input().varint(zigzag)) return in.fail("an enum type ends early");
      if (!in.text(e.name)) return false;
      e.value = wire::unzigzag(zigzag);
      enumerators.push_back(e);
    }
    keep_first_name_per_value(enumerators, first);
    TypeExpr& node = in.node(index);
    node.rep = underlying;
    node.name = name;
    node.first = static_cast<std::uint32_t>(first);
    node.count = static_cast<std::uint32_t>(enumerators.size() - first);
    return true;
  }

  static bool check_value(ValueChecker&, const TypeExpr& node, wire::ByteReader& r) {
    return r.skip(static_cast<std::size_t>(schema::type_tag_size(node.rep)));
  }

  static void write_value(ValueWriter& w, const TypeExpr& node, wire::ByteReader& r) {
    Arg a;
    read_scalar(r, node.rep, a);
    if (const Enumerator* e = find_enumerator(w.types(), node, a)) {
      w.string(w.types().view(e->name), false);
    } else {
      w.scalar(a);
    }
  }

  static std::string key_text(const SiteTypes& types, const TypeExpr& node, wire::ByteReader& r) {
    Arg a;
    read_scalar(r, node.rep, a);
    if (const Enumerator* e = find_enumerator(types, node, a)) return std::string(types.view(e->name));
    std::string number;
    append_json_scalar(number, a);
    return number;
  }

  static FormatterPtr make_formatter(const SiteTypes& types, const TypeExpr& node) {
    return std::make_unique<EnumFormatter>(types, node);
  }

 private:
  // Sorted for lookup; of several names for one value the first listed
  // wins (FORMAT.md §8.1), which a stable sort keeps in front.
  static void keep_first_name_per_value(std::vector<Enumerator>& enumerators, std::size_t first) {
    auto begin = enumerators.begin() + static_cast<std::ptrdiff_t>(first);
    std::stable_sort(begin, enumerators.end(),
                     [](const Enumerator& a, const Enumerator& b) { return a.value < b.value; });
    auto end = std::unique(begin, enumerators.end(),
                           [](const Enumerator& a, const Enumerator& b) { return a.value == b.value; });
    enumerators.erase(end, enumerators.end());
  }
};

// ---- user type ------------------------------------------------------------------------

// fmt::format(user format, fields...), each field handed to fmt as a
// top-level argument would be.
class UserFormatter final : public TextFormatter {
 public:
  UserFormatter(const SiteTypes& types, const TypeExpr& node) : types_(types), node_(node) {}

  void format(wire::ByteReader& value, const Sink& out) const override {
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
        views[k] = StructuredView{
            &types_, types_.children[node_.first + k],
            std::string_view(reinterpret_cast<const char*>(begin), static_cast<std::size_t>(value.position() - begin))};
        args.push_back(single_arg(views[k]));
      }
    }
    check_dynamic_args(user, scalars);
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

  static void check_dynamic_args(const UserType& user, const std::vector<Arg>& scalars) {
    for (std::uint16_t index : user.check.dynamic_args) {
      const Arg& a = scalars[index];
      bool too_wide =
          a.tag >= static_cast<std::uint8_t>(TypeTag::i8) && a.tag <= static_cast<std::uint8_t>(TypeTag::i64)
              ? a.i > kMaxWidthOrPrecision
              : a.tag >= static_cast<std::uint8_t>(TypeTag::u8) && a.tag <= static_cast<std::uint8_t>(TypeTag::u64) &&
                    a.u > static_cast<std::uint64_t>(kMaxWidthOrPrecision);
      if (too_wide) format_failure("a user type's dynamic width or precision is over 65536");
    }
  }

  const SiteTypes& types_;
  const TypeExpr& node_;
};

// JSON: the text its format renders, as a string (null when it cannot).
struct User {
  static bool read_type(TypeReader& in, std::uint32_t index, int depth) {
    TextRef name, format;
    std::uint64_t n;
    if (!in.text(name) || !in.text(format) || !in.count(n, schema::kMaxCompositeFields)) return false;
    if (!in.children(index, n, depth, false)) return false;
    SiteTypes& types = in.types();
    TypeExpr& node = in.node(index);
    node.name = name;
    // The format comes from the file like the site's own: it is checked the
    // same way, its fields standing for the arguments.
    std::vector<std::uint8_t> field_tags;
    for (std::uint32_t k = 0; k < node.count; ++k) {
      std::uint8_t code = types.child(node, k).code;
      field_tags.push_back(is_scalar_code(code) ? code : static_cast<std::uint8_t>(TypeTag::structured));
    }
    UserType entry;
    entry.format = format;
    entry.check = check_format(types.view(format), field_tags);
    if (!entry.check.ok)
      return in.fail("user type '" + std::string(types.view(name)) +
                     "' has an unusable format string: " + entry.check.error);
    node.extra = static_cast<std::uint32_t>(types.users.size());
    types.users.push_back(std::move(entry));
    return true;
  }

  static bool check_value(ValueChecker& checker, const TypeExpr& node, wire::ByteReader& r) {
    for (std::uint32_t k = 0; k < node.count; ++k)
      if (!checker.value(checker.types().child(node, k), r)) return false;
    return true;
  }

  static void write_value(ValueWriter& w, const TypeExpr& node, wire::ByteReader& r) {
    const SiteTypes& types = w.types();
    const unsigned char* begin = r.position();
    skip_value(types, node, r);
    StructuredView view{
        &types, static_cast<std::uint32_t>(&node - types.nodes.data()),
        std::string_view(reinterpret_cast<const char*>(begin), static_cast<std::size_t>(r.position() - begin))};
    std::string text;
    try {
      fmt::format_to(std::back_inserter(text), "{}", view);
    } catch (const fmt::format_error&) {
      w.out().null();
      return;
    }
    w.string(text, true);
  }

  static FormatterPtr make_formatter(const SiteTypes& types, const TypeExpr& node) {
    return std::make_unique<UserFormatter>(types, node);
  }
};

// ---- private value --------------------------------------------------------------------

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

  void format(wire::ByteReader& value, const Sink& out) const override {
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

// JSON: null when omitted, "<private:3f9a1c>" when hashed, the value when
// clear.
struct Secret {
  static bool read_type(TypeReader& in, std::uint32_t index, int depth) { return in.children(index, 1, depth, false); }

  static bool check_value(ValueChecker& checker, const TypeExpr& node, wire::ByteReader& r) {
    std::uint8_t mode;
    if (!r.le(mode)) return false;
    switch (static_cast<schema::PrivateMode>(mode)) {
      case schema::PrivateMode::omitted:
        return true;
      case schema::PrivateMode::hashed:
        return r.skip(8);
      case schema::PrivateMode::clear:
        return checker.value(checker.types().child(node, 0), r);
    }
    return false;
  }

  static void write_value(ValueWriter& w, const TypeExpr& node, wire::ByteReader& r) {
    std::uint8_t mode = 0;
    r.le(mode);
    if (mode == static_cast<std::uint8_t>(schema::PrivateMode::hashed)) {
      std::uint64_t hash = 0;
      r.le(hash);
      w.string(fmt::format("<private:{:06x}>", hash >> 40), false);
    } else if (mode == static_cast<std::uint8_t>(schema::PrivateMode::clear)) {
      w.value(w.types().child(node, 0), r);
    } else {
      w.out().null();
    }
  }

  static FormatterPtr make_formatter(const SiteTypes& types, const TypeExpr& node) {
    return std::make_unique<SecretFormatter>(detail::make_formatter(types, types.child(node, 0)));
  }
};

// ---- preformatted text ----------------------------------------------------------------

class PreformattedFormatter final : public TextFormatter {
 public:
  void format(wire::ByteReader& value, const Sink& out) const override {
    Arg a = take_scalar(value, static_cast<std::uint8_t>(TypeTag::string));
    write_text(a.null_string ? std::string_view("(null)") : a.text, out);
  }
};

// JSON: a string (null for a null one).
struct Preformatted {
  static bool read_type(TypeReader&, std::uint32_t, int) { return true; }
  static bool check_value(ValueChecker&, const TypeExpr&, wire::ByteReader& r) { return skip_string(r); }
  static void write_value(ValueWriter& w, const TypeExpr&, wire::ByteReader& r) { w.string_value(r); }
  static FormatterPtr make_formatter(const SiteTypes&, const TypeExpr&) {
    return std::make_unique<PreformattedFormatter>();
  }
};

}  // namespace

const Kind& enumeration_kind() { return kind_from<Enumeration>(); }
const Kind& user_kind() { return kind_from<User>(); }
const Kind& secret_kind() { return kind_from<Secret>(); }
const Kind& preformatted_kind() { return kind_from<Preformatted>(); }

}  // namespace terse::decoder::detail
