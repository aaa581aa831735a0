// The `terse` binary as an operator runs it, on files the runtime wrote.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <memory>
#include <regex>
#include <variant>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "file_helpers.hpp"
#include "process.hpp"

using namespace terse::test;

namespace {

// ---- a small strict JSON reader, enough to check terse's JSON lines --------

struct Json;
// A member type of its own rather than std::pair: a pair of an incomplete
// type inside the variant does not compile with every standard library.
struct JsonMember;
using JsonObject = std::vector<JsonMember>;  // keeps key order
using JsonArray = std::vector<Json>;
struct Json {
  std::variant<std::nullptr_t, bool, double, std::string, JsonArray, JsonObject> value;
  std::string number_text;  // a number as written
  const JsonObject& object() const { return std::get<JsonObject>(value); }
  const JsonArray& array() const { return std::get<JsonArray>(value); }
  const std::string& string() const { return std::get<std::string>(value); }
  const Json* find(const std::string& key) const;
};
struct JsonMember {
  std::string key;
  Json value;
};
const Json* Json::find(const std::string& key) const {
  for (const auto& [k, v] : object())
    if (k == key) return &v;
  return nullptr;
}

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : s_(text) {}

  // Parses exactly one value filling the whole text; false on any deviation
  // from RFC 8259 (raw control characters in strings included).
  bool parse(Json& out) {
    if (!value(out)) return false;
    skip_space();
    return i_ == s_.size();
  }

 private:
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  bool value(Json& out) {
    skip_space();
    if (i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '{') return object(out);
    if (c == '[') return array(out);
    if (c == '"') {
      std::string text;
      if (!string(text)) return false;
      out.value = std::move(text);
      return true;
    }
    if (literal("true")) return out.value = true, true;
    if (literal("false")) return out.value = false, true;
    if (literal("null")) return out.value = nullptr, true;
    return number(out);
  }
  bool number(Json& out) {
    static const std::regex pattern(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
    std::size_t start = i_;
    while (i_ < s_.size() && std::strchr("+-0123456789.eE", s_[i_]) != nullptr && s_[i_] != '\0') ++i_;
    std::string text(s_.substr(start, i_ - start));
    if (!std::regex_match(text, pattern)) return false;
    out.value = std::stod(text);
    out.number_text = text;
    return true;
  }
  bool object(Json& out) {
    ++i_;
    JsonObject members;
    skip_space();
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      out.value = std::move(members);
      return true;
    }
    for (;;) {
      skip_space();
      std::string key;
      if (i_ >= s_.size() || s_[i_] != '"' || !string(key)) return false;
      skip_space();
      if (i_ >= s_.size() || s_[i_++] != ':') return false;
      Json v;
      if (!value(v)) return false;
      members.push_back(JsonMember{std::move(key), std::move(v)});
      skip_space();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (s_[i_++] != '}') return false;
      out.value = std::move(members);
      return true;
    }
  }
  bool array(Json& out) {
    ++i_;
    JsonArray items;
    skip_space();
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      out.value = std::move(items);
      return true;
    }
    for (;;) {
      Json v;
      if (!value(v)) return false;
      items.push_back(std::move(v));
      skip_space();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (s_[i_++] != ']') return false;
      out.value = std::move(items);
      return true;
    }
  }
  static void put_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  bool hex4(std::uint32_t& v) {
    if (i_ + 4 > s_.size()) return false;
    v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<std::uint32_t>(c - 'A' + 10);
      else
        return false;
    }
    return true;
  }
  bool string(std::string& out) {
    ++i_;
    while (i_ < s_.size()) {
      auto c = static_cast<unsigned char>(s_[i_++]);
      if (c == '"') return true;
      if (c < 0x20) return false;
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (i_ >= s_.size()) return false;
      char e = s_[i_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          std::uint32_t cp;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            std::uint32_t low;
            if (!literal("\\u") || !hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return false;
          }
          put_utf8(out, cp);
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

bool valid_utf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    unsigned char c = *p;
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || static_cast<std::size_t>(end - p) < n) return false;
    for (std::size_t k = 1; k < n; ++k)
      if ((p[k] & 0xC0) != 0x80) return false;
    p += n;
  }
  return true;
}

std::uint64_t os_tid() { return os_thread_id(); }

const std::string kReplacement = "\xEF\xBF\xBD";

// The records every CLI test reads, with what each must print.
struct Logged {
  std::string level;
  std::string message;
  int line = 0;
  std::size_t arg_count = 0;
};

struct CliFixture {
  TempDir dir;
  std::string path;
  std::vector<Logged> logged;
  std::string awkward;                // the message with quotes, escapes and bad UTF-8
  std::string awkward_expected_json;  // what a JSON reader must get back

  CliFixture() {
    terse::start(test_config(dir.path()));
    int line = 0;
    line = __LINE__ + 1;
    TERSE_TRACE("trace {}", 1);
    logged.push_back({"trace", "trace 1", line, 1});
    line = __LINE__ + 1;
    TERSE_DEBUG("debug {} {}", 2, true);
    logged.push_back({"debug", "debug 2 true", line, 2});
    line = __LINE__ + 1;
    TERSE_INFO("user {} logged in from {} in {:.3f} ms", 42, "10.0.0.1", 3.14159);
    logged.push_back({"info", "user 42 logged in from 10.0.0.1 in 3.142 ms", line, 3});
    line = __LINE__ + 1;
    TERSE_WARN("queue depth {} over limit {}", 1200u, 1000u);
    logged.push_back({"warn", "queue depth 1200 over limit 1000", line, 2});
    awkward =
        std::string("say \"hi\" \\ back\nslash\ttab \x01\x1f\x7f bad \xff\xfe cut \xc3( ok \xc3\xa9 \xe6\x97\xa5");
    awkward_expected_json = std::string("say \"hi\" \\ back\nslash\ttab \x01\x1f\x7f bad ") + kReplacement +
                            kReplacement + " cut " + kReplacement + "( ok \xc3\xa9 \xe6\x97\xa5";
    line = __LINE__ + 1;
    TERSE_ERROR("awkward: {}", awkward);
    logged.push_back({"error", "awkward: " + awkward, line, 1});
    line = __LINE__ + 1;
    TERSE_CRITICAL("critical {:>6}|{:<4}|{:x}", "r", 'c', 255);
    logged.push_back({"critical", "critical      r|c   |ff", line, 3});
    terse::stop();
    auto files = log_files(dir.path());
    REQUIRE(files.size() == 1);
    path = files[0];
  }
};

}  // namespace

TEST_CASE("cat prints the default pattern: time, level, thread, file:line, message") {
  CliFixture fx;
  auto run = run_terse({"cat", fx.path});
  CHECK(run.exit_code == 0);
  CHECK(run.err.empty());
  // The awkward message holds a newline, so it spans two output lines.
  std::string out = run.out;
  std::size_t at = 0;
  for (const auto& l : fx.logged) {
    // The default prints wall-clock time with nanoseconds.
    static const std::regex prefix(R"(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{9} )");
    std::string rest = out.substr(at);
    std::smatch m;
    REQUIRE(std::regex_search(rest, m, prefix, std::regex_constants::match_continuous));
    std::string after = rest.substr(static_cast<std::size_t>(m.length(0)));
    std::string expect = l.level + " [" + std::to_string(os_tid()) + "] ";
    INFO(after.substr(0, 200));
    REQUIRE(after.compare(0, expect.size(), expect) == 0);
    after = after.substr(expect.size());
    std::string site = ":" + std::to_string(l.line) + " " + l.message + "\n";
    std::size_t colon = after.find(site);
    REQUIRE(colon != std::string::npos);
    std::string file = after.substr(0, colon);
    CHECK(file.find("cli_test.cpp") != std::string::npos);
    CHECK(file.find('\n') == std::string::npos);
    at += static_cast<std::size_t>(m.length(0)) + expect.size() + colon + site.size();
  }
  CHECK(at == out.size());
}

TEST_CASE("cat --format prints only the placeholders asked for") {
  CliFixture fx;
  auto run = run_terse({"cat", "--format", "{level} {message}", fx.path});
  CHECK(run.exit_code == 0);
  std::string expected;
  for (const auto& l : fx.logged) expected += l.level + " " + l.message + "\n";
  CHECK(run.out == expected);

  auto specs = run_terse({"cat", "--format", "{line:>5}|{level:<8}|", fx.path});
  CHECK(specs.exit_code == 0);
  std::string expected_specs;
  for (const auto& l : fx.logged) expected_specs += fmt::format("{:>5}|{:<8}|\n", l.line, l.level);
  CHECK(specs.out == expected_specs);
}

TEST_CASE("cat --json prints one well-formed JSON object per record with the documented keys") {
  CliFixture fx;
  auto run = run_terse({"cat", "--json", fx.path});
  CHECK(run.exit_code == 0);
  CHECK(run.err.empty());
  CHECK(valid_utf8(run.out));
  auto lines = split_lines(run.out);
  REQUIRE(lines.size() == fx.logged.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    INFO(lines[i]);
    Json json;
    REQUIRE(JsonParser(lines[i]).parse(json));
    REQUIRE(std::holds_alternative<JsonObject>(json.value));
    std::vector<std::string> keys;
    for (const auto& [k, v] : json.object()) keys.push_back(k);
    CHECK(keys == std::vector<std::string>{"time", "level", "thread", "file", "line", "message", "args"});
    const auto& l = fx.logged[i];
    static const std::regex rfc3339(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}(Z|[+-]\d{2}:\d{2}))");
    CHECK(std::regex_match(json.find("time")->string(), rfc3339));
    CHECK(json.find("level")->string() == l.level);
    CHECK(json.find("thread")->number_text == std::to_string(os_tid()));
    CHECK(json.find("file")->string().find("cli_test.cpp") != std::string::npos);
    CHECK(json.find("line")->number_text == std::to_string(l.line));
    REQUIRE(std::holds_alternative<JsonArray>(json.find("args")->value));
    CHECK(json.find("args")->array().size() == l.arg_count);
    if (l.level != "error") CHECK(json.find("message")->string() == l.message);
  }
}

TEST_CASE("cat --json escapes quotes, backslashes, newlines and control bytes, and replaces invalid UTF-8") {
  CliFixture fx;
  auto run = run_terse({"cat", "--json", "--level", "error", fx.path});
  CHECK(run.exit_code == 0);
  auto lines = split_lines(run.out);
  REQUIRE(lines.size() == 2);
  Json json;
  INFO(lines[0]);
  REQUIRE(JsonParser(lines[0]).parse(json));
  CHECK(json.find("message")->string() == "awkward: " + fx.awkward_expected_json);
  REQUIRE(json.find("args")->array().size() == 1);
  CHECK(json.find("args")->array()[0].string() == fx.awkward_expected_json);
  // Control bytes appear only as escapes, never raw.
  for (char c : lines[0]) CHECK(static_cast<unsigned char>(c) >= 0x20);
  CHECK(lines[0].find("\\u0001") != std::string::npos);
  CHECK(lines[0].find("\\n") != std::string::npos);
}

TEST_CASE("cat --json gives argument values their JSON types") {
  CliFixture fx;
  auto run = run_terse({"cat", "--json", fx.path});
  auto lines = split_lines(run.out);
  REQUIRE(lines.size() == fx.logged.size());
  Json debug, info;
  REQUIRE(JsonParser(lines[1]).parse(debug));
  REQUIRE(JsonParser(lines[2]).parse(info));
  const auto& d = debug.find("args")->array();
  CHECK(d[0].number_text == "2");
  CHECK(std::get<bool>(d[1].value) == true);
  const auto& a = info.find("args")->array();
  CHECK(a[0].number_text == "42");
  CHECK(a[1].string() == "10.0.0.1");
  CHECK(std::get<double>(a[2].value) == Approx(3.14159));
}

TEST_CASE("cat --utc prints times in UTC") {
  CliFixture fx;
  auto run = run_terse({"cat", "--json", "--utc", fx.path});
  CHECK(run.exit_code == 0);
  for (const auto& line : split_lines(run.out)) {
    Json json;
    REQUIRE(JsonParser(line).parse(json));
    const std::string& time = json.find("time")->string();
    CHECK(time.back() == 'Z');
  }
}

TEST_CASE("cat --level warn prints warn and above only") {
  CliFixture fx;
  auto run = run_terse({"cat", "--format", "{level} {message}", "--level", "warn", fx.path});
  CHECK(run.exit_code == 0);
  std::string expected;
  for (const auto& l : fx.logged)
    if (l.level == "warn" || l.level == "error" || l.level == "critical") expected += l.level + " " + l.message + "\n";
  CHECK(run.out == expected);

  auto bad = run_terse({"cat", "--level", "loud", fx.path});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("loud") != std::string::npos);
}

TEST_CASE("cat - reads standard input and prints what the path would") {
  CliFixture fx;
  auto from_path = run_terse({"cat", "--json", fx.path});
  auto from_stdin = run_terse({"cat", "--json", "-"}, fx.path);
  CHECK(from_stdin.exit_code == 0);
  CHECK(from_stdin.err.empty());
  CHECK(from_stdin.out == from_path.out);
  CHECK_FALSE(from_stdin.out.empty());
}

TEST_CASE("cat of a directory prints its files") {
  CliFixture fx;
  auto from_dir = run_terse({"cat", "--format", "{message}", fx.dir.path()});
  auto from_file = run_terse({"cat", "--format", "{message}", fx.path});
  CHECK(from_dir.exit_code == 0);
  CHECK(from_dir.out == from_file.out);
}

TEST_CASE("a bad --format is a usage error with exit code 2 and a message") {
  CliFixture fx;
  for (const std::string pattern : {"{nope}", "{message", "{level:d}", "}"}) {
    INFO(pattern);
    auto run = run_terse({"cat", "--format", pattern, fx.path});
    CHECK(run.exit_code == 2);
    CHECK(run.out.empty());
    CHECK(run.err.find("--format") != std::string::npos);
  }
  // --json and --format together make no sense.
  auto both = run_terse({"cat", "--json", "--format", "{message}", fx.path});
  CHECK(both.exit_code == 2);
}

TEST_CASE("verify exits 0 on an intact file and 1 on a damaged one") {
  CliFixture fx;
  auto ok = run_terse({"verify", fx.path});
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find(fx.path + ": ok") != std::string::npos);
  CHECK(ok.err.empty());

  std::string bytes = read_file(fx.path);
  auto records = frames_of_type(bytes, kRecordsFrame);
  REQUIRE_FALSE(records.empty());
  flip_byte(bytes, records[0].payload() + 2);
  std::string damaged = fx.dir / "damaged.tlog.bad";
  write_file(damaged, bytes);
  auto bad = run_terse({"verify", damaged});
  CHECK(bad.exit_code == 1);
  CHECK(bad.out.find("DAMAGED") != std::string::npos);
  CHECK(bad.err.find(damaged + ": offset " + std::to_string(records[0].offset)) != std::string::npos);

  // One damaged file among intact ones fails the whole run.
  auto mixed = run_terse({"verify", fx.path, damaged});
  CHECK(mixed.exit_code == 1);

  auto missing = run_terse({"verify", fx.dir / "missing.tlog"});
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("missing.tlog") != std::string::npos);
}

TEST_CASE("a closed output pipe ends cat quietly with exit code 0") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  // Far more text than a pipe holds, so the reader leaves while cat writes.
  for (int i = 0; i < 200000; ++i) TERSE_INFO("line {} of a long output that a pager stops reading", i);
  terse::stop();
  auto files = log_files(dir.path());
  REQUIRE(files.size() == 1);

  std::string err_path = dir / "stderr.txt";
  Process cat({terse_cli_path(), "cat", files[0]}, Process::Output::pipe, err_path);
  // Like `head -1`: read the first line, then go away.
  REQUIRE(cat.read_until([](const std::string& out) { return out.find('\n') != std::string::npos; },
                         std::chrono::seconds(30)));
  cat.close_output();
  CHECK(cat.out.find("line 0 of a long output") != std::string::npos);
  CHECK(cat.wait(std::chrono::seconds(60)) == 0);
  CHECK(read_file(err_path).empty());
}
