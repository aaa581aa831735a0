// The rendering rule, format feature by format feature.
#include <cstdint>
#include <string>
#include <string_view>

#include "roundtrip.hpp"

using namespace terse::test;

TEST_CASE("fill, align and width apply to every kind of argument") {
  RoundTrip rt;
  TERSE_EXPECT(rt, "[{:10}][{:<10}][{:>10}][{:^10}][{:^11}]", 42, 42, 42, 42, "odd");
  TERSE_EXPECT(rt, "[{:*<10}][{:#>10}][{:0^10}][{:+>10}][{:~<10}]", 42, "s", 2.5, 'c', true);
  TERSE_EXPECT(rt, "[{:1}][{:1}][{:3}]", 123456, "", "toolong");
  TERSE_EXPECT(rt, "[{:\u00b7^9}][{:\u65e5>6}]", "mid", 7);  // multi-byte fill characters
  rt.check();
}

TEST_CASE("precision cuts strings and sets float digits") {
  RoundTrip rt;
  TERSE_EXPECT(rt, "[{:.0}][{:.1}][{:.5}][{:.100}]", "abc", "abc", "abc", "abc");
  TERSE_EXPECT(rt, "[{:.0f}][{:.1f}][{:.12f}][{:.3e}][{:.0g}][{:.20g}]", 2.5, 0.05, 1.0 / 3, 123456.0, 0.5, 0.1);
  TERSE_EXPECT(rt, "[{:8.3f}][{:<8.2}][{:^10.4}]", 3.14159f, "abcdef", 2.0 / 3);
  rt.check();
}

TEST_CASE("sign options +, - and space apply to integers and floats") {
  RoundTrip rt;
  TERSE_EXPECT(rt, "[{:+}][{:+}][{:-}][{:-}][{: }][{: }]", 5, -5, 5, -5, 5, -5);
  TERSE_EXPECT(rt, "[{:+}][{:+}][{:-}][{: }][{: }]", 1.5, -1.5f, 1.5, 1.5L, -1.5);
  TERSE_EXPECT(rt, "[{:+x}][{: #x}][{:+08.2f}][{: 8}][{:+^9}]", 255, 255, 3.14159, 42, 7);
  rt.check();
}

TEST_CASE("the alternate form # adds prefixes and keeps decimal points") {
  RoundTrip rt;
  TERSE_EXPECT(rt, "{:#x} {:#X} {:#o} {:#b} {:#B} {:#d}", 255, 255, 8, 5, 5, 10);
  TERSE_EXPECT(rt, "{:#x} {:#o} {:#b}", 0, 0, 0);
  TERSE_EXPECT(rt, "{:#x} {:#X}", -255, std::int64_t{-1});
  TERSE_EXPECT(rt, "{:#} {:#.0f} {:#.0e} {:#g} {:#G} {:#a}", 1.0, 2.0, 3.0, 4.0, 1e20, 1.0f);
  rt.check();
}

TEST_CASE("zero padding goes after the sign and the prefix") {
  RoundTrip rt;
  TERSE_EXPECT(rt, "[{:08}][{:08}][{:+08}][{:#010x}][{:#010b}][{:010.3f}][{:010}]", 42, -42, 42, 255, 5, -3.14159,
               2.5f);
  TERSE_EXPECT(rt, "[{:<08}][{:^08}][{:08e}][{:020}]", 42, 42, 1.5, std::int64_t{-9223372036854775807 - 1});
  rt.check();
}

TEST_CASE("every integer presentation type prints as fmt prints it") {
  RoundTrip rt;
  const int v = 0x5A;
  const std::uint64_t big = 0xDEADBEEFCAFEF00Du;
  TERSE_EXPECT(rt, "{:d} {:x} {:X} {:o} {:b} {:B} {:c}", v, v, v, v, v, v, v);
  TERSE_EXPECT(rt, "{:d} {:x} {:X} {:o} {:b} {:B}", big, big, big, big, big, big);
  TERSE_EXPECT(rt, "{:d} {:x} {:o} {:b}", -v, -v, -v, -v);
  rt.check();
}

TEST_CASE("every float presentation type prints as fmt prints it") {
  RoundTrip rt;
  const double d = 1234.5678;
  const float f = 1234.5678f;
  TERSE_EXPECT(rt, "{:e} {:E} {:f} {:F} {:g} {:G} {:a} {:A}", d, d, d, d, d, d, d, d);
  TERSE_EXPECT(rt, "{:e} {:E} {:f} {:F} {:g} {:G} {:a} {:A}", f, f, f, f, f, f, f, f);
  TERSE_EXPECT(rt, "{:g} {:G} {:g} {:G}", 1e-5, 1e-5, 1e16, 1e16);
  rt.check();
}

TEST_CASE("string, pointer and debug presentation types print as fmt prints them") {
  RoundTrip rt;
  const std::string text = "line\nbreak";
  const std::string_view view = "tab\tand \"quote\"";
  int object = 0;
  TERSE_EXPECT(rt, "{:s}|{:s}|{:s}", text, view, "lit");
  TERSE_EXPECT(rt, "{:?}|{:?}|{:?}|{:?}", text, view, "\x01\x7f", 'x');
  TERSE_EXPECT(rt, "[{:>20?}][{:<12?}]", text, "\u00e9\u65e5");
  TERSE_EXPECT(rt, "{:p}", static_cast<const void*>(&object));
  rt.check();
}

TEST_CASE("positional arguments may repeat and come in any order") {
  RoundTrip rt;
  TERSE_EXPECT(rt, "{1} {0}", "world", "hello");
  TERSE_EXPECT(rt, "{0}{1}{0}", 'a', 'b');
  TERSE_EXPECT(rt, "{2:>5} {0:x} {1:.2f} {0:#o} {2}", 255, 3.14159, "s");
  // fmt would accept "{1}" with two arguments; terse refuses an argument the
  // format never uses (tests/compile/too_many_args.cpp).
  rt.check();
}

TEST_CASE("dynamic width and precision take their values from arguments") {
  RoundTrip rt;
  TERSE_EXPECT(rt, "[{:{}}]", 42, 8);
  TERSE_EXPECT(rt, "[{:<{}}][{:>{}}]", "ab", 5, "cd", 6);
  TERSE_EXPECT(rt, "[{:.{}f}]", 3.14159265, 3);
  TERSE_EXPECT(rt, "[{:{}.{}}]", 2.718281828, 12, 4);
  TERSE_EXPECT(rt, "[{:{}.{}}]", "truncate me", 8, 3);
  TERSE_EXPECT(rt, "[{0:{1}.{2}f}][{0:{2}}]", 1.5, 10, 2);
  // Any integer type may carry a width or a precision.
  TERSE_EXPECT(rt, "[{:{}}][{:{}}][{:{}}][{:.{}f}]", 1, static_cast<unsigned char>(4), 2, static_cast<short>(5), 3,
               std::uint64_t{6}, 0.5, 2LL);
  TERSE_EXPECT(rt, "[{:*^{}}]", "mid", 9);
  rt.check();
}

TEST_CASE("{{ and }} print single braces") {
  RoundTrip rt;
  TERSE_EXPECT(rt, "{{}}");
  TERSE_EXPECT(rt, "{{{}}}", 5);
  TERSE_EXPECT(rt, "{{0}} {} }}{{ {{{{", "x");
  TERSE_EXPECT(rt, "json: {{\"key\": {}}}", 42);
  rt.check();
}

TEST_CASE("UTF-8 text is padded by display width, East Asian wide characters counting two") {
  RoundTrip rt;
  const char* japanese = "\u65e5\u672c\u8a9e";  // 日本語
  const char* accented = "\u00e9";              // é
  const std::string mixed = "a\u65e5b\u00e9";
  TERSE_EXPECT(rt, "[{:10}][{:>10}][{:^10}]", japanese, japanese, japanese);
  TERSE_EXPECT(rt, "[{:^7}][{:>3}][{:*<4}]", accented, accented, accented);
  TERSE_EXPECT(rt, "[{:8}][{:.2}][{:6.3}]", mixed, mixed, japanese);
  TERSE_EXPECT(rt, "{} \u2192 {}", "\U0001F600", "\u00fc\u00f1\u00ee\u00e7\u00f8d\u00e9");
  TERSE_EXPECT(rt, "[{:12}]", "\U0001F600\U0001F389");
  rt.check();
}

TEST_CASE("a message without arguments prints its text") {
  RoundTrip rt;
  TERSE_EXPECT(rt, "no arguments at all");
  TERSE_EXPECT(rt, "");
  TERSE_EXPECT(rt, "only {{escapes}}");
  rt.check();
}

TEST_CASE("a message with twenty arguments of mixed types prints them all") {
  RoundTrip rt;
  const std::string s = "str";
  TERSE_EXPECT(rt, "{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}", 1, 2u, -3L, 4ULL, 5.5, 6.5f, 'x',
               true, "lit", s, std::string_view("sv"), static_cast<short>(-12), static_cast<unsigned char>(13),
               static_cast<std::int8_t>(-14), 15.25L, nullptr, false, 18, "nineteen", 20.0);
  TERSE_EXPECT(rt, "{19}{18}{17}{16}{15}{14}{13}{12}{11}{10}{9}{8}{7}{6}{5}{4}{3}{2}{1}{0}", 0, 1, 2, 3, 4, 5, 6, 7, 8,
               9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19);
  rt.check();
}

TEST_CASE("messages of 4 KiB and 64 KiB arrive whole") {
  RoundTrip rt;
  std::string four_k(4096, '\0');
  for (std::size_t i = 0; i < four_k.size(); ++i) four_k[i] = static_cast<char>('a' + i % 26);
  const std::string sixty_four_k(65536, 'z');
  TERSE_EXPECT(rt, "{}", four_k);
  TERSE_EXPECT(rt, "<{}|{}>", sixty_four_k, 7);
  TERSE_EXPECT(rt, "[{:>60000}]", "w");  // width makes the message large, not the record
  rt.check();
}
