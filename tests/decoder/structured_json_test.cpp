// FORMAT.md §8.1 values in `terse cat -o json`: real JSON structure (each
// kind's write_json in decoder/structured_*.cpp), and "args" keyed by name when the
// call site names its arguments.
#include <limits>

#include <catch2/catch.hpp>

#include "tlog_builder.hpp"

using namespace terse::test;
using namespace std::chrono_literals;
using namespace std::string_literals;

namespace {

// A strict JSON reader (RFC 8259) that only says whether the text is one
// JSON value.
class JsonChecker {
 public:
  explicit JsonChecker(std::string_view text) : s_(text) {}

  bool valid() {
    skip_space();
    if (!value(0)) return false;
    skip_space();
    return i_ == s_.size();
  }

 private:
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  bool string() {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    for (++i_; i_ < s_.size(); ++i_) {
      auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (++i_ >= s_.size()) return false;
        char e = s_[i_];
        if (e == 'u') {
          for (int k = 0; k < 4; ++k)
            if (++i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) return false;
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return false;
        }
      }
    }
    return false;
  }
  bool number() {
    std::size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    auto digits = [&] {
      std::size_t from = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
      return i_ > from;
    };
    if (!digits()) return false;
    if (s_[start] == '0' || (s_[start] == '-' && s_[start + 1] == '0'))
      if (i_ - start > (s_[start] == '-' ? 2u : 1u)) return false;  // no leading zeros
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (!digits()) return false;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (!digits()) return false;
    }
    return true;
  }
  bool value(int depth) {
    if (depth > 64 || i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '"') return string();
    if (c == '{' || c == '[') {
      char close = c == '{' ? '}' : ']';
      ++i_;
      skip_space();
      if (i_ < s_.size() && s_[i_] == close) {
        ++i_;
        return true;
      }
      for (;;) {
        skip_space();
        if (c == '{') {
          if (!string()) return false;
          skip_space();
          if (i_ >= s_.size() || s_[i_++] != ':') return false;
          skip_space();
        }
        if (!value(depth + 1)) return false;
        skip_space();
        if (i_ >= s_.size()) return false;
        if (s_[i_] == close) {
          ++i_;
          return true;
        }
        if (s_[i_++] != ',') return false;
      }
    }
    if (c == 't') return literal("true");
    if (c == 'f') return literal("false");
    if (c == 'n') return literal("null");
    return number();
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

bool valid_json(std::string_view text) { return JsonChecker(text).valid(); }

// The "args" of one record of a site with these arguments; the whole line
// must be valid JSON.
template <typename... Ts>
std::string args_json(const Ts&... values) {
  EncodedArgs args = encode_args(values...);
  TlogBuilder file;
  std::string format;
  for (std::size_t i = 0; i < sizeof...(Ts); ++i) format += "{} ";
  file.site(1, format, args);
  file.record(1, args.args);
  Decoded d = decode(file.finish());
  REQUIRE(d.problems.empty());
  REQUIRE(d.json.size() == 1);
  CHECK(valid_json(d.json[0]));
  return json_args(d.json[0]);
}

}  // namespace

TEST_CASE("the JSON checker of these tests knows JSON") {
  CHECK(valid_json(R"({"a":[1,-2.5e3,"x\n",true,null,{}]})"));
  CHECK_FALSE(valid_json(R"({"a":[1,]})"));
  CHECK_FALSE(valid_json(R"({"a":01})"));
  CHECK_FALSE(valid_json("[\"\x01\"]"));
}

TEST_CASE("ranges, tuples and maps become arrays and objects") {
  CHECK(args_json(std::vector<int>{1, 2}) == "[[1,2]]");
  CHECK(args_json(std::vector<std::string>{"a", "b\n"}) == R"([["a","b\n"]])");
  CHECK(args_json(std::vector<std::vector<int>>{{1}, {}}) == "[[[1],[]]]");
  CHECK(args_json(std::set<char>{'x'}) == R"([["x"]])");
  CHECK(args_json(std::make_tuple(1, "x"s, 0.5f, true)) == R"([[1,"x",0.5,true]])");
  CHECK(args_json(std::map<std::string, int>{{"a", 1}, {"b", 2}}) == R"([{"a":1,"b":2}])");
  CHECK(args_json(std::map<int, std::string>{{1, "x"}}) == R"([[[1,"x"]]])");
  CHECK(args_json(std::vector<float>{0.1f}, 7) == "[[0.1],7]");
  CHECK(args_json(std::vector<double>{1.0 / 0.0}) == R"([["inf"]])");
}

TEST_CASE("optionals, variants, monostate and the std types") {
  CHECK(args_json(std::optional<int>(3), std::optional<int>()) == "[3,null]");
  CHECK(args_json(std::variant<int, std::string>("s"s), std::monostate()) == R"(["s",null])");
  CHECK(args_json(42ms) == R"([{"count":42,"unit":"ms"}])");
  CHECK(args_json(std::chrono::duration<double, std::micro>(1.5)) == R"([{"count":1.5,"unit":"µs"}])");
  CHECK(args_json(std::chrono::duration<int, std::ratio<5, 7>>(5)) == R"([{"count":5,"unit":"[5/7]s"}])");
  CHECK(args_json(std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(1700000000123))) ==
        R"(["2023-11-14T22:13:20.123000000Z"])");
  CHECK(args_json(std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(-1))) ==
        R"(["1969-12-31T23:59:59.999000000Z"])");
  CHECK(args_json(std::chrono::steady_clock::time_point(7ns)) == R"([{"count":7,"unit":"ns","clock":"steady"}])");
  CHECK(args_json(std::make_error_code(std::errc::no_such_file_or_directory)) ==
        R"([{"category":"generic","value":2}])");
  CHECK(args_json(std::filesystem::path("/tmp/a\"b")) == R"(["/tmp/a\"b"])");
  CHECK(args_json(std::thread::id()) == "[0]");
}

TEST_CASE("aggregates, enums, user types, private values, truncation") {
  std::string value;
  val::le(value, 1);
  val::string(value, "x");
  auto point = [](bool named) {
    return expr::aggregate(
        "P", {{named ? "id" : "", expr::scalar(TypeTag::i32)}, {named ? "name" : "", expr::scalar(TypeTag::string)}});
  };
  CHECK(args_json(RawStructured{point(true), value}) == R"([{"id":1,"name":"x"}])");
  CHECK(args_json(RawStructured{point(false), value}) == R"([[1,"x"]])");

  std::string color = expr::enumeration(TypeTag::u8, "Color", {{0, "red"}});
  CHECK(args_json(RawStructured{color, "\x00"s}, RawStructured{color, "\x09"s}) == R"(["red",9])");
  std::string by_color;
  val::count(by_color, 2, 2);
  by_color += "\x00"s;
  val::le(by_color, 1);
  by_color += "\x05"s;
  val::le(by_color, 2);
  CHECK(args_json(RawStructured{expr::map(color, expr::scalar(TypeTag::i32)), by_color}) == R"([{"red":1,"5":2}])");

  std::string money = expr::user("Money", "{}.{:02}", {expr::scalar(TypeTag::i32), expr::scalar(TypeTag::i32)});
  std::string cents;
  val::le(cents, 12);
  val::le(cents, 5);
  CHECK(args_json(RawStructured{money, cents}) == R"(["12.05"])");

  std::string secret = expr::secret(expr::scalar(TypeTag::i32));
  std::string hashed = "\x01"s;
  val::le(hashed, std::uint64_t{0xabcdef0000000000});
  std::string clear = "\x02"s;
  val::le(clear, 42);
  CHECK(args_json(RawStructured{secret, "\x00"s}, RawStructured{secret, hashed}, RawStructured{secret, clear}) ==
        R"([null,"<private:abcdef>",42])");

  std::string ints;
  val::count(ints, 2, 1000);
  val::le(ints, 1);
  val::le(ints, 2);
  CHECK(args_json(RawStructured{expr::sequence(expr::scalar(TypeTag::i32)), ints}) == R"([[1,2,"... 1000 total"]])");
  std::string map;
  val::count(map, 1, 9);
  val::string(map, "k");
  val::le(map, 1);
  CHECK(args_json(RawStructured{expr::map(expr::scalar(TypeTag::string), expr::scalar(TypeTag::i32)), map}) ==
        R"([{"k":1,"...":"9 total"}])");
}

TEST_CASE("bitsets are strings of their bits, bit N-1 first") {
  CHECK(args_json(std::bitset<10>(0b1000000101)) == R"(["1000000101"])");
  CHECK(args_json(std::bitset<0>()) == R"([""])");
  CHECK(args_json(std::vector<std::bitset<4>>{5, 12}) == R"([["0101","1100"]])");
  std::string by_bits;
  val::count(by_bits, 1, 1);
  by_bits += "\x05"s;
  val::le(by_bits, 1);
  CHECK(args_json(RawStructured{expr::map(expr::bitset(3), expr::scalar(TypeTag::i32)), by_bits}) ==
        R"([[["101",1]]])");
}

TEST_CASE("named arguments make args an object, unnamed ones keyed by position") {
  EncodedArgs args = encode_args("alice"s, std::vector<int>{1}, 7);
  TlogBuilder file;
  file.site(1, "{user} {1} {ids}", args, std::vector<std::string>{"user", "", "ids"});
  file.record(1, args.args);
  Decoded d = decode(file.finish());
  REQUIRE(d.json.size() == 1);
  CHECK(valid_json(d.json[0]));
  CHECK(d.messages[0] == "alice [1] 7");
  CHECK(json_args(d.json[0]) == R"({"user":"alice","1":[1],"ids":7})");
}

TEST_CASE("a rewrite (--mask) reaches the strings inside structured values") {
  EncodedArgs args = encode_args(std::map<std::string, std::string>{{"card", "4111"}}, "4111"s);
  TlogBuilder file;
  file.site(1, "{} {}", args);
  file.record(1, args.args);
  Decoded d = decode(file.finish(), [](std::string& text) {
    for (auto at = text.find("4111"); at != std::string::npos; at = text.find("4111")) text.replace(at, 4, "****");
  });
  REQUIRE(d.json.size() == 1);
  CHECK(json_args(d.json[0]) == R"([{"card":"****"},"****"])");
}

TEST_CASE("extreme counts and periods render or are refused, and their JSON stays valid") {
  struct Rep {
    TypeTag tag;
    std::vector<std::string> values;
  };
  auto bytes = [](auto v) {
    std::string out;
    val::le(out, v);
    return out;
  };
  std::vector<Rep> reps = {
      {TypeTag::i64, {bytes(INT64_MIN), bytes(INT64_MAX), bytes(std::int64_t{-1}), bytes(std::int64_t{0})}},
      {TypeTag::u64, {bytes(UINT64_MAX), bytes(std::uint64_t{1})}},
      {TypeTag::i8, {bytes(std::int8_t{-128})}},
      {TypeTag::f32,
       {bytes(3e38f), bytes(-1e30f), bytes(std::numeric_limits<float>::quiet_NaN()),
        bytes(std::numeric_limits<float>::infinity())}},
      {TypeTag::f64,
       {bytes(1e308), bytes(-1e19), bytes(std::numeric_limits<double>::quiet_NaN()),
        bytes(-std::numeric_limits<double>::infinity()), bytes(1.5)}},
  };
  std::vector<std::pair<std::uint64_t, std::uint64_t>> periods = {{1, 1000000000000000000ull},
                                                                  {1000000000000000000ull, 1},
                                                                  {UINT64_MAX, 1},
                                                                  {1, UINT64_MAX},
                                                                  {7, 3},
                                                                  {60, 1},
                                                                  {86400, 1},
                                                                  {1, 1000}};
  std::vector<std::string> formats = {"{}", "{:%H:%M:%S}", "{:>30}", "{:%Y-%m-%d}", "{:%Q%q}"};
  int rendered = 0, refused = 0;
  for (const auto& rep : reps) {
    for (auto [num, den] : periods) {
      for (int kind = 0; kind < 3; ++kind) {
        std::string type = kind == 0   ? expr::duration(rep.tag, num, den)
                           : kind == 1 ? expr::time_point(terse::schema::Clock::system, rep.tag, num, den)
                                       : expr::time_point(terse::schema::Clock::steady, rep.tag, num, den);
        for (const auto& format : formats) {
          for (const auto& value : rep.values) {
            INFO("rep " << int(rep.tag) << " period " << num << "/" << den << " kind " << kind << " format " << format);
            TlogBuilder file;
            EncodedArgs args;
            add_arg(args, RawStructured{type, value});
            file.site(1, format, args);
            file.record(1, args.args);
            Decoded d = decode(file.finish());
            REQUIRE(d.messages.size() == 1);
            CHECK(valid_json(d.json[0]));
            (d.formatted[0] ? rendered : refused)++;
          }
        }
      }
    }
  }
  CHECK(rendered > 0);
  CHECK(refused > 0);
}

TEST_CASE("names and text from the file come out as valid JSON whatever their bytes") {
  std::string bad = "\xff\xfe\"\\\x01";
  std::string type =
      expr::aggregate(bad, {{bad, expr::enumeration(TypeTag::u8, bad, {{0, bad}})},
                            {"", expr::path()},
                            {"x", expr::map(expr::enumeration(TypeTag::u8, "E", {{1, bad}}), expr::preformatted())}});
  std::string value = "\x00"s;
  val::string(value, bad);
  val::count(value, 2, 2);
  value += "\x01"s;
  val::string(value, bad);
  value += "\x02"s;
  val::null_string(value);
  EncodedArgs args;
  add_arg(args, RawStructured{type, value});
  TlogBuilder file;
  file.site(1, "{}", args, std::vector<std::string>{bad});
  file.record(1, args.args);
  Decoded d = decode(file.finish());
  REQUIRE(d.json.size() == 1);
  CHECK(valid_json(d.json[0]));
}
