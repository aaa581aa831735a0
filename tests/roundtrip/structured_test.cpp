// Structured arguments (FORMAT.md §8.1) through the public API and the real
// decoder: where fmt 9 formats a type, the decoded text must be exactly
// fmt::format's; where it cannot, the rendering FORMAT.md documents.
#include <array>
#include <chrono>
#include <deque>
#include <filesystem>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/std.h>  // the expectations: fmt::format of paths, variants, thread ids
#include <terse/aggregate.hpp>
#include <terse/std.hpp>

#include "roundtrip.hpp"

using namespace terse::test;
using namespace std::chrono_literals;

namespace shop {

enum class Color { red, green, blue };
enum Plain : unsigned char { low = 1, high = 200 };
enum class Sparse : int { minus = -5, big = 250 };

struct Point {
  int x;
  double y;
  std::string label;
};

struct Order {
  int id;
  Point at;
  std::vector<int> items;
  Color color;
  std::optional<std::string> note;
};

// Not an aggregate: only listed members are logged.
class Account {
 public:
  Account(long account_id, std::string account_owner) : id(account_id), owner(std::move(account_owner)) {}
  long id;
  std::string owner;

 private:
  [[maybe_unused]] int secret_ = 42;
};

struct Money {
  long cents;
  std::string currency;
};

struct Celsius {
  double degrees;
};

}  // namespace shop

TERSE_FIELDS(shop::Order, id, at, items, color, note);
TERSE_FIELDS(shop::Account, id, owner);

template <>
struct terse::codec<shop::Money> {
  static constexpr std::string_view format = "{}.{:02} {}";
  static auto fields(const shop::Money& m) { return std::tuple(m.cents / 100, m.cents % 100, m.currency); }
};

template <>
struct fmt::formatter<shop::Celsius> : fmt::formatter<double> {
  auto format(const shop::Celsius& c, fmt::format_context& ctx) const {
    auto out = fmt::formatter<double>::format(c.degrees, ctx);
    return fmt::format_to(out, " °C");
  }
};
template <>
inline constexpr bool terse::format_eagerly<shop::Celsius> = true;

// For types fmt 9 cannot format: what FORMAT.md §8.1 says terse prints.
#define TERSE_EXPECT_TEXT(rt, text, ...) \
  do {                                   \
    TERSE_INFO(__VA_ARGS__);             \
    (rt).expected.push_back(text);       \
  } while (false)

TEST_CASE("sequences print as fmt prints them, specs included") {
  RoundTrip rt;
  std::vector<int> ints{1, -2, 300};
  std::vector<std::string> words{"a", "b\n", "quote\"d"};
  std::vector<char> chars{'x', '\t'};
  std::vector<double> reals{1.5, 0.1, -0.0};
  std::vector<float> floats{0.1f, 3.25f};
  std::vector<bool> flags{true, false};
  std::vector<std::vector<std::string>> nested{{"a", "b"}, {}, {"c"}};
  std::array<unsigned char, 3> bytes{1, 2, 255};
  std::list<long long> list{-1, 1LL << 40};
  std::deque<std::string_view> views{"p", "q"};
  int c_array[3] = {7, 8, 9};
  std::vector<const char*> c_strings{"one", "two"};
  std::vector<int> empty;
  TERSE_EXPECT(rt, "{} {} {}", ints, words, chars);
  TERSE_EXPECT(rt, "{} {} {}", reals, floats, flags);
  TERSE_EXPECT(rt, "{} {} {} {}", nested, bytes, list, views);
  TERSE_EXPECT(rt, "{} {} {} {}", c_array, std::span<const int>(c_array), c_strings, empty);
  TERSE_EXPECT(rt, "{::x} {:n} {:n:#06x} {::>4}", ints, ints, ints, words);
  rt.check();
}

TEST_CASE("maps, sets, pairs and tuples print as fmt prints them") {
  RoundTrip rt;
  std::map<std::string, int> by_name{{"a", 1}, {"b", 2}};
  std::map<int, std::vector<std::string>> lists{{1, {"x", "y"}}};
  std::unordered_map<int, char> one{{5, 'c'}};
  std::set<std::string> names{"ann", "bob"};
  std::unordered_set<int> single{4};
  std::pair<int, std::string> pair{1, "p"};
  std::tuple<int, char, std::string, double, bool> tuple{1, 'c', "s", 2.5, true};
  std::vector<std::pair<int, std::string>> pairs{{1, "a"}, {2, "b"}};
  std::tuple<> nothing;
  TERSE_EXPECT(rt, "{} {} {}", by_name, lists, one);
  TERSE_EXPECT(rt, "{} {}", names, single);
  TERSE_EXPECT(rt, "{} {} {} {}", pair, tuple, pairs, nothing);
  TERSE_EXPECT(rt, "{}", std::map<std::string, std::map<int, bool>>{{"k", {{1, true}}}});
  rt.check();
}

TEST_CASE("variants, paths, thread ids and chrono types print as fmt prints them") {
  RoundTrip rt;
  std::variant<int, std::string> text = std::string("s");
  std::variant<int, std::string> number = 7;
  std::variant<std::monostate, double> none;
  std::vector<std::variant<int, char>> mixed{1, 'z'};
  TERSE_EXPECT(rt, "{} {} {} {}", text, number, none, mixed);
  std::filesystem::path path("/var/log/a b/\"q\".tlog");
  TERSE_EXPECT(rt, "{} [{:>30}] [{:<12}]", path, path, std::filesystem::path("x"));
  // Beyond ASCII: Windows keeps a path in UTF-16, which the file stores (and fmt prints) as UTF-8.
  TERSE_EXPECT(rt, "{}", std::filesystem::path(u8"caf\u00e9/\U0001F600 log.tlog"));
#ifdef _LIBCPP_VERSION
  // libc++ prints the id of no thread as "0"; terse spells it as libstdc++ does whichever
  // library wrote the file (FORMAT.md §8.1).
  TERSE_INFO("{} {}", std::this_thread::get_id(), std::thread::id());
  rt.expected.push_back(fmt::format("{} thread::id of a non-executing thread", std::this_thread::get_id()));
#else
  TERSE_EXPECT(rt, "{} {}", std::this_thread::get_id(), std::thread::id());
#endif
  TERSE_EXPECT(rt, "{} {} {} {} {}", 42ms, 1500us, 3s, 5min, 2h);
  TERSE_EXPECT(rt, "{} {} {}", std::chrono::duration<double>(1.5), std::chrono::duration<float, std::milli>(0.1f),
               std::chrono::duration<int, std::ratio<3, 7>>(5));
  TERSE_EXPECT(rt, "{:%H:%M:%S} {:%Q %q} [{:>10}]", 3725s, 42ms, 7ns);
  TERSE_EXPECT(rt, "{}", std::vector<std::chrono::milliseconds>{1ms, 2ms});
  auto when = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  TERSE_EXPECT(rt, "{} {:%Y/%m/%d}", when, when);
  rt.check();
}

TEST_CASE("aggregates print their fields, with names when TERSE_FIELDS gives them") {
  RoundTrip rt;
  shop::Point point{1, 2.5, "x"};
  TERSE_EXPECT_TEXT(rt, R"({1, 2.5, "x"})", "{}", point);
  shop::Order order{7, {1, 2.5, "x"}, {4, 5}, shop::Color::green, std::nullopt};
  TERSE_EXPECT_TEXT(rt, R"({id: 7, at: {1, 2.5, "x"}, items: [4, 5], color: green, note: none})", "{}", order);
  order.note = "gift";
  TERSE_EXPECT_TEXT(rt, R"(order {id: 7, at: {1, 2.5, "x"}, items: [4, 5], color: green, note: optional("gift")})",
                    "order {}", order);
  TERSE_EXPECT_TEXT(rt, R"({id: 12, owner: "ann"})", "{}", shop::Account(12, "ann"));
  std::vector<shop::Point> points{{1, 0.5, "a"}, {2, 1.5, "b"}};
  TERSE_EXPECT_TEXT(rt, R"([{1, 0.5, "a"}, {2, 1.5, "b"}])", "{}", points);
  rt.check();
}

TEST_CASE("enums print their enumerator names, or the number without one") {
  RoundTrip rt;
  TERSE_EXPECT_TEXT(rt, "red blue", "{} {}", shop::Color::red, shop::Color::blue);
  TERSE_EXPECT_TEXT(rt, "low high 7", "{} {} {}", shop::low, shop::high, static_cast<shop::Plain>(7));
  TERSE_EXPECT_TEXT(rt, "minus big 3", "{} {} {}", shop::Sparse::minus, shop::Sparse::big,
                    static_cast<shop::Sparse>(3));
  TERSE_EXPECT_TEXT(rt, "[   green] [red  ]", "[{:>8}] [{:<5}]", shop::Color::green, shop::Color::red);
  TERSE_EXPECT_TEXT(rt, "[red, blue]", "{}", std::vector<shop::Color>{shop::Color::red, shop::Color::blue});
  rt.check();
}

TEST_CASE("optionals and error codes print as fmt 10 does") {
  RoundTrip rt;
  TERSE_EXPECT_TEXT(rt, R"(optional(3) none optional("s"))", "{} {} {}", std::optional<int>(3), std::optional<int>(),
                    std::optional<std::string>("s"));
  auto missing = std::make_error_code(std::errc::no_such_file_or_directory);
  TERSE_EXPECT_TEXT(rt, "generic:2 system:0", "{} {}", missing, std::error_code());
  rt.check();
}

TEST_CASE("user types log through a codec or, when asked, formatted on the calling thread") {
  RoundTrip rt;
  TERSE_EXPECT_TEXT(rt, "price 12.50 EUR", "price {}", shop::Money{1250, "EUR"});
  TERSE_EXPECT_TEXT(rt, "[   12.50 EUR]", "[{:>12}]", shop::Money{1250, "EUR"});
  TERSE_EXPECT_TEXT(rt, "[1.05 USD, 0.99 GBP]", "{}", std::vector<shop::Money>{{105, "USD"}, {99, "GBP"}});
  TERSE_EXPECT(rt, "outside {}", shop::Celsius{21.5});
  // The type's formatter runs with an empty spec; the message's spec then
  // applies to its text (fmt would hand the spec to the formatter instead).
  TERSE_EXPECT_TEXT(rt, "[     -4 °C]", "[{:>10}]", shop::Celsius{-4});
  TERSE_EXPECT_TEXT(rt, "[21.5 °C, -3 °C]", "{}", std::vector<shop::Celsius>{{21.5}, {-3}});
  rt.check();
}

TEST_CASE("named arguments render as fmt renders them") {
  RoundTrip rt;
  std::string ip = "10.0.0.1";
  TERSE_EXPECT(rt, "login {user} from {ip}", fmt::arg("user", "bob"), fmt::arg("ip", ip));
  TERSE_EXPECT(rt, "{0} {user:>6} {1}", fmt::arg("user", 7), std::vector<int>{1});
  TERSE_EXPECT(rt, "{n} items: {list}", fmt::arg("n", 2), fmt::arg("list", std::vector<std::string>{"a", "b"}));
  rt.check();
}

TEST_CASE("containers over the bound are cut with a marker") {
  RoundTrip rt([](terse::Config& config) { config.max_container_elements = 3; });
  std::vector<int> many{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  TERSE_EXPECT_TEXT(rt, "[1, 2, 3, ... 10 total]", "{}", many);
  std::vector<int> few{1, 2, 3};
  TERSE_EXPECT(rt, "{}", few);
  std::map<int, int> wide{{1, 1}, {2, 2}, {3, 3}, {4, 4}};
  TERSE_EXPECT_TEXT(rt, "{1: 1, 2: 2, 3: 3, ... 4 total}", "{}", wide);
  rt.check();
}

TEST_CASE("a structured value larger than the thread's buffer keeps its record") {
  RoundTrip rt([](terse::Config& config) { config.thread_buffer_bytes = 4096; });
  // A thread keeps the buffer it was given when it first logged: a new one
  // gets the small buffer.
  std::thread([] {
    std::vector<std::string> big(100, std::string(100, 'x'));
    TERSE_INFO("big {} end", big);
    TERSE_INFO("after");
  }).join();
  terse::stop();
  Decoded decoded = decode_dir(rt.dir().path());
  REQUIRE(decoded.lines.size() == 2);
  const std::string& message = decoded.lines[0].message;
  CHECK(message.rfind("big [\"", 0) == 0);
  CHECK(message.find("100 total] end") != std::string::npos);
  CHECK(message.size() < 4096);
  CHECK(decoded.lines[1].message == "after");
}

TEST_CASE("private values never reach the file unless asked") {
  TempDir dir;
  auto log_secrets = [&](terse::Config config) {
    terse::start(config);
    TERSE_INFO("token {} user {}", terse::secret(std::string("hunter2")), terse::secret(17));
    TERSE_INFO("token {}", terse::secret(std::string("hunter2")));
    TERSE_INFO("token {}", terse::secret(std::string("other")));
    terse::stop();
  };
  terse::Config omit = test_config(dir / "omit");
  log_secrets(omit);
  Decoded omitted = decode_dir(dir / "omit");
  REQUIRE(omitted.lines.size() == 3);
  CHECK(omitted.lines[0].message == "token <private> user <private>");
  for (const auto& file : log_files(dir / "omit")) CHECK(read_file(file).find("hunter2") == std::string::npos);

  terse::Config hash = test_config(dir / "hash");
  hash.private_values = terse::PrivateValues::hash;
  hash.private_key = "a key";
  log_secrets(hash);
  Decoded hashed = decode_dir(dir / "hash");
  REQUIRE(hashed.lines.size() == 3);
  const std::string& first = hashed.lines[0].message;
  REQUIRE(first.size() == std::string("token <private:123456> user <private:123456>").size());
  CHECK(first.rfind("token <private:", 0) == 0);
  // Equal values hash alike, different ones do not.
  CHECK(hashed.lines[1].message == first.substr(0, std::string("token <private:123456>").size()));
  CHECK(hashed.lines[2].message != hashed.lines[1].message);

  terse::Config clear = test_config(dir / "clear");
  clear.private_values = terse::PrivateValues::clear;
  log_secrets(clear);
  Decoded shown = decode_dir(dir / "clear");
  REQUIRE(shown.lines.size() == 3);
  CHECK(shown.lines[0].message == "token hunter2 user 17");

  // The process-wide switch applies to the next call.
  terse::start(test_config(dir / "switch"));
  TERSE_INFO("{}", terse::secret(1));
  terse::set_private_values(terse::PrivateValues::clear);
  TERSE_INFO("{}", terse::secret(2));
  terse::set_private_values(terse::PrivateValues::omit);
  TERSE_INFO("{}", terse::secret(3));
  terse::stop();
  Decoded switched = decode_dir(dir / "switch");
  REQUIRE(switched.lines.size() == 3);
  CHECK(switched.lines[0].message == "<private>");
  CHECK(switched.lines[1].message == "2");
  CHECK(switched.lines[2].message == "<private>");
}

TEST_CASE("a hash of private values needs a key") {
  TempDir dir;
  terse::Config config = test_config(dir.path());
  config.private_values = terse::PrivateValues::hash;
  CHECK_THROWS_AS(terse::start(config), terse::Error);
  config.private_values = terse::PrivateValues::omit;
  config.max_container_elements = 0;
  CHECK_THROWS_AS(terse::start(config), terse::Error);
}
