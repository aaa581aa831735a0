// FORMAT.md §8.1 on the reading side: type expressions from the dictionary,
// values checked against them once per record, and their JSON form. What
// each node kind does lives with the kind (structured_kind.hpp); this file
// walks the expressions, handles scalars and keeps the bounds common to all.
#include <algorithm>
#include <string>
#include <vector>

#include "structured_kind.hpp"

namespace terse::decoder::detail {

using schema::TypeNode;
using schema::TypeTag;

namespace {

constexpr std::size_t kMaxTypeText = 1 << 20;

}  // namespace

const Kind* kind_of(std::uint8_t code) {
  switch (static_cast<TypeNode>(code)) {
#define TERSE_X(name, value) \
  case TypeNode::name:       \
    return &name##_kind();
    TERSE_SCHEMA_TYPE_NODES(TERSE_X)
#undef TERSE_X
  }
  return nullptr;
}

bool integer_tag(std::uint8_t tag) {
  return tag >= static_cast<std::uint8_t>(TypeTag::i8) && tag <= static_cast<std::uint8_t>(TypeTag::u64);
}

std::string hex_byte(std::uint8_t byte) { return fmt::format("0x{:02X}", byte); }

// ---- type expressions ----------------------------------------------------------

bool TypeReader::expression(int depth, std::uint32_t& index) {
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
  const Kind* kind = kind_of(code);
  if (kind == nullptr) return fail("unknown type code " + hex_byte(code));
  return kind->read_type(*this, index, depth);
}

bool TypeReader::fail(std::string why) {
  error_ = std::move(why);
  return false;
}

bool TypeReader::count(std::uint64_t& n, std::uint64_t max) {
  if (!r_.varint(n)) return fail("a type expression ends early");
  if (n > max) return fail("a type expression lists " + std::to_string(n) + " members, over " + std::to_string(max));
  return true;
}

bool TypeReader::text(TextRef& ref) {
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

// The children are read depth first, then listed together so that they sit
// next to each other in `children`.
bool TypeReader::children(std::uint32_t parent, std::uint64_t n, int depth, bool named) {
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

Result<> read_type_expressions(wire::ByteReader& body, Site& site) {
  SiteTypes& types = site.types;
  types = SiteTypes{};
  std::size_t structured = static_cast<std::size_t>(
      std::count(site.tags.begin(), site.tags.end(), static_cast<std::uint8_t>(TypeTag::structured)));
  if (body.empty()) {
    if (structured == 0) return {};
    return Failure{"it has structured arguments but no type expressions"};
  }
  std::uint64_t n;
  if (!body.varint(n)) return Failure{"its type expressions are malformed"};
  if (n != structured)
    return Failure{"it has " + std::to_string(structured) + " structured arguments but " + std::to_string(n) +
                   " type expressions"};
  TypeReader reader(body, types);
  for (std::size_t k = 0; k < structured; ++k) {
    std::uint32_t root;
    if (!reader.expression(1, root)) return Failure{reader.error()};
    types.roots.push_back(root);
  }
  return {};
}

// ---- values ------------------------------------------------------------------------

bool read_count(wire::ByteReader& r, std::uint32_t& stored, std::uint64_t& total) {
  std::uint32_t word;
  if (!r.le(word)) return false;
  stored = word & schema::kCountMask;
  total = stored;
  if ((word & schema::kCountTruncatedBit) == 0) return true;
  return r.le(total) && total >= stored;
}

bool skip_string(wire::ByteReader& r) {
  std::uint32_t header;
  if (!r.le(header)) return false;
  if (header == schema::kStringNull) return true;
  if (header == schema::kStringInterned) return false;  // FORMAT.md §8: never inside a structured value
  return r.skip(header & schema::kStringLengthMask);
}

bool ValueChecker::value(const TypeExpr& node, wire::ByteReader& r) {
  if (++budget_.values > kMaxValuesPerRecord) return false;
  if (is_scalar_code(node.code)) {
    if (node.code == static_cast<std::uint8_t>(TypeTag::string)) return skip_string(r);
    return r.skip(static_cast<std::size_t>(schema::type_tag_size(node.code)));
  }
  const Kind* kind = kind_of(node.code);
  return kind != nullptr && kind->check_value(*this, node, r);
}

bool check_value(const SiteTypes& types, std::uint32_t node, std::string_view bytes, ValueBudget& budget) {
  wire::ByteReader r(bytes);
  ValueChecker checker(types, budget);
  return checker.value(types.nodes[node], r) && r.empty();
}

void skip_value(const SiteTypes& types, const TypeExpr& node, wire::ByteReader& r) {
  // The value was checked against this very expression: only the budget
  // could fail, and it is not counted twice.
  ValueBudget unlimited;
  ValueChecker(types, unlimited).value(node, r);
}

const Enumerator* find_enumerator(const SiteTypes& types, const TypeExpr& node, const Arg& value) {
  bool is_signed = value.tag <= static_cast<std::uint8_t>(TypeTag::i64);
  // Unsigned values over 2^63-1 are listed as their two's complement.
  std::int64_t key = is_signed ? value.i : static_cast<std::int64_t>(value.u);
  auto begin = types.enumerators.begin() + node.first;
  auto end = begin + node.count;
  auto it = std::lower_bound(begin, end, key, [](const Enumerator& e, std::int64_t v) { return e.value < v; });
  return it != end && it->value == key ? &*it : nullptr;
}

// ---- values as events ----------------------------------------------------------------
//
// Structured values become structure, each kind as its write_value says;
// scalars are as in the "args" array.

void ValueWriter::value(const TypeExpr& node, wire::ByteReader& r) {
  if (is_scalar_code(node.code)) {
    Arg a;
    read_scalar(r, node.code, a);
    scalar(a);
    return;
  }
  if (const Kind* kind = kind_of(node.code)) return kind->write_value(*this, node, r);
  out_.null();
}

void ValueWriter::scalar(const Arg& a) {
  if (a.tag == static_cast<std::uint8_t>(TypeTag::string) && !a.null_string) {
    string(a.text, true);
  } else {
    out_.scalar(a);
  }
}

void ValueWriter::string(std::string_view text, bool rewritable) {
  if (rewritable && rewrite_) {
    out_.string(rewritten(text));
  } else {
    out_.string(text);
  }
}

std::string ValueWriter::rewritten(std::string_view text) const {
  std::string copy(text);
  if (rewrite_) rewrite_(copy);
  return copy;
}

void ValueWriter::string_value(wire::ByteReader& r) {
  Arg a;
  read_string(r, a);
  if (a.null_string) {
    out_.null();
  } else {
    string(a.text, true);
  }
}

void ValueWriter::truncation_note(std::uint64_t total) { out_.string(fmt::format("... {} total", total)); }

void write_value(const StructuredView& view, ValueOut& out, const TextRewrite& rewrite) {
  wire::ByteReader r(view.bytes);
  ValueWriter(*view.types, out, rewrite).value(view.types->nodes[view.node], r);
}

// ---- JSON text -------------------------------------------------------------------------

void JsonText::separate() {
  if (after_value_) out_ += ',';
  after_value_ = false;
}

void JsonText::begin_list() {
  separate();
  out_ += '[';
}

void JsonText::end_list() {
  out_ += ']';
  after_value_ = true;
}

void JsonText::begin_object() {
  separate();
  out_ += '{';
}

void JsonText::member(std::string_view name) {
  separate();
  append_json_string(out_, name);
  out_ += ':';
}

void JsonText::end_object() {
  out_ += '}';
  after_value_ = true;
}

void JsonText::null() {
  separate();
  out_ += "null";
  after_value_ = true;
}

void JsonText::scalar(const Arg& a) {
  separate();
  append_json_scalar(out_, a);
  after_value_ = true;
}

void JsonText::string(std::string_view text) {
  separate();
  append_json_string(out_, text);
  after_value_ = true;
}

void JsonText::check() const {
  if (out_.size() > limit_) throw ValueTooLarge{};
}

void append_json_value(std::string& out, const StructuredView& view, const TextRewrite& rewrite) {
  std::size_t start = out.size();
  try {
    JsonText json(out);
    write_value(view, json, rewrite);
  } catch (const ValueTooLarge&) {
    out.resize(start);
    append_json_string(out, kValueTooLargeNote);
  }
}

}  // namespace terse::decoder::detail
