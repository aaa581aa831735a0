// Writes a directory of logs for the Python reader's tests
// (tests/python/test_reader.py): a wide variety of records through the public
// API, which the test decodes with terse_reader and with the CLI of this build
// and compares record by record.
//
//   terse_python_writer DIR variety
//       DIR/py-YYYYMMDD-NNN.tlog: every kind of argument, rate-limited sites,
//       contexts and four threads, in files rolled at 8 KiB.
//   terse_python_writer DIR ticker NAME
//       DIR/NAME-YYYYMMDD-001.tlog: 40 records a millisecond or so apart;
//       two of these run at once give two sequences that a reader of DIR
//       must merge by time.
#include <array>
#include <bitset>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include <terse/aggregate.hpp>
#include <terse/std.hpp>
#include <terse/terse.hpp>

namespace pyw {

enum class Colour { red, green, blue };
enum Plain : unsigned char { low = 1, high = 200 };

struct Point {
  int x;
  double y;
};

struct Order {
  long id;
  Colour colour;
  std::vector<std::string> tags;
  std::optional<double> price;
};

struct Money {
  long cents;
  std::string currency;
};

}  // namespace pyw

TERSE_FIELDS(pyw::Order, id, colour, tags, price);

template <>
struct terse::codec<pyw::Money> {
  static constexpr std::string_view format = "{}.{:02} {}";
  static auto fields(const pyw::Money& m) { return std::tuple(m.cents / 100, m.cents % 100, m.currency); }
};

namespace {

using namespace std::chrono_literals;

void integers() {
  for (int i = 0; i < 3; ++i) {
    // The same site several times: its fixed-size arguments are delta-coded.
    TERSE_INFO("ints {} {} {} {} | {} {} {} {}", static_cast<std::int8_t>(-100 + i),
               static_cast<std::int16_t>(-30000 + i), -2000000000 + i, std::int64_t{-9000000000000000000} + i,
               static_cast<std::uint8_t>(250 + i), static_cast<std::uint16_t>(65530 + i),
               4000000000u + static_cast<unsigned>(i),
               std::uint64_t{18000000000000000000u} + static_cast<std::uint64_t>(i));
  }
  TERSE_INFO("int specs [{:+d}] [{:x}] [{:#X}] [{:#o}] [{:#b}] [{:08d}] [{:<6}] [{:^7}] [{:*>9}] [{:c}]", 42, 255, 255,
             8, 5, -42, 7, 7, 7, 65);
  TERSE_DEBUG("extremes {} {} {} {}", std::numeric_limits<std::int64_t>::min(),
              std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::uint64_t>::max(), 0);
}

void floats() {
  for (int i = 0; i < 3; ++i) TERSE_INFO("float {} double {}", 0.1f * static_cast<float>(i + 1), 0.1 * (i + 1));
  TERSE_INFO("float specs [{:.2f}] [{:e}] [{:g}] [{:.3}] [{:10.4f}] [{:+.1e}] [{:G}] [{:a}]", 3.14159f, 1234.5f,
             0.0001f, 2.0f / 3.0f, 2.5f, 12345.678f, 1e-10f, 1.5f);
  TERSE_INFO("double specs [{:.2f}] [{:e}] [{:g}] [{:.3}] [{:010.3f}] [{:E}] [{:.0f}] [{}] [{}] [{}]", 3.14159,
             6.02214076e23, 1e-5, 2.0 / 3.0, -2.5, 1e300, 0.5, 1e16, 1e15, 123456789.125);
  TERSE_INFO("specials {} {} {} {} {}", std::numeric_limits<double>::infinity(),
             -std::numeric_limits<double>::infinity(), std::nan(""), -0.0, 5e-324);
  TERSE_INFO("float shortest {} {} {} {}", 1e10f, 3.4028235e38f, 1.17549435e-38f, 16777216.0f);
  TERSE_INFO("long double {} {:.3f}", 1.0L / 3.0L, 2.0L / 3.0L);
}

void text() {
  std::string owned = "owned string";
  std::string_view view = "a view";
  char array[8] = "arr";
  TERSE_WARN("strings [{}] [{}] [{}] [{}] [{:>10}] [{:.3}] [{:^9}] [{:?}]", "literal", owned, view, array, "right",
             "precision", "mid", "tab\there");
  TERSE_WARN("utf-8 [{}] [{:*^8}] empty [{}]", "héllo wörld ✓", "日本", "");
  const char* null_string = nullptr;
  TERSE_ERROR("null [{}] bools {} {} {:d} [{:>6}] chars {} {:d} [{:^5}] {:?}", null_string, true, false, true, false,
              'x', 'A', 'c', '\n');
  TERSE_ERROR("pointers {} {} {:p}", static_cast<const void*>(nullptr),
              reinterpret_cast<const void*>(std::uintptr_t{0xdeadbeef}), static_cast<const void*>(nullptr));
  TERSE_INFO("positional {1} {0} {1} dynamic [{2:>{3}}] [{4:.{5}f}]", "a", "b", 7, 6, 3.14159, 2);
  TERSE_INFO("escapes {{}} {{{}}} }}{{", 5);
  TERSE_INFO("named {user} took {ms} ms", fmt::arg("user", "ann"), fmt::arg("ms", 12.5));
  TERSE_INFO("mixed {} and {who}", 5, fmt::arg("who", "me"));
  std::string long_text(200, 'L');
  for (int i = 0; i < 3; ++i) TERSE_INFO("interned {} #{}", long_text, i);
}

void structured() {
  std::vector<int> ints{1, 2, 3};
  std::vector<std::string> words{"a", "b\"c"};
  std::map<std::string, int> counts{{"x", 1}, {"y", 2}};
  std::map<int, std::string> by_number{{1, "one"}, {2, "two"}};
  std::set<char> chars{'p', 'q'};
  std::vector<std::vector<std::string>> nested{{"n1", "n2"}, {}};
  TERSE_INFO("containers {} {} {} {} {} {}", ints, words, counts, by_number, chars, nested);
  TERSE_INFO("range specs {::x} {:n}", ints, ints);
  TERSE_INFO("tuples {} {} {}", std::tuple(1, "two", 3.5), std::pair('k', std::string("v")),
             std::array<double, 2>{0.5, -1.25});
  TERSE_INFO("aggregates {} {}", pyw::Point{3, 4.5},
             pyw::Order{77, pyw::Colour::green, {"rush", "gift"}, std::optional<double>(9.99)});
  TERSE_INFO("enums {} {} {} {}", pyw::Colour::blue, static_cast<pyw::Colour>(9), pyw::high, pyw::Plain{7});
  TERSE_INFO("optional {} {} variant {} {} {}", std::optional<int>(3), std::optional<std::string>(),
             std::variant<int, std::string>(std::string("v")), std::variant<int, std::string>(9),
             std::variant<std::monostate, int>());
  TERSE_INFO("durations {} {} {} {} {} {} {} {}", 42ms, 1500us, 3s, 90min, 2h, std::chrono::duration<double>(1.5),
             std::chrono::duration<int, std::ratio<86400>>(2), std::chrono::duration<long, std::ratio<5, 7>>(3));
  TERSE_INFO("chrono specs {:%H:%M:%S} {:%T} {:%Q %q}", 3725s, 1234567ms, 42us);
  std::vector<std::map<std::string, int>> maps{{{"k", 1}}};
  std::vector<std::pair<std::string, int>> pairs{{"p", 1}};
  TERSE_INFO("nesting {} {} {} {} {::} {}", maps, pairs, std::optional<std::vector<std::string>>({"o"}),
             std::tuple(std::vector<std::string>{"t"}, std::string("u")), nested,
             std::variant<int, std::vector<std::string>>(std::vector<std::string>{"w"}));
  TERSE_INFO("time point {}",
             std::chrono::system_clock::time_point(std::chrono::sys_days(std::chrono::year(2026) / 3 / 4)) + 5h);
  TERSE_INFO("system {} {} {}", std::make_error_code(std::errc::no_such_file_or_directory),
             std::filesystem::path("/tmp/a b"), std::thread::id());
  TERSE_INFO("codec {} bitset {} [{:>12}]", pyw::Money{1250, "EUR"}, std::bitset<10>(0b1011), std::bitset<4>(0b11));
  TERSE_WARN("secret {} then {}", terse::secret(std::string("hunter2")), 5);
  std::vector<int> many(2000, 7);
  TERSE_INFO("truncated {}", many);
}

void limited_and_context() {
  terse::Context request("request_id", 42);
  // Below the level: kept by the flight recorder, written by the error below (FORMAT.md §7.2).
  for (int i = 0; i < 3; ++i) TERSE_TRACE("flight {} of {:.1f}", i, i * 0.5);
  for (int i = 0; i < 25; ++i) {
    TERSE_LOG_EVERY_N(terse::Level::warn, 10, "every tenth {}", i);
    TERSE_LOG_FIRST_N(terse::Level::error, 2, "first two {}", i);
  }
  {
    terse::Context user("user", std::string("ann"));
    terse::Context shards("shards", std::vector<int>{1, 2});
    TERSE_INFO("in three contexts");
    terse::Context again("request_id", 43);
    TERSE_INFO("inner request id hides the outer");
  }
  TERSE_INFO("back to one context");
}

void threads() {
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([t] {
      terse::Context worker("worker", t);
      for (int i = 0; i < 50; ++i) TERSE_INFO("thread {} record {} value {:.2f}", t, i, i * 0.25);
    });
  }
  for (auto& w : workers) w.join();
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc >= 3 ? argv[2] : "";
  if (!(argc == 3 && mode == "variety") && !(argc == 4 && mode == "ticker")) {
    fmt::print(stderr, "usage: {} DIR variety | DIR ticker NAME\n", argv[0]);
    return 2;
  }
  terse::Config cfg;
  cfg.directory = argv[1];
  cfg.level = terse::Level::debug;
  cfg.read_environment = false;
  if (mode == "ticker") {
    cfg.name = argv[3];
    terse::start(cfg);
    for (int i = 0; i < 40; ++i) {
      TERSE_INFO("{} tick {}", cfg.name, i);
      std::this_thread::sleep_for(1ms);
    }
    terse::stop();
    return 0;
  }
  cfg.name = "py";
  cfg.roll_bytes = 4096;
  cfg.flight_level = terse::Level::trace;
  terse::start(cfg);
  // Flushed between groups, so that the file rolls between them (at most one write past roll_bytes).
  for (auto group : {integers, floats, text, structured, limited_and_context, threads}) {
    group();
    terse::flush();
  }
  for (int i = 0; i < 200; ++i) TERSE_INFO("filler {} to roll the file {}", i, std::string(40, 'f'));
  terse::stop();
  return 0;
}
