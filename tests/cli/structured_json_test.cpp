// Structured arguments end to end in JSON: logged through the public API,
// written by the real runtime, read back by the real `terse cat -o json`,
// and every output line parsed with json_reader.hpp. The JSON mapping is
// the one each kind documents (decoder/structured_kind.hpp); each record's
// "message" must also be fmt::format's text where fmt 9 formats the call,
// and the rendering README.md documents where it does not.
#include <pthread.h>

#include <array>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fmt/std.h>
#include <catch2/catch.hpp>
#include <terse/aggregate.hpp>
#include <terse/portable_libc.hpp>
#include <terse/std.hpp>

#include "cli_helpers.hpp"
#include "json_reader.hpp"

using namespace terse::test;
using namespace std::chrono_literals;
using Kind = Json::Kind;

namespace market {

enum class Side { buy, sell };
enum class Venue : int { xnys = 1, xlon = 2 };

// No TERSE_FIELDS: an array of its fields.
struct Tick {
  int id;
  double price;
  std::string symbol;
  Side side;
};

// Named, and nested into Fill.
struct Price {
  long units;
  int scale;
};

struct Fill {
  long order;
  Side side;
  Price price;  // named: a nested object
  Tick tick;    // unnamed: a nested array
  std::vector<int> venues;
  std::optional<std::string> note;
};

// Not an aggregate: only the listed members are logged.
class Account {
 public:
  Account(long account_id, std::string account_owner) : id(account_id), owner(std::move(account_owner)) {}
  long id;
  std::string owner;

 private:
  [[maybe_unused]] int hidden_ = 42;
};

}  // namespace market

TERSE_FIELDS(market::Price, units, scale);
TERSE_FIELDS(market::Fill, order, side, price, tick, venues, note);
TERSE_FIELDS(market::Account, id, owner);

namespace {

// A logger writing into a fresh directory; records() stops it and reads the
// directory back through the CLI.
class Session {
 public:
  Session() : Session([](terse::Config&) {}) {}
  template <typename Adjust>
  explicit Session(Adjust adjust) {
    terse::Config config = test_config(dir.path());
    adjust(config);
    terse::start(config);
  }
  ~Session() { terse::stop(); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Stops the logger, runs `terse cat -o json DIR`, parses every line and
  // checks the keys every record has, and each message against `expected`.
  // Returns each record's "args".
  std::vector<Json> args() {
    terse::stop();
    Run run = run_terse({"cat", "-o", "json", dir.path()});
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(run.err.empty());
    lines = split_lines(run.out);
    REQUIRE(lines.size() == expected.size());
    std::vector<Json> out;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      INFO("record " << i << ": " << lines[i]);
      std::optional<Json> record = parse_json(lines[i]);
      REQUIRE(record);
      REQUIRE(record->kind == Kind::object);
      const auto& m = record->members;
      CHECK(m.size() == 7);
      for (const char* key : {"time", "level", "file", "message"}) {
        REQUIRE(m.count(key));
        CHECK(m.at(key).kind == Kind::string);
      }
      for (const char* key : {"thread", "line"}) {
        REQUIRE(m.count(key));
        CHECK(m.at(key).kind == Kind::number);
      }
      CHECK(m.at("level").text == "info");
      CHECK(m.at("file").text.find("structured_json_test.cpp") != std::string::npos);
      CHECK(m.at("line").number > 0);
      REQUIRE(m.count("args"));
      CHECK((m.at("args").kind == Kind::array || m.at("args").kind == Kind::object));
      if (expected[i]) CHECK(m.at("message").text == *expected[i]);
      messages.push_back(m.at("message").text);
      out.push_back(m.at("args"));
    }
    return out;
  }

  TempDir dir;
  // What each record's message must be; nothing where it is checked apart.
  std::vector<std::optional<std::string>> expected;
  std::vector<std::string> lines;     // the CLI's output lines, as printed
  std::vector<std::string> messages;  // each record's "message"
};

// A compact canonical form of a parsed value: objects by sorted key (as
// json_reader keeps them), numbers as fmt prints a double, strings with `"`
// and `\` escaped (a \uXXXX escape stays as the reader kept it, `\uXXXX`).
std::string dump(const Json& j) {
  switch (j.kind) {
    case Kind::null:
      return "null";
    case Kind::boolean:
      return j.boolean ? "true" : "false";
    case Kind::number:
      return fmt::format("{}", j.number);
    case Kind::string: {
      std::string out = "\"";
      for (char c : j.text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
      }
      return out + '"';
    }
    case Kind::array: {
      std::string out = "[";
      for (std::size_t i = 0; i < j.items.size(); ++i) out += (i ? "," : "") + dump(j.items[i]);
      return out + ']';
    }
    case Kind::object: {
      std::string out = "{";
      bool first = true;
      for (const auto& [key, value] : j.members) {
        out += (first ? "\"" : ",\"") + key + "\":" + dump(value);
        first = false;
      }
      return out + '}';
    }
  }
  return "?";
}

const Json& at(const Json& j, const std::string& key) {
  REQUIRE(j.kind == Kind::object);
  auto it = j.members.find(key);
  REQUIRE(it != j.members.end());
  return it->second;
}

// The one argument of an unnamed site's args array.
const Json& only(const Json& args) {
  REQUIRE(args.kind == Kind::array);
  REQUIRE(args.items.size() == 1);
  return args.items[0];
}

bool all_of_kind(const Json& array, Kind kind) {
  if (array.kind != Kind::array) return false;
  for (const auto& item : array.items)
    if (item.kind != kind) return false;
  return true;
}

std::int64_t timegm_of(int year, int month, int day, int hour, int minute, int second) {
  tm parts{};
  parts.tm_year = year - 1900;
  parts.tm_mon = month - 1;
  parts.tm_mday = day;
  parts.tm_hour = hour;
  parts.tm_min = minute;
  parts.tm_sec = second;
  return static_cast<std::int64_t>(terse::utc_seconds(parts));
}

// An RFC 3339 UTC time ("...Z") as seconds since the epoch and nanoseconds.
struct Instant {
  std::int64_t seconds = 0;
  long nanos = 0;
};
std::optional<Instant> parse_rfc3339_utc(const std::string& text) {
  static const std::regex form(R"((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z)");
  std::smatch m;
  if (!std::regex_match(text, m, form)) return std::nullopt;
  auto num = [&](int k) { return std::stoi(m[k].str()); };
  Instant out;
  out.seconds = timegm_of(num(1), num(2), num(3), num(4), num(5), num(6));
  if (m[7].matched) {
    std::string digits = m[7].str();
    digits.resize(9, '0');
    out.nanos = std::stol(digits);
  }
  return out;
}

}  // namespace

// Logs one call; its message must be what fmt::format makes of the same call.
#define LOG_FMT(s, ...)                                  \
  do {                                                   \
    TERSE_INFO(__VA_ARGS__);                             \
    (s).expected.emplace_back(fmt::format(__VA_ARGS__)); \
  } while (false)
// Logs one call that fmt 9 cannot format; its message must be `text`.
#define LOG_TEXT(s, text, ...)       \
  do {                               \
    TERSE_INFO(__VA_ARGS__);         \
    (s).expected.emplace_back(text); \
  } while (false)

TEST_CASE("sequences are arrays of typed elements, strings round-tripping exactly") {
  Session s;
  std::vector<int> ints{1, -2, 300};
  std::vector<std::string> words{"a", "b\n", "quote\"d", "back\\slash", "tab\t", "\x01", "caf\xC3\xA9"};
  std::vector<char> chars{'x', '\t'};
  std::vector<double> reals{1.5, 0.1, -1e300};
  std::vector<bool> flags{true, false};
  std::vector<std::vector<std::string>> nested{{"a", "b"}, {}, {"c"}};
  std::array<unsigned char, 3> bytes{1, 2, 255};
  std::vector<unsigned long long> big{18446744073709551615ull};
  std::vector<int> empty;
  std::set<std::string> names{"bob", "ann"};
  std::unordered_set<int> single{4};
  LOG_FMT(s, "{}", ints);
  LOG_FMT(s, "{}", words);
  LOG_FMT(s, "{} {} {}", chars, reals, flags);
  LOG_FMT(s, "{} {} {}", nested, bytes, empty);
  LOG_FMT(s, "{} {}", names, single);
  LOG_FMT(s, "{::x}", ints);  // a spec changes the text, not the JSON
  LOG_FMT(s, "{}", big);
  auto args = s.args();
  REQUIRE(args.size() == 7);

  const Json& i = only(args[0]);
  CHECK(all_of_kind(i, Kind::number));
  CHECK(dump(i) == "[1,-2,300]");

  const Json& w = only(args[1]);
  REQUIRE(all_of_kind(w, Kind::string));
  REQUIRE(w.items.size() == words.size());
  for (std::size_t k = 0; k + 2 < words.size(); ++k) CHECK(w.items[k].text == words[k]);
  CHECK(w.items[5].text == "\\u0001");      // json_reader keeps \u escapes as written
  CHECK(w.items[6].text == "caf\xC3\xA9");  // valid UTF-8 passes through
  // On the wire: the quote and the backslash escaped, the newline as \n.
  CHECK(s.lines[1].find(R"(["a","b\n","quote\"d","back\\slash","tab\t","\u0001","café"])") != std::string::npos);

  REQUIRE(args[2].items.size() == 3);
  CHECK(all_of_kind(args[2].items[0], Kind::string));
  CHECK(dump(args[2].items[0]) == "[\"x\",\"\t\"]");
  CHECK(all_of_kind(args[2].items[1], Kind::number));
  CHECK(dump(args[2].items[1]) == "[1.5,0.1,-1e+300]");
  CHECK(all_of_kind(args[2].items[2], Kind::boolean));
  CHECK(dump(args[2].items[2]) == "[true,false]");

  REQUIRE(args[3].items.size() == 3);
  CHECK(dump(args[3].items[0]) == R"([["a","b"],[],["c"]])");
  CHECK(all_of_kind(args[3].items[1], Kind::number));
  CHECK(dump(args[3].items[1]) == "[1,2,255]");
  CHECK(args[3].items[2].kind == Kind::array);
  CHECK(args[3].items[2].items.empty());

  REQUIRE(args[4].items.size() == 2);
  CHECK(dump(args[4].items[0]) == R"(["ann","bob"])");  // a set: an array, in iteration order
  CHECK(dump(args[4].items[1]) == "[4]");

  CHECK(dump(only(args[5])) == "[1,-2,300]");
  CHECK(s.lines[6].find("\"args\":[[18446744073709551615]]") != std::string::npos);
}

TEST_CASE("maps are objects when keyed by strings or enums, else arrays of pairs; pairs and tuples are arrays") {
  Session s;
  std::map<std::string, int> by_name{{"a", 1}, {"b\"q", 2}};
  std::map<int, std::string> by_number{{1, "one"}, {2, "two"}};
  std::unordered_map<int, char> one{{5, 'c'}};
  std::map<std::string, std::map<int, bool>> deep{{"k", {{1, true}}}};
  std::map<market::Side, int> by_side{{market::Side::buy, 3}, {market::Side::sell, 4}};
  std::map<market::Venue, int> unnamed_key{{static_cast<market::Venue>(9), 1}};
  std::pair<int, std::string> pair{1, "p"};
  std::tuple<int, char, std::string, double, bool> tuple{1, 'c', "s", 2.5, true};
  std::vector<std::pair<int, std::string>> pairs{{1, "a"}, {2, "b"}};
  std::tuple<> nothing;
  LOG_FMT(s, "{}", by_name);
  LOG_FMT(s, "{}", by_number);
  LOG_FMT(s, "{} {}", one, deep);
  LOG_TEXT(s, "{buy: 3, sell: 4} {9: 1}", "{} {}", by_side, unnamed_key);
  LOG_FMT(s, "{} {} {} {}", pair, tuple, pairs, nothing);
  auto args = s.args();
  REQUIRE(args.size() == 5);

  const Json& named = only(args[0]);
  REQUIRE(named.kind == Kind::object);
  CHECK(named.members.size() == 2);
  CHECK(at(named, "a").kind == Kind::number);
  CHECK(at(named, "a").number == 1);
  CHECK(at(named, "b\"q").number == 2);  // the key's quote round-trips

  const Json& numbered = only(args[1]);
  REQUIRE(numbered.kind == Kind::array);
  REQUIRE(numbered.items.size() == 2);
  for (const auto& entry : numbered.items) {
    REQUIRE(entry.kind == Kind::array);
    REQUIRE(entry.items.size() == 2);
    CHECK(entry.items[0].kind == Kind::number);
    CHECK(entry.items[1].kind == Kind::string);
  }
  CHECK(dump(numbered) == R"([[1,"one"],[2,"two"]])");

  REQUIRE(args[2].items.size() == 2);
  CHECK(dump(args[2].items[0]) == R"([[5,"c"]])");
  CHECK(dump(args[2].items[1]) == R"({"k":[[1,true]]})");

  REQUIRE(args[3].items.size() == 2);
  CHECK(args[3].items[0].kind == Kind::object);
  CHECK(dump(args[3].items[0]) == R"({"buy":3,"sell":4})");
  CHECK(dump(args[3].items[1]) == R"({"9":1})");  // an enum key without a name: its number, as a string

  REQUIRE(args[4].items.size() == 4);
  CHECK(dump(args[4].items[0]) == R"([1,"p"])");
  CHECK(dump(args[4].items[1]) == R"([1,"c","s",2.5,true])");
  CHECK(dump(args[4].items[2]) == R"([[1,"a"],[2,"b"]])");
  CHECK(dump(args[4].items[3]) == "[]");
}

TEST_CASE("aggregates are arrays, or objects with TERSE_FIELDS; enums are names; optionals are the value or null") {
  Session s;
  market::Tick tick{7, 2.5, "AB\"C", market::Side::sell};
  market::Fill fill{42, market::Side::buy, {995, 1}, {8, 0.5, "X", market::Side::buy}, {3, 7}, std::nullopt};
  LOG_TEXT(s, R"({7, 2.5, "AB\"C", sell})", "{}", tick);
  LOG_TEXT(
      s,
      R"({order: 42, side: buy, price: {units: 995, scale: 1}, tick: {8, 0.5, "X", buy}, venues: [3, 7], note: none})",
      "{}", fill);
  fill.note = "gift\n";
  LOG_TEXT(s,
           "{order: 42, side: buy, price: {units: 995, scale: 1}, tick: {8, 0.5, \"X\", buy}, venues: [3, 7], "
           "note: optional(\"gift\\n\")}",
           "{}", fill);
  LOG_TEXT(s, R"({id: 12, owner: "ann"})", "{}", market::Account(12, "ann"));
  LOG_TEXT(s, R"([{7, 2.5, "AB\"C", sell}, {7, 2.5, "AB\"C", sell}])", "{}", std::vector<market::Tick>{tick, tick});
  LOG_TEXT(s, "sell xlon 9 [buy, sell]", "{} {} {} {}", market::Side::sell, market::Venue::xlon,
           static_cast<market::Venue>(9), std::vector<market::Side>{market::Side::buy, market::Side::sell});
  LOG_TEXT(s, R"(optional(3) none optional("s") [optional(1), none])", "{} {} {} {}", std::optional<int>(3),
           std::optional<int>(), std::optional<std::string>("s"), std::vector<std::optional<int>>{1, std::nullopt});
  auto args = s.args();
  REQUIRE(args.size() == 7);

  const Json& t = only(args[0]);
  REQUIRE(t.kind == Kind::array);
  REQUIRE(t.items.size() == 4);
  CHECK(t.items[0].kind == Kind::number);
  CHECK(t.items[1].kind == Kind::number);
  CHECK(t.items[2].kind == Kind::string);
  CHECK(t.items[2].text == "AB\"C");
  CHECK(t.items[3].kind == Kind::string);  // the enum field: its name
  CHECK(dump(t) == R"([7,2.5,"AB\"C","sell"])");

  const Json& f = only(args[1]);
  REQUIRE(f.kind == Kind::object);
  std::set<std::string> keys;
  for (const auto& [key, value] : f.members) keys.insert(key);
  CHECK(keys == std::set<std::string>{"order", "side", "price", "tick", "venues", "note"});
  CHECK(at(f, "order").kind == Kind::number);
  CHECK(at(f, "side").kind == Kind::string);
  CHECK(at(f, "side").text == "buy");
  CHECK(at(f, "price").kind == Kind::object);  // a named nested struct
  CHECK(dump(at(f, "price")) == R"({"scale":1,"units":995})");
  CHECK(at(f, "tick").kind == Kind::array);  // an unnamed nested struct
  CHECK(dump(at(f, "tick")) == R"([8,0.5,"X","buy"])");
  CHECK(dump(at(f, "venues")) == "[3,7]");
  CHECK(at(f, "note").kind == Kind::null);
  // The members come in declaration order on the wire.
  CHECK(
      s.lines[1].find(
          R"("args":[{"order":42,"side":"buy","price":{"units":995,"scale":1},"tick":[8,0.5,"X","buy"],"venues":[3,7],"note":null}])") !=
      std::string::npos);

  const Json& g = only(args[2]);
  CHECK(at(g, "note").kind == Kind::string);
  CHECK(at(g, "note").text == "gift\n");

  CHECK(dump(only(args[3])) == R"({"id":12,"owner":"ann"})");
  CHECK(dump(only(args[4])) == R"([[7,2.5,"AB\"C","sell"],[7,2.5,"AB\"C","sell"]])");

  REQUIRE(args[5].items.size() == 4);
  CHECK(args[5].items[0].kind == Kind::string);
  CHECK(args[5].items[0].text == "sell");
  CHECK(args[5].items[1].text == "xlon");
  CHECK(args[5].items[2].kind == Kind::number);  // no enumerator: the number
  CHECK(args[5].items[2].number == 9);
  CHECK(dump(args[5].items[3]) == R"(["buy","sell"])");

  REQUIRE(args[6].items.size() == 4);
  CHECK(args[6].items[0].kind == Kind::number);
  CHECK(args[6].items[0].number == 3);
  CHECK(args[6].items[1].kind == Kind::null);
  CHECK(args[6].items[2].kind == Kind::string);
  CHECK(args[6].items[2].text == "s");
  CHECK(dump(args[6].items[3]) == "[1,null]");
}

TEST_CASE("variants, durations, time points, error codes, paths and thread ids") {
  Session s;
  std::variant<int, std::string> text = std::string("s");
  std::variant<int, std::string> number = 7;
  std::variant<std::monostate, double> none;
  std::vector<std::variant<int, char>> mixed{1, 'z'};
  LOG_FMT(s, "{} {} {} {}", text, number, none, mixed);
  LOG_FMT(s, "{} {} {} {} {}", 42ms, 1500us, 5min, std::chrono::duration<double>(1.5),
          std::chrono::duration<int, std::ratio<3, 7>>(5));
  auto when = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)) +
              std::chrono::duration_cast<std::chrono::system_clock::duration>(123456789ns);
  auto whole = std::chrono::time_point<std::chrono::system_clock, std::chrono::seconds>(std::chrono::seconds(86400));
  LOG_FMT(s, "{} {:%Y/%m/%d}", when, whole);
  // Before 1970: the JSON floors to the instant; the text is fmt 9's (it
  // truncates toward zero, to the second).
  auto before_epoch =
      std::chrono::system_clock::time_point(-std::chrono::duration_cast<std::chrono::system_clock::duration>(1500ms));
#ifdef _WIN32
  // fmt cannot format a local time before 1970 on Windows, whose C library has none; terse
  // prints it with the zone's offset at the epoch (terse::local_calendar).
  std::tm before_epoch_fields{};
  REQUIRE(terse::local_calendar(-1, before_epoch_fields));
  LOG_TEXT(s, fmt::format("{:%Y-%m-%d %H:%M:%S}", before_epoch_fields), "{}", before_epoch);
#else
  LOG_FMT(s, "{}", before_epoch);
#endif
  // fmt 9 cannot format a steady time point: the time since the clock's epoch.
  LOG_TEXT(s, "5000000000ns", "{}", std::chrono::steady_clock::time_point(5s));
  auto missing = std::make_error_code(std::errc::no_such_file_or_directory);
  LOG_TEXT(s, "generic:2 system:0", "{} {}", missing, std::error_code());
  std::filesystem::path path("/var/log/a b/\"q\".tlog");
  LOG_FMT(s, "{} {}", path, std::filesystem::path("x"));
#ifdef _LIBCPP_VERSION
  // libc++ prints the id of no thread as "0"; terse spells it as libstdc++ does whichever
  // library wrote the file (FORMAT.md §8.1).
  LOG_TEXT(s, fmt::format("{} thread::id of a non-executing thread", std::this_thread::get_id()), "{} {}",
           std::this_thread::get_id(), std::thread::id());
#else
  LOG_FMT(s, "{} {}", std::this_thread::get_id(), std::thread::id());
#endif
  auto args = s.args();
  REQUIRE(args.size() == 8);

  REQUIRE(args[0].items.size() == 4);
  CHECK(args[0].items[0].kind == Kind::string);
  CHECK(args[0].items[0].text == "s");
  CHECK(args[0].items[1].kind == Kind::number);
  CHECK(args[0].items[1].number == 7);
  CHECK(args[0].items[2].kind == Kind::null);  // monostate
  CHECK(dump(args[0].items[3]) == R"([1,"z"])");

  REQUIRE(args[1].items.size() == 5);
  for (const auto& d : args[1].items) {
    REQUIRE(d.kind == Kind::object);
    CHECK(d.members.size() == 2);
    CHECK(at(d, "count").kind == Kind::number);
    CHECK(at(d, "unit").kind == Kind::string);
  }
  CHECK(dump(args[1].items[0]) == R"({"count":42,"unit":"ms"})");
  CHECK(dump(args[1].items[1]) == "{\"count\":1500,\"unit\":\"\xC2\xB5s\"}");
  CHECK(dump(args[1].items[2]) == R"({"count":5,"unit":"m"})");
  CHECK(dump(args[1].items[3]) == R"({"count":1.5,"unit":"s"})");
  CHECK(dump(args[1].items[4]) == R"({"count":5,"unit":"[3/7]s"})");

  REQUIRE(args[2].items.size() == 2);
  REQUIRE(args[2].items[0].kind == Kind::string);
  // What the system clock keeps of 123456789 ns: all of it in libstdc++, microseconds in libc++.
  const auto kept_nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch() % std::chrono::seconds(1)).count();
  CHECK(args[2].items[0].text == fmt::format("2023-11-14T22:13:20.{:09}Z", kept_nanos));
  auto parsed = parse_rfc3339_utc(args[2].items[0].text);
  REQUIRE(parsed);
  CHECK(parsed->seconds == 1700000000);
  CHECK(parsed->nanos == kept_nanos);
  REQUIRE(args[2].items[1].kind == Kind::string);
  auto day = parse_rfc3339_utc(args[2].items[1].text);
  REQUIRE(day);
  CHECK(day->seconds == 86400);
  CHECK(day->nanos == 0);

  const Json& early_text = only(args[3]);
  REQUIRE(early_text.kind == Kind::string);
  CHECK(early_text.text == "1969-12-31T23:59:58.500000000Z");
  auto early = parse_rfc3339_utc(early_text.text);
  REQUIRE(early);
  CHECK(early->seconds == -2);
  CHECK(early->nanos == 500000000);
  const Json& steady = only(args[4]);
  REQUIRE(steady.kind == Kind::object);
  CHECK(at(steady, "count").kind == Kind::number);
  CHECK(at(steady, "clock").kind == Kind::string);
  CHECK(dump(steady) == R"({"clock":"steady","count":5000000000,"unit":"ns"})");

  REQUIRE(args[5].items.size() == 2);
  const Json& code = args[5].items[0];
  REQUIRE(code.kind == Kind::object);
  CHECK(code.members.size() == 2);
  CHECK(at(code, "category").kind == Kind::string);
  CHECK(at(code, "category").text == "generic");
  CHECK(at(code, "value").kind == Kind::number);
  CHECK(at(code, "value").number == 2);
  CHECK(dump(args[5].items[1]) == R"({"category":"system","value":0})");

  REQUIRE(args[6].items.size() == 2);
  CHECK(args[6].items[0].kind == Kind::string);
  CHECK(args[6].items[0].text == path.string());  // the path itself, not fmt's quoted form
  CHECK(args[6].items[1].text == "x");

  REQUIRE(args[7].items.size() == 2);
  CHECK(args[7].items[0].kind == Kind::number);
  CHECK(args[7].items[0].number == static_cast<double>(::pthread_self()));
  // Exactly, digit for digit, on the wire.
  CHECK(s.lines[7].find(fmt::format("\"args\":[{},0]", static_cast<std::uint64_t>(::pthread_self()))) !=
        std::string::npos);
  CHECK(args[7].items[1].kind == Kind::number);
  CHECK(args[7].items[1].number == 0);
}

TEST_CASE("private values: null by default, a keyed hash or the value when asked") {
  auto log_secrets = [](Session& s) {
    TERSE_INFO("token {} user {}", terse::secret(std::string("hunter2")), terse::secret(17));
    TERSE_INFO("token {}", terse::secret(std::string("hunter2")));
    TERSE_INFO("ids {}", terse::secret(std::vector<int>{1, 2}));
    s.expected.insert(s.expected.end(), 3, std::nullopt);
  };
  {
    Session s;
    log_secrets(s);
    auto args = s.args();
    REQUIRE(args.size() == 3);
    CHECK(dump(args[0]) == "[null,null]");
    CHECK(dump(args[1]) == "[null]");
    CHECK(dump(args[2]) == "[null]");
    CHECK(s.messages[0] == "token <private> user <private>");
    CHECK(s.messages[2] == "ids <private>");
    for (const auto& line : s.lines) CHECK(line.find("hunter2") == std::string::npos);
  }
  {
    Session s([](terse::Config& config) {
      config.private_values = terse::PrivateValues::hash;
      config.private_key = "a key";
    });
    log_secrets(s);
    auto args = s.args();
    REQUIRE(args.size() == 3);
    static const std::regex hashed("<private:[0-9a-f]{6}>");
    REQUIRE(args[0].items.size() == 2);
    for (const Json* v :
         std::vector<const Json*>{&args[0].items[0], &args[0].items[1], &only(args[1]), &only(args[2])}) {
      REQUIRE(v->kind == Kind::string);
      CHECK(std::regex_match(v->text, hashed));
    }
    CHECK(args[0].items[0].text == only(args[1]).text);  // equal values hash alike
    CHECK(args[0].items[0].text != args[0].items[1].text);
    CHECK(s.messages[1] == "token " + only(args[1]).text);
  }
  {
    Session s([](terse::Config& config) { config.private_values = terse::PrivateValues::clear; });
    log_secrets(s);
    auto args = s.args();
    REQUIRE(args.size() == 3);
    CHECK(dump(args[0]) == R"(["hunter2",17])");
    CHECK(dump(args[2]) == "[[1,2]]");
    CHECK(s.messages[0] == "token hunter2 user 17");
    CHECK(s.messages[2] == "ids [1, 2]");
  }
}

TEST_CASE("a container over max_container_elements keeps its first elements, then a marker") {
  Session s([](terse::Config& config) { config.max_container_elements = 3; });
  std::vector<int> many{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<int> few{1, 2, 3};
  std::map<int, int> wide{{1, 1}, {2, 2}, {3, 3}, {4, 4}};
  std::map<std::string, int> named{{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}, {"e", 5}};
  std::vector<std::vector<int>> nested{{1, 2, 3, 4, 5}};
  std::vector<std::string> words{"a\n", "b", "c", "d"};
  LOG_TEXT(s, "[1, 2, 3, ... 10 total]", "{}", many);
  LOG_FMT(s, "{}", few);
  LOG_TEXT(s, "{1: 1, 2: 2, 3: 3, ... 4 total}", "{}", wide);
  TERSE_INFO("{} {} {}", named, nested, words);
  s.expected.emplace_back(std::nullopt);
  auto args = s.args();
  REQUIRE(args.size() == 4);

  const Json& cut = only(args[0]);
  REQUIRE(cut.kind == Kind::array);
  REQUIRE(cut.items.size() == 4);
  for (int k = 0; k < 3; ++k) {
    CHECK(cut.items[k].kind == Kind::number);
    CHECK(cut.items[k].number == k + 1);
  }
  CHECK(cut.items[3].kind == Kind::string);
  CHECK(cut.items[3].text == "... 10 total");

  CHECK(dump(only(args[1])) == "[1,2,3]");  // at the bound: no marker
  CHECK(dump(only(args[2])) == R"([[1,1],[2,2],[3,3],"... 4 total"])");

  REQUIRE(args[3].items.size() == 3);
  const Json& object = args[3].items[0];
  REQUIRE(object.kind == Kind::object);
  CHECK(dump(object) == R"({"...":"5 total","a":1,"b":2,"c":3})");
  CHECK(dump(args[3].items[1]) == R"([[1,2,3,"... 5 total"]])");
  CHECK(dump(args[3].items[2]) == "[\"a\n\",\"b\",\"c\",\"... 4 total\"]");
  CHECK(s.messages[3] ==
        R"({"a": 1, "b": 2, "c": 3, ... 5 total} [[1, 2, 3, ... 5 total]] ["a\n", "b", "c", ... 4 total])");
}

TEST_CASE("named arguments make \"args\" an object keyed by the names") {
  Session s;
  std::string ip = "10.0.0.1";
  LOG_FMT(s, "login {user} from {ip}", fmt::arg("user", "bob"), fmt::arg("ip", ip));
  LOG_FMT(s, "{n} items: {list}", fmt::arg("n", 2), fmt::arg("list", std::vector<std::string>{"a", "b"}));
  LOG_FMT(s, "{} and {n}", 5, fmt::arg("n", std::map<std::string, int>{{"k", 1}}));
  LOG_TEXT(
      s, "fill {order: 1, side: sell, price: {units: 2, scale: 0}, tick: {3, 4, \"\", buy}, venues: [], note: none}",
      "fill {f}", fmt::arg("f", market::Fill{1, market::Side::sell, {2, 0}, {3, 4, "", market::Side::buy}, {}, {}}));
  auto args = s.args();
  REQUIRE(args.size() == 4);

  const Json& login = args[0];
  REQUIRE(login.kind == Kind::object);
  CHECK(login.members.size() == 2);
  CHECK(at(login, "user").kind == Kind::string);
  CHECK(at(login, "user").text == "bob");
  CHECK(at(login, "ip").text == "10.0.0.1");
  CHECK(s.messages[0] == "login bob from 10.0.0.1");
  // In argument order on the wire.
  CHECK(s.lines[0].find(R"("args":{"user":"bob","ip":"10.0.0.1"}})") != std::string::npos);

  CHECK(dump(args[1]) == R"({"list":["a","b"],"n":2})");
  CHECK(s.lines[1].find(R"("args":{"n":2,"list":["a","b"]}})") != std::string::npos);
  // An argument without a name is keyed by its position.
  CHECK(dump(args[2]) == R"({"0":5,"n":{"k":1}})");
  CHECK(dump(at(args[3], "f")) ==
        R"({"note":null,"order":1,"price":{"scale":0,"units":2},"side":"sell","tick":[3,4,"","buy"],"venues":[]})");
}

TEST_CASE("to_line: a named site's json_args hold each argument's JSON, an unnamed site's the array's inside") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  std::string ip = "10.0.0.1";
  TERSE_INFO("login {user} from {ip}", fmt::arg("user", "bob"), fmt::arg("ip", ip));
  TERSE_INFO("{} and {n}: {m}", std::vector<std::string>{"x,\"}", "]"}, fmt::arg("n", 2.5),
             fmt::arg("m", std::map<std::string, int>{{"a\\", 1}, {"b", 2}}));
  TERSE_INFO("{} {}", 1, std::vector<int>{2, 3});
  TERSE_INFO("no args");
  TERSE_INFO("{ok}", fmt::arg("ok", true));
  TERSE_INFO("{m}", fmt::arg("m", std::map<std::string, std::vector<int>>{{"args", {1}}}));
  terse::stop();
  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.lines.size() == 6);
  CHECK(decoded.lines[0].json_args == std::vector<std::string>{R"("bob")", R"("10.0.0.1")"});
  CHECK(decoded.lines[1].json_args == std::vector<std::string>{R"(["x,\"}","]"])", "2.5", R"({"a\\":1,"b":2})"});
  CHECK(decoded.lines[2].json_args == std::vector<std::string>{"1,[2,3]"});  // unchanged for arrays
  CHECK(decoded.lines[3].json_args == std::vector<std::string>{""});
  CHECK(decoded.lines[4].json_args == std::vector<std::string>{"true"});
  // A member named "args" inside a value is not the record's "args".
  CHECK(decoded.lines[5].json_args == std::vector<std::string>{R"({"args":[1]})"});

  // The same texts as the CLI's "args".
  Run run = run_terse({"cat", "-o", "json", dir.path()});
  REQUIRE(run.exit_code == 0);
  auto lines = split_lines(run.out);
  REQUIRE(lines.size() == 6);
  CHECK(lines[0].find(R"("args":{"user":"bob","ip":"10.0.0.1"}})") != std::string::npos);
  CHECK(lines[1].find(R"("args":{"0":["x,\"}","]"],"n":2.5,"m":{"a\\":1,"b":2}}})") != std::string::npos);
}

// A map keyed by strings or enums is an object only when its names come
// out unique; otherwise JSON readers (jq, Python, JSON.parse) would silently
// keep one value per name. Keys repeat in a std::multimap (the type
// expression does not say whether keys are unique), when a real "..." key
// meets the cut marker, and when distinct invalid UTF-8 keys both escape to
// \ufffd. Each of these once produced duplicate names.
TEST_CASE("a map whose keys would repeat as JSON names is written as pairs, keeping every value") {
  TempDir dir;
  terse::Config config = test_config(dir.path());
  config.max_container_elements = 3;
  terse::start(config);
  TERSE_INFO("{}", std::multimap<std::string, int>{{"a", 1}, {"a", 2}});
  TERSE_INFO("{}", std::map<std::string, int>{{"...", 0}, {"a", 1}, {"b", 2}, {"c", 3}});
  TERSE_INFO("{}", std::map<std::string, int>{{"\xfe", 1}, {"\xff", 2}});
  terse::stop();
  Run run = run_terse({"cat", "-o", "json", dir.path()});
  REQUIRE(run.exit_code == 0);
  auto lines = split_lines(run.out);
  REQUIRE(lines.size() == 3);
  for (const auto& line : lines) {
    INFO(line);
    CHECK(parse_json(line).has_value());
  }
  CHECK(lines[0].find(R"("args":[[["a",1],["a",2]]])") != std::string::npos);
  CHECK(lines[1].find(R"([["...",0],["a",1],["b",2],"... 4 total"])") != std::string::npos);
}
