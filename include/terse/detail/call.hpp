// What a logging call does, behind the macros of <terse/terse.hpp>: the
// call site's id, the record's size, its room in the thread's ring and its
// bytes. log_impl() is what each call site inlines; everything rare is out
// of line (log_any(), the runtime's reserve_slow()).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <utility>

#include <fmt/core.h>

#include <terse/delta.hpp>
#include <terse/detail/buffer.hpp>
#include <terse/detail/clock.hpp>
#include <terse/detail/limit.hpp>
#include <terse/detail/signature.hpp>
#include <terse/detail/site.hpp>
#include <terse/schema.hpp>

namespace terse::detail {

// What a logged call reads besides its site, on one cache line.
struct alignas(64) HotSettings {
  std::atomic<bool> running{false};      // between start() and stop(): a context is worth writing
  std::atomic<bool> synchronous{false};  // what set_async() set last; each buffer has a copy
  std::atomic<std::uint8_t> private_mode{static_cast<std::uint8_t>(schema::PrivateMode::omitted)};
  std::atomic<std::uint32_t> max_container_elements{1024};
};
inline HotSettings g_hot;

// Sync mode: wait until the record just logged is in the file.
void wait_until_written() noexcept;

// Shortens strings so that a record fits the thread's ring (FORMAT.md §8:
// the stored length then carries the truncated bit). Rare, so out of line.
std::size_t fit_strings(std::size_t fixed_size, std::size_t limit, std::uint32_t* text_lengths, bool* truncated,
                        const bool* is_string, std::size_t count) noexcept;

template <std::uint8_t Tag, typename T>
inline std::size_t argument_size(const T& value, std::uint32_t& text_length, std::size_t& value_size_out,
                                 const Limits& limits) noexcept {
  if constexpr (Tag == static_cast<std::uint8_t>(TypeTag::structured)) {
    value_size_out = value_size(value, limits);
    return 4 + value_size_out;
  } else {
    (void)value_size_out;
    (void)limits;
    return encoded_size<Tag>(value, text_length);
  }
}

template <std::uint8_t Tag, typename T>
inline char* write_argument(char* out, const T& value, std::uint32_t text_length, bool truncated,
                            std::size_t value_size_in, const Limits& limits) noexcept {
  if constexpr (Tag == static_cast<std::uint8_t>(TypeTag::structured)) {
    out = put_raw(out, static_cast<std::uint32_t>(value_size_in));
    return write_value(out, value, limits);
  } else {
    (void)value_size_in;
    (void)limits;
    return encode_arg<Tag>(out, value, text_length, truncated);
  }
}

inline Limits current_limits() noexcept {
  return Limits{g_hot.max_container_elements.load(std::memory_order_relaxed), schema::kStringLengthMask,
                static_cast<schema::PrivateMode>(g_hot.private_mode.load(std::memory_order_relaxed))};
}

// The longest prefix log_impl writes: a context push's kind, serial and site.
inline constexpr std::size_t kMaxRecordPrefix = 1 + 10 + 5;

// Every record a call writes fits a ring of the smallest size (with the
// prefix of the longest), checked at compile time: the fixed part of the
// arguments, and the strings, whose length log_impl() checks against this.
inline constexpr std::size_t kFitsAnyRing = kMinRingCapacity / 2 - kRingHeaderSize;

// The record's header and bytes into its room, then published.
template <auto Tags, bool Prefixed, typename... Args, std::size_t... I>
inline void write_record(ThreadBuffer& buffer, char* out, const RingRecordHeader& header, std::uint64_t record_end,
                         std::string_view prefix, const std::uint32_t* text_lengths, const bool* truncated,
                         [[maybe_unused]] const std::size_t* value_sizes, [[maybe_unused]] const Limits& limits,
                         std::index_sequence<I...>, const Args&... args) noexcept {
  std::memcpy(out, &header, sizeof header);
  [[maybe_unused]] char* cursor = out + kRingHeaderSize;
  if constexpr (Prefixed) {
    std::memcpy(cursor, prefix.data(), prefix.size());
    cursor += prefix.size();
  }
  ((cursor =
        write_argument<Tags[I]>(cursor, unnamed_value(args), text_lengths[I], truncated[I], value_sizes[I], limits)),
   ...);
  buffer.commit(header.ticks, record_end);
}

// Writes one record, whole or not at all, in every case log_impl() leaves
// to it: a thread's first call, structured arguments, strings longer than
// kFitsAnyRing. Out of line, so that what each call site inlines stays
// small, and with it the caller's own function: a compiler inlines a small
// function into its callers, and a large one not.
// Numbers and pointers reach log_any() by value: an argument passed by
// reference must be stored to memory first, in every call, for the rare one
// that takes this path.
template <typename T>
using PassedAs = std::conditional_t<std::is_scalar_v<T>, T, const T&>;

template <auto Tags, bool Prefixed, typename... Args, std::size_t... I>
[[gnu::noinline]] bool log_any(std::uint32_t id, std::string_view prefix, std::index_sequence<I...>,
                               PassedAs<Args>... args) noexcept {
  ThreadBuffer* buffer = tls_buffer;
  bool first_call = false;
  if (__builtin_expect(buffer == nullptr, 0)) {
    buffer = create_thread_buffer();
    if (buffer == nullptr) return false;
    first_call = true;
  } else if (buffer->in_call_since.load(std::memory_order_relaxed) != kNotInCall) {
    // Before the arguments are measured, which for structured ones writes
    // to the thread's own memory that the interrupted call is using.
    drop_nested_call(*buffer);
    return false;
  }
  constexpr std::size_t count = sizeof...(Args);
  [[maybe_unused]] constexpr auto string_tag = static_cast<std::uint8_t>(TypeTag::string);
  [[maybe_unused]] constexpr auto structured_tag = static_cast<std::uint8_t>(TypeTag::structured);
  constexpr bool has_strings = (false || ... || (Tags[I] == string_tag));
  constexpr bool has_structured = (false || ... || (Tags[I] == structured_tag));
  std::uint32_t text_lengths[count + 1] = {};
  bool truncated[count + 1] = {};
  [[maybe_unused]] std::size_t value_sizes[count + 1] = {};
  [[maybe_unused]] Limits limits{};
  [[maybe_unused]] EagerTexts* eager = nullptr;
  [[maybe_unused]] std::size_t eager_base = 0;
  if constexpr (has_structured) {
    limits = current_limits();
    eager = &eager_texts();
    eager_base = eager->text.size();
  }
  [[maybe_unused]] const std::size_t prefix_size = Prefixed ? prefix.size() : 0;
  auto measure = [&] {
    return (prefix_size + ... + argument_size<Tags[I]>(unnamed_value(args), text_lengths[I], value_sizes[I], limits));
  };
  std::size_t args_size = measure();
  if constexpr (has_strings || has_structured) {
    std::size_t limit = max_record_size(*buffer) - kRingHeaderSize;
    if (__builtin_expect(args_size > kFitsAnyRing && args_size > limit, 0)) {
      if constexpr (has_structured) {
        // Keep the record, with fewer elements and shorter strings, each cut marked.
        limits.max_string = std::min<std::uint32_t>(limits.max_string, static_cast<std::uint32_t>(limit / 2));
        while (args_size > limit && (limits.max_elements > 0 || limits.max_string > 0)) {
          limits.max_elements /= 2;
          limits.max_string /= 2;
          eager->text.resize(eager_base);
          args_size = measure();
        }
      }
      if constexpr (has_strings) {
        if (args_size > limit) {
          constexpr bool is_string[count + 1] = {(Tags[I] == string_tag)...};
          std::size_t texts = (std::size_t{0} + ... + (Tags[I] == string_tag ? text_lengths[I] : 0));
          args_size = fit_strings(args_size - texts, limit, text_lengths, truncated, is_string, count);
        }
      }
      if (args_size > limit) {
        if constexpr (has_structured) eager->text.resize(eager_base);
        if (first_call) buffer->end_call();  // its window is open; another call's is not this one's to close
        return false;                        // only a type whose fixed part alone overflows the buffer
      }
    }
  }
  std::size_t stride = ring_stride(args_size);
  // A first call's window is open since its buffer was made. Another's
  // opens here: a call that interrupted this one since the check above has
  // closed its own window again.
  if (!first_call) (void)buffer->begin_call();
  // Read as soon as the window is open, not once the record has room: the
  // counter's read takes some 25 cycles, which then overlap the rest of the
  // call instead of adding to it. A call that waited for room reads it again.
  std::uint64_t stamp = __builtin_expect(first_call, 0) ? buffer->last_ticks : ticks();
  char* out = buffer->try_reserve(stride);
  if (__builtin_expect(out == nullptr, 0)) {
    out = reserve_slow(*buffer, stride);
    if (out == nullptr) {
      if constexpr (has_structured) eager->text.resize(eager_base);
      return false;
    }
    if (!first_call) stamp = ticks();
  }
  if constexpr (has_structured) eager->read = eager_base;
  write_record<Tags, Prefixed>(*buffer, out, RingRecordHeader{id, static_cast<std::uint32_t>(args_size), stamp},
                               buffer->write_pos, prefix, text_lengths, truncated, value_sizes, limits,
                               std::index_sequence<I...>{}, args...);
  if constexpr (has_structured) eager->text.resize(eager_base);
  if (__builtin_expect(buffer->synchronous.load(std::memory_order_relaxed), 0)) wait_until_written();
  return true;
}

// Writes one record, whole or not at all; false when it was not written (not
// running, or the buffer full under Overflow::drop). With Prefixed, the
// record's bytes start with `prefix`: a rate-limited site's suppressed count,
// a context push's kind, serial and site (FORMAT.md §7, §7.3). What a call
// site inlines: the common case, with a thread's buffer and a record that
// fits any ring; log_any() takes the rest.
template <auto Tags, bool Prefixed = false, typename... Args, std::size_t... I>
inline bool log_impl(std::uint32_t id, std::string_view prefix, std::index_sequence<I...> arguments,
                     const Args&... args) noexcept {
  constexpr std::size_t count = sizeof...(Args);
  [[maybe_unused]] constexpr auto string_tag = static_cast<std::uint8_t>(TypeTag::string);
  [[maybe_unused]] constexpr auto structured_tag = static_cast<std::uint8_t>(TypeTag::structured);
  constexpr std::size_t fixed_size =
      (std::size_t{0} + ... +
       (Tags[I] == string_tag || Tags[I] == structured_tag ? 4
                                                           : static_cast<std::size_t>(schema::type_tag_size(Tags[I]))));
  // With room for a prefix.
  static_assert(fixed_size + kMaxRecordPrefix + kRingHeaderSize <= kMinRingCapacity / 2,
                "terse: too many arguments in one call");
  if constexpr ((false || ... || (Tags[I] == structured_tag))) {
    return log_any<Tags, Prefixed, Args...>(id, prefix, arguments, args...);
  } else {
    ThreadBuffer* buffer = tls_buffer;
    std::uint32_t text_lengths[count + 1] = {};
    constexpr bool truncated[count + 1] = {};
    constexpr std::size_t value_sizes[count + 1] = {};
    [[maybe_unused]] const std::size_t prefix_size = Prefixed ? prefix.size() : 0;
    std::size_t args_size = (prefix_size + ... + encoded_size<Tags[I]>(unnamed_value(args), text_lengths[I]));
    if (__builtin_expect(buffer == nullptr || args_size > kFitsAnyRing, 0))
      return log_any<Tags, Prefixed, Args...>(id, prefix, arguments, args...);
    std::size_t stride = ring_stride(args_size);
    if (__builtin_expect(!buffer->begin_call(), 0)) {
      drop_nested_call(*buffer);
      return false;
    }
    // Read as soon as the window is open, not once the record has room: the
    // counter's read takes some 25 cycles, which then overlap the rest of
    // the call instead of adding to it. A call that waited for room reads it
    // again.
    std::uint64_t stamp = ticks();
    char* out = buffer->try_reserve(stride);
    if (__builtin_expect(out == nullptr, 0)) {
      out = reserve_slow(*buffer, stride);
      if (out == nullptr) return false;
      stamp = ticks();
    }
    write_record<Tags, Prefixed>(*buffer, out, RingRecordHeader{id, static_cast<std::uint32_t>(args_size), stamp},
                                 buffer->write_pos, prefix, text_lengths, truncated, value_sizes, Limits{}, arguments,
                                 args...);
    if (__builtin_expect(buffer->synchronous.load(std::memory_order_relaxed), 0)) wait_until_written();
    return true;
  }
}

// Never defined: stripped calls name it only to have their format checked.
template <typename... Args>
void check_only(fmt::format_string<checked_as_t<Args>...>, const Args&...) noexcept;

// The format_string parameter is where fmt checks the format against the
// argument types at compile time; its value is not needed at run time.
// Types fmt 9 cannot format are checked against stand-ins (structured.hpp).
template <typename... Args>
inline std::uint32_t site_id(Site& site, const Args&... args) noexcept {
  // Acquire (free on x86): the record's commit then carries the site's
  // registry copy, registered maybe by another thread, to the IO thread.
  std::uint32_t id = site.id.load(std::memory_order_acquire);
  if (__builtin_expect(id == 0, 0)) {
    if constexpr ((false || ... || is_named_argument<Args>)) {
      const char* names[] = {argument_name(args)...};
      id = register_site(site, names);
    } else {
      id = register_site(site);
    }
  }
  return id;
}

template <auto Tags, std::uint8_t Level, typename... Args>
inline void log(Site& site, fmt::format_string<checked_as_t<Args>...>, const Args&... args) noexcept {
  if (std::uint32_t id = site_id(site, args...))
    log_impl<Tags>(ring_site_id(site, Level, id), {}, std::index_sequence_for<Args...>{}, args...);
}

// A rate-limited site's record, with the count of calls suppressed since the
// last one; a record that is not written hands its count to the next.
template <auto Tags, std::uint8_t Level, typename... Args>
inline void log_limited(Site& site, std::uint64_t suppressed, fmt::format_string<checked_as_t<Args>...>,
                        const Args&... args) noexcept {
  std::uint32_t id = site_id(site, args...);
  char count[10];
  std::string_view prefix(count, static_cast<std::size_t>(wire::write_varint(count, suppressed) - count));
  if (id == 0 ||
      !log_impl<Tags, true>(ring_site_id(site, Level, id), prefix, std::index_sequence_for<Args...>{}, args...))
    site.limit->suppressed.fetch_add(suppressed, std::memory_order_relaxed);
}

// The site of every context whose value has type T (FORMAT.md §7.3): its
// key and its value as arguments of "{}={}". Hidden, so that each shared
// object has its own, as it has its own call sites: a symbol a library
// would be the first to define as unique (an inline variable of default
// visibility) keeps it from ever unloading, hence also the literal format
// below and the serial defined in the runtime.
template <typename T>
struct TERSE_DETAIL_PER_OBJECT ContextSite {
  using Signature = decltype(signature_of(std::string_view{}, std::declval<const T&>()));
  static constexpr auto tags = Signature::tags(schema::kContextFormat);
  static_assert(schema::kContextFormat == "{}={}");
  static constinit inline Site site{"{}={}",
                                    schema::kOwnFileName,
                                    0,
                                    static_cast<std::uint8_t>(schema::LevelValue::info),
                                    static_cast<std::uint8_t>(Signature::size),
                                    tags.data(),
                                    &wire::encode_deltas<tags>,
                                    Signature::describer(),
                                    nullptr,
                                    true};
};

// Numbers the calling thread's contexts, so that a pop names its push
// whatever order the contexts end in (defined in the runtime, see above).
extern constinit thread_local std::uint64_t tls_context_serial;

// FORMAT.md §7.3: a context_push control record; returns its serial, or 0
// when it was not written.
template <typename T>
std::uint64_t push_context(std::string_view key, const T& value) noexcept {
  if (!g_hot.running.load(std::memory_order_relaxed)) return 0;
  Site& site = ContextSite<T>::site;
  std::uint32_t id = site.id.load(std::memory_order_acquire);
  if (__builtin_expect(id == 0, 0)) id = register_site(site);
  if (id == 0) return 0;
  std::uint64_t serial = ++tls_context_serial;
  char bytes[kMaxRecordPrefix];
  char* end = bytes;
  *end++ = static_cast<char>(schema::ControlKind::context_push);
  end = wire::write_varint(end, serial);
  end = wire::write_varint(end, id);
  std::string_view prefix(bytes, static_cast<std::size_t>(end - bytes));
  if (!log_impl<ContextSite<T>::tags, true>(schema::kControlSiteId, prefix, std::index_sequence<0, 1>{}, key, value))
    return 0;
  return serial;
}

// FORMAT.md §7.3: the context_pop of `serial`, from the calling thread.
void pop_context(std::uint64_t serial) noexcept;

}  // namespace terse::detail

// What fmt's own compile-time check does not cover.
#define TERSE_DETAIL_CHECK_SIGNATURE(signature, format_literal)                                \
  static_assert(signature::uses_every_argument(format_literal),                                \
                "terse: the format string does not use every argument (too many arguments?)"); \
  static_assert(signature::strings_presented_one_way(format_literal),                          \
                "terse: a string argument is printed both as text and with {:p}; pass it twice")

// What every logging macro starts with: the signature checked against the
// format, the argument tags, and the call site (`limit`: a rate-limited
// site's LimitState, else nullptr). The site is a constant-initialised
// static, so declaring it costs nothing at run time.
#define TERSE_DETAIL_SITE(level_value, limit, format_literal, ...)                       \
  using terse_signature_ = decltype(::terse::detail::signature_of(__VA_ARGS__));         \
  TERSE_DETAIL_CHECK_SIGNATURE(terse_signature_, format_literal);                        \
  static constexpr auto terse_tags_ = terse_signature_::tags(format_literal);            \
  static constinit ::terse::detail::Site terse_site_ {                                   \
    format_literal, __FILE__, __LINE__, static_cast<std::uint8_t>(level_value),          \
        static_cast<std::uint8_t>(terse_signature_::size), terse_tags_.data(),           \
        &::terse::wire::encode_deltas<terse_tags_>, terse_signature_::describer(), limit \
  }

// TERSE_LOG's rate-limited form (TERSE_LOG_EVERY and the others).
#define TERSE_DETAIL_LOG_LIMITED(limiter_type, limit, level_value, format_literal, ...)      \
  do {                                                                                       \
    static constinit limiter_type terse_limiter_{};                                          \
    TERSE_DETAIL_SITE(level_value, &terse_limiter_, format_literal, __VA_ARGS__);            \
    std::uint64_t terse_suppressed_;                                                         \
    if (::terse::detail::gate_allows(terse_site_, static_cast<std::uint8_t>(level_value)) && \
        terse_limiter_.pass(limit, terse_suppressed_))                                       \
      ::terse::detail::log_limited<terse_tags_, static_cast<std::uint8_t>(level_value)>(     \
          terse_site_, terse_suppressed_, format_literal __VA_OPT__(, ) __VA_ARGS__);        \
  } while (false)

// A call removed by TERSE_MIN_LEVEL is still checked in full, so lowering
// the floor later never reveals a broken call; a discarded statement emits
// no code and no string.
#define TERSE_DETAIL_STRIPPED(format_literal, ...)                                          \
  do {                                                                                      \
    if constexpr (false) {                                                                  \
      using terse_signature_ = decltype(::terse::detail::signature_of(__VA_ARGS__));        \
      TERSE_DETAIL_CHECK_SIGNATURE(terse_signature_, format_literal);                       \
      [[maybe_unused]] constexpr auto terse_tags_ = terse_signature_::tags(format_literal); \
      ::terse::detail::check_only(format_literal __VA_OPT__(, ) __VA_ARGS__);               \
    }                                                                                       \
  } while (false)
