// FORMAT.md §8.1 on the reading side: type expressions from the dictionary,
// values checked against them once per record, and their JSON form.
#include "structured.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <iterator>
#include <numeric>
#include <string>
#include <unordered_set>
#include <vector>

namespace terse::decoder::detail {

using schema::TypeNode;
using schema::TypeTag;

namespace {

constexpr std::size_t kMaxTypeText = 1 << 20;
// FORMAT.md bounds each enum, not their sum: without this a site of 4096
// enums could ask for 2^28 enumerators from a 64 MiB frame.
constexpr std::size_t kMaxEnumeratorsPerSite = 1 << 20;

constexpr std::uint8_t code_of(TypeNode node) { return static_cast<std::uint8_t>(node); }

bool integer_tag(std::uint8_t tag) {
  return tag >= static_cast<std::uint8_t>(TypeTag::i8) && tag <= static_cast<std::uint8_t>(TypeTag::u64);
}

bool duration_rep_tag(std::uint8_t tag) {
  return integer_tag(tag) || tag == static_cast<std::uint8_t>(TypeTag::f32) ||
         tag == static_cast<std::uint8_t>(TypeTag::f64);
}

std::string hex_byte(std::uint8_t byte) { return fmt::format("0x{:02X}", byte); }

class TypeReader {
 public:
  TypeReader(wire::Reader& r, SiteTypes& types, std::string& error) : r_(r), types_(types), error_(error) {}

  bool expression(int depth, std::uint32_t& index) {
    if (depth > schema::kMaxTypeDepth)
      return fail("a type expression nests deeper than " + std::to_string(schema::kMaxTypeDepth) + " levels");
    if (types_.nodes.size() >= schema::kMaxTypeNodes)
      return fail("the type expressions hold more than " + std::to_string(schema::kMaxTypeNodes) + " nodes");
    std::uint8_t code;
    if (!r_.le(code)) return fail("a type expression ends early");
    index = static_cast<std::uint32_t>(types_.nodes.size());
    types_.nodes.emplace_back();
    types_.nodes[index].code = code;
    if (is_scalar_code(code)) return true;
    // `types_.nodes` grows below: the node is reached by index from here on.
    switch (static_cast<TypeNode>(code)) {
      case TypeNode::sequence:
      case TypeNode::set:
      case TypeNode::optional:
      case TypeNode::secret:
        return children(index, 1, depth, false);
      case TypeNode::map:
        return children(index, 2, depth, false);
      case TypeNode::tuple:
      case TypeNode::variant: {
        std::uint64_t n;
        if (!count(n, schema::kMaxCompositeFields)) return false;
        return children(index, n, depth, false);
      }
      case TypeNode::aggregate: {
        TextRef name;
        std::uint64_t n;
        if (!text(name) || !count(n, schema::kMaxCompositeFields)) return false;
        types_.nodes[index].name = name;
        return children(index, n, depth, true);
      }
      case TypeNode::enumeration:
        return enumeration(index);
      case TypeNode::duration:
      case TypeNode::time_point: {
        std::uint8_t clock = 0, rep;
        if (code == code_of(TypeNode::time_point) && !r_.le(clock)) return fail("a time point type ends early");
        if (!r_.le(rep)) return fail("a duration type ends early");
        if (!duration_rep_tag(rep)) return fail("a duration counts in type tag " + hex_byte(rep));
        Period period;
        if (!r_.varint(period.num) || !r_.varint(period.den)) return fail("a duration type ends early");
        if (period.num == 0 || period.den == 0) return fail("a duration has a period of zero");
        std::uint64_t divisor = std::gcd(period.num, period.den);
        period.num /= divisor;
        period.den /= divisor;
        TypeExpr& node = types_.nodes[index];
        node.rep = rep;
        // Clocks newer than this reader are shown as durations, like "other".
        node.clock = clock <= static_cast<std::uint8_t>(schema::Clock::steady) ? clock : 0;
        node.extra = static_cast<std::uint32_t>(types_.periods.size());
        types_.periods.push_back(period);
        return true;
      }
      case TypeNode::error_code:
      case TypeNode::path:
      case TypeNode::thread_id:
      case TypeNode::monostate:
      case TypeNode::preformatted:
        return true;
      case TypeNode::user:
        return user(index, depth);
    }
    return fail("unknown type code " + hex_byte(code));
  }

 private:
  bool fail(std::string why) {
    error_ = std::move(why);
    return false;
  }

  bool count(std::uint64_t& n, std::uint64_t max) {
    if (!r_.varint(n)) return fail("a type expression ends early");
    if (n > max) return fail("a type expression lists " + std::to_string(n) + " members, over " + std::to_string(max));
    return true;
  }

  bool text(TextRef& ref) {
    std::string_view bytes;
    std::uint64_t n;
    if (!r_.varint(n)) return fail("a type expression ends early");
    if (n > kMaxTypeText - types_.text.size()) return fail("the type expressions hold more than 1 MiB of text");
    if (!r_.bytes(static_cast<std::size_t>(n), bytes)) return fail("a type expression ends early");
    ref.offset = static_cast<std::uint32_t>(types_.text.size());
    ref.size = static_cast<std::uint32_t>(bytes.size());
    types_.text.append(bytes);
    return true;
  }

  // A composite's children are read depth first, then listed together so
  // that they sit next to each other in `children`.
  bool children(std::uint32_t parent, std::uint64_t n, int depth, bool named) {
    std::vector<std::uint32_t> kids(static_cast<std::size_t>(n));
    std::vector<TextRef> names(named ? kids.size() : 0);
    for (std::size_t k = 0; k < kids.size(); ++k) {
      if (named && !text(names[k])) return false;
      if (!expression(depth + 1, kids[k])) return false;
    }
    TypeExpr& node = types_.nodes[parent];
    node.first = static_cast<std::uint32_t>(types_.children.size());
    node.count = static_cast<std::uint32_t>(kids.size());
    types_.children.insert(types_.children.end(), kids.begin(), kids.end());
    if (named) {
      types_.field_names.insert(types_.field_names.end(), names.begin(), names.end());
    } else {
      types_.field_names.resize(types_.children.size());
    }
    return true;
  }

  bool enumeration(std::uint32_t index) {
    std::uint8_t underlying;
    TextRef name;
    std::uint64_t n;
    if (!r_.le(underlying)) return fail("an enum type ends early");
    if (!integer_tag(underlying)) return fail("an enum's underlying type is tag " + hex_byte(underlying));
    if (!text(name) || !count(n, schema::kMaxEnumerators)) return false;
    if (n > kMaxEnumeratorsPerSite - types_.enumerators.size())
      return fail("the type expressions list more than " + std::to_string(kMaxEnumeratorsPerSite) + " enumerators");
    std::size_t first = types_.enumerators.size();
    for (std::uint64_t k = 0; k < n; ++k) {
      std::uint64_t zigzag;
      Enumerator e;
      if (!r_.varint(zigzag)) return fail("an enum type ends early");
      if (!text(e.name)) return false;
      e.value = wire::unzigzag(zigzag);
      types_.enumerators.push_back(e);
    }
    // Sorted for lookup; of several names for one value the first listed
    // wins (FORMAT.md §8.1), which a stable sort keeps in front.
    auto begin = types_.enumerators.begin() + static_cast<std::ptrdiff_t>(first);
    std::stable_sort(begin, types_.enumerators.end(),
                     [](const Enumerator& a, const Enumerator& b) { return a.value < b.value; });
    auto end = std::unique(begin, types_.enumerators.end(),
                           [](const Enumerator& a, const Enumerator& b) { return a.value == b.value; });
    types_.enumerators.erase(end, types_.enumerators.end());
    TypeExpr& node = types_.nodes[index];
    node.rep = underlying;
    node.name = name;
    node.first = static_cast<std::uint32_t>(first);
    node.count = static_cast<std::uint32_t>(types_.enumerators.size() - first);
    return true;
  }

  bool user(std::uint32_t index, int depth) {
    TextRef name, format;
    std::uint64_t n;
    if (!text(name) || !text(format) || !count(n, schema::kMaxCompositeFields)) return false;
    if (!children(index, n, depth, false)) return false;
    TypeExpr& node = types_.nodes[index];
    node.name = name;
    // The format comes from the file like the site's own: it is checked the
    // same way, its fields standing for the arguments.
    std::vector<std::uint8_t> field_tags;
    for (std::uint32_t k = 0; k < node.count; ++k) {
      std::uint8_t code = types_.child(node, k).code;
      field_tags.push_back(is_scalar_code(code) ? code : static_cast<std::uint8_t>(TypeTag::structured));
    }
    UserType entry;
    entry.format = format;
    entry.check = check_format(types_.view(format), field_tags);
    if (!entry.check.ok)
      return fail("user type '" + std::string(types_.view(name)) + "' has an unusable format string: " +
                  entry.check.error);
    node.extra = static_cast<std::uint32_t>(types_.users.size());
    types_.users.push_back(std::move(entry));
    return true;
  }

  wire::Reader& r_;
  SiteTypes& types_;
  std::string& error_;
};

// Reads a container's count (FORMAT.md §8.1): the stored elements, and the
// real size when the writer cut it short.
bool read_count(wire::Reader& r, std::uint32_t& stored, std::uint64_t& total) {
  std::uint32_t word;
  if (!r.le(word)) return false;
  stored = word & schema::kCountMask;
  total = stored;
  if ((word & schema::kCountTruncatedBit) == 0) return true;
  return r.le(total) && total >= stored;
}

bool skip_string(wire::Reader& r) {
  std::uint32_t header;
  if (!r.le(header)) return false;
  if (header == schema::kStringNull) return true;
  if (header == schema::kStringInterned) return false;  // FORMAT.md §8: never inside a structured value
  return r.skip(header & schema::kStringLengthMask);
}

class ValueChecker {
 public:
  ValueChecker(const SiteTypes& types, ValueBudget& budget) : types_(types), budget_(budget) {}

  bool value(const TypeExpr& node, wire::Reader& r) {
    if (++budget_.values > kMaxValuesPerRecord) return false;
    if (is_scalar_code(node.code)) {
      if (node.code == static_cast<std::uint8_t>(TypeTag::string)) return skip_string(r);
      return r.skip(static_cast<std::size_t>(schema::type_tag_size(node.code)));
    }
    switch (static_cast<TypeNode>(node.code)) {
      case TypeNode::sequence:
      case TypeNode::set:
      case TypeNode::map: {
        std::uint32_t stored;
        std::uint64_t total;
        if (!read_count(r, stored, total)) return false;
        for (std::uint32_t i = 0; i < stored; ++i) {
          if (++budget_.elements > kMaxElementsPerRecord) return false;
          for (std::uint32_t k = 0; k < node.count; ++k)
            if (!value(types_.child(node, k), r)) return false;
        }
        return true;
      }
      case TypeNode::tuple:
      case TypeNode::aggregate:
      case TypeNode::user:
        for (std::uint32_t k = 0; k < node.count; ++k)
          if (!value(types_.child(node, k), r)) return false;
        return true;
      case TypeNode::optional: {
        std::uint8_t present;
        if (!r.le(present) || present > 1) return false;
        return present == 0 || value(types_.child(node, 0), r);
      }
      case TypeNode::variant: {
        std::uint8_t index;
        if (!r.le(index)) return false;
        if (index == schema::kVariantValueless) return true;
        return index < node.count && value(types_.child(node, index), r);
      }
      case TypeNode::enumeration:
      case TypeNode::duration:
      case TypeNode::time_point:
        return r.skip(static_cast<std::size_t>(schema::type_tag_size(node.rep)));
      case TypeNode::error_code:
        return r.skip(4) && skip_string(r);
      case TypeNode::path:
      case TypeNode::preformatted:
        return skip_string(r);
      case TypeNode::thread_id:
        return r.skip(8);
      case TypeNode::monostate:
        return true;
      case TypeNode::secret: {
        std::uint8_t mode;
        if (!r.le(mode)) return false;
        switch (static_cast<schema::PrivateMode>(mode)) {
          case schema::PrivateMode::omitted: return true;
          case schema::PrivateMode::hashed: return r.skip(8);
          case schema::PrivateMode::clear: return value(types_.child(node, 0), r);
        }
        return false;
      }
    }
    return false;
  }

 private:
  const SiteTypes& types_;
  ValueBudget& budget_;
};

}  // namespace

bool read_type_expressions(wire::Reader& body, Site& site, std::string& error) {
  SiteTypes& types = site.types;
  types = SiteTypes{};
  std::size_t structured = static_cast<std::size_t>(
      std::count(site.tags.begin(), site.tags.end(), static_cast<std::uint8_t>(TypeTag::structured)));
  if (body.empty()) {
    if (structured == 0) return true;
    error = "it has structured arguments but no type expressions";
    return false;
  }
  std::uint64_t n;
  if (!body.varint(n)) {
    error = "its type expressions are malformed";
    return false;
  }
  if (n != structured) {
    error = "it has " + std::to_string(structured) + " structured arguments but " + std::to_string(n) +
            " type expressions";
    return false;
  }
  TypeReader reader(body, types, error);
  for (std::size_t k = 0; k < structured; ++k) {
    std::uint32_t root;
    if (!reader.expression(1, root)) return false;
    types.roots.push_back(root);
  }
  return true;
}

bool check_value(const SiteTypes& types, std::uint32_t node, std::string_view bytes, ValueBudget& budget) {
  wire::Reader r(bytes);
  ValueChecker checker(types, budget);
  return checker.value(types.nodes[node], r) && r.empty();
}

void skip_value(const SiteTypes& types, const TypeExpr& node, wire::Reader& r) {
  // The value was checked against this very expression: only the budget
  // could fail, and it is not counted twice.
  ValueBudget unlimited;
  ValueChecker(types, unlimited).value(node, r);
}

// ---- JSON ---------------------------------------------------------------------
//
// Structured values become JSON structure:
//   sequence, set, tuple          array
//   map                           object when its keys are strings or enums, else [[key, value], ...]
//   aggregate                     object by member name when the writer named them, else array
//   optional                      the value, or null
//   variant                       the alternative's value (null when valueless)
//   enum                          the enumerator's name, or the number when it has none
//   duration                      {"count": N, "unit": "ms"}, unit as fmt prints it ("[5/7]s" for odd periods)
//   time point, system clock      "2023-11-14T22:13:20.123000000Z" (UTC); out of range like other clocks
//   time point, other clocks      {"count": N, "unit": "ns", "clock": "steady" or "other"}
//   error code                    {"category": "generic", "value": 2}
//   path, preformatted            string
//   thread id                     number (0 for no thread)
//   monostate                     null
//   user type                     the text its format renders, as a string
//   private                       null when omitted, "<private:3f9a1c>" when hashed, the value when clear
// A truncated container gets a last array element "... N total" (an
// object: the member "...": "N total"). Scalars are as in the "args" array.
// A value whose JSON would pass 64 MiB becomes a string saying so.

namespace {

// The unit fmt's duration formatter prints: get_units(), else "[num/den]s".
std::string duration_unit(const Period& p) {
  static const struct {
    std::uint64_t num, den;
    const char* unit;
  } kUnits[] = {{1, 1000000000000000000ull, "as"},
                {1, 1000000000000000ull, "fs"},
                {1, 1000000000000ull, "ps"},
                {1, 1000000000, "ns"},
                {1, 1000000, "\xC2\xB5s"},
                {1, 1000, "ms"},
                {1, 100, "cs"},
                {1, 10, "ds"},
                {1, 1, "s"},
                {10, 1, "das"},
                {100, 1, "hs"},
                {1000, 1, "ks"},
                {1000000, 1, "Ms"},
                {1000000000, 1, "Gs"},
                {1000000000000ull, 1, "Ts"},
                {1000000000000000ull, 1, "Ps"},
                {1000000000000000000ull, 1, "Es"},
                {60, 1, "m"},
                {3600, 1, "h"}};
  for (const auto& u : kUnits)
    if (u.num == p.num && u.den == p.den) return u.unit;
  return p.den == 1 ? fmt::format("[{}]s", p.num) : fmt::format("[{}/{}]s", p.num, p.den);
}

// UTC with nanoseconds, when the count is an integer whose time fits.
bool rfc3339_utc(std::string& out, const Arg& count, const Period& period) {
  if (!integer_tag(count.tag)) return false;
  std::int64_t seconds, nanos;
  if (!period_seconds(count, period, true, seconds, nanos)) return false;
  constexpr std::int64_t kLimit = std::int64_t{1} << 40;  // far beyond year 9999
  if (seconds > kLimit || seconds < -kLimit) return false;
  time_t t = static_cast<time_t>(seconds);
  tm parts{};
  if (gmtime_r(&t, &parts) == nullptr || parts.tm_year + 1900 < 0 || parts.tm_year + 1900 > 9999) return false;
  fmt::format_to(std::back_inserter(out), "\"{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}Z\"", parts.tm_year + 1900,
                 parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, nanos);
  return true;
}

// Thrown when one value's JSON outgrows kMaxRenderedBytes.
struct JsonTooLarge {};

class JsonWriter {
 public:
  JsonWriter(const SiteTypes& types, std::string& out, const TextRewrite& rewrite)
      : types_(types), out_(out), rewrite_(rewrite), limit_(out.size() + kMaxRenderedBytes) {}

  void value(const TypeExpr& node, wire::Reader& r) {
    if (is_scalar_code(node.code)) {
      Arg a;
      read_scalar(r, node.code, a);
      scalar(a);
      return;
    }
    switch (static_cast<TypeNode>(node.code)) {
      case TypeNode::sequence:
      case TypeNode::set:
        return sequence(node, r);
      case TypeNode::map:
        return map(node, r);
      case TypeNode::tuple:
        out_ += '[';
        for (std::uint32_t k = 0; k < node.count; ++k) {
          if (k) out_ += ',';
          value(types_.child(node, k), r);
          check();
        }
        out_ += ']';
        return;
      case TypeNode::aggregate:
        return aggregate(node, r);
      case TypeNode::optional: {
        std::uint8_t present = 0;
        r.le(present);
        if (present) {
          value(types_.child(node, 0), r);
        } else {
          out_ += "null";
        }
        return;
      }
      case TypeNode::variant: {
        std::uint8_t index = schema::kVariantValueless;
        r.le(index);
        if (index < node.count) {
          value(types_.child(node, index), r);
        } else {
          out_ += "null";
        }
        return;
      }
      case TypeNode::enumeration: {
        Arg a;
        read_scalar(r, node.rep, a);
        if (const Enumerator* e = find_enumerator(types_, node, a)) {
          string(types_.view(e->name), false);
        } else {
          scalar(a);
        }
        return;
      }
      case TypeNode::duration: {
        Arg a;
        read_scalar(r, node.rep, a);
        count_and_unit(a, types_.periods[node.extra], nullptr);
        return;
      }
      case TypeNode::time_point: {
        Arg a;
        read_scalar(r, node.rep, a);
        const Period& period = types_.periods[node.extra];
        if (node.clock == static_cast<std::uint8_t>(schema::Clock::system) && rfc3339_utc(out_, a, period)) return;
        count_and_unit(a, period, node.clock == static_cast<std::uint8_t>(schema::Clock::steady) ? "steady" : "other");
        return;
      }
      case TypeNode::error_code: {
        std::int32_t code = 0;
        Arg category;
        r.le(code);
        read_string(r, category);
        out_ += "{\"category\":";
        string(category.null_string ? std::string_view("(null)") : category.text, false);
        fmt::format_to(std::back_inserter(out_), ",\"value\":{}}}", code);
        return;
      }
      case TypeNode::path:
      case TypeNode::preformatted: {
        Arg a;
        read_string(r, a);
        if (a.null_string) {
          out_ += "null";
        } else {
          string(a.text, true);
        }
        return;
      }
      case TypeNode::thread_id: {
        std::uint64_t id = 0;
        r.le(id);
        fmt::format_to(std::back_inserter(out_), "{}", id);
        return;
      }
      case TypeNode::monostate:
        out_ += "null";
        return;
      case TypeNode::user:
        return user(node, r);
      case TypeNode::secret: {
        std::uint8_t mode = 0;
        r.le(mode);
        if (mode == static_cast<std::uint8_t>(schema::PrivateMode::hashed)) {
          std::uint64_t hash = 0;
          r.le(hash);
          fmt::format_to(std::back_inserter(out_), "\"<private:{:06x}>\"", hash >> 40);
        } else if (mode == static_cast<std::uint8_t>(schema::PrivateMode::clear)) {
          value(types_.child(node, 0), r);
        } else {
          out_ += "null";
        }
        return;
      }
    }
    out_ += "null";
  }

 private:
  void scalar(const Arg& a) {
    if (rewrite_ && a.tag == static_cast<std::uint8_t>(TypeTag::string) && !a.null_string) {
      string(a.text, true);
    } else {
      append_json_scalar(out_, a);
    }
  }

  void string(std::string_view text, bool rewritable) {
    if (rewritable && rewrite_) {
      std::string copy(text);
      rewrite_(copy);
      append_json_string(out_, copy);
    } else {
      append_json_string(out_, text);
    }
  }

  void count_and_unit(const Arg& count, const Period& period, const char* clock) {
    out_ += "{\"count\":";
    append_json_scalar(out_, count);
    out_ += ",\"unit\":";
    append_json_string(out_, duration_unit(period));
    if (clock) {
      out_ += ",\"clock\":";
      append_json_string(out_, clock);
    }
    out_ += '}';
  }

  void truncation_note(std::uint64_t total) {
    append_json_string(out_, fmt::format("... {} total", total));
  }

  void sequence(const TypeExpr& node, wire::Reader& r) {
    std::uint32_t stored = 0;
    std::uint64_t total = 0;
    read_count(r, stored, total);
    out_ += '[';
    for (std::uint32_t i = 0; i < stored; ++i) {
      if (i) out_ += ',';
      value(types_.child(node, 0), r);
      check();
    }
    if (total != stored) {
      if (stored) out_ += ',';
      truncation_note(total);
    }
    out_ += ']';
  }

  static bool key_is_text(const TypeExpr& key) {
    return key.code == static_cast<std::uint8_t>(TypeTag::string) || key.code == code_of(TypeNode::enumeration);
  }

  void map(const TypeExpr& node, wire::Reader& r) {
    std::uint32_t stored = 0;
    std::uint64_t total = 0;
    read_count(r, stored, total);
    const TypeExpr& key = types_.child(node, 0);
    const TypeExpr& mapped = types_.child(node, 1);
    if (key_is_text(key)) {
      // An object only when its names come out unique: a multimap, keys
      // that differ only in invalid UTF-8 (both U+FFFD) or a real "..." key
      // beside the cut marker would make names repeat, which JSON readers
      // resolve by dropping values. Such a map is written as pairs instead.
      std::size_t start = out_.size();
      wire::Reader from = r;
      if (map_as_object(key, mapped, r, stored, total)) return;
      out_.resize(start);
      r = from;
    }
    out_ += '[';
    for (std::uint32_t i = 0; i < stored; ++i) {
      if (i) out_ += ',';
      out_ += '[';
      value(key, r);
      out_ += ',';
      value(mapped, r);
      out_ += ']';
      check();
    }
    if (total != stored) {
      if (stored) out_ += ',';
      truncation_note(total);
    }
    out_ += ']';
  }

  bool map_as_object(const TypeExpr& key, const TypeExpr& mapped, wire::Reader& r, std::uint32_t stored,
                     std::uint64_t total) {
    std::unordered_set<std::string> names;
    out_ += '{';
    for (std::uint32_t i = 0; i < stored; ++i) {
      if (i) out_ += ',';
      std::size_t name_at = out_.size();
      key_text(key, r);
      if (!names.insert(out_.substr(name_at)).second) return false;
      out_ += ':';
      value(mapped, r);
      check();
    }
    if (total != stored) {
      if (names.count("\"...\"")) return false;
      if (stored) out_ += ',';
      out_ += "\"...\":";
      append_json_string(out_, fmt::format("{} total", total));
    }
    out_ += '}';
    return true;
  }

  // A key as a JSON string: the string itself, or the enumerator's name
  // (its number, quoted, when it has none).
  void key_text(const TypeExpr& key, wire::Reader& r) {
    Arg a;
    if (key.code == static_cast<std::uint8_t>(TypeTag::string)) {
      read_string(r, a);
      string(a.null_string ? std::string_view("(null)") : a.text, !a.null_string);
      return;
    }
    read_scalar(r, key.rep, a);
    if (const Enumerator* e = find_enumerator(types_, key, a)) {
      string(types_.view(e->name), false);
    } else {
      std::string number;
      append_json_scalar(number, a);
      append_json_string(out_, number);
    }
  }

  void aggregate(const TypeExpr& node, wire::Reader& r) {
    bool named = node.count > 0;
    for (std::uint32_t k = 0; k < node.count; ++k)
      if (types_.field_names[node.first + k].size == 0) named = false;
    out_ += named ? '{' : '[';
    for (std::uint32_t k = 0; k < node.count; ++k) {
      if (k) out_ += ',';
      if (named) {
        append_json_string(out_, types_.view(types_.field_names[node.first + k]));
        out_ += ':';
      }
      value(types_.child(node, k), r);
      check();
    }
    out_ += named ? '}' : ']';
  }

  void user(const TypeExpr& node, wire::Reader& r) {
    const unsigned char* begin = r.position();
    skip_value(types_, node, r);
    StructuredView view{&types_, static_cast<std::uint32_t>(&node - types_.nodes.data()),
                        std::string_view(reinterpret_cast<const char*>(begin),
                                         static_cast<std::size_t>(r.position() - begin))};
    std::string text;
    try {
      fmt::format_to(std::back_inserter(text), "{}", view);
    } catch (const fmt::format_error&) {
      out_ += "null";
      return;
    }
    string(text, true);
  }

  void check() const {
    if (out_.size() > limit_) throw JsonTooLarge{};
  }

  const SiteTypes& types_;
  std::string& out_;
  const TextRewrite& rewrite_;
  std::size_t limit_;
};

}  // namespace

const Enumerator* find_enumerator(const SiteTypes& types, const TypeExpr& node, const Arg& value) {
  bool is_signed = value.tag <= static_cast<std::uint8_t>(TypeTag::i64);
  // Unsigned values over 2^63-1 are listed as their two's complement.
  std::int64_t key = is_signed ? value.i : static_cast<std::int64_t>(value.u);
  auto begin = types.enumerators.begin() + node.first;
  auto end = begin + node.count;
  auto it = std::lower_bound(begin, end, key, [](const Enumerator& e, std::int64_t v) { return e.value < v; });
  return it != end && it->value == key ? &*it : nullptr;
}

void append_json_value(std::string& out, const StructuredView& view, const TextRewrite& rewrite) {
  std::size_t start = out.size();
  wire::Reader r(view.bytes);
  try {
    JsonWriter(*view.types, out, rewrite).value(view.types->nodes[view.node], r);
  } catch (const JsonTooLarge&) {
    out.resize(start);
    append_json_string(out, "<structured value over 64 MiB of JSON>");
  }
}

}  // namespace terse::decoder::detail
