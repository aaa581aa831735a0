#include "cursor.hpp"

#include <cstdint>
#include <cstdio>
#include <string_view>

#include <terse/result.hpp>
#include <terse/wire.hpp>

#include "log_files.hpp"

namespace terse::input {

namespace {

constexpr std::size_t kMaxEntries = 4096;
constexpr std::size_t kMaxName = 255;
constexpr const char* kBase64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void put_u32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

std::string base64url(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16 |
                      static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8 |
                      static_cast<unsigned char>(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out += kBase64url[(v >> shift) & 63];
  }
  std::size_t left = bytes.size() - i;
  if (left > 0) {
    std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (left == 2) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out += kBase64url[(v >> 18) & 63];
    out += kBase64url[(v >> 12) & 63];
    if (left == 2) out += kBase64url[(v >> 6) & 63];
  }
  return out;
}

// The bytes, or what is wrong with the text.
Result<std::string> from_base64url(std::string_view text, std::size_t offset) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
  };
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    int v = value(text[i]);
    if (v < 0) {
      char shown[16];
      std::snprintf(shown, sizeof shown, (text[i] >= 0x20 && text[i] < 0x7f) ? "'%c'" : "byte 0x%02x",
                    static_cast<unsigned char>(text[i]));
      return Failure{"character " + std::to_string(offset + i + 1) + " (" + shown + ") is not base64url"};
    }
    bits = (bits << 6) | static_cast<std::uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xff);
    }
  }
  // Six bits left over, or set bits after the last byte: not base64url of anything.
  if (count >= 6 || (bits & ((1u << count) - 1)) != 0)
    return Failure{"its length or last character is not one base64url ends with (cut short?)"};
  return out;
}

int hex_digit(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  return -1;
}

}  // namespace

// ---- versions 2 and 3 -------------------------------------------------------

namespace {

std::string encode_entries(const std::vector<InputPosition>& inputs, bool with_writer) {
  std::string bytes;
  put_varint(bytes, inputs.size());
  for (const auto& input : inputs) {
    put_u32(bytes, input.dir_hash.value_or(0));
    if (with_writer) {
      put_u32(bytes, static_cast<std::uint32_t>(input.writer.value_or(0)));
      put_u32(bytes, static_cast<std::uint32_t>(input.writer.value_or(0) >> 32));
    }
    put_varint(bytes, input.at.file.size());
    bytes += input.at.file;
    put_varint(bytes, input.at.frame_offset);
    put_varint(bytes, input.at.frame_index);
    put_varint(bytes, input.at.ticks);
  }
  put_u32(bytes, fnv1a32(bytes));
  return base64url(bytes);
}

}  // namespace

std::string encode_cursor(const std::vector<InputPosition>& inputs) { return "3." + encode_entries(inputs, true); }

std::string encode_cursor_v2(const std::vector<InputPosition>& inputs) { return "2." + encode_entries(inputs, false); }

// ---- version 1 ----------------------------------------------------------------

std::string encode_cursor_v1(const Cursor& c) {
  static const char* digits = "0123456789abcdef";
  std::string out = "1-";
  for (unsigned char ch : c.file) {
    out += digits[ch >> 4];
    out += digits[ch & 15];
  }
  char numbers[64];
  std::snprintf(numbers, sizeof numbers, "-%llx-%x-%llx", static_cast<unsigned long long>(c.frame_offset),
                static_cast<unsigned>(c.frame_index), static_cast<unsigned long long>(c.ticks));
  return out + numbers;
}

std::optional<Cursor> decode_cursor_v1(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    std::size_t dash = text.find('-', start);
    parts.push_back(text.substr(start, dash - start));
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  if (parts.size() != 5 || parts[0] != "1") return std::nullopt;
  auto number = [&](const std::string& field, std::uint64_t limit, std::uint64_t& out) {
    if (field.empty() || field.size() > 16) return false;
    out = 0;
    for (char ch : field) {
      if (hex_digit(ch) < 0) return false;
      out = out * 16 + static_cast<std::uint64_t>(hex_digit(ch));
    }
    return out <= limit;
  };
  Cursor c;
  const std::string& name = parts[1];
  if (name.empty() || name.size() % 2 != 0 || name.size() > 512) return std::nullopt;
  for (std::size_t i = 0; i < name.size(); i += 2) {
    if (hex_digit(name[i]) < 0 || hex_digit(name[i + 1]) < 0) return std::nullopt;
    c.file += static_cast<char>(hex_digit(name[i]) * 16 + hex_digit(name[i + 1]));
  }
  // Only a name the runtime could have chosen: never a path.
  if (c.file.find('/') != std::string::npos || c.file.find('\0') != std::string::npos || !parse_name(c.file))
    return std::nullopt;
  std::uint64_t index = 0;
  if (!number(parts[2], UINT64_MAX, c.frame_offset) || !number(parts[3], UINT32_MAX, index) ||
      !number(parts[4], UINT64_MAX, c.ticks))
    return std::nullopt;
  c.frame_index = static_cast<std::uint32_t>(index);
  return c;
}

// ---- reading either ------------------------------------------------------------

Result<std::vector<InputPosition>> parse_cursor(const std::string& text) {
  std::vector<InputPosition> inputs;
  auto fail = [](std::string why) { return Failure{std::move(why)}; };
  if (text.empty()) return fail("it is empty");
  if (text.rfind("1-", 0) == 0) {
    auto v1 = decode_cursor_v1(text);
    if (!v1) return fail("it starts as a cursor of version 1 but is not one (1-NAME-OFFSET-INDEX-TICKS in hex)");
    inputs.push_back(InputPosition{std::nullopt, std::move(*v1), std::nullopt});
    return inputs;
  }
  bool with_writer = text.rfind("3.", 0) == 0;
  if (!with_writer && text.rfind("2.", 0) != 0)
    return fail("it does not start with a cursor version ('3.', or '2.' or '1-' from older terse)");
  Result<std::string> bytes = from_base64url(std::string_view(text).substr(2), 2);
  if (!bytes) return fail(bytes.why());
  if (bytes->size() < 5) return fail("it is too short to hold a place (cut short?)");
  wire::ByteReader checksum(std::string_view(*bytes).substr(bytes->size() - 4));
  std::uint32_t check = 0;
  checksum.le(check);
  std::string_view body = std::string_view(*bytes).substr(0, bytes->size() - 4);
  if (fnv1a32(body) != check) return fail("its checksum does not match (a character changed, or it was cut short)");
  wire::ByteReader in(body);
  std::uint64_t count = 0;
  if (!in.varint(count) || count == 0 || count > kMaxEntries)
    return fail("its count of inputs is not 1 to " + std::to_string(kMaxEntries));
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string which = "input " + std::to_string(i + 1) + " of " + std::to_string(count);
    InputPosition input;
    std::uint32_t dir = 0, writer_low = 0, writer_high = 0;
    std::uint64_t name_length = 0, index = 0;
    if (!in.le(dir) || (with_writer && (!in.le(writer_low) || !in.le(writer_high))) || !in.varint(name_length))
      return fail(which + " is cut short");
    if (name_length == 0 || name_length > kMaxName)
      return fail(which + " has a file name of " + std::to_string(name_length) + " bytes (1 to 255)");
    std::string_view name;
    if (!in.bytes(name_length, name)) return fail(which + " is cut short");
    input.at.file.assign(name);
    if (input.at.file.find('/') != std::string::npos || input.at.file.find('\0') != std::string::npos ||
        input.at.file == "." || input.at.file == "..")
      return fail(which + " names a path, not a file name");
    if (!in.varint(input.at.frame_offset) || !in.varint(index) || !in.varint(input.at.ticks))
      return fail(which + " is cut short");
    if (index > UINT32_MAX) return fail(which + " has a frame index over 32 bits");
    input.at.frame_index = static_cast<std::uint32_t>(index);
    if (dir != 0) input.dir_hash = dir;
    std::uint64_t writer = std::uint64_t{writer_high} << 32 | writer_low;
    if (writer != 0) input.writer = writer;
    inputs.push_back(std::move(input));
  }
  if (!in.empty()) return fail(std::to_string(in.remaining()) + " bytes follow its last input");
  return inputs;
}

}  // namespace terse::input
