// The node kinds of a type expression (FORMAT.md §8.1), each defined in one
// place: how its node reads from a dictionary entry, how a value of it is
// checked against the reader bounds, its pieces as ValueOut events (for JSON
// and the reader's trees) and its formatter. The walkers declared here
// (TypeReader, ValueChecker, ValueWriter, make_formatter) handle
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
class ValueWriter;

struct Kind {
  // Reads what follows the node's code into types().nodes[index], within
  // the bounds of §8.1; false with the reader's error set otherwise.
  bool (*read_type)(TypeReader& in, std::uint32_t index, int depth);
  // Steps over one value of `node`: false when the bytes do not match it or
  // the record's budget runs out.
  bool (*check_value)(ValueChecker& checker, const TypeExpr& node, wire::ByteReader& r);
  // Writes one value check_value passed as events.
  void (*write_value)(ValueWriter& out, const TypeExpr& node, wire::ByteReader& r);
  // The formatter behaving as fmt 9.1's for the C++ type of `node`.
  FormatterPtr (*make_formatter)(const SiteTypes& types, const TypeExpr& node);
  // Set for kinds whose values can name an object's member: reads one value
  // as that name. A map keyed by any other kind becomes pairs.
  std::string (*key_text)(const SiteTypes& types, const TypeExpr& node, wire::ByteReader& r) = nullptr;
};

// A Kind from a class with the static members above; key_text is optional.
template <typename K>
const Kind& kind_from() {
  static constexpr Kind kind = [] {
    Kind k{&K::read_type, &K::check_value, &K::write_value, &K::make_formatter, nullptr};
    if constexpr (requires { &K::key_text; }) k.key_text = &K::key_text;
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
  TypeReader(wire::ByteReader& r, SiteTypes& types) : r_(r), types_(types) {}

  // One expression at `depth` (a root is at 1); `index` is its node.
  bool expression(int depth, std::uint32_t& index);

  wire::ByteReader& input() { return r_; }
  SiteTypes& types() { return types_; }
  // Nodes move as the vector grows: a kind reaches its node by index after
  // reading children.
  TypeExpr& node(std::uint32_t index) { return types_.nodes[index]; }

  // Each reading step returns false once one failed; error() says why.
  bool fail(std::string why);
  const std::string& error() const { return error_; }
  // A varint count of members, at most `max`.
  bool count(std::uint64_t& n, std::uint64_t max);
  // A length-prefixed text, kept in types().text within its 1 MiB.
  bool text(TextRef& ref);
  // `n` child expressions of `parent`, each preceded by its name when
  // `named`; they end up next to each other in types().children.
  bool children(std::uint32_t parent, std::uint64_t n, int depth, bool named);

 private:
  wire::ByteReader& r_;
  SiteTypes& types_;
  std::string error_;
};

bool integer_tag(std::uint8_t tag);
std::string hex_byte(std::uint8_t byte);

// ---- values --------------------------------------------------------------------

// Checks one record's structured values against their expressions and the
// record's ValueBudget.
class ValueChecker {
 public:
  ValueChecker(const SiteTypes& types, ValueBudget& budget) : types_(types), budget_(budget) {}

  bool value(const TypeExpr& node, wire::ByteReader& r);
  const SiteTypes& types() const { return types_; }
  // Counts one container element against the budget; false once it is spent.
  bool element() { return ++budget_.elements <= kMaxElementsPerRecord; }

 private:
  const SiteTypes& types_;
  ValueBudget& budget_;
};

// A container's count (FORMAT.md §8.1): the stored elements, and the real
// size when the writer cut it short.
bool read_count(wire::ByteReader& r, std::uint32_t& stored, std::uint64_t& total);
// Steps over a string that is not interned (none is, inside a structured value).
bool skip_string(wire::ByteReader& r);

// ---- values as events --------------------------------------------------------------

// Walks checked values into a ValueOut, through the rewrite where a string
// is the file's own text.
class ValueWriter {
 public:
  ValueWriter(const SiteTypes& types, ValueOut& out, const TextRewrite& rewrite)
      : types_(types), out_(out), rewrite_(rewrite) {}

  void value(const TypeExpr& node, wire::ByteReader& r);
  const SiteTypes& types() const { return types_; }
  ValueOut& out() { return out_; }

  // A scalar; a string goes through the rewrite.
  void scalar(const Arg& a);
  // A string; `rewritable` text (the file's own strings, not its names)
  // goes through the rewrite.
  void string(std::string_view text, bool rewritable);
  // A string value read from `r`: null for a null string, else the text
  // through the rewrite.
  void string_value(wire::ByteReader& r);
  // The text as `rewrite` leaves it.
  std::string rewritten(std::string_view text) const;
  // The last element of a cut container: "... N total".
  void truncation_note(std::uint64_t total);
  void check() const { out_.check(); }

 private:
  const SiteTypes& types_;
  ValueOut& out_;
  const TextRewrite& rewrite_;
};

}  // namespace terse::decoder::detail
