// FORMAT.md §8.1 "Rendering": a structured argument must print exactly as
// fmt 9.1 prints the C++ value it came from. Each check hands the same value
// to the decoder (through a hand-built .tlog) and to fmt, and compares.
#include <fmt/chrono.h>
#include <fmt/ranges.h>
#include <fmt/std.h>
#include <catch2/catch.hpp>
#include <ctime>
#include <type_traits>

#include <terse/portable_libc.hpp>

#include "tlog_builder.hpp"

using namespace terse::test;
using namespace std::chrono_literals;
using namespace std::string_literals;

namespace {

std::string describe(const Decoded& d) {
  std::string out;
  for (const auto& p : d.problems) out += "problem: " + p + "\n";
  for (const auto& e : d.errors) out += "render error: " + e + "\n";
  return out;
}

// The message of one record of a site with `format` and these arguments.
template <typename... Ts>
std::string render(std::string_view format, const Ts&... values) {
  EncodedArgs args = encode_args(values...);
  TlogBuilder file;
  file.site(1, format, args);
  file.record(1, args.args);
  Decoded d = decode(file.finish());
  INFO(describe(d));
  REQUIRE(d.problems.empty());
  REQUIRE(d.messages.size() == 1);
  return d.messages[0];
}

template <typename... Ts>
std::string with_fmt(std::string_view format, const Ts&... values) {
  return fmt::format(fmt::runtime(format), values...);
}

template <typename... Ts>
bool renders_raw(std::string_view format, const Ts&... values) {
  EncodedArgs args = encode_args(values...);
  TlogBuilder file;
  file.site(1, format, args);
  file.record(1, args.args);
  Decoded d = decode(file.finish());
  return d.messages.size() == 1 && !d.formatted[0] && d.messages[0].rfind("<unformattable> ", 0) == 0;
}

}  // namespace

#define CHECK_LIKE_FMT(format, ...) CHECK(render(format, __VA_ARGS__) == with_fmt(format, __VA_ARGS__))

TEST_CASE("sequences print as std::vector does, strings quoted one level deep") {
  std::vector<std::string> strings{"a", "b\n", "tab\there", "quote\"", "\x01"};
  std::vector<std::vector<std::string>> nested{{"a", "b\n"}, {"c"}, {}};
  CHECK_LIKE_FMT("{}", std::vector<int>{1, -2, 3});
  CHECK_LIKE_FMT("{}", std::vector<int>{});
  CHECK_LIKE_FMT("{}", strings);
  CHECK_LIKE_FMT("{}", nested);
  CHECK_LIKE_FMT("{}", std::vector<std::vector<std::vector<int>>>{{{1}, {2, 3}}, {}});
  CHECK_LIKE_FMT("{}", std::vector<char>{'a', '\n', '\'', '"'});
  CHECK_LIKE_FMT("{}", std::vector<bool>{true, false});
  CHECK_LIKE_FMT("{}", std::vector<float>{0.1f, 1e-7f, 3.0f});
  CHECK_LIKE_FMT("{}", std::vector<double>{0.1, 1e300, -0.0});
  CHECK_LIKE_FMT("{}", std::vector<long double>{1.5L, 0.1L});
  CHECK_LIKE_FMT("{}", std::vector<signed char>{1, -2});
  CHECK_LIKE_FMT("{}", std::vector<unsigned char>{1, 200});
  CHECK_LIKE_FMT("{}", std::vector<std::int16_t>{-300, 300});
  CHECK_LIKE_FMT("{}", std::vector<std::uint64_t>{0, UINT64_MAX});
  CHECK_LIKE_FMT("{}", std::vector<std::int64_t>{INT64_MIN});
  CHECK_LIKE_FMT("{}", std::vector<const void*>{nullptr, reinterpret_cast<const void*>(0x1234)});
  CHECK_LIKE_FMT("{}", std::vector<const char*>{"x", "y"});
  CHECK_LIKE_FMT("{}", std::list<std::string_view>{"p", "q"});
  CHECK_LIKE_FMT("{} {} {}", 42, std::vector<int>{1}, "tail"s);
}

TEST_CASE("range specs: n, element specs, nested element specs, dynamic widths") {
  std::vector<std::string> strings{"a", "b\n"};
  std::vector<std::vector<std::string>> nested{{"a", "b\n"}, {"c"}};
  CHECK_LIKE_FMT("{::x}", std::vector<int>{10, 255});
  CHECK_LIKE_FMT("{::#06x}", std::vector<unsigned>{10, 255});
  CHECK_LIKE_FMT("{:n}", strings);
  CHECK_LIKE_FMT("{:n:}", strings);
  CHECK_LIKE_FMT("{::}", strings);
  CHECK_LIKE_FMT("{::>5}", strings);
  CHECK_LIKE_FMT("{::?}", strings);
  CHECK_LIKE_FMT("{::}", nested);
  CHECK_LIKE_FMT("{:::>5}", nested);
  CHECK_LIKE_FMT("{:n:n}", nested);
  CHECK_LIKE_FMT("{:n:n:}", nested);
  CHECK_LIKE_FMT("{::d}", std::vector<char>{'a', '\n'});
  CHECK_LIKE_FMT("{::.2f}", std::vector<double>{1.0 / 3, 2.5});
  CHECK_LIKE_FMT("{::e}", std::vector<float>{0.1f});
  CHECK_LIKE_FMT("{::{}} {}", std::vector<int>{10, 255}, 5, "after");
  CHECK_LIKE_FMT("{0::{1}} {2}", std::vector<int>{10, 255}, 6, "after");
  CHECK_LIKE_FMT("{::*^{}.{}f}", std::vector<double>{3.14159}, 9, 2);
}

TEST_CASE("maps and sets print as std::map and std::set do") {
  CHECK_LIKE_FMT("{}", std::map<std::string, int>{{"a", 1}, {"b\n", 2}});
  CHECK_LIKE_FMT("{}", std::map<int, std::vector<std::string>>{{1, {"a"}}, {2, {}}});
  CHECK_LIKE_FMT("{}", std::map<std::string, std::map<std::string, int>>{{"a", {{"b", 1}}}});
  CHECK_LIKE_FMT("{}", std::map<char, double>{{'x', 0.5}});
  CHECK_LIKE_FMT("{:n}", std::map<std::string, int>{{"a", 1}, {"b", 2}});
  CHECK_LIKE_FMT("{::}", std::map<std::string, int>{{"a", 1}});
  CHECK_LIKE_FMT("{}", std::map<int, int>{});
  CHECK_LIKE_FMT("{}", std::set<int>{1, 2});
  CHECK_LIKE_FMT("{}", std::set<std::string>{"x", "y"});
  CHECK_LIKE_FMT("{}", std::set<std::vector<std::string>>{{"a"}});
  CHECK_LIKE_FMT("{::x}", std::set<int>{255});
  CHECK_LIKE_FMT("{}", std::vector<std::map<std::string, int>>{{{"b", 1}}});
  CHECK(renders_raw("{::x}", std::map<std::string, int>{{"a", 1}}));
}

TEST_CASE("tuples and pairs quote their strings and chars, not their ranges' strings") {
  CHECK_LIKE_FMT("{}", std::make_tuple(1, "x"s, 'c', 2.5, std::vector<std::string>{"q"}));
  CHECK_LIKE_FMT("{}", std::make_pair(1, "x"s));
  CHECK_LIKE_FMT("{}", std::make_tuple(true, 0.1f, std::uint8_t{7}, std::int64_t{-1}));
  CHECK_LIKE_FMT("{}", std::tuple<std::tuple<std::string>>{{"a"}});
  CHECK_LIKE_FMT("{}", std::tuple<>{});
  CHECK_LIKE_FMT("{}", std::vector<std::tuple<std::string, int>>{{"a", 1}});
  CHECK_LIKE_FMT("{}", std::vector<std::pair<std::string, char>>{{"b", 'z'}});
  CHECK_LIKE_FMT("{}", std::tuple<std::map<std::string, int>>{{{"k", 1}}});
  CHECK_LIKE_FMT("{:}", std::make_tuple(1));
  CHECK(renders_raw("{:x}", std::make_tuple(1)));
}

TEST_CASE("variants and monostate print as fmt/std.h does") {
  CHECK_LIKE_FMT("{}", std::variant<int, std::string>("s"));
  CHECK_LIKE_FMT("{}", std::variant<int, std::string>(4));
  CHECK_LIKE_FMT("{}", std::variant<std::monostate, int>());
  CHECK_LIKE_FMT("{}", std::variant<char, int>('c'));
  CHECK_LIKE_FMT("{}", std::variant<std::vector<std::string>, int>(std::vector<std::string>{"a"}));
  CHECK_LIKE_FMT("{}", std::vector<std::variant<int, std::string>>{1, "x"s});
  CHECK_LIKE_FMT("{}", std::monostate());
  CHECK_LIKE_FMT("{}", std::make_tuple(std::variant<double, bool>(true)));
  CHECK(renders_raw("{:>4}", std::monostate()));
}

TEST_CASE("a valueless variant prints as fmt 10 prints it") {
  EncodedArgs args;
  add_arg(args, RawStructured{expr::variant({expr::scalar(TypeTag::i32)}), std::string(1, '\xFF')});
  TlogBuilder file;
  file.site(1, "{}", args);
  file.record(1, args.args);
  Decoded d = decode(file.finish());
  REQUIRE(d.messages.size() == 1);
  CHECK(d.messages[0] == "variant(valueless by exception)");
}

TEST_CASE("durations print as fmt/chrono.h does, with their specs") {
  CHECK_LIKE_FMT("{}", 42ms);
  CHECK_LIKE_FMT("{}", std::chrono::duration<double>(1.5));
  CHECK_LIKE_FMT("{}", std::chrono::duration<double>(1234567.0));
  CHECK_LIKE_FMT("{}", std::chrono::duration<int, std::ratio<5, 7>>(5));
  CHECK_LIKE_FMT("{}", std::chrono::duration<std::int64_t, std::ratio<86400 * 7>>(3));
  CHECK_LIKE_FMT("{}", std::chrono::duration<double, std::ratio<1, 3>>(0.5));
  CHECK_LIKE_FMT("{}", std::chrono::minutes(5));
  CHECK_LIKE_FMT("{}", std::chrono::hours(-5));
  CHECK_LIKE_FMT("{}", std::chrono::days(5));
  CHECK_LIKE_FMT("{}", std::chrono::nanoseconds(7));
  CHECK_LIKE_FMT("{}", std::chrono::microseconds(7));
  CHECK_LIKE_FMT("{}", std::chrono::duration<float, std::milli>(1.25f));
  CHECK_LIKE_FMT("{}", std::chrono::duration<float>(0.1f));
  CHECK_LIKE_FMT("{}", std::chrono::duration<std::uint8_t, std::centi>(200));
  CHECK_LIKE_FMT("{}", std::chrono::duration<std::int16_t, std::kilo>(-3));
  CHECK_LIKE_FMT("{:%H:%M:%S}", std::chrono::seconds(3725));
  CHECK_LIKE_FMT("{:%H:%M:%S}", std::chrono::milliseconds(3725123));
  CHECK_LIKE_FMT("{:%H:%M:%S}", std::chrono::duration<unsigned long long, std::milli>(3725123));
  CHECK_LIKE_FMT("{:%H:%M}", std::chrono::minutes(125));
  CHECK_LIKE_FMT("{:%Q %q}", 42ms);
  CHECK_LIKE_FMT("{:>10}", 42ms);
  CHECK_LIKE_FMT("{:*<{}}", 42ms, 8);
  CHECK_LIKE_FMT("{:.2}", std::chrono::duration<double>(1.2345));
  CHECK_LIKE_FMT("{:>12}", std::chrono::duration<int, std::ratio<5, 7>>(5));
  CHECK_LIKE_FMT("{}", std::vector<std::chrono::milliseconds>{1ms, 2ms});
  CHECK_LIKE_FMT("{::%S}", std::vector<std::chrono::milliseconds>{1001ms});
  CHECK_LIKE_FMT("{}", std::make_tuple(1s, "x"s));
  // No C++ type can be rebuilt for an odd period: its chrono specs are refused.
  CHECK(renders_raw("{:%Q}", std::chrono::duration<int, std::ratio<5, 7>>(5)));
  CHECK(renders_raw("{:.2}", 42ms));
}

TEST_CASE("system-clock time points print in local time to the second") {
  using std::chrono::sys_seconds;
  using std::chrono::sys_time;
  CHECK_LIKE_FMT("{}", sys_seconds(std::chrono::seconds(1700000000)));
  CHECK_LIKE_FMT("{}", sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(1700000000123)));
  // fmt 9.1 formats a system-clock time point only where it converts to the clock's own
  // duration: nanoseconds in libstdc++, microseconds in libc++.
  auto check_where_fmt_formats = [](auto time_point) {
    if constexpr (std::is_convertible_v<decltype(time_point), std::chrono::system_clock::time_point>) {
      CHECK_LIKE_FMT("{}", time_point);
    }
  };
  check_where_fmt_formats(sys_time<std::chrono::nanoseconds>(std::chrono::nanoseconds(1700000000999999999)));
#ifdef _WIN32
  // fmt cannot format a local time before 1970 on Windows, whose C library has none; terse
  // prints it with the zone's offset at the epoch (terse::local_calendar).
  std::tm before_epoch{};
  REQUIRE(terse::local_calendar(-1, before_epoch));
  CHECK(render("{}", sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(-1500))) ==
        fmt::format("{:%Y-%m-%d %H:%M:%S}", before_epoch));
#else
  CHECK_LIKE_FMT("{}", sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(-1500)));
#endif
  CHECK_LIKE_FMT("{}", sys_time<std::chrono::minutes>(std::chrono::minutes(28333333)));
  CHECK_LIKE_FMT("{:%H:%M}", sys_seconds(std::chrono::seconds(1700000000)));
  CHECK_LIKE_FMT("{:%Y-%m-%d %H:%M:%S}", sys_seconds(std::chrono::seconds(1700000000)));
  CHECK_LIKE_FMT("{}", std::vector<sys_seconds>{sys_seconds(std::chrono::seconds(1))});
  CHECK_LIKE_FMT("{::%H}", std::vector<sys_seconds>{sys_seconds(std::chrono::seconds(1))});
}

TEST_CASE("time points of other clocks print their time since the epoch") {
  auto steady = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(1234567));
  CHECK(render("{}", steady) == "1234567ns");
  CHECK(render("{:%S}", steady) == fmt::format("{:%S}", std::chrono::nanoseconds(1234567)));
}

TEST_CASE("paths print quoted and escaped, with the string spec on the quoted text") {
  std::filesystem::path p("/tmp/a\"b\n");
  CHECK_LIKE_FMT("{}", p);
  CHECK_LIKE_FMT("{:>20}", std::filesystem::path("/tmp/a"));
  CHECK_LIKE_FMT("{:.3}", std::filesystem::path("/tmp/a"));
  CHECK_LIKE_FMT("{:?}", std::filesystem::path("/tmp/a"));
  // fmt 9.1 quotes a path in a range twice: its formatter has the string
  // formatter's set_debug_format.
  CHECK_LIKE_FMT("{}", std::vector<std::filesystem::path>{"/tmp/a"});
  CHECK_LIKE_FMT("{}", std::make_tuple(std::filesystem::path("/tmp/a")));
  CHECK_LIKE_FMT("{}", std::variant<std::filesystem::path>(std::filesystem::path("/tmp/a")));
}

TEST_CASE("thread ids print their number, or what libstdc++ says for none") {
  CHECK_LIKE_FMT("{}", std::this_thread::get_id());
  CHECK_LIKE_FMT("{:<25}|", std::this_thread::get_id());
#ifdef _LIBCPP_VERSION
  // libc++ prints the id of no thread as "0"; terse spells it as libstdc++ does whichever
  // library wrote the file (FORMAT.md §8.1).
  CHECK(render("{}", std::thread::id()) == "thread::id of a non-executing thread");
  CHECK(render("{:>45}", std::thread::id()) == "         thread::id of a non-executing thread");
#else
  CHECK_LIKE_FMT("{}", std::thread::id());
  CHECK_LIKE_FMT("{:>45}", std::thread::id());
  CHECK_LIKE_FMT("{}", std::vector<std::thread::id>{std::thread::id(), std::this_thread::get_id()});
#endif
}

TEST_CASE("error codes and optionals print as fmt 10 does") {
  CHECK(render("{}", std::make_error_code(std::errc::no_such_file_or_directory)) == "generic:2");
  CHECK(render("{}", std::error_code(5, std::system_category())) == "system:5");
  CHECK(render("{}", std::vector<std::error_code>{std::error_code()}) == "[system:0]");
  CHECK(renders_raw("{:>9}", std::error_code()));
  CHECK(render("{}", std::optional<std::string>("x")) == "optional(\"x\")");
  CHECK(render("{}", std::optional<int>()) == "none");
  CHECK(render("{}", std::optional<int>(3)) == "optional(3)");
  CHECK(render("{}", std::optional<std::vector<std::string>>({"a"})) == "optional([\"a\"])");
  CHECK(render("{}", std::vector<std::optional<char>>{'c', std::nullopt}) == "[optional('c'), none]");
  CHECK(render("{}", std::vector<std::optional<std::vector<std::string>>>{{{"a"}}}) == "[optional([\"a\"])]");
  CHECK(render("{}", std::make_tuple(std::optional<std::string>("x"))) == "(optional(\"x\"))");
  CHECK(renders_raw("{:>5}", std::optional<int>(3)));
}

TEST_CASE("aggregates print their fields like a tuple's, in braces, named or not") {
  std::string point_value;
  val::le(point_value, 1);
  val::le(point_value, 2.5);
  val::string(point_value, "x");
  auto fields = [](bool named) {
    return std::vector<std::pair<std::string, std::string>>{{named ? "id" : "", expr::scalar(TypeTag::i32)},
                                                            {named ? "ratio" : "", expr::scalar(TypeTag::f64)},
                                                            {named ? "name" : "", expr::scalar(TypeTag::string)}};
  };
  CHECK(render("{}", RawStructured{expr::aggregate("Point", fields(false)), point_value}) == "{1, 2.5, \"x\"}");
  CHECK(render("{}", RawStructured{expr::aggregate("Point", fields(true)), point_value}) ==
        "{id: 1, ratio: 2.5, name: \"x\"}");
  std::string two_points;
  val::count(two_points, 2, 2);
  two_points += point_value + point_value;
  CHECK(render("{}", RawStructured{expr::sequence(expr::aggregate("", fields(true))), two_points}) ==
        "[{id: 1, ratio: 2.5, name: \"x\"}, {id: 1, ratio: 2.5, name: \"x\"}]");
  CHECK(renders_raw("{:x}", RawStructured{expr::aggregate("Point", fields(false)), point_value}));
}

TEST_CASE("enums print the first name listed for their value, else the number") {
  std::string color = expr::enumeration(TypeTag::u8, "Color", {{0, "red"}, {7, "green"}, {7, "verde"}});
  auto one = [](std::uint8_t v) { return std::string(1, static_cast<char>(v)); };
  CHECK(render("{}", RawStructured{color, one(0)}) == "red");
  CHECK(render("{}", RawStructured{color, one(7)}) == "green");
  CHECK(render("{}", RawStructured{color, one(200)}) == "200");
  CHECK(render("[{:>6}]", RawStructured{color, one(0)}) == "[   red]");
  CHECK(render("[{:.2}]", RawStructured{color, one(7)}) == "[gr]");
  std::string seq;
  val::count(seq, 2, 2);
  seq += one(0) + one(7);
  CHECK(render("{}", RawStructured{expr::sequence(color), seq}) == "[red, green]");
  std::string wide = expr::enumeration(TypeTag::i64, "Big", {{-1, "minus_one"}, {INT64_MIN, "min"}});
  std::string minus_one, min, other;
  val::le(minus_one, std::int64_t{-1});
  val::le(min, INT64_MIN);
  val::le(other, std::int64_t{-2});
  CHECK(render("{}", RawStructured{wide, minus_one}) == "minus_one");
  CHECK(render("{}", RawStructured{wide, min}) == "min");
  CHECK(render("{}", RawStructured{wide, other}) == "-2");
  std::string unsigned_enum = expr::enumeration(TypeTag::u64, "U", {{-1, "max"}});
  std::string max;
  val::le(max, UINT64_MAX);
  CHECK(render("{}", RawStructured{unsigned_enum, max}) == "max");
}

TEST_CASE("user types print their format with their fields as arguments") {
  std::string money = expr::user(
      "Money", "{}.{:02} {}", {expr::scalar(TypeTag::i64), expr::scalar(TypeTag::u8), expr::scalar(TypeTag::string)});
  std::string value;
  val::le(value, std::int64_t{12});
  val::le(value, std::uint8_t{5});
  val::string(value, "EUR");
  CHECK(render("{}", RawStructured{money, value}) == "12.05 EUR");
  CHECK(render("[{:>12}]", RawStructured{money, value}) == "[   12.05 EUR]");
  std::string with_range =
      expr::user("Tagged", "{}={}", {expr::scalar(TypeTag::string), expr::sequence(expr::scalar(TypeTag::string))});
  std::string tagged;
  val::string(tagged, "k");
  val::count(tagged, 1, 1);
  val::string(tagged, "v");
  CHECK(render("{}", RawStructured{with_range, tagged}) == fmt::format("{}={}", "k", std::vector<std::string>{"v"}));
  std::string seq;
  val::count(seq, 1, 1);
  seq += value;
  CHECK(render("{}", RawStructured{expr::sequence(money), seq}) == "[12.05 EUR]");
}

TEST_CASE("private values print as omitted, hashed, or as the value itself") {
  std::string type = expr::secret(expr::scalar(TypeTag::string));
  std::string omitted(1, '\0');
  std::string hashed(1, '\1');
  val::le(hashed, std::uint64_t{0x3f9a1c0123456789});
  std::string clear(1, '\2');
  val::string(clear, "alice");
  CHECK(render("{}", RawStructured{type, omitted}) == "<private>");
  CHECK(render("{}", RawStructured{type, hashed}) == "<private:3f9a1c>");
  CHECK(render("{}", RawStructured{type, clear}) == "alice");
  CHECK(render("[{:>10}]", RawStructured{type, omitted}) == "[ <private>]");
  CHECK(render("[{:>7}]", RawStructured{type, clear}) == "[  alice]");
  std::string seq;
  val::count(seq, 3, 3);
  seq += omitted + hashed + clear;
  CHECK(render("{}", RawStructured{expr::sequence(type), seq}) == "[<private>, <private:3f9a1c>, \"alice\"]");
}

TEST_CASE("preformatted text prints as it is") {
  std::string text;
  val::string(text, "already \"formatted\"\n");
  CHECK(render("{}", RawStructured{expr::preformatted(), text}) == "already \"formatted\"\n");
  CHECK(render("{:.7}", RawStructured{expr::preformatted(), text}) == "already");
}

TEST_CASE("bitsets print as std::bitset::to_string(), bit N-1 first") {
  std::bitset<10> bits(0b1000000101);
  std::bitset<70> wide;
  wide.set(0).set(8).set(69);
  CHECK(render("{}", bits) == bits.to_string());
  CHECK(render("{}", wide) == wide.to_string());
  CHECK(render("{}", std::bitset<8>(0x80)) == "10000000");
  CHECK(render("{}", std::bitset<1>(1)) == "1");
  CHECK(render("[{}]", std::bitset<0>()) == "[]");
  CHECK(render("{}", std::vector<std::bitset<4>>{5, 12}) == "[0101, 1100]");
  CHECK(render("{::>6}", std::vector<std::bitset<4>>{5, 12}) == "[  0101,   1100]");
  CHECK(render("{}", std::tuple<int, std::bitset<3>>{1, 5}) == "(1, 101)");
}

TEST_CASE("bitset specs take a string's fill, align and width, nothing else") {
  std::bitset<10> bits(0b1000000101);
  for (const char* format : {"{:14}", "{:>14}", "{:^14}", "{:*<14}", "{:·>13}", "{:3}"})
    CHECK(render(format, bits) == with_fmt(format, bits.to_string()));
  for (const char* format : {"{:{}}", "{:>{}}", "{0:_^{1}}"})
    CHECK(render(format, bits, 13) == with_fmt(format, bits.to_string(), 13));
  CHECK(renders_raw("{:.3}", bits));
  CHECK(renders_raw("{:s}", bits));
  CHECK(renders_raw("{:>12b}", bits));
  CHECK(renders_raw("{:+}", bits));
  CHECK(renders_raw("{:#}", bits));
}

TEST_CASE("truncated containers show what was kept and their real size") {
  std::string ints;
  val::count(ints, 3, 1000);
  for (int i = 1; i <= 3; ++i) val::le(ints, i);
  CHECK(render("{}", RawStructured{expr::sequence(expr::scalar(TypeTag::i32)), ints}) == "[1, 2, 3, ... 1000 total]");
  CHECK(render("{:n}", RawStructured{expr::sequence(expr::scalar(TypeTag::i32)), ints}) == "1, 2, 3, ... 1000 total");
  std::string empty;
  val::count(empty, 0, 5);
  CHECK(render("{}", RawStructured{expr::set(expr::scalar(TypeTag::i32)), empty}) == "{... 5 total}");
  std::string map;
  val::count(map, 1, 2);
  val::string(map, "a");
  val::le(map, 1);
  CHECK(render("{}", RawStructured{expr::map(expr::scalar(TypeTag::string), expr::scalar(TypeTag::i32)), map}) ==
        "{\"a\": 1, ... 2 total}");
}

TEST_CASE("named arguments work by name and by position") {
  EncodedArgs args = encode_args("alice"s, std::vector<std::string>{"10.0.0.1"}, 7);
  TlogBuilder file;
  file.site(1, "login {user} from {ips} ({0}, {2}, {ips::>9})", args, std::vector<std::string>{"user", "ips", ""});
  file.record(1, args.args);
  Decoded d = decode(file.finish());
  INFO(describe(d));
  REQUIRE(d.problems.empty());
  REQUIRE(d.messages.size() == 1);
  CHECK(d.messages[0] == fmt::format(fmt::runtime("login {user} from {ips} ({0}, {2}, {ips::>9})"),
                                     fmt::arg("user", "alice"), fmt::arg("ips", std::vector<std::string>{"10.0.0.1"}),
                                     7));
  TlogBuilder automatic;
  EncodedArgs two = encode_args(1, 5);
  automatic.site(1, "{:{w}} {}", two, std::vector<std::string>{"", "w"});
  automatic.record(1, two.args);
  Decoded a = decode(automatic.finish());
  REQUIRE(a.messages.size() == 1);
  CHECK(a.messages[0] == fmt::format(fmt::runtime("{:{w}} {}"), 1, fmt::arg("w", 5)));
}

TEST_CASE("specs a structured value's formatter refuses make the record print raw") {
  CHECK(renders_raw("{:x}", std::vector<int>{1}));
  CHECK(renders_raw("{:>5}", std::vector<int>{1}));
  CHECK(renders_raw("{:%Q}", std::filesystem::path("/")));
  CHECK(renders_raw("{::%H}", std::vector<int>{1}));
  EncodedArgs args = encode_args(std::vector<std::string>{"a", "b"}, std::map<int, int>{{1, 2}});
  TlogBuilder file;
  file.site(1, "{:x} {}", args);
  file.record(1, args.args);
  Decoded d = decode(file.finish());
  REQUIRE(d.messages.size() == 1);
  CHECK(d.messages[0] == "<unformattable> {:x} {} | [\"a\", \"b\"] | {1: 2}");
}

TEST_CASE("records of one site carry their scalar deltas past structured arguments") {
  TlogBuilder file;
  EncodedArgs first = encode_args(1, std::vector<std::string>{"a"}, 2.5);
  file.site(1, "{} {} {}", first);
  std::vector<std::string> expected;
  for (int i = 0; i < 5; ++i) {
    EncodedArgs e = encode_args(i * 3, std::vector<std::string>(static_cast<std::size_t>(i), "x"), i * 0.5);
    file.record(1, e.args);
    expected.push_back(
        fmt::format("{} {} {}", i * 3, std::vector<std::string>(static_cast<std::size_t>(i), "x"), i * 0.5));
  }
  Decoded d = decode(file.finish());
  INFO(describe(d));
  CHECK(d.problems.empty());
  CHECK(d.messages == expected);
}
