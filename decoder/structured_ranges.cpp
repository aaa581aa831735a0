// The kinds fmt/ranges.h formats: sequences, sets and maps (its
// range_formatter), tuples (its tuple formatter), and FORMAT.md's
// aggregates, which render like a tuple with braces and member names.
#include <string>
#include <unordered_set>
#include <vector>

#include "structured_kind.hpp"

namespace terse::decoder::detail {

using schema::TypeNode;
using schema::TypeTag;

namespace {

// ---- shared by the kinds below ------------------------------------------------------

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

  void format(wire::ByteReader& value, const Sink& out) const override {
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

  void format(wire::ByteReader& value, const Sink& out) const override {
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

// A container's value: its count, then each element's children in turn.
bool check_elements(ValueChecker& checker, const TypeExpr& node, wire::ByteReader& r) {
  std::uint32_t stored;
  std::uint64_t total;
  if (!read_count(r, stored, total)) return false;
  for (std::uint32_t i = 0; i < stored; ++i) {
    if (!checker.element()) return false;
    for (std::uint32_t k = 0; k < node.count; ++k)
      if (!checker.value(checker.types().child(node, k), r)) return false;
  }
  return true;
}

// A tuple's or an aggregate's value: its members in turn.
bool check_members(ValueChecker& checker, const TypeExpr& node, wire::ByteReader& r) {
  for (std::uint32_t k = 0; k < node.count; ++k)
    if (!checker.value(checker.types().child(node, k), r)) return false;
  return true;
}

// Sequence and set: one element expression.
template <char Open, char Close>
struct SingleElementRange {
  static bool read_type(TypeReader& in, std::uint32_t index, int depth) { return in.children(index, 1, depth, false); }
  static bool check_value(ValueChecker& checker, const TypeExpr& node, wire::ByteReader& r) {
    return check_elements(checker, node, r);
  }
  // A list; a cut one ends with "... N total".
  static void write_value(ValueWriter& w, const TypeExpr& node, wire::ByteReader& r) {
    std::uint32_t stored = 0;
    std::uint64_t total = 0;
    read_count(r, stored, total);
    w.out().begin_list();
    for (std::uint32_t i = 0; i < stored; ++i) {
      w.value(w.types().child(node, 0), r);
      w.check();
    }
    if (total != stored) w.truncation_note(total);
    w.out().end_list();
  }
  static FormatterPtr make_formatter(const SiteTypes& types, const TypeExpr& node) {
    static constexpr char kBrackets[] = {Open, Close};
    return std::make_unique<RangeFormatter>(detail::make_formatter(types, types.child(node, 0)),
                                            std::string_view(kBrackets, 1), std::string_view(kBrackets + 1, 1));
  }
};

// ---- map ------------------------------------------------------------------------------

// An object when its keys are strings or a kind with a JSON key (enums),
// else [[key, value], ...]; a cut map ends with "...": "N total" (or the
// note as a last pair).
struct Map {
  static bool read_type(TypeReader& in, std::uint32_t index, int depth) { return in.children(index, 2, depth, false); }
  static bool check_value(ValueChecker& checker, const TypeExpr& node, wire::ByteReader& r) {
    return check_elements(checker, node, r);
  }

  static void write_value(ValueWriter& w, const TypeExpr& node, wire::ByteReader& r) {
    std::uint32_t stored = 0;
    std::uint64_t total = 0;
    read_count(r, stored, total);
    const TypeExpr& key = w.types().child(node, 0);
    const TypeExpr& mapped = w.types().child(node, 1);
    std::vector<std::string> names;
    if (key_is_text(key) && unique_names(w, key, mapped, r, stored, total, names)) {
      as_object(w, key, mapped, r, names, total);
    } else {
      as_pairs(w, key, mapped, r, stored, total);
    }
  }

  static FormatterPtr make_formatter(const SiteTypes& types, const TypeExpr& node) {
    auto entry =
        std::make_unique<TupleFormatter>(member_formatters(types, node), std::vector<std::string_view>{}, "", "", ": ");
    return std::make_unique<RangeFormatter>(std::move(entry), "{", "}");
  }

 private:
  static bool key_is_text(const TypeExpr& key) {
    if (key.code == static_cast<std::uint8_t>(TypeTag::string)) return true;
    const Kind* kind = kind_of(key.code);
    return kind != nullptr && kind->key_text != nullptr;
  }

  // A key as a member name: the string itself, or what its kind names it.
  static std::string key_text(const ValueWriter& w, const TypeExpr& key, wire::ByteReader& r) {
    if (key.code == static_cast<std::uint8_t>(TypeTag::string)) {
      Arg a;
      read_string(r, a);
      return a.null_string ? std::string("(null)") : w.rewritten(a.text);
    }
    return kind_of(key.code)->key_text(w.types(), key, r);
  }

  // An object only when its names come out unique as JSON: a multimap, keys
  // that differ only in invalid UTF-8 (both U+FFFD) or a real "..." key
  // beside the cut marker would make names repeat, which JSON readers
  // resolve by dropping values. Such a map is written as pairs instead.
  // Reads ahead of `r`, which stays where it is.
  static bool unique_names(const ValueWriter& w, const TypeExpr& key, const TypeExpr& mapped, wire::ByteReader r,
                           std::uint32_t stored, std::uint64_t total, std::vector<std::string>& names) {
    std::unordered_set<std::string> seen;
    std::string json;
    for (std::uint32_t i = 0; i < stored; ++i) {
      names.push_back(key_text(w, key, r));
      skip_value(w.types(), mapped, r);
      json.clear();
      append_json_string(json, names.back());
      if (!seen.insert(json).second) return false;
    }
    return total == stored || !seen.count("\"...\"");
  }

  static void as_object(ValueWriter& w, const TypeExpr& key, const TypeExpr& mapped, wire::ByteReader& r,
                        const std::vector<std::string>& names, std::uint64_t total) {
    w.out().begin_object();
    for (const std::string& name : names) {
      skip_value(w.types(), key, r);
      w.out().member(name);
      w.value(mapped, r);
      w.check();
    }
    if (total != names.size()) {
      w.out().member("...");
      w.out().string(fmt::format("{} total", total));
    }
    w.out().end_object();
  }

  static void as_pairs(ValueWriter& w, const TypeExpr& key, const TypeExpr& mapped, wire::ByteReader& r,
                       std::uint32_t stored, std::uint64_t total) {
    w.out().begin_list();
    for (std::uint32_t i = 0; i < stored; ++i) {
      w.out().begin_list();
      w.value(key, r);
      w.value(mapped, r);
      w.out().end_list();
      w.check();
    }
    if (total != stored) w.truncation_note(total);
    w.out().end_list();
  }
};

// ---- tuple ----------------------------------------------------------------------------

// An array.
struct Tuple {
  static bool read_type(TypeReader& in, std::uint32_t index, int depth) {
    std::uint64_t n;
    return in.count(n, schema::kMaxCompositeFields) && in.children(index, n, depth, false);
  }
  static bool check_value(ValueChecker& checker, const TypeExpr& node, wire::ByteReader& r) {
    return check_members(checker, node, r);
  }
  static void write_value(ValueWriter& w, const TypeExpr& node, wire::ByteReader& r) {
    w.out().begin_list();
    for (std::uint32_t k = 0; k < node.count; ++k) {
      w.value(w.types().child(node, k), r);
      w.check();
    }
    w.out().end_list();
  }
  static FormatterPtr make_formatter(const SiteTypes& types, const TypeExpr& node) {
    return std::make_unique<TupleFormatter>(member_formatters(types, node), std::vector<std::string_view>{}, "(", ")",
                                            ", ");
  }
};

// ---- aggregate ------------------------------------------------------------------------

// An object by member name when the writer named them all, else an array.
struct Aggregate {
  static bool read_type(TypeReader& in, std::uint32_t index, int depth) {
    TextRef name;
    std::uint64_t n;
    if (!in.text(name) || !in.count(n, schema::kMaxCompositeFields)) return false;
    in.node(index).name = name;
    return in.children(index, n, depth, true);
  }
  static bool check_value(ValueChecker& checker, const TypeExpr& node, wire::ByteReader& r) {
    return check_members(checker, node, r);
  }
  static void write_value(ValueWriter& w, const TypeExpr& node, wire::ByteReader& r) {
    const SiteTypes& types = w.types();
    bool named = node.count > 0;
    for (std::uint32_t k = 0; k < node.count; ++k)
      if (types.field_names[node.first + k].size == 0) named = false;
    if (named) {
      w.out().begin_object();
    } else {
      w.out().begin_list();
    }
    for (std::uint32_t k = 0; k < node.count; ++k) {
      if (named) w.out().member(types.view(types.field_names[node.first + k]));
      w.value(types.child(node, k), r);
      w.check();
    }
    if (named) {
      w.out().end_object();
    } else {
      w.out().end_list();
    }
  }
  static FormatterPtr make_formatter(const SiteTypes& types, const TypeExpr& node) {
    std::vector<std::string_view> names;
    for (std::uint32_t k = 0; k < node.count; ++k) names.push_back(types.view(types.field_names[node.first + k]));
    return std::make_unique<TupleFormatter>(member_formatters(types, node), std::move(names), "{", "}", ", ");
  }
};

}  // namespace

const Kind& sequence_kind() { return kind_from<SingleElementRange<'[', ']'>>(); }
const Kind& set_kind() { return kind_from<SingleElementRange<'{', '}'>>(); }
const Kind& map_kind() { return kind_from<Map>(); }
const Kind& tuple_kind() { return kind_from<Tuple>(); }
const Kind& aggregate_kind() { return kind_from<Aggregate>(); }

}  // namespace terse::decoder::detail
