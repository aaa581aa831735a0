// The primitive encodings of FORMAT.md §1, shared by writer and reader:
// little-endian integers, LEB128 varints and zigzag (the CRC-32C checksum
// is in crc.hpp, so that the logging API does not include it).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace terse::wire {

static_assert(std::endian::native == std::endian::little,
              "terse writes its little-endian format with plain copies; a big-endian port must swap bytes here");

template <typename T>
inline void put_le(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

template <typename T>
inline T get_le(const unsigned char* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

template <typename T>
inline void store_le(unsigned char* p, T value) {
  std::memcpy(p, &value, sizeof(T));
}

inline void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>(static_cast<unsigned char>(value) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// The same into memory the caller has sized (at most 10 bytes); returns the end.
inline char* write_varint(char* out, std::uint64_t value) {
  while (value >= 0x80) {
    *out++ = static_cast<char>(static_cast<unsigned char>(value) | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<char>(value);
  return out;
}

// Copies of a few bytes, as records are made of: up to 64 bytes move
// inline in two overlapping halves, where a call to memcpy for each cost
// more than the copy (a record of four arguments and a short path is 34
// bytes: memcpy's call was a tenth of the writer's time). `out` and `in` do
// not overlap.
inline void copy_short(void* out, const void* in, std::size_t n) {
  auto* to = static_cast<unsigned char*>(out);
  const auto* from = static_cast<const unsigned char*>(in);
  if (n > 64) {
    std::memcpy(to, from, n);
  } else if (n > 32) {
    unsigned char head[32], tail[32];
    std::memcpy(head, from, 32);
    std::memcpy(tail, from + n - 32, 32);
    std::memcpy(to, head, 32);
    std::memcpy(to + n - 32, tail, 32);
  } else if (n >= 16) {
    unsigned char head[16], tail[16];
    std::memcpy(head, from, 16);
    std::memcpy(tail, from + n - 16, 16);
    std::memcpy(to, head, 16);
    std::memcpy(to + n - 16, tail, 16);
  } else if (n >= 8) {
    std::uint64_t head, tail;
    std::memcpy(&head, from, 8);
    std::memcpy(&tail, from + n - 8, 8);
    std::memcpy(to, &head, 8);
    std::memcpy(to + n - 8, &tail, 8);
  } else if (n >= 4) {
    std::uint32_t head, tail;
    std::memcpy(&head, from, 4);
    std::memcpy(&tail, from + n - 4, 4);
    std::memcpy(to, &head, 4);
    std::memcpy(to + n - 4, &tail, 4);
  } else {
    for (std::size_t i = 0; i < n; ++i) to[i] = from[i];
  }
}

inline void put_bytes(std::string& out, std::string_view bytes) {
  put_varint(out, bytes.size());
  out.append(bytes);
}

inline std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}

inline std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

// A bounds-checked cursor over untrusted bytes: every read fails softly
// (returns false) instead of running past the end.
class ByteReader {
 public:
  ByteReader(const unsigned char* data, std::size_t size) : p_(data), end_(data + size) {}
  explicit ByteReader(std::string_view bytes)
      : ByteReader(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()) {}

  std::size_t remaining() const { return static_cast<std::size_t>(end_ - p_); }
  const unsigned char* position() const { return p_; }
  bool empty() const { return p_ == end_; }

  bool varint(std::uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      unsigned char byte = *p_++;
      if (shift == 63 && byte > 1) return false;
      value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }

  template <typename T>
  bool le(T& value) {
    if (remaining() < sizeof(T)) return false;
    std::memcpy(&value, p_, sizeof(T));
    p_ += sizeof(T);
    return true;
  }

  bool bytes(std::size_t n, std::string_view& out) {
    if (remaining() < n) return false;
    out = std::string_view(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return true;
  }

  bool skip(std::size_t n) {
    if (remaining() < n) return false;
    p_ += n;
    return true;
  }

  // varint length, then that many bytes.
  bool length_prefixed(std::string_view& out, std::size_t max_length) {
    std::uint64_t n;
    if (!varint(n) || n > max_length) return false;
    return bytes(static_cast<std::size_t>(n), out);
  }

 private:
  const unsigned char* p_;
  const unsigned char* end_;
};

}  // namespace terse::wire
