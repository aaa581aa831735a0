// The rendering rule, type by type: each decoded message must equal
// fmt::format of the same call byte for byte.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "roundtrip.hpp"

using namespace terse::test;

namespace {

// Logs min, max and a middle value of T under the presentations fmt
// accepts for every integer type.
template <typename T>
void log_integer_limits(RoundTrip& rt) {
  const T lo = std::numeric_limits<T>::min();
  const T hi = std::numeric_limits<T>::max();
  const T mid = static_cast<T>(hi / 3);
  const T zero = 0;
  TERSE_EXPECT(rt, "{} {} {} {}", lo, hi, mid, zero);
  TERSE_EXPECT(rt, "{:d}|{:x}|{:X}|{:o}|{:b}|{:B}", lo, lo, lo, lo, lo, lo);
  TERSE_EXPECT(rt, "{:d}|{:x}|{:X}|{:o}|{:b}|{:B}", hi, hi, hi, hi, hi, hi);
  TERSE_EXPECT(rt, "{:#x}|{:#X}|{:#o}|{:#b}|{:#B}", hi, hi, hi, hi, hi);
  if constexpr (std::is_signed_v<T>) {  // fmt refuses a sign option on unsigned types
    TERSE_EXPECT(rt, "{:+}|{: }|{:-}|{:+}|{: }", lo, lo, hi, hi, zero);
  }
  TERSE_EXPECT(rt, "[{:>24}][{:<24}][{:^24}][{:*^24}][{:024}][{:#026x}]", lo, hi, mid, lo, lo, hi);
}

}  // namespace

TEST_CASE("plain char-sized integers print as numbers at their limits") {
  RoundTrip rt;
  log_integer_limits<signed char>(rt);
  log_integer_limits<unsigned char>(rt);
  log_integer_limits<std::int8_t>(rt);
  log_integer_limits<std::uint8_t>(rt);
  rt.check();
}

TEST_CASE("short integers print at their limits") {
  RoundTrip rt;
  log_integer_limits<short>(rt);
  log_integer_limits<unsigned short>(rt);
  log_integer_limits<std::int16_t>(rt);
  log_integer_limits<std::uint16_t>(rt);
  rt.check();
}

TEST_CASE("int and unsigned print at their limits") {
  RoundTrip rt;
  log_integer_limits<int>(rt);
  log_integer_limits<unsigned>(rt);
  log_integer_limits<std::int32_t>(rt);
  log_integer_limits<std::uint32_t>(rt);
  rt.check();
}

TEST_CASE("long and long long print at their limits") {
  RoundTrip rt;
  log_integer_limits<long>(rt);
  log_integer_limits<unsigned long>(rt);
  log_integer_limits<long long>(rt);
  log_integer_limits<unsigned long long>(rt);
  log_integer_limits<std::int64_t>(rt);
  log_integer_limits<std::uint64_t>(rt);
  rt.check();
}

TEST_CASE("integers under {:c} print as characters") {
  RoundTrip rt;
  TERSE_EXPECT(rt, "{:c}{:c}{:c}{:c}", 72, static_cast<unsigned char>('i'), static_cast<short>('!'), 10u);
  TERSE_EXPECT(rt, "[{:>4c}][{:<4c}][{:^5c}]", 'x', 65, static_cast<signed char>('z'));
  rt.check();
}

TEST_CASE("bool prints as a word, or as a number under an integer presentation") {
  RoundTrip rt;
  TERSE_EXPECT(rt, "{} {}", true, false);
  TERSE_EXPECT(rt, "[{:>6}][{:<6}][{:^7}][{:*>6}]", true, false, true, false);
  TERSE_EXPECT(rt, "{:d} {:d} {:x} {:#b} {:o}", true, false, true, true, true);
  TERSE_EXPECT(rt, "{:s} {:s}", true, false);
  TERSE_EXPECT(rt, "[{:05d}][{:>3d}]", true, true);
  rt.check();
}

TEST_CASE("char prints as a character, or as a number under an integer presentation") {
  RoundTrip rt;
  const char a = 'a';
  const char quote = '\'';
  const char tab = '\t';
  const char high = static_cast<char>(0xE9);
  TERSE_EXPECT(rt, "{}{}{}", a, 'b', 'c');
  TERSE_EXPECT(rt, "[{:5}][{:>5}][{:^5}][{:-<5}]", a, a, a, a);
  TERSE_EXPECT(rt, "{:d} {:x} {:X} {:#o} {:#b} {:c}", a, a, 'Z', a, a, a);
  TERSE_EXPECT(rt, "{:d} {:x}", high, high);
  TERSE_EXPECT(rt, "{:?} {:?} {:?} {:?}", a, quote, tab, '"');
  rt.check();
}

TEST_CASE("float is formatted as a float, not as the widened double") {
  RoundTrip rt;
  const float tenth = 0.1f;
  const float third = 1.0f / 3.0f;
  // fmt's shortest round trip of a float differs from that of the same
  // value widened to double; the message proves which one was formatted.
  REQUIRE(fmt::format("{}", tenth) != fmt::format("{}", static_cast<double>(tenth)));
  TERSE_EXPECT(rt, "{} {} {}", tenth, third, 16777217.0f);
  TERSE_EXPECT(rt, "{} {} {} {}", std::numeric_limits<float>::min(), std::numeric_limits<float>::max(),
               std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::lowest());
  TERSE_EXPECT(rt, "{:e}|{:E}|{:f}|{:F}|{:g}|{:G}|{:a}|{:A}", third, third, third, third, third, third, third, third);
  TERSE_EXPECT(rt, "{:.3}|{:.10f}|{:.0e}|{:#g}|{:#.0f}|{:#a}", tenth, tenth, tenth, tenth, tenth, tenth);
  TERSE_EXPECT(rt, "[{:12.4f}][{:<12}][{:^12}][{:*>12.2e}][{:+012.3f}][{: }]", third, tenth, tenth, third, -third,
               tenth);
  rt.check();
}

TEST_CASE("double prints at its limits and under every float presentation") {
  RoundTrip rt;
  const double pi = 3.141592653589793;
  const double big = 1.2345678901234567e300;
  TERSE_EXPECT(rt, "{} {} {} {}", pi, 0.1, big, -2.5e-300);
  TERSE_EXPECT(rt, "{} {} {} {}", std::numeric_limits<double>::min(), std::numeric_limits<double>::max(),
               std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::lowest());
  TERSE_EXPECT(rt, "{:e}|{:E}|{:f}|{:F}|{:g}|{:G}|{:a}|{:A}", pi, pi, pi, pi, big, big, pi, pi);
  TERSE_EXPECT(rt, "{:.0}|{:.17g}|{:.3e}|{:#.0e}|{:#g}|{:.2a}|{:.30f}", pi, 0.1, big, pi, 1.0, pi, 0.1);
  TERSE_EXPECT(rt, "[{:>15.5f}][{:<15}][{:^15.3}][{:_^15}][{:015.2f}][{:+}][{: .1f}]", pi, pi, pi, -pi, -pi, pi, pi);
  TERSE_EXPECT(rt, "{:f}", big);
  rt.check();
}

TEST_CASE("long double prints as fmt prints a long double") {
  RoundTrip rt;
  const long double third = 1.0L / 3.0L;
  const long double huge = std::numeric_limits<long double>::max();
  TERSE_EXPECT(rt, "{} {} {}", third, huge, std::numeric_limits<long double>::min());
  TERSE_EXPECT(rt, "{} {}", std::numeric_limits<long double>::denorm_min(), std::numeric_limits<long double>::lowest());
  TERSE_EXPECT(rt, "{:e}|{:E}|{:f}|{:F}|{:g}|{:G}|{:a}|{:A}", third, third, third, third, third, third, third, third);
  TERSE_EXPECT(rt, "[{:>25.18f}][{:<25}][{:^+25.4e}][{:025.3}]", third, third, -third, third);
  TERSE_EXPECT(rt, "{} {} {}", -0.0L, std::numeric_limits<long double>::infinity(),
               std::numeric_limits<long double>::quiet_NaN());
  rt.check();
}

TEST_CASE("NaN, infinities and negative zero print as fmt prints them") {
  RoundTrip rt;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const float fnan = std::numeric_limits<float>::quiet_NaN();
  const float finf = std::numeric_limits<float>::infinity();
  TERSE_EXPECT(rt, "{} {} {} {} {}", nan, -nan, inf, -inf, -0.0);
  TERSE_EXPECT(rt, "{} {} {} {} {}", fnan, -fnan, finf, -finf, -0.0f);
  TERSE_EXPECT(rt, "{:+} {:+} {: } {:E} {:F} {:G} {:A}", nan, inf, inf, nan, inf, -inf, nan);
  TERSE_EXPECT(rt, "[{:8}][{:<8}][{:^8}][{:08}][{:*>8}]", nan, inf, -inf, inf, fnan);
  TERSE_EXPECT(rt, "{:e} {:f} {:g} {:a} {:.3f} {:+}", -0.0, -0.0, -0.0f, -0.0, -0.0f, 0.0);
  rt.check();
}

TEST_CASE("const char*, char* and string literals print their text") {
  RoundTrip rt;
  const char* hello = "hello";
  char mutable_text[] = "mutable";
  char* mutable_pointer = mutable_text;
  const char* empty = "";
  TERSE_EXPECT(rt, "{} {} {} [{}]", hello, mutable_pointer, "literal", empty);
  TERSE_EXPECT(rt, "[{:>10}][{:<10}][{:^10}][{:*^11}][{:.3}][{:>8.2}]", hello, mutable_pointer, "lit", hello, hello,
               "literal");
  TERSE_EXPECT(rt, "{:s} {:s}", hello, "x");
  TERSE_EXPECT(rt, "{:?} {:?}", "tab\there \"quoted\" back\\slash\n", hello);
  rt.check();
}

TEST_CASE("char arrays print up to their terminator") {
  RoundTrip rt;
  char full[6] = "abcde";
  char partly[32] = "short";  // the rest of the array is zero
  const char constant[] = "constant";
  char empty[8] = {};
  TERSE_EXPECT(rt, "{}|{}|{}|[{}]", full, partly, constant, empty);
  TERSE_EXPECT(rt, "[{:>8}][{:<8}][{:.2}]", full, partly, constant);
  rt.check();
}

TEST_CASE("std::string and std::string_view print their text, embedded NULs included") {
  RoundTrip rt;
  const std::string text = "a std::string";
  const std::string_view view = "a view";
  const std::string with_nul("nul\0inside", 10);
  const std::string_view part = std::string_view("cut here").substr(0, 3);
  const std::string empty;
  TERSE_EXPECT(rt, "{} {} [{}] [{}]", text, view, part, empty);
  TERSE_EXPECT(rt, "{}", with_nul);
  TERSE_EXPECT(rt, "[{:>16}][{:<16}][{:^9}][{:.4}][{:?}]", text, view, part, text, with_nul);
  TERSE_EXPECT(rt, "{}", std::string(1000, 'x'));
  rt.check();
}

TEST_CASE("void pointers and nullptr print as addresses") {
  RoundTrip rt;
  int object = 0;
  void* p = &object;
  const void* cp = &object;
  void* null = nullptr;
  TERSE_EXPECT(rt, "{} {} {} {}", p, cp, null, nullptr);
  TERSE_EXPECT(rt, "{:p} {:p} {:p}", p, cp, nullptr);
  TERSE_EXPECT(rt, "[{:>20}][{:<20}][{:^20}][{:*>20p}]", p, cp, nullptr, p);
  const void* high = reinterpret_cast<const void*>(~std::uintptr_t{0});
  TERSE_EXPECT(rt, "{}", high);
  rt.check();
}

TEST_CASE("a C string under {:p} prints its address, not its text") {
  RoundTrip rt;
  const char* text = "pointed at";
  char array[] = "array";
  TERSE_EXPECT(rt, "{:p}", text);
  TERSE_EXPECT(rt, "{:p} {} {:p}", text, text, "literal");
  TERSE_EXPECT(rt, "[{:>20p}]", static_cast<const char*>(array));
  const auto decoded = rt.check();
  // The address must be the pointer's, which fmt::format also shows.
  CHECK(decoded.lines[0].message == fmt::format("{}", static_cast<const void*>(text)));
}

// One argument shown both as text and under {:p} is refused at compile
// time (tests/compile/string_both_ways.cpp); passed twice, it works.
TEST_CASE("a C string passed twice prints as text and as its address") {
  RoundTrip rt;
  const char* text = "both ways";
  TERSE_EXPECT(rt, "{0} {1:p}", text, text);
  TERSE_EXPECT(rt, "{1:p} {0} {2}", text, text, "x");
  rt.check();
}

TEST_CASE("floats and doubles print as fmt's shortest, exact short decimals and the rest alike") {
  // The decoder writes a value that is exactly a short decimal from its
  // digits and gives every other one to fmt: both must print what fmt
  // prints, at the edges of that shortcut too, in the text and in JSON.
  RoundTrip rt;
  std::mt19937_64 random(20261202);
  std::vector<double> doubles = {0.0,
                                 -0.0,
                                 12.5,
                                 0.25,
                                 1024.0,
                                 -3.75,
                                 1e-4,
                                 1e-5,
                                 9.5e-5,
                                 1e15,
                                 1e16,
                                 1e17,
                                 9007199254740992.0,
                                 9007199254740993.0,
                                 4503599627370495.5,
                                 123456789.125,
                                 0.1,
                                 1.0 / 3.0,
                                 5e-324};
  for (int i = 0; i < 2000; ++i) {
    std::uint64_t bits = random();
    double value;
    std::memcpy(&value, &bits, sizeof value);
    if (std::isfinite(value)) doubles.push_back(value);
    // m * 2^-k: exact short decimals and values just beside them.
    auto m = static_cast<double>(random() % 100'000'000);
    doubles.push_back(std::ldexp(m, -static_cast<int>(random() % 12)));
    doubles.push_back(std::ldexp(m, static_cast<int>(random() % 40)));
  }
  for (double value : doubles) {
    TERSE_EXPECT(rt, "{}", value);
    const auto as_float = static_cast<float>(value);
    if (std::isfinite(as_float)) TERSE_EXPECT(rt, "{}", as_float);
  }
  TERSE_EXPECT(rt, "{} {}", 16777216.0f, 16777217.0f);
  TERSE_EXPECT(rt, "{} {}", 8388607.5f, 0.0625f);
  const Decoded decoded = rt.check();
  for (std::size_t i = 0; i + 2 < decoded.lines.size(); ++i) {
    INFO("record " << i);
    REQUIRE(decoded.lines[i].json_args.size() == 1);
    CHECK(decoded.lines[i].json_args[0] == rt.expected[i]);  // a JSON number, as fmt prints it
  }
}
