// TERSE_FIELDS(Type, a, b, c), at global scope: Type logs as
// {a: 1, b: 2.5, c: "x"} (and as a JSON object with those keys). Works for
// any class whose listed members are accessible, aggregate or not, and may
// list only some of them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <terse/terse.hpp>

namespace terse::detail {

// The macro's list ends in a placeholder so that every entry can end in a comma.
template <typename... P>
constexpr auto member_list(P... pointers) {
  auto all = std::make_tuple(pointers...);
  return [&]<std::size_t... I>(std::index_sequence<I...>) { return std::make_tuple(std::get<I>(all)...); }
  (std::make_index_sequence<sizeof...(P) - 1>{});
}

template <typename Class, std::size_t... I>
void describe_listed_fields(std::string& out, std::index_sequence<I...>) {
  ((put_bytes(out, fields<Class>::names[I]),
    describe<std::remove_cvref_t<decltype(std::declval<const Class&>().*std::get<I>(fields<Class>::members))>>(out)),
   ...);
}

template <typename T>
struct Encoding<T, kind::field_list> : Unsized {
  static constexpr std::size_t count = std::tuple_size_v<std::remove_cvref_t<decltype(fields<T>::members)>>;
  static_assert(count <= schema::kMaxCompositeFields, "terse: too many fields");
  using checked_as = RenderedWithoutSpec;
  static void describe(std::string& out) {
    put_node(out, schema::TypeNode::aggregate);
    put_bytes(out, type_name<T>());
    put_varint(out, count);
    describe_listed_fields<T>(out, std::make_index_sequence<count>{});
  }
  static std::size_t size(const T& value, const Limits& limits) noexcept {
    return std::apply([&](auto... member) { return (std::size_t{0} + ... + value_size(value.*member, limits)); },
                      fields<T>::members);
  }
  static char* write(char* out, const T& value, const Limits& limits) noexcept {
    std::apply([&](auto... member) { ((out = write_value(out, value.*member, limits)), ...); }, fields<T>::members);
    return out;
  }
};

}  // namespace terse::detail

#define TERSE_DETAIL_PARENS ()
#define TERSE_DETAIL_EXPAND(...) TERSE_DETAIL_EXPAND4(TERSE_DETAIL_EXPAND4(TERSE_DETAIL_EXPAND4(__VA_ARGS__)))
#define TERSE_DETAIL_EXPAND4(...) TERSE_DETAIL_EXPAND3(TERSE_DETAIL_EXPAND3(TERSE_DETAIL_EXPAND3(__VA_ARGS__)))
#define TERSE_DETAIL_EXPAND3(...) TERSE_DETAIL_EXPAND2(TERSE_DETAIL_EXPAND2(TERSE_DETAIL_EXPAND2(__VA_ARGS__)))
#define TERSE_DETAIL_EXPAND2(...) TERSE_DETAIL_EXPAND1(TERSE_DETAIL_EXPAND1(TERSE_DETAIL_EXPAND1(__VA_ARGS__)))
#define TERSE_DETAIL_EXPAND1(...) __VA_ARGS__
#define TERSE_DETAIL_FOR_EACH(macro, type, ...) \
  __VA_OPT__(TERSE_DETAIL_EXPAND(TERSE_DETAIL_FOR_EACH_STEP(macro, type, __VA_ARGS__)))
#define TERSE_DETAIL_FOR_EACH_STEP(macro, type, first, ...) \
  macro(type, first) __VA_OPT__(TERSE_DETAIL_FOR_EACH_AGAIN TERSE_DETAIL_PARENS(macro, type, __VA_ARGS__))
#define TERSE_DETAIL_FOR_EACH_AGAIN() TERSE_DETAIL_FOR_EACH_STEP
#define TERSE_DETAIL_FIELD_NAME(type, member) std::string_view(#member),
#define TERSE_DETAIL_FIELD_POINTER(type, member) &type::member,

#define TERSE_FIELDS(type, ...)                                                                                      \
  template <>                                                                                                        \
  struct terse::fields<type> {                                                                                       \
    static constexpr std::string_view names[] = {TERSE_DETAIL_FOR_EACH(TERSE_DETAIL_FIELD_NAME, type, __VA_ARGS__)}; \
    static constexpr auto members =                                                                                  \
        ::terse::detail::member_list(TERSE_DETAIL_FOR_EACH(TERSE_DETAIL_FIELD_POINTER, type, __VA_ARGS__) nullptr);  \
  }
