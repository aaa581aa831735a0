// A test-only writer of .tlog bytes, written from FORMAT.md and independent
// of the runtime: preamble, a calibration frame, dictionary frames of call
// sites (with 1.1's type expressions and argument names) and uncompressed
// records frames. Codec<T> turns real C++ values into FORMAT.md §8.1 type
// expressions and value bytes, so a test can hand the decoder exactly what
// it hands fmt and compare the two outputs.
#pragma once

#include <pthread.h>

#include <bitset>
#include <cfloat>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <variant>
#include <vector>

#include <terse/crc.hpp>
#include <terse/decoder.hpp>
#include <terse/delta.hpp>
#include <terse/schema.hpp>
#include <terse/wire.hpp>

namespace terse::test {

using schema::TypeNode;
using schema::TypeTag;

inline char byte(TypeTag tag) { return static_cast<char>(tag); }
inline char byte(TypeNode node) { return static_cast<char>(node); }

// ---- type expressions (FORMAT.md §8.1) ----------------------------------------

namespace expr {

inline std::string text(std::string_view s) {
  std::string out;
  wire::put_bytes(out, s);
  return out;
}
inline std::string varint(std::uint64_t v) {
  std::string out;
  wire::put_varint(out, v);
  return out;
}
inline std::string scalar(TypeTag tag) { return std::string(1, byte(tag)); }
inline std::string sequence(const std::string& element) { return byte(TypeNode::sequence) + element; }
inline std::string set(const std::string& element) { return byte(TypeNode::set) + element; }
inline std::string map(const std::string& key, const std::string& mapped) { return byte(TypeNode::map) + key + mapped; }
inline std::string list(TypeNode node, const std::vector<std::string>& members) {
  std::string out(1, byte(node));
  out += varint(members.size());
  for (const auto& m : members) out += m;
  return out;
}
inline std::string tuple(const std::vector<std::string>& members) { return list(TypeNode::tuple, members); }
inline std::string variant(const std::vector<std::string>& members) { return list(TypeNode::variant, members); }
inline std::string aggregate(std::string_view name, const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out(1, byte(TypeNode::aggregate));
  out += text(name);
  out += varint(fields.size());
  for (const auto& [field, type] : fields) out += text(field) + type;
  return out;
}
inline std::string optional(const std::string& value) { return byte(TypeNode::optional) + value; }
inline std::string enumeration(TypeTag underlying, std::string_view name,
                               const std::vector<std::pair<std::int64_t, std::string>>& enumerators) {
  std::string out(1, byte(TypeNode::enumeration));
  out += byte(underlying);
  out += text(name);
  out += varint(enumerators.size());
  for (const auto& [value, enumerator] : enumerators) out += varint(wire::zigzag(value)) + text(enumerator);
  return out;
}
inline std::string duration(TypeTag rep, std::uint64_t num, std::uint64_t den) {
  return std::string(1, byte(TypeNode::duration)) + byte(rep) + varint(num) + varint(den);
}
inline std::string time_point(schema::Clock clock, TypeTag rep, std::uint64_t num, std::uint64_t den) {
  return std::string(1, byte(TypeNode::time_point)) + static_cast<char>(clock) + byte(rep) + varint(num) + varint(den);
}
inline std::string error_code() { return std::string(1, byte(TypeNode::error_code)); }
inline std::string path() { return std::string(1, byte(TypeNode::path)); }
inline std::string thread_id() { return std::string(1, byte(TypeNode::thread_id)); }
inline std::string monostate() { return std::string(1, byte(TypeNode::monostate)); }
inline std::string user(std::string_view name, std::string_view format, const std::vector<std::string>& fields) {
  std::string out(1, byte(TypeNode::user));
  out += text(name) + text(format) + varint(fields.size());
  for (const auto& f : fields) out += f;
  return out;
}
inline std::string secret(const std::string& value) { return byte(TypeNode::secret) + value; }
inline std::string preformatted() { return std::string(1, byte(TypeNode::preformatted)); }
inline std::string bitset(std::uint64_t bits) { return byte(TypeNode::bitset) + varint(bits); }

}  // namespace expr

// ---- values ----------------------------------------------------------------------

namespace val {

template <typename T>
void le(std::string& out, T v) {
  wire::put_le(out, v);
}
inline void string(std::string& out, std::string_view s) {
  le(out, static_cast<std::uint32_t>(s.size()));
  out += s;
}
inline void null_string(std::string& out) { le(out, schema::kStringNull); }
inline void interned(std::string& out, std::uint32_t id) {
  le(out, schema::kStringInterned);
  le(out, id);
}
// FORMAT.md §8 (3.1): text entry `id` with `patches` (skip, removed,
// inserted bytes) applied.
struct Patch {
  std::uint64_t skip;
  std::uint64_t removed;
  std::string inserted;
};
inline void patched(std::string& out, std::uint32_t id, const std::vector<Patch>& patches) {
  std::string body;
  for (const Patch& p : patches) {
    wire::put_varint(body, p.skip);
    wire::put_varint(body, p.removed);
    wire::put_varint(body, p.inserted.size());
    body += p.inserted;
  }
  le(out, schema::kStringPatched);
  le(out, id);
  le(out, static_cast<std::uint32_t>(body.size()));
  out += body;
}
// A container's count; `total` above `stored` marks it truncated.
inline void count(std::string& out, std::uint32_t stored, std::uint64_t total) {
  if (total == stored) {
    le(out, stored);
  } else {
    le(out, stored | schema::kCountTruncatedBit);
    le(out, total);
  }
}

// The args of a record whose site takes one i32.
inline std::string i32_args(std::int32_t value) {
  std::string args;
  le(args, value);
  return args;
}

}  // namespace val

inline constexpr auto kI32 = static_cast<std::uint8_t>(TypeTag::i32);

// Codec<T>: `scalar` (a §8 tag when true), `type()` (the §8.1 expression)
// and `value()`.
template <typename T, typename = void>
struct Codec;

template <TypeTag Tag>
struct ScalarCodec {
  static constexpr bool scalar = true;
  static constexpr TypeTag tag = Tag;
  static std::string type() { return expr::scalar(Tag); }
};

template <typename T>
struct Codec<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>>>
    : ScalarCodec<std::is_signed_v<T> ? (sizeof(T) == 1   ? TypeTag::i8
                                         : sizeof(T) == 2 ? TypeTag::i16
                                         : sizeof(T) == 4 ? TypeTag::i32
                                                          : TypeTag::i64)
                                      : (sizeof(T) == 1   ? TypeTag::u8
                                         : sizeof(T) == 2 ? TypeTag::u16
                                         : sizeof(T) == 4 ? TypeTag::u32
                                                          : TypeTag::u64)> {
  static void value(std::string& out, T v) { val::le(out, v); }
};

template <>
struct Codec<bool> : ScalarCodec<TypeTag::boolean> {
  static void value(std::string& out, bool v) { val::le(out, static_cast<std::uint8_t>(v)); }
};
template <>
struct Codec<char> : ScalarCodec<TypeTag::character> {
  static void value(std::string& out, char v) { out += v; }
};
template <>
struct Codec<float> : ScalarCodec<TypeTag::f32> {
  static void value(std::string& out, float v) { val::le(out, v); }
};
template <>
struct Codec<double> : ScalarCodec<TypeTag::f64> {
  static void value(std::string& out, double v) { val::le(out, v); }
};
template <>
struct Codec<long double> : ScalarCodec<TypeTag::f80> {
  static_assert(LDBL_MANT_DIG == 64, "the tests write x87 long doubles");
  static void value(std::string& out, long double v) { out.append(reinterpret_cast<const char*>(&v), 10); }
};
template <>
struct Codec<std::string> : ScalarCodec<TypeTag::string> {
  static void value(std::string& out, const std::string& v) { val::string(out, v); }
};
template <>
struct Codec<std::string_view> : ScalarCodec<TypeTag::string> {
  static void value(std::string& out, std::string_view v) { val::string(out, v); }
};
template <>
struct Codec<const char*> : ScalarCodec<TypeTag::string> {
  static void value(std::string& out, const char* v) {
    if (v) {
      val::string(out, v);
    } else {
      val::null_string(out);
    }
  }
};
template <std::size_t N>
struct Codec<char[N]> : ScalarCodec<TypeTag::string> {
  static void value(std::string& out, const char (&v)[N]) { val::string(out, std::string_view(v)); }
};
template <>
struct Codec<const void*> : ScalarCodec<TypeTag::pointer> {
  static void value(std::string& out, const void* v) {
    val::le(out, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(v)));
  }
};

struct StructuredCodec {
  static constexpr bool scalar = false;
};

template <typename Container, std::string (*Make)(const std::string&)>
struct RangeCodec : StructuredCodec {
  using Element = typename Container::value_type;
  static std::string type() { return Make(Codec<Element>::type()); }
  static void value(std::string& out, const Container& c) {
    val::count(out, static_cast<std::uint32_t>(c.size()), c.size());
    for (const auto& e : c) Codec<Element>::value(out, e);
  }
};
template <typename T>
struct Codec<std::vector<T>> : RangeCodec<std::vector<T>, expr::sequence> {};
template <typename T>
struct Codec<std::list<T>> : RangeCodec<std::list<T>, expr::sequence> {};
template <typename T>
struct Codec<std::set<T>> : RangeCodec<std::set<T>, expr::set> {};

template <typename K, typename V>
struct Codec<std::map<K, V>> : StructuredCodec {
  static std::string type() { return expr::map(Codec<K>::type(), Codec<V>::type()); }
  static void value(std::string& out, const std::map<K, V>& m) {
    val::count(out, static_cast<std::uint32_t>(m.size()), m.size());
    for (const auto& [k, v] : m) {
      Codec<K>::value(out, k);
      Codec<V>::value(out, v);
    }
  }
};

template <typename... Ts>
struct Codec<std::tuple<Ts...>> : StructuredCodec {
  static std::string type() { return expr::tuple({Codec<Ts>::type()...}); }
  static void value(std::string& out, const std::tuple<Ts...>& t) {
    std::apply([&](const auto&... v) { (Codec<std::decay_t<decltype(v)>>::value(out, v), ...); }, t);
  }
};
template <typename A, typename B>
struct Codec<std::pair<A, B>> : StructuredCodec {
  static std::string type() { return expr::tuple({Codec<A>::type(), Codec<B>::type()}); }
  static void value(std::string& out, const std::pair<A, B>& p) {
    Codec<A>::value(out, p.first);
    Codec<B>::value(out, p.second);
  }
};

template <typename T>
struct Codec<std::optional<T>> : StructuredCodec {
  static std::string type() { return expr::optional(Codec<T>::type()); }
  static void value(std::string& out, const std::optional<T>& o) {
    out += static_cast<char>(o.has_value());
    if (o) Codec<T>::value(out, *o);
  }
};

template <typename... Ts>
struct Codec<std::variant<Ts...>> : StructuredCodec {
  static std::string type() { return expr::variant({Codec<Ts>::type()...}); }
  static void value(std::string& out, const std::variant<Ts...>& v) {
    out += static_cast<char>(v.index());
    std::visit([&](const auto& alternative) { Codec<std::decay_t<decltype(alternative)>>::value(out, alternative); },
               v);
  }
};

template <>
struct Codec<std::monostate> : StructuredCodec {
  static std::string type() { return expr::monostate(); }
  static void value(std::string&, std::monostate) {}
};

template <typename Rep, typename Period>
struct Codec<std::chrono::duration<Rep, Period>> : StructuredCodec {
  static std::string type() { return expr::duration(Codec<Rep>::tag, Period::num, Period::den); }
  static void value(std::string& out, std::chrono::duration<Rep, Period> d) { Codec<Rep>::value(out, d.count()); }
};

template <typename Clock, typename Duration>
struct Codec<std::chrono::time_point<Clock, Duration>> : StructuredCodec {
  using Rep = typename Duration::rep;
  using Period = typename Duration::period;
  static constexpr schema::Clock clock = std::is_same_v<Clock, std::chrono::system_clock>   ? schema::Clock::system
                                         : std::is_same_v<Clock, std::chrono::steady_clock> ? schema::Clock::steady
                                                                                            : schema::Clock::other;
  static std::string type() { return expr::time_point(clock, Codec<Rep>::tag, Period::num, Period::den); }
  static void value(std::string& out, std::chrono::time_point<Clock, Duration> t) {
    Codec<Rep>::value(out, t.time_since_epoch().count());
  }
};

template <>
struct Codec<std::error_code> : StructuredCodec {
  static std::string type() { return expr::error_code(); }
  static void value(std::string& out, const std::error_code& e) {
    val::le(out, static_cast<std::int32_t>(e.value()));
    val::string(out, e.category().name());
  }
};

template <>
struct Codec<std::filesystem::path> : StructuredCodec {
  static std::string type() { return expr::path(); }
  // UTF-8, whichever form the OS keeps the path in (UTF-16 on Windows).
  static void value(std::string& out, const std::filesystem::path& p) {
    std::u8string text = p.u8string();
    val::string(out, std::string(reinterpret_cast<const char*>(text.data()), text.size()));
  }
};

template <>
struct Codec<std::thread::id> : StructuredCodec {
  static std::string type() { return expr::thread_id(); }
  static void value(std::string& out, std::thread::id id) {
    // libstdc++ keeps the pthread_t, and nothing else, in a thread::id.
    static_assert(sizeof(std::thread::id) == sizeof(std::uint64_t));
    std::uint64_t native;
    std::memcpy(&native, &id, sizeof native);
    val::le(out, native);
  }
};

// Bit i is bit i % 8 of byte i / 8.
template <std::size_t N>
struct Codec<std::bitset<N>> : StructuredCodec {
  static std::string type() { return expr::bitset(N); }
  static void value(std::string& out, const std::bitset<N>& bits) {
    std::string bytes((N + 7) / 8, '\0');
    for (std::size_t i = 0; i < N; ++i)
      if (bits[i]) bytes[i / 8] = static_cast<char>(bytes[i / 8] | (1 << (i % 8)));
    out += bytes;
  }
};

// ---- a call site's arguments -----------------------------------------------------

struct EncodedArgs {
  std::vector<std::uint8_t> tags;
  std::vector<std::string> types;  // one per structured tag
  std::string args;                // one record's argument bytes
};

// A structured argument: its expression and its value bytes, given as such.
struct RawStructured {
  std::string type;
  std::string value;
};

inline void add_arg(EncodedArgs& e, const RawStructured& raw) {
  e.tags.push_back(static_cast<std::uint8_t>(TypeTag::structured));
  e.types.push_back(raw.type);
  val::le(e.args, static_cast<std::uint32_t>(raw.value.size()));
  e.args += raw.value;
}

template <typename T>
void add_arg(EncodedArgs& e, const T& v) {
  using C = Codec<T>;
  if constexpr (C::scalar) {
    e.tags.push_back(static_cast<std::uint8_t>(C::tag));
    C::value(e.args, v);
  } else {
    std::string bytes;
    C::value(bytes, v);
    add_arg(e, RawStructured{C::type(), bytes});
  }
}

template <typename... Ts>
EncodedArgs encode_args(const Ts&... values) {
  EncodedArgs e;
  (add_arg(e, values), ...);
  return e;
}

// ---- the file ------------------------------------------------------------------------

class TlogBuilder {
 public:
  TlogBuilder() {
    out_.append(reinterpret_cast<const char*>(schema::kMagic), sizeof schema::kMagic);
    wire::put_le<std::uint16_t>(out_, schema::kUnsealedVersionMajor);
    wire::put_le<std::uint16_t>(out_, schema::kVersionMinor);
    wire::put_le<std::uint32_t>(out_, wire::crc32c(out_.data(), schema::kPreambleCrcOffset));
    std::string calibration;
    wire::put_le<std::uint64_t>(calibration, 0);
    wire::put_le<std::int64_t>(calibration, 1'700'000'000'000'000'000);
    wire::put_le<double>(calibration, 1e9);
    frame(schema::FrameType::calibration, calibration);
  }

  // A calibration frame (FORMAT.md §5) after the records so far.
  void calibration(std::uint64_t ticks, std::int64_t unix_ns, double ticks_per_second) {
    std::string payload;
    wire::put_le<std::uint64_t>(payload, ticks);
    wire::put_le<std::int64_t>(payload, unix_ns);
    wire::put_le<double>(payload, ticks_per_second);
    raw_frame(schema::FrameType::calibration, payload);
  }

  // The ticks the next record's delta counts from.
  std::uint64_t ticks() const { return ticks_; }

  // A site entry with the 1.1 fields: `types` is written when present,
  // `names` (which needs `types`) too.
  void site(std::uint32_t id, std::string_view format, const std::vector<std::uint8_t>& tags,
            const std::optional<std::vector<std::string>>& types = std::nullopt,
            const std::optional<std::vector<std::string>>& names = std::nullopt) {
    std::string body;
    wire::put_varint(body, id);
    body += static_cast<char>(2);  // info
    wire::put_varint(body, 42);
    wire::put_bytes(body, "structured_test.cpp");
    wire::put_bytes(body, format);
    wire::put_varint(body, tags.size());
    for (std::uint8_t t : tags) body += static_cast<char>(t);
    if (types || names) {
      std::vector<std::string> none;
      const auto& list = types ? *types : none;
      wire::put_varint(body, list.size());
      for (const auto& t : list) body += t;
    }
    if (names) {
      wire::put_varint(body, names->size());
      for (const auto& n : *names) wire::put_bytes(body, n);
    }
    site_body(body);
    tags_[id] = tags;
  }

  void site(std::uint32_t id, std::string_view format, const EncodedArgs& e,
            const std::optional<std::vector<std::string>>& names = std::nullopt) {
    site(id, format, e.tags, e.types, names);
  }

  // A site entry's body as it is, hostile ones included.
  void site_body(const std::string& body) {
    flush();
    std::string payload(1, static_cast<char>(schema::DictKind::site));
    wire::put_bytes(payload, body);
    frame(schema::FrameType::dictionary, payload);
  }

  // A text entry (FORMAT.md §6 kind 3) that string arguments may refer to.
  void text(std::uint64_t id, std::string_view bytes) {
    flush();
    std::string body;
    wire::put_varint(body, id);
    wire::put_bytes(body, bytes);
    std::string payload(1, static_cast<char>(schema::DictKind::text));
    wire::put_bytes(payload, body);
    frame(schema::FrameType::dictionary, payload);
  }

  // One record in the current records frame; its fixed-size arguments are
  // delta-coded against the site's previous record in the frame (§7.1).
  void record(std::uint32_t site, std::string args, std::int64_t tick_delta = 1000) {
    if (records_.empty()) {
      wire::put_le<std::uint64_t>(records_, ticks_);
      previous_.clear();
    }
    auto it = tags_.find(site);
    if (it != tags_.end()) {
      wire::DeltaPlan plan(it->second.data(), it->second.size());
      auto& previous = previous_[site];
      previous.resize(plan.slots());
      if (plan.valid())
        plan.apply<wire::Delta::encode>(reinterpret_cast<unsigned char*>(args.data()), args.size(), previous.data());
    }
    wire::put_varint(records_, site);
    wire::put_varint(records_, 1);  // thread index
    wire::put_varint(records_, wire::zigzag(tick_delta));
    ticks_ += static_cast<std::uint64_t>(tick_delta);
    wire::put_varint(records_, args.size());
    records_ += args;
  }

  // Ends the current records frame; the records after this go into frames
  // of `type` (schema::FrameType::flight, FORMAT.md §7.2, or an unknown one).
  void records_as(schema::FrameType type) {
    flush();
    records_type_ = type;
  }

  std::string finish() {
    flush();
    return out_;
  }

  // A frame of `type` whose payload is exactly `payload`, hostile ones included.
  void raw_frame(schema::FrameType type, const std::string& payload) {
    flush();
    frame(type, payload);
  }

  // FORMAT.md §7.4 (2.0): a columnar frame's tick column and rows, which a
  // test may damage before the frame is written; null leaves them as they are.
  std::function<void(std::string& ticks, std::string& rows)> edit_columns;

 private:
  void flush() {
    if (records_.empty()) return;
    frame(records_type_, schema::is_columnar(records_type_) ? columnar(records_) : records_);
    records_.clear();
  }

  // The same records with their tick deltas moved out of the rows into one
  // column ahead of them.
  std::string columnar(const std::string& payload) {
    wire::ByteReader r(payload);
    std::uint64_t base = 0;
    r.le(base);
    std::string ticks, rows;
    while (!r.empty()) {
      std::uint64_t site, thread, delta;
      std::string_view args;
      r.varint(site);
      r.varint(thread);
      r.varint(delta);
      r.length_prefixed(args, payload.size());
      wire::put_varint(ticks, delta);
      wire::put_varint(rows, site);
      wire::put_varint(rows, thread);
      wire::put_bytes(rows, args);
    }
    if (edit_columns) edit_columns(ticks, rows);
    std::string out;
    wire::put_le<std::uint64_t>(out, base);
    wire::put_bytes(out, ticks);
    return out + rows;
  }

  void frame(schema::FrameType type, const std::string& payload) {
    std::size_t header = out_.size();
    out_.append(reinterpret_cast<const char*>(schema::kFrameSync), sizeof schema::kFrameSync);
    out_ += static_cast<char>(type);
    out_ += '\0';
    wire::put_le<std::uint16_t>(out_, 0);
    wire::put_le<std::uint32_t>(out_, static_cast<std::uint32_t>(payload.size()));
    wire::put_le<std::uint32_t>(out_, static_cast<std::uint32_t>(payload.size()));
    wire::put_le<std::uint32_t>(out_, wire::crc32c(payload.data(), payload.size()));
    wire::put_le<std::uint32_t>(out_, wire::crc32c(out_.data() + header, schema::kFrameHeaderCrcOffset));
    out_ += payload;
  }

  std::string out_;
  std::string records_;
  schema::FrameType records_type_ = schema::FrameType::records;
  std::uint64_t ticks_ = 0;
  std::unordered_map<std::uint32_t, std::vector<std::uint8_t>> tags_;
  std::unordered_map<std::uint32_t, std::vector<std::uint64_t>> previous_;
};

// ---- decoding ------------------------------------------------------------------------

struct Decoded {
  std::vector<std::string> messages;
  std::vector<bool> formatted;
  std::vector<std::string> errors;  // render_message's reason, per record
  std::vector<std::string> json;    // append_json_record's line, per record
  std::vector<std::string> problems;
  std::vector<std::int64_t> unix_ns;
};

inline Decoded decode(const std::string& bytes, const decoder::TextRewrite& rewrite = {}) {
  Decoded d;
  decoder::StreamDecoder decoder("<test>", [&](const decoder::Problem& p) {
    if (!p.torn_tail) d.problems.push_back(p.what);
  });
  decoder.decode_bytes(bytes, [&](const decoder::Record& r) {
    std::string message;
    Result<> formatted = decoder::render_message(r, message);
    d.formatted.push_back(formatted.ok());
    d.messages.push_back(message);
    d.errors.push_back(formatted.why());
    std::string json;
    decoder::TimeStyle utc;
    utc.utc = true;
    decoder::append_json_record(json, r, utc, message, rewrite);
    d.json.push_back(json);
    d.unix_ns.push_back(r.unix_ns);
  });
  return d;
}

inline bool any_problem_says(const Decoded& d, std::string_view words) {
  for (const auto& p : d.problems)
    if (p.find(words) != std::string::npos) return true;
  return false;
}

// The "args" member of a JSON record line, as text.
inline std::string json_args(const std::string& line) {
  auto at = line.find(",\"args\":");
  if (at == std::string::npos || line.size() < at + 10) return "<no args>";
  return line.substr(at + 8, line.size() - at - 8 - 2);  // less "}\n"
}

}  // namespace terse::test
