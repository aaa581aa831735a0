// std::bitset<N> (FORMAT.md §8.1): the node's code and N, a varint; a value
// is ceil(N/8) bytes, bit i being bit i % 8 of byte i / 8. It prints as
// std::bitset::to_string() does, bit N-1 first, which is also fmt 11's text
// (fmt 9.1 has no formatter for it); a spec takes fill, align and width as a
// string's would.
#include <string>

#include "structured_kind.hpp"

namespace terse::decoder::detail {

namespace {

// std::bitset has no upper bound; this keeps one value's text to 1 MiB.
constexpr std::uint64_t kMaxBitsetBits = std::uint64_t{1} << 20;

std::size_t bitset_bytes(std::uint32_t bits) { return (static_cast<std::size_t>(bits) + 7) / 8; }

// '0' and '1', bit `bits - 1` first.
std::string bitset_text(std::string_view bytes, std::uint32_t bits) {
  std::string text(bits, '0');
  for (std::uint32_t i = 0; i < bits; ++i)
    if ((static_cast<unsigned char>(bytes[i / 8]) >> (i % 8)) & 1) text[bits - 1 - i] = '1';
  return text;
}

std::string take_bitset_text(wire::ByteReader& value, std::uint32_t bits) {
  std::string_view bytes;
  if (!value.bytes(bitset_bytes(bits), bytes)) format_failure("structured value ends early");
  return bitset_text(bytes, bits);
}

class BitsetFormatter final : public TextFormatter {
 public:
  explicit BitsetFormatter(std::uint32_t bits) : bits_(bits) {}

  const char* parse(fmt::format_parse_context& ctx) override {
    accept_only_fill_align_width(ctx, "a bitset takes only fill, align and width as its spec");
    return TextFormatter::parse(ctx);
  }

  void format(wire::ByteReader& value, const Sink& out) const override {
    write_text(take_bitset_text(value, bits_), out);
  }

 private:
  std::uint32_t bits_;
};

// JSON: a string of the same characters.
struct Bitset {
  static bool read_type(TypeReader& in, std::uint32_t index, int) {
    std::uint64_t bits;
    if (!in.input().varint(bits)) return in.fail("a bitset type ends early");
    if (bits > kMaxBitsetBits)
      return in.fail("a bitset of " + std::to_string(bits) + " bits, over " + std::to_string(kMaxBitsetBits));
    in.node(index).extra = static_cast<std::uint32_t>(bits);
    return true;
  }
  static bool check_value(ValueChecker&, const TypeExpr& node, wire::ByteReader& r) {
    return r.skip(bitset_bytes(node.extra));
  }
  static void write_value(ValueWriter& w, const TypeExpr& node, wire::ByteReader& r) {
    std::string_view bytes;
    r.bytes(bitset_bytes(node.extra), bytes);
    w.string(bitset_text(bytes, bytes.size() == bitset_bytes(node.extra) ? node.extra : 0), false);
  }
  static FormatterPtr make_formatter(const SiteTypes&, const TypeExpr& node) {
    return std::make_unique<BitsetFormatter>(node.extra);
  }
};

}  // namespace

const Kind& bitset_kind() { return kind_from<Bitset>(); }

}  // namespace terse::decoder::detail
