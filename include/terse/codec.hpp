// How a user type with its own fmt::formatter is logged. The decoder runs
// later, without that formatter's code, so the type says what to store:
//
// 1. A codec: the call stores the fields it returns (any loggable types,
//    in binary), and the decoder formats them with `format`:
//      template <> struct terse::codec<Money> {
//        static constexpr std::string_view format = "{}.{:02} {}";
//        static auto fields(const Money& m) {
//          return std::tuple(m.cents / 100, m.cents % 100, m.currency);
//        }
//      };
// 2. Formatting on the calling thread, with the type's own formatter, into
//    a string (slow: this is the cost terse exists to avoid):
//      template <> inline constexpr bool terse::format_eagerly<Money> = true;
#pragma once

namespace terse {

template <typename T>
struct codec;

template <typename T>
inline constexpr bool format_eagerly = false;

}  // namespace terse
