// Structured arguments from a file nobody vouches for: every bound of
// FORMAT.md §8.1 holds, a malformed type expression costs its site, a
// malformed value costs its record, and nothing crashes or runs away.
#include <chrono>

#include <catch2/catch.hpp>

#include "tlog_builder.hpp"

using namespace terse::test;
using namespace std::string_literals;

namespace {

std::string i32() { return expr::scalar(TypeTag::i32); }

std::string all_problems(const Decoded& d) {
  std::string out;
  for (const auto& p : d.problems) out += p + "\n";
  return out;
}

// A site whose only argument has `type`, then a record holding `value`, then
// a plain site whose record must still decode.
Decoded decode_one(const std::string& type, const std::string& value) {
  TlogBuilder file;
  file.site(1, "{}", {static_cast<std::uint8_t>(TypeTag::structured)}, std::vector<std::string>{type});
  std::string args;
  val::le(args, static_cast<std::uint32_t>(value.size()));
  args += value;
  file.record(1, args);
  file.site(2, "still here {}", {static_cast<std::uint8_t>(TypeTag::i32)});
  std::string plain;
  val::le(plain, 5);
  file.record(2, plain);
  return decode(file.finish());
}

// The site is refused: reported once, no record of it, the next site fine.
void check_site_refused(const std::string& type, std::string_view why) {
  Decoded d = decode_one(type, "");
  INFO(all_problems(d));
  CHECK(any_problem_says(d, why));
  CHECK(any_problem_says(d, "cannot be rendered"));
  REQUIRE(d.messages.size() == 1);
  CHECK(d.messages[0] == "still here 5");
}

// The record is refused: reported, and the next record fine.
void check_record_refused(const std::string& type, const std::string& value) {
  Decoded d = decode_one(type, value);
  INFO(all_problems(d));
  CHECK(any_problem_says(d, "call site 1"));
  REQUIRE(d.messages.size() == 1);
  CHECK(d.messages[0] == "still here 5");
}

std::string nested_sequences(int depth) {
  std::string type = i32();
  for (int k = 1; k < depth; ++k) type = expr::sequence(type);
  return type;
}

}  // namespace

TEST_CASE("type expressions nest at most 16 levels") {
  std::string value;
  for (int k = 1; k < 16; ++k) val::count(value, 1, 1);
  val::le(value, 9);
  Decoded ok = decode_one(nested_sequences(16), value);
  INFO(all_problems(ok));
  CHECK(ok.problems.empty());
  REQUIRE(ok.messages.size() == 2);
  CHECK(ok.messages[0] == std::string(15, '[') + "9" + std::string(15, ']'));
  check_site_refused(nested_sequences(17), "deeper than 16");
  check_site_refused(nested_sequences(100000), "deeper than 16");
}

TEST_CASE("a site's expressions hold at most 4096 nodes and 1 MiB of text") {
  std::vector<std::string> inner(16, i32());
  std::vector<std::string> outer(255, expr::tuple(inner));
  check_site_refused(expr::tuple(outer), "more than 4096 nodes");
  check_site_refused(expr::aggregate(std::string((1 << 20) + 1, 'n'), {{"a", i32()}}), "1 MiB of text");
  check_site_refused(expr::tuple(std::vector<std::string>(256, i32())), "over 255");
  std::vector<std::pair<std::int64_t, std::string>> many;
  for (int k = 0; k < 65537; ++k) many.emplace_back(k, "");
  check_site_refused(expr::enumeration(TypeTag::i32, "E", many), "over 65536");
}

TEST_CASE("malformed expressions refuse their site") {
  check_site_refused("\x60", "unknown type code 0x60");
  check_site_refused("\x11", "unknown type code 0x11");
  check_site_refused(expr::sequence(""), "ends early");
  check_site_refused(expr::duration(TypeTag::string, 1, 1), "duration counts in type tag");
  check_site_refused(expr::duration(TypeTag::i64, 0, 1), "period of zero");
  check_site_refused(expr::enumeration(TypeTag::f64, "E", {}), "underlying type");
  check_site_refused(expr::user("U", "{} {}", {i32()}), "unusable format string");
  check_site_refused(expr::user("U", "{:999999999}", {i32()}), "unusable format string");
}

TEST_CASE("a bitset holds at most 2^20 bits, and its value exactly its bytes") {
  Decoded widest = decode_one(expr::bitset(1 << 20), std::string(1 << 17, '\xff'));
  INFO(all_problems(widest));
  CHECK(widest.problems.empty());
  REQUIRE(widest.messages.size() == 2);
  CHECK(widest.messages[0] == std::string(1 << 20, '1'));
  check_site_refused(expr::bitset((1 << 20) + 1), "1048577 bits, over 1048576");
  check_site_refused(expr::bitset(UINT64_MAX), "over 1048576");
  check_site_refused(std::string(1, static_cast<char>(TypeNode::bitset)), "ends early");
  check_record_refused(expr::bitset(10), "\x05"s);
  check_record_refused(expr::bitset(10), "\x05\x00\x00"s);
  check_record_refused(expr::bitset(1), ""s);
}

TEST_CASE("type expressions and names must match the site's tags") {
  auto structured = static_cast<std::uint8_t>(TypeTag::structured);
  auto int32 = static_cast<std::uint8_t>(TypeTag::i32);
  struct Case {
    std::vector<std::uint8_t> tags;
    std::optional<std::vector<std::string>> types;
    std::optional<std::vector<std::string>> names;
    std::string why;
  };
  std::vector<Case> cases = {
      {{structured}, std::nullopt, std::nullopt, "no type expressions"},
      {{structured, structured}, std::vector<std::string>{i32()}, std::nullopt, "2 structured arguments but 1"},
      {{int32}, std::vector<std::string>{i32()}, std::nullopt, "0 structured arguments but 1"},
      {{int32, int32}, std::vector<std::string>{}, std::vector<std::string>{"a"}, "argument names are malformed"},
  };
  for (const auto& c : cases) {
    INFO(c.why);
    TlogBuilder file;
    file.site(1, "{}", c.tags, c.types, c.names);
    std::string args;
    for (std::uint8_t tag : c.tags) {
      if (tag == structured) {
        val::le(args, std::uint32_t{4});
      }
      val::le(args, 1);
    }
    file.record(1, args);
    Decoded d = decode(file.finish());
    INFO(all_problems(d));
    CHECK(any_problem_says(d, c.why));
    CHECK(d.messages.empty());
  }
}

TEST_CASE("a {name} that is not an argument name is refused like a bad format string") {
  TlogBuilder file;
  EncodedArgs args = encode_args(1);
  file.site(1, "{user} {nobody}", args.tags, std::vector<std::string>{}, std::vector<std::string>{"user"});
  file.record(1, args.args);
  Decoded d = decode(file.finish());
  CHECK(any_problem_says(d, "argument named 'nobody'"));
  REQUIRE(d.messages.size() == 1);
  CHECK(d.messages[0] == "<unformattable> {user} {nobody} | 1");
}

TEST_CASE("values that do not match their expression refuse their record") {
  std::string seq = expr::sequence(i32());
  std::string past_end;
  val::count(past_end, 1000, 1000);
  val::le(past_end, 1);
  check_record_refused(seq, past_end);
  std::string trailing;
  val::count(trailing, 1, 1);
  val::le(trailing, 1);
  trailing += "x";
  check_record_refused(seq, trailing);
  check_record_refused(seq, "\x01\x00");
  std::string shrunk_total;
  val::le(shrunk_total, std::uint32_t{2} | terse::schema::kCountTruncatedBit);
  val::le(shrunk_total, std::uint64_t{1});
  val::le(shrunk_total, 1);
  val::le(shrunk_total, 2);
  check_record_refused(seq, shrunk_total);
  check_record_refused(expr::optional(i32()), "\x02\x00\x00\x00\x00"s);
  check_record_refused(expr::variant({i32()}), "\x01\x00\x00\x00\x00"s);
  check_record_refused(expr::secret(i32()), "\x03"s);
  check_record_refused(expr::scalar(TypeTag::string),
                       "\x09\x00\x00\x00"
                       "abc"s);

  // The argument's u32 size runs past the record.
  TlogBuilder file;
  file.site(1, "{}", {static_cast<std::uint8_t>(TypeTag::structured)}, std::vector<std::string>{seq});
  std::string args;
  val::le(args, std::uint32_t{100});
  val::count(args, 0, 0);
  file.record(1, args);
  Decoded d = decode(file.finish());
  CHECK(d.messages.empty());
  CHECK(any_problem_says(d, "call site 1"));
}

TEST_CASE("a record renders at most 2^20 elements") {
  std::string monostates = expr::sequence(expr::monostate());
  std::string many;
  val::count(many, (1u << 20) + 1, (1u << 20) + 1);
  check_record_refused(monostates, many);
  std::string most;
  val::count(most, 0x7FFFFFFF, 0x7FFFFFFF);
  auto start = std::chrono::steady_clock::now();
  check_record_refused(monostates, most);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  std::string wide = expr::sequence(expr::tuple(std::vector<std::string>(255, expr::monostate())));
  std::string fill;
  val::count(fill, 1u << 17, 1u << 17);
  check_record_refused(wide, fill);  // 2^25 values, though few elements
  std::string fine;
  val::count(fine, 1u << 20, 1u << 20);
  Decoded d = decode_one(monostates, fine);
  CHECK(d.problems.empty());
  CHECK(d.messages.size() == 2);
}

TEST_CASE("rendering stops at 64 MiB however specs and names multiply") {
  // 2^20 one-byte enum values whose name is 64 KiB would print 64 GiB.
  std::string name(1 << 16, 'e');
  std::string type = expr::sequence(expr::enumeration(TypeTag::u8, "E", {{0, name}}));
  std::string value;
  val::count(value, 1u << 20, 1u << 20);
  value.append(1u << 20, '\0');
  auto start = std::chrono::steady_clock::now();
  Decoded d = decode_one(type, value);
  INFO(all_problems(d));
  CHECK(d.problems.empty());
  REQUIRE(d.messages.size() == 2);
  CHECK_FALSE(d.formatted[0]);
  CHECK(d.messages[0].size() < (1u << 20));
  CHECK(d.json[0].size() < (80u << 20));
  CHECK(d.json[0].find("64 MiB") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));

  // A width on each of a million elements.
  TlogBuilder file;
  EncodedArgs args = encode_args(std::vector<int>(1 << 20, 7));
  file.site(1, "{::>60000}", args);
  file.record(1, args.args);
  Decoded wide = decode(file.finish());
  REQUIRE(wide.messages.size() == 1);
  CHECK_FALSE(wide.formatted[0]);
  CHECK(wide.errors[0].find("64 MiB") != std::string::npos);
}

TEST_CASE("widths inside structured specs are bounded like any other") {
  TlogBuilder file;
  EncodedArgs args = encode_args(std::vector<int>{1}, 70000);
  file.site(1, "{::>70000}", args.tags, args.types);
  file.site(2, "{::>{}}", args.tags, args.types);
  file.record(1, args.args);
  file.record(2, args.args);
  Decoded d = decode(file.finish());
  CHECK(any_problem_says(d, "width or precision over"));
  REQUIRE(d.messages.size() == 2);
  CHECK_FALSE(d.formatted[0]);
  CHECK_FALSE(d.formatted[1]);
}
