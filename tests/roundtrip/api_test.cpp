// The logging API around the rendering rule: levels, start/flush/stop,
// restarts, oversized records and the JSON form of arguments.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <fmt/ranges.h>  // the expectation: fmt::format of a vector
#include <terse/std.hpp>

#include "roundtrip.hpp"

using namespace terse::test;
using Catch::Matchers::Contains;

namespace {

int g_evaluations = 0;
int counted(int value) {
  ++g_evaluations;
  return value;
}

// Every record of a directory as the JSON object the CLI prints.
std::vector<std::string> json_records(const std::string& directory) {
  std::vector<std::string> out;
  for (const auto& file : log_files(directory)) {
    terse::decoder::decode_file(
        file,
        [&](const terse::decoder::Record& r) {
          std::string json;
          terse::decoder::append_json_record(json, r, terse::decoder::TimeStyle{true});
          out.push_back(json);
        },
        [](const terse::decoder::Problem& p) { FAIL("decode problem: " << p.what << " at " << p.offset); });
  }
  return out;
}

std::string args_of(const std::string& json) {
  const auto begin = json.find(",\"args\":[");
  REQUIRE(begin != std::string::npos);
  REQUIRE(json.size() >= 3);
  REQUIRE(json.compare(json.size() - 3, 3, "]}\n") == 0);
  return json.substr(begin + 9, json.size() - begin - 9 - 3);
}

}  // namespace

TEST_CASE("long strings, escapes and structured values between scalars come out whole in lines and JSON") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  std::string long_text;
  for (int i = 0; i < 1500; ++i) long_text += "a\"b\n";  // 6,000 bytes, 4,500 of them escaped in JSON
  const std::vector<int> numbers{1, 2};
  TERSE_INFO("head {} mid {} tail {}", long_text, numbers, 5);
  TERSE_INFO("short {}", 1);
  terse::stop();

  std::string lines = "before\n";
  std::string json = "before\n";
  terse::decoder::LinePattern pattern("{level} {message} [{thread:>3}]");
  std::vector<std::string> messages;
  for (const auto& file : log_files(dir.path())) {
    terse::decoder::decode_file(
        file,
        [&](const terse::decoder::Record& r) {
          pattern.append(lines, r, terse::decoder::TimeStyle{true});
          terse::decoder::append_json_record(json, r, terse::decoder::TimeStyle{true});
          std::string message;
          terse::decoder::render_message(r, message);
          messages.push_back(message);
        },
        [](const terse::decoder::Problem& p) { FAIL("decode problem: " << p.what << " at " << p.offset); });
  }
  REQUIRE(messages.size() == 2);
  const std::string expected = fmt::format("head {} mid {} tail {}", long_text, numbers, 5);
  CHECK(messages[0] == "head " + long_text + " mid [1, 2] tail 5");
  CHECK(messages[0] == expected);
  CHECK(messages[1] == "short 1");
  CHECK(lines.rfind("before\ninfo " + expected + " [", 0) == 0);
  CHECK(lines.find("]\ninfo short 1 [") != std::string::npos);

  std::string escaped;
  for (int i = 0; i < 1500; ++i) escaped += "a\\\"b\\n";
  REQUIRE(json.rfind("before\n{", 0) == 0);
  CHECK_THAT(json, Contains("\"message\":\"head " + escaped + " mid [1, 2] tail 5\""));
  CHECK_THAT(json, Contains(",\"args\":[\"" + escaped + "\",[1,2],5]}\n{"));
  CHECK(json.substr(json.size() - 13) == ",\"args\":[1]}\n");
}

TEST_CASE("JSON output gives each argument its JSON type") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  TERSE_INFO("{} {} {} {} {} {}", 42, -7, std::numeric_limits<std::uint64_t>::max(),
             std::numeric_limits<std::int64_t>::min(), true, false);
  TERSE_INFO("{} {} {}", 2.5, 0.1f, -1e300);
  TERSE_INFO("{} {} {}", "quote\" back\\slash\nnewline\ttab\x01", 'c', std::string("plain"));
  TERSE_INFO("{} {}", nullptr, static_cast<const char*>(nullptr));
  TERSE_INFO("no args");
  terse::stop();

  const auto records = json_records(dir.path());
  REQUIRE(records.size() == 5);
  CHECK(args_of(records[0]) == "42,-7,18446744073709551615,-9223372036854775808,true,false");
  CHECK(args_of(records[1]) == "2.5,0.1,-1e+300");
  CHECK(args_of(records[2]) == "\"quote\\\" back\\\\slash\\nnewline\\ttab\\u0001\",\"c\",\"plain\"");
  CHECK(args_of(records[3]) == "\"0x0\",null");
  CHECK(args_of(records[4]) == "");

  CHECK_THAT(records[0], Contains("\"level\":\"info\""));
  CHECK_THAT(records[0], Contains("\"message\":\"42 -7 18446744073709551615 -9223372036854775808 true false\""));
  CHECK_THAT(records[2], Contains("\"message\":\"quote\\\" back\\\\slash\\nnewline\\ttab\\u0001 c plain\""));
  CHECK_THAT(records[0], Contains("\"file\":\""));
  CHECK_THAT(records[0], Contains("api_test.cpp\""));
  CHECK(records[0].rfind("{\"time\":\"", 0) == 0);

  // The helper in test_support exposes the same array.
  const Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.lines.size() == 5);
  REQUIRE(decoded.lines[1].json_args.size() == 1);
  CHECK(decoded.lines[1].json_args[0] == "2.5,0.1,-1e+300");
}

TEST_CASE("records below the runtime level are absent, the rest keep their level") {
  TempDir dir;
  auto config = test_config(dir.path());
  config.level = terse::Level::warn;
  terse::start(config);
  CHECK(terse::level() == terse::Level::warn);
  TERSE_TRACE("trace {}", 0);
  TERSE_DEBUG("debug {}", 1);
  TERSE_INFO("info {}", 2);
  TERSE_WARN("warn {}", 3);
  TERSE_ERROR("error {}", 4);
  TERSE_CRITICAL("critical {}", 5);
  terse::stop();

  const Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  REQUIRE(decoded.lines.size() == 3);
  CHECK(decoded.lines[0].message == "warn 3");
  CHECK(decoded.lines[0].level == static_cast<std::uint8_t>(terse::Level::warn));
  CHECK(decoded.lines[1].message == "error 4");
  CHECK(decoded.lines[1].level == static_cast<std::uint8_t>(terse::Level::error));
  CHECK(decoded.lines[2].message == "critical 5");
  CHECK(decoded.lines[2].level == static_cast<std::uint8_t>(terse::Level::critical));
}

TEST_CASE("set_level changes which records are kept while running") {
  TempDir dir;
  auto config = test_config(dir.path());
  config.level = terse::Level::info;
  terse::start(config);
  // One call site per level, each reached in every phase, so a site that
  // was registered while disabled must still work once enabled.
  auto log_all = [](int phase) {
    TERSE_DEBUG("debug {}", phase);
    TERSE_INFO("info {}", phase);
    TERSE_ERROR("error {}", phase);
  };
  log_all(0);
  terse::set_level(terse::Level::debug);
  CHECK(terse::level() == terse::Level::debug);
  log_all(1);
  terse::set_level(terse::Level::error);
  log_all(2);
  terse::set_level(terse::Level::off);
  log_all(3);
  terse::set_level(terse::Level::trace);
  log_all(4);
  terse::stop();

  const Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  std::vector<std::string> messages;
  for (const auto& line : decoded.lines) messages.push_back(line.message);
  CHECK(messages == std::vector<std::string>{"info 0", "error 0", "debug 1", "info 1", "error 1", "error 2", "debug 4",
                                             "info 4", "error 4"});
}

TEST_CASE("a call below the runtime level evaluates none of its arguments") {
  TempDir dir;
  auto config = test_config(dir.path());
  config.level = terse::Level::warn;
  terse::start(config);
  g_evaluations = 0;
  TERSE_TRACE("{}", counted(1));
  TERSE_DEBUG("{} {}", counted(2), counted(3));
  TERSE_INFO("{:{}}", counted(4), counted(5));
  CHECK(g_evaluations == 0);
  // An enabled call evaluates each argument exactly once.
  TERSE_WARN("{} {}", counted(6), counted(7));
  CHECK(g_evaluations == 2);
  terse::set_level(terse::Level::off);
  TERSE_CRITICAL("{}", counted(8));
  CHECK(g_evaluations == 2);
  terse::stop();
  // After stop, calls are discarded without evaluating arguments too.
  TERSE_CRITICAL("{}", counted(9));
  CHECK(g_evaluations == 2);

  const Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.lines.size() == 1);
  CHECK(decoded.lines[0].message == "6 7");
}

TEST_CASE("start rejects bad configs with terse::Error and a clear message") {
  TempDir dir;
  auto bad = [&](auto adjust, const std::string& words) {
    auto config = test_config(dir.path());
    adjust(config);
    INFO("expected an error mentioning: " << words);
    CHECK_THAT(start_error(config), Contains(words));
  };
  bad([](terse::Config& c) { c.directory.clear(); }, "directory");
  bad([](terse::Config& c) { c.name.clear(); }, "name");
  bad([](terse::Config& c) { c.name = "sub/app"; }, "'/'");
  bad([](terse::Config& c) { c.thread_buffer_bytes = 3000; }, "power of two");
  bad([](terse::Config& c) { c.thread_buffer_bytes = 65536 + 4096; }, "power of two");
  bad([](terse::Config& c) { c.thread_buffer_bytes = 0; }, "thread_buffer_bytes");
  bad([](terse::Config& c) { c.compression_level = 1000; }, "compression_level");
  bad([](terse::Config& c) { c.compression_level = -8; }, "compression_level");
  bad([](terse::Config& c) { c.file_mode = 010000; }, "file_mode");
  bad([](terse::Config& c) { c.fsync_interval = std::chrono::milliseconds(-1); }, "fsync_interval");
  bad([](terse::Config& c) { c.thread_buffer_bytes = std::size_t{128} << 20; }, "thread_buffer_bytes");

  const std::string regular_file = dir / "not-a-directory";
  write_file(regular_file, "x");
  bad([&](terse::Config& c) { c.directory = regular_file; }, "not-a-directory");
  bad([&](terse::Config& c) { c.directory = regular_file + "/below"; }, "not-a-directory");

  // After every failure the logger is still startable and works.
  terse::start(test_config(dir.path()));
  TERSE_INFO("after {} failures", 10);
  terse::stop();
  const Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.lines.size() == 1);
  CHECK(decoded.lines[0].message == "after 10 failures");
}

// Windows has no mode bits that keep its owner out of a directory.
#ifndef _WIN32
TEST_CASE("start rejects a directory it cannot write to") {
  if (::geteuid() == 0) {
    WARN("running as root, where every directory is writable: skipped");
    return;
  }
  TempDir dir;
  const std::string locked = dir / "locked";
  std::filesystem::create_directory(locked);
  ::chmod(locked.c_str(), 0500);
  auto config = test_config(locked);
  CHECK_THAT(start_error(config), Contains("not writable"));
  ::chmod(locked.c_str(), 0700);
}
#endif

TEST_CASE("start creates a missing directory, nested ones included") {
  TempDir dir;
  const std::string nested = dir / "a/b/c";
  terse::start(test_config(nested));
  TERSE_INFO("created");
  terse::stop();
  const Decoded decoded = decode_dir(nested);
  REQUIRE(decoded.lines.size() == 1);
  CHECK(decoded.lines[0].message == "created");
}

TEST_CASE("a second start without stop throws and leaves the first logger running") {
  TempDir dir;
  TempDir other;
  terse::start(test_config(dir.path()));
  TERSE_INFO("before {}", 1);
  CHECK_THAT(start_error(test_config(other.path())), Contains("already running"));
  TERSE_INFO("after {}", 2);
  terse::stop();
  const Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.lines.size() == 2);
  CHECK(decoded.lines[0].message == "before 1");
  CHECK(decoded.lines[1].message == "after 2");
  CHECK(log_files(other.path()).empty());
}

TEST_CASE("after flush returns, every earlier record decodes without stop") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  std::size_t logged = 0;
  for (int round = 0; round < 5; ++round) {
    const int count = 1 + round * 1000;
    for (int i = 0; i < count; ++i) TERSE_INFO("round {} record {}", round, i);
    logged += static_cast<std::size_t>(count);
    terse::flush();
    const Decoded decoded = decode_dir(dir.path());
    INFO("round " << round);
    CHECK(decoded.problems.empty());
    REQUIRE(decoded.lines.size() == logged);
    CHECK(decoded.lines.back().message == fmt::format("round {} record {}", round, count - 1));
  }
  terse::stop();
  CHECK(decode_dir(dir.path()).lines.size() == logged);
}

TEST_CASE("flush with nothing logged returns, and so does flush when not running") {
  terse::flush();
  TempDir dir;
  terse::start(test_config(dir.path()));
  terse::flush();
  terse::flush();
  terse::stop();
  terse::flush();
  CHECK(decode_dir(dir.path()).lines.empty());
}

TEST_CASE("restarting in the same directory writes a second file and both decode") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  TERSE_INFO("first run {}", 1);
  terse::stop();
  terse::start(test_config(dir.path()));
  TERSE_INFO("second run {}", 2);
  TERSE_INFO("second run {}", 3);
  terse::stop();

  const auto files = log_files(dir.path());
  REQUIRE(files.size() == 2);
  const auto name0 = std::filesystem::path(files[0]).filename().string();
  const auto name1 = std::filesystem::path(files[1]).filename().string();
  // test-YYYYMMDD-NNN.tlog, the number going up by one.
  REQUIRE(name0.size() == std::string("test-YYYYMMDD-NNN.tlog").size());
  REQUIRE(name1.size() == name0.size());
  CHECK(name0.rfind("test-", 0) == 0);
  const int seq0 = std::stoi(name0.substr(14, 3));
  const int seq1 = std::stoi(name1.substr(14, 3));
  if (name0.substr(5, 8) == name1.substr(5, 8)) CHECK(seq1 == seq0 + 1);

  const Decoded first = decode_files({files[0]});
  const Decoded second = decode_files({files[1]});
  CHECK(first.intact());
  CHECK(second.intact());
  REQUIRE(first.lines.size() == 1);
  CHECK(first.lines[0].message == "first run 1");
  REQUIRE(second.lines.size() == 2);
  CHECK(second.lines[0].message == "second run 2");
  CHECK(second.lines[1].message == "second run 3");
}

namespace {

// Logs a string far larger than a 64 KiB thread buffer, then a normal
// record, and checks what decodes: the string is cut to fit, the record
// and the arguments after the string survive.
void check_oversized_string_is_cut(const std::function<void(const std::function<void()>&)>& run_logging) {
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 64 * 1024;
  terse::start(config);
  const std::string huge(200 * 1024, 'x');
  run_logging([&] {
    TERSE_INFO("<{}|{}>", huge, 7);
    TERSE_INFO("after {}", 8);
  });
  terse::stop();

  const Decoded decoded = decode_dir(dir.path());
  CHECK(decoded.intact());
  REQUIRE(decoded.lines.size() == 2);
  const std::string& cut = decoded.lines[0].message;
  INFO("message size " << cut.size());
  REQUIRE(cut.size() > 1024);
  CHECK(cut.size() < config.thread_buffer_bytes);
  CHECK(cut.front() == '<');
  // FORMAT.md §8: the kept bytes end in the cut's mark and the original length.
  const std::string mark = "... " + std::to_string(huge.size()) + " bytes total|7>";
  REQUIRE(cut.size() > mark.size());
  CHECK(cut.substr(cut.size() - mark.size()) == mark);
  CHECK(cut.find_first_not_of('x', 1) == cut.size() - mark.size());
  CHECK(decoded.lines[1].message == "after 8");
}

}  // namespace

TEST_CASE("a string longer than the thread buffer is cut, and the record still decodes") {
  // A fresh thread, so its buffer is created under this config.
  check_oversized_string_is_cut([](const std::function<void()>& log) { std::thread(log).join(); });
}

// A thread keeps its buffer for life (Config::thread_buffer_bytes says so):
// a later start() with smaller buffers does not shrink it, so a record that
// fits the old buffer arrives whole instead of being cut.
TEST_CASE("a thread that logged before a restart keeps its buffer") {
  {
    TempDir earlier;
    terse::start(test_config(earlier.path()));  // default 1 MiB buffers
    TERSE_INFO("gives this thread a buffer");
    terse::stop();
  }
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 64 * 1024;
  terse::start(config);
  const std::string big(200 * 1024, 'x');
  TERSE_INFO("<{}>", big);
  terse::stop();
  const Decoded decoded = decode_dir(dir.path());
  CHECK(decoded.intact());
  REQUIRE(decoded.lines.size() == 1);
  CHECK(decoded.lines[0].message == fmt::format("<{}>", big));
}

TEST_CASE("a null const char* decodes without crashing") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  const char* null = nullptr;
  TERSE_INFO("[{}]", null);
  TERSE_INFO("after");
  terse::stop();
  const Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.lines.size() == 2);
  CHECK(decoded.lines[1].message == "after");
  // fmt::format throws for a null C string; the decoder shows something
  // instead of the argument, and must not pass it off as an empty string.
  CHECK(decoded.lines[0].message != "[]");
}

TEST_CASE("every compression level, from zstd's fast modes to storing, writes a file that decodes") {
  for (int level : {-7, -1, 0, 1, 3, 9}) {
    INFO("compression_level " << level);
    TempDir dir;
    auto config = test_config(dir.path());
    config.compression_level = level;
    terse::start(config);
    for (int i = 0; i < 2000; ++i) TERSE_INFO("record {} of level {}", i, level);
    terse::stop();
    const Decoded decoded = decode_dir(dir.path());
    CHECK(decoded.intact());
    REQUIRE(decoded.lines.size() == 2000);
    CHECK(decoded.lines.back().message == fmt::format("record {} of level {}", 1999, level));
  }
}
