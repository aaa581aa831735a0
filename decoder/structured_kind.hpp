// The node kinds of a type expression (FORMAT.md §8.1), each defined in one
// place: how its node reads from a dictionary entry, how a value of it is
// checked against the reader bounds, its JSON and its formatter. The walkers
// declared here (TypeReader, ValueChecker, JsonWriter, make_formatter) handle
// scalars themselves and hand every other node to its Kind.
//
// A new kind is its line in schema's TERSE_SCHEMA_TYPE_NODES and a
// `const Kind& NAME_kind()` beside its siblings (structured_ranges.cpp,
// structured_std.cpp, structured_chrono.cpp, structured_custom.cpp,
// structured_bitset.cpp); the dispatch table is made from the schema's list,
// so a kind the reader does not define fails to link.
// Internal to the structured_*.cpp files.
#pragma once

#include <string>

#include "structured_format.hpp"

namespace terse::decoder::detail {

class TypeReader;
class ValueChecker;
class JsonWriter;

struct Kind {
  // Reads what follows the node's code into types().nodes[index], within
  // the bounds of §8.1; false with the reader's error set otherwise.
  bool (*read_type)(TypeReader& in, std::uint32_t index, int depth);
  // Steps over one value of `node`: false when the bytes do not match it or
  // the record's budget runs out.
  bool (*check_value)(ValueChecker& checker, const TypeExpr& node, wire::Reader& r);
  // Appends the JSON of one value check_value passed.
  void (*write_json)(JsonWriter& out, const TypeExpr& node, wire::Reader& r);
  // The formatter behaving as fmt 9.1's for the C++ type of `node`.
  FormatterPtr (*make_formatter)(const SiteTypes& types, const TypeExpr& node);
  // Set for kinds whose values can name a JSON object's member: appends the
  // value as a JSON string. A map keyed by any other kind becomes pairs.
  void (*write_json_key)(JsonWriter& out, const TypeExpr& node, wire::Reader& r) = nullptr;
};

// A Kind from a class with the static members above; write_json_key is
// optional.
template <typename K>
const Kind& kind_from() {
  static constexpr Kind kind = [] {
    Kind k{&K::read_type, &K::check_value, &K::write_json, &K::make_formatter, nullptr};
    if constexpr (requires { &K::write_json_key; }) k.write_json_key = &K::write_json_key;
    return k;
  }();
  return kind;
}

// One definition per schema::TypeNode, named after it.
#define TERSE_X(name, value) const Kind& name##_kind();
TERSE_SCHEMA_TYPE_NODES(TERSE_X)
#undef TERSE_X

// The kind of a node code; nullptr for scalar tags and unknown codes.
const Kind* kind_of(std::uint8_t code);

// ---- type expressions ------------------------------------------------------------

// Reads a site's type expressions into its SiteTypes, keeping the bounds of
// §8.1 that hold across kinds (depth, nodes, text).
class TypeReader {
 public:
  TypeReader(wire::Reader& r, SiteTypes& types, std::string& error) : r_(r), types_(types), error_(error) {}

  // One expression at `depth` (a root is at 1); `index` is its node.
  bool expression(int depth, std::uint32_t& index);

  wire::Reader& input() { return r_; }
  SiteTypes& types() { return types_; }
  // Nodes move as the vector grows: a kind reaches its node by index after
  // reading children.
  TypeExpr& node(std::uint32_t index) { return types_.nodes[index]; }

  bool fail(std::string why);
  // A varint count of members, at most `max`.
  bool count(std::uint64_t& n, std::uint64_t max);
  // A length-prefixed text, kept in types().text within its 1 MiB.
  bool text(TextRef& ref);
  // `n` child expressions of `parent`, each preceded by its name when
  // `named`; they end up next to each other in types().children.
  bool children(std::uint32_t parent, std::uint64_t n, int depth, bool named);

 private:
  wire::Reader& r_;
  SiteTypes& types_;
  std::string& error_;
};

bool integer_tag(std::uint8_t tag);
std::string hex_byte(std::uint8_t byte);

// ---- values --------------------------------------------------------------------

// Checks one record's structured values against their expressions and the
// record's ValueBudget.
class ValueChecker {
 public:
  ValueChecker(const SiteTypes& types, ValueBudget& budget) : types_(types), budget_(budget) {}

  bool value(const TypeExpr& node, wire::Reader& r);
  const SiteTypes& types() const { return types_; }
  // Counts one container element against the budget; false once it is spent.
  bool element() { return ++budget_.elements <= kMaxElementsPerRecord; }

 private:
  const SiteTypes& types_;
  ValueBudget& budget_;
};

// A container's count (FORMAT.md §8.1): the stored elements, and the real
// size when the writer cut it short.
bool read_count(wire::Reader& r, std::uint32_t& stored, std::uint64_t& total);
// Steps over a string that is not interned (none is, inside a structured value).
bool skip_string(wire::Reader& r);

// ---- JSON --------------------------------------------------------------------------

// Appends the JSON of checked values, throwing once one value's JSON passes
// kMaxRenderedBytes (append_json_value turns that into a note).
class JsonWriter {
 public:
  JsonWriter(const SiteTypes& types, std::string& out, const TextRewrite& rewrite)
      : types_(types), out_(out), rewrite_(rewrite), limit_(out.size() + kMaxRenderedBytes) {}

  void value(const TypeExpr& node, wire::Reader& r);
  const SiteTypes& types() const { return types_; }
  std::string& out() { return out_; }

  // A scalar as in the "args" array; a string goes through the rewrite.
  void scalar(const Arg& a);
  // A JSON string; `rewritable` text (the file's own strings, not its
  // names) goes through the rewrite.
  void string(std::string_view text, bool rewritable);
  // A string value read from `r`: null for a null string, else the text
  // through the rewrite.
  void string_value(wire::Reader& r);
  // The last element of a cut container: "... N total".
  void truncation_note(std::uint64_t total);
  // Throws when the JSON has outgrown its limit; called after each element.
  void check() const;

 private:
  const SiteTypes& types_;
  std::string& out_;
  const TextRewrite& rewrite_;
  std::size_t limit_;
};

}  // namespace terse::decoder::detail
