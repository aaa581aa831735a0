// FORMAT.md 1.4: a rate-limited site's records start with a suppressed count
// (§6 flags, §7), and a suppressed control record (§7 kind 3) reports what a
// site suppressed after its last record; hostile versions of both are
// reported and cost only themselves.
#include <catch2/catch.hpp>

#include "tlog_builder.hpp"

using namespace terse::test;
namespace wire = terse::wire;
namespace schema = terse::schema;

namespace {

// A site entry with flags, written field by field: no types, no names.
std::string site_body(std::uint32_t id, std::string_view format, std::string_view flags) {
  std::string body;
  wire::put_varint(body, id);
  body += static_cast<char>(3);  // warn
  wire::put_varint(body, 7);
  wire::put_bytes(body, "net/conn.cpp");
  wire::put_bytes(body, format);
  wire::put_varint(body, 1);
  body += static_cast<char>(kI32);
  wire::put_varint(body, 0);  // arg_types
  wire::put_varint(body, 0);  // arg_names
  body += flags;
  return body;
}

std::string counted(std::uint64_t suppressed, int value) {
  std::string args;
  wire::put_varint(args, suppressed);
  val::le(args, value);
  return args;
}

std::string report(std::uint64_t site, std::uint64_t count) {
  std::string args(1, static_cast<char>(schema::ControlKind::suppressed));
  wire::put_varint(args, site);
  wire::put_varint(args, count);
  return args;
}

}  // namespace

TEST_CASE("a limited site's records carry their suppressed count; a report names its site") {
  TlogBuilder file;
  file.site_body(site_body(1, "failed {}", std::string(1, '\x01')));
  file.record(1, counted(0, 5));
  file.record(0, report(1, 412));
  Decoded d = decode(file.finish());
  CHECK(d.problems.empty());
  CHECK(d.messages == std::vector<std::string>{"failed 5", "412 calls suppressed after the site's last record"});
  REQUIRE(d.json.size() == 2);
  CHECK(d.json[0].find("\"args\":[5]}") != std::string::npos);  // no key for a count of 0
  CHECK(d.json[1].find("\"level\":\"warn\"") != std::string::npos);
  CHECK(d.json[1].find("\"file\":\"net/conn.cpp\",\"line\":7") != std::string::npos);
  CHECK(d.json[1].find("\"args\":[],\"suppressed\":412}") != std::string::npos);
}

TEST_CASE("a limited site's count is before its arguments, which stay delta-coded") {
  TlogBuilder file;
  file.site_body(site_body(1, "failed {}", std::string(1, '\x01')));
  file.record(1, counted(3, 100));
  file.record(1, counted(300, 5));  // stored as a delta: 105
  Decoded d = decode(file.finish());
  CHECK(d.problems.empty());
  CHECK(d.messages == std::vector<std::string>{"failed 100", "failed 105"});
  REQUIRE(d.json.size() == 2);
  CHECK(d.json[1].find("\"suppressed\":300}") != std::string::npos);
}

TEST_CASE("hostile counts and reports are reported and cost only their own record") {
  TlogBuilder file;
  file.site_body(site_body(1, "failed {}", std::string(1, '\x01')));
  file.record(1, "");                                            // no count at all
  file.record(1, std::string(10, '\xff') + "\x01\x02\x03\x04");  // a count past 64 bits
  file.record(0, report(9, 1));                                  // a site never described
  file.record(0, std::string(1, static_cast<char>(schema::ControlKind::suppressed)) + "\x01");  // cut short
  file.record(1, counted(1, 8));
  Decoded d = decode(file.finish());
  CHECK(any_problem_says(d, "lacks its suppressed count"));
  CHECK(any_problem_says(d, "call site 9 cannot be decoded"));
  CHECK(any_problem_says(d, "suppressed-calls record is malformed"));
  CHECK(d.messages.size() >= 1);
  CHECK(d.messages.back() == "failed 8");
}

TEST_CASE("flag bits a reader does not know are ignored; malformed flags make the site unusable") {
  TlogBuilder file;
  file.site_body(site_body(1, "plain {}", std::string(1, '\x0c')));  // bits 2 and 3: not limited
  std::string plain;
  val::le(plain, 9);
  file.record(1, plain);
  file.site_body(site_body(2, "broken {}", std::string(1, '\x80')));  // a varint cut short
  file.record(2, counted(0, 1));
  Decoded d = decode(file.finish());
  CHECK(d.messages == std::vector<std::string>{"plain 9"});
  CHECK(any_problem_says(d, "its flags are malformed"));
}
