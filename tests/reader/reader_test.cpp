// terse::reader against logs the runtime wrote through its public API:
// messages are fmt::format's, arguments the values logged, the filters
// select what `terse cat` would, and damage is reported, never thrown.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <catch2/catch.hpp>
#include <terse/aggregate.hpp>
#include <terse/portable_libc.hpp>
#include <terse/reader.hpp>
#include <terse/std.hpp>
#include <terse/terse.hpp>

#include "file_helpers.hpp"
#include "test_support.hpp"

namespace reader = terse::reader;
using terse::test::TempDir;
using terse::test::test_config;
using Kind = reader::Value::Kind;

namespace shelf {
struct Item {
  int id;
  double weight;
  std::string label;
};
}  // namespace shelf
TERSE_FIELDS(shelf::Item, id, weight, label);

namespace {

std::uint64_t this_tid() { return terse::test::os_thread_id(); }

std::int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A copy of what a Record shows, kept past the next record.
struct Seen {
  reader::RecordKind kind;
  reader::Level level;
  std::int64_t time_ns;
  reader::Thread thread;
  std::string file;
  std::uint32_t line;
  std::string format;
  std::string message;
  std::vector<reader::Value> args;
  std::vector<std::string> arg_names;
  std::vector<reader::ContextField> context;
  std::uint64_t suppressed;
  std::string json;
};

std::vector<Seen> read_all(reader::Reader& r) {
  std::vector<Seen> out;
  reader::Record record;
  while (r.next(record)) {
    out.push_back(Seen{record.kind(), record.level(), record.time_ns(), record.thread(), std::string(record.file()),
                       record.line(), std::string(record.format()), record.message(), record.args(), record.arg_names(),
                       record.context(), record.suppressed(), record.json()});
  }
  return out;
}

std::vector<Seen> read_dir(const std::string& dir, reader::Options options = {}) {
  reader::Reader r({dir}, std::move(options));
  return read_all(r);
}

std::vector<std::string> messages(const std::vector<Seen>& seen) {
  std::vector<std::string> out;
  for (const auto& s : seen) out.push_back(s.message);
  return out;
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

}  // namespace

TEST_CASE("records come back with fmt::format's message and the values logged") {
  TempDir dir;
  std::int64_t before = wall_ns();
  terse::start(test_config(dir.path()));
  const char* null_text = nullptr;
  int line_ints = __LINE__ + 1;
  TERSE_INFO("ints {} {} {} {:#x}", 42, -7, std::numeric_limits<std::uint64_t>::max(), 255u);
  TERSE_WARN("floats {:.3f} {} {}", 2.5, 0.1f, -1e300);
  TERSE_ERROR("text {} {} {} {}", std::string("plain"), 'c', true, null_text);
  TERSE_DEBUG("login {user} from {ip}", fmt::arg("user", "bob"), fmt::arg("ip", std::string("10.0.0.1")));
  terse::stop();
  std::int64_t after = wall_ns();

  std::vector<Seen> seen = read_dir(dir.path());
  REQUIRE(seen.size() == 4);
  CHECK(seen[0].message == fmt::format("ints {} {} {} {:#x}", 42, -7, std::numeric_limits<std::uint64_t>::max(), 255u));
  CHECK(seen[1].message == fmt::format("floats {:.3f} {} {}", 2.5, 0.1f, -1e300));
  CHECK(seen[2].message == fmt::format("text {} {} {} {}", "plain", 'c', true, "(null)"));
  CHECK(seen[3].message == "login bob from 10.0.0.1");

  const Seen& ints = seen[0];
  CHECK(ints.kind == reader::RecordKind::log);
  CHECK(ints.level == reader::Level::info);
  CHECK(std::string(reader::level_name(ints.level)) == "info");
  CHECK(ends_with(ints.file, "reader_test.cpp"));
  CHECK(ints.line == static_cast<std::uint32_t>(line_ints));
  CHECK(ints.format == "ints {} {} {} {:#x}");
  CHECK(ints.thread.os_tid == this_tid());
  CHECK(ints.time_ns >= before);
  CHECK(ints.time_ns <= after);
  REQUIRE(ints.args.size() == 4);
  CHECK(ints.args[0].kind == Kind::signed_integer);
  CHECK(ints.args[0].i == 42);
  CHECK(ints.args[1].i == -7);
  CHECK(ints.args[2].kind == Kind::unsigned_integer);
  CHECK(ints.args[2].u == std::numeric_limits<std::uint64_t>::max());
  CHECK(ints.args[3].u == 255u);
  CHECK(ints.args[3].text == "255");

  const Seen& floats = seen[1];
  CHECK(floats.level == reader::Level::warn);
  REQUIRE(floats.args.size() == 3);
  CHECK(floats.args[0].kind == Kind::floating);
  CHECK(floats.args[0].f == 2.5);
  CHECK(floats.args[1].f == static_cast<double>(0.1f));
  CHECK(floats.args[1].text == fmt::format("{}", 0.1f));
  CHECK(floats.args[2].f == -1e300);

  const Seen& text = seen[2];
  REQUIRE(text.args.size() == 4);
  CHECK(text.args[0].kind == Kind::string);
  CHECK(text.args[0].text == "plain");
  CHECK(text.args[1].kind == Kind::character);
  CHECK(text.args[1].c == 'c');
  CHECK(text.args[2].kind == Kind::boolean);
  CHECK(text.args[2].b);
  CHECK(text.args[3].kind == Kind::null);
  CHECK(text.args[3].null_string);

  const Seen& named = seen[3];
  CHECK(named.level == reader::Level::debug);
  CHECK(named.arg_names == std::vector<std::string>{"user", "ip"});
  REQUIRE(named.args.size() == 2);
  CHECK(named.args[0].name == "user");
  CHECK(named.args[0].text == "bob");
  CHECK(named.args[1].name == "ip");
  CHECK(named.args[1].text == "10.0.0.1");
}

TEST_CASE("structured arguments are trees of values, with member names") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  std::vector<int> numbers{3, -1, 4};
  shelf::Item item{7, 1.25, "box"};
  std::optional<int> none;
  std::map<std::string, int> counts{{"a", 1}, {"b", 2}};
  TERSE_INFO("numbers {} item {} none {} counts {}", numbers, item, none, counts);
  terse::stop();

  std::vector<Seen> seen = read_dir(dir.path());
  REQUIRE(seen.size() == 1);
  const Seen& s = seen[0];
  REQUIRE(s.args.size() == 4);
  const reader::Value& list = s.args[0];
  CHECK(list.kind == Kind::list);
  CHECK(list.text == fmt::format("{}", numbers));
  REQUIRE(list.children.size() == 3);
  CHECK(list.children[0].as_int64() == 3);
  CHECK(list.children[1].as_int64() == -1);
  CHECK(list.children[2].as_int64() == 4);

  const reader::Value& object = s.args[1];
  CHECK(object.kind == Kind::object);
  CHECK(object.text == R"({id: 7, weight: 1.25, label: "box"})");
  REQUIRE(object.find("id") != nullptr);
  CHECK(object.find("id")->as_int64() == 7);
  REQUIRE(object.find("weight") != nullptr);
  CHECK(object.find("weight")->as_double() == 1.25);
  REQUIRE(object.find("label") != nullptr);
  CHECK(object.find("label")->kind == Kind::string);
  CHECK(object.find("label")->text == "box");

  CHECK(s.args[2].kind == Kind::null);

  const reader::Value& map = s.args[3];
  CHECK(map.text == fmt::format("{}", counts));
  REQUIRE(map.kind == Kind::object);
  REQUIRE(map.find("b") != nullptr);
  CHECK(map.find("b")->as_int64() == 2);
}

TEST_CASE("inside structured values, scalars keep the type they were logged with") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  std::vector<int> positives{3, 4};
  std::tuple<int, unsigned, char, double, bool, std::int64_t> mixed{5, 6u, 'x', 2.0, true, -7};
  std::map<std::string, std::vector<int>> nested{{"odd", {1, 3}}, {"even", {2}}};
  TERSE_INFO("{} {} {}", positives, mixed, nested);
  terse::stop();

  std::vector<Seen> seen = read_dir(dir.path());
  REQUIRE(seen.size() == 1);
  REQUIRE(seen[0].args.size() == 3);

  const reader::Value& list = seen[0].args[0];
  REQUIRE(list.children.size() == 2);
  CHECK(list.children[0].kind == Kind::signed_integer);
  CHECK(list.children[0].i == 3);
  CHECK(list.children[1].kind == Kind::signed_integer);

  const reader::Value& tuple = seen[0].args[1];
  CHECK(tuple.kind == Kind::list);
  CHECK(tuple.text == fmt::format("{}", mixed));
  REQUIRE(tuple.children.size() == 6);
  CHECK(tuple.children[0].kind == Kind::signed_integer);
  CHECK(tuple.children[0].i == 5);
  CHECK(tuple.children[1].kind == Kind::unsigned_integer);
  CHECK(tuple.children[1].u == 6);
  CHECK(tuple.children[2].kind == Kind::character);
  CHECK(tuple.children[2].c == 'x');
  CHECK(tuple.children[3].kind == Kind::floating);
  CHECK(tuple.children[3].f == 2.0);
  CHECK(tuple.children[4].kind == Kind::boolean);
  CHECK(tuple.children[4].b);
  CHECK(tuple.children[5].kind == Kind::signed_integer);
  CHECK(tuple.children[5].i == -7);

  // Pieces below the top carry their JSON, as `terse cat -o json` writes it.
  const reader::Value& map = seen[0].args[2];
  REQUIRE(map.kind == Kind::object);
  const reader::Value* odd = map.find("odd");
  REQUIRE(odd != nullptr);
  CHECK(odd->kind == Kind::list);
  CHECK(odd->text == "[1,3]");
  REQUIRE(odd->children.size() == 2);
  CHECK(odd->children[1].kind == Kind::signed_integer);
  CHECK(odd->children[1].text == "3");
}

TEST_CASE("a string cut at the buffer's limit says so") {
  TempDir dir;
  auto config = test_config(dir.path());
  config.thread_buffer_bytes = 64 * 1024;
  terse::start(config);
  const std::string huge(200 * 1024, 'x');
  // A fresh thread, so its buffer is made under this config.
  std::thread([&] { TERSE_INFO("<{}>", huge); }).join();
  terse::stop();

  std::vector<Seen> seen = read_dir(dir.path());
  REQUIRE(seen.size() == 1);
  REQUIRE(seen[0].args.size() == 1);
  const reader::Value& cut = seen[0].args[0];
  CHECK(cut.kind == Kind::string);
  CHECK(cut.truncated);
  CHECK(ends_with(cut.text, "... " + std::to_string(huge.size()) + " bytes total"));
  CHECK(seen[0].message == "<" + cut.text + ">");
}

TEST_CASE("context fields and the JSON line come with the record") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  {
    terse::Context request("request_id", 42);
    TERSE_INFO("inside {}", 1);
  }
  TERSE_INFO("outside {}", 2);
  terse::stop();

  reader::Options options;
  options.utc = true;
  std::vector<Seen> seen = read_dir(dir.path(), options);
  REQUIRE(seen.size() == 2);
  REQUIRE(seen[0].context.size() == 1);
  CHECK(seen[0].context[0].key == "request_id");
  CHECK(seen[0].context[0].text == "42");
  CHECK(seen[0].context[0].json == "42");
  CHECK(seen[1].context.empty());
  CHECK(seen[0].json.find(R"("message":"inside 1")") != std::string::npos);
  CHECK(seen[0].json.find(R"("context":{"request_id":42})") != std::string::npos);
  CHECK(seen[0].json.back() == '}');

  options.filter.context = {{"request_id", "42"}};
  CHECK(messages(read_dir(dir.path(), options)) == std::vector<std::string>{"inside 1"});
}

TEST_CASE("filters select by level, site, time and thread") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  TERSE_DEBUG("queue depth {}", 1);
  TERSE_INFO("connected to {}", "db");
  TERSE_WARN("queue depth {} over limit", 900);
  terse::flush();
  std::int64_t middle = wall_ns();
  std::uint64_t other_tid = 0;
  std::thread([&] {
    other_tid = this_tid();
    TERSE_ERROR("worker failed: {}", "timeout");
  }).join();
  for (int k = 0; k < 20; ++k) TERSE_CRITICAL("giving up after {} tries", 3);
  terse::stop();

  auto select = [&](reader::Filter filter) {
    reader::Options options;
    options.filter = std::move(filter);
    return messages(read_dir(dir.path(), options));
  };
  CHECK(select({}).size() == 24);

  reader::Filter levels;
  levels.min_level = reader::Level::warn;
  std::vector<std::string> high = select(levels);
  REQUIRE(high.size() == 22);
  CHECK(high[0] == "queue depth 900 over limit");
  CHECK(high[1] == "worker failed: timeout");
  CHECK(high[21] == "giving up after 3 tries");
  levels.max_level = reader::Level::error;
  CHECK(select(levels) == std::vector<std::string>{"queue depth 900 over limit", "worker failed: timeout"});

  reader::Filter sites;
  sites.sites = {"queue depth"};
  CHECK(select(sites) == std::vector<std::string>{"queue depth 1", "queue depth 900 over limit"});
  sites.sites = {"reader_test.cpp"};
  CHECK(select(sites).size() == 24);
  sites.sites = {"no_such_file.cpp"};
  CHECK(select(sites).empty());

  reader::Filter since;
  since.since_ns = middle;
  std::vector<std::string> later = select(since);
  REQUIRE(later.size() == 21);
  CHECK(later[0] == "worker failed: timeout");
  reader::Filter until;
  until.until_ns = middle;
  CHECK(select(until).size() == 3);

  reader::Filter thread;
  thread.threads = {std::to_string(other_tid)};
  CHECK(select(thread) == std::vector<std::string>{"worker failed: timeout"});

  // The predicate sees each call site once, not each of its 20 records.
  int asked = 0;
  reader::Filter custom;
  custom.site = [&asked](const reader::SiteInfo& site) {
    ++asked;
    return site.format.find("{} tries") != std::string_view::npos;
  };
  CHECK(select(custom) == std::vector<std::string>(20, "giving up after 3 tries"));
  CHECK(asked >= 5);
  CHECK(asked < 20);
}

TEST_CASE("damage goes to the callback and the readable records still come") {
  TempDir dir;
  auto config = test_config(dir.path());
  terse::start(config);
  constexpr int kBatches = 6;
  for (int batch = 0; batch < kBatches; ++batch) {
    for (int k = 0; k < 50; ++k) TERSE_INFO("batch {} record {} of a frame of its own", batch, k);
    terse::flush();  // each batch in frames of its own
  }
  terse::stop();
  std::vector<std::string> files = terse::test::log_files(dir.path());
  REQUIRE(files.size() == 1);
  std::string bytes = terse::test::read_file(files[0]);
  const std::size_t total = 50 * kBatches;
  REQUIRE(read_dir(dir.path()).size() == total);

  // A byte in the middle records frame: its checksum fails. (The middle of
  // the file can be a calibration frame, more of which come when the machine
  // is loaded and the flushes are slow: every record would still be there.)
  std::vector<terse::test::FrameAt> records = terse::test::frames_of_type(bytes, terse::test::kRecordsFrame);
  REQUIRE(records.size() >= 3);
  const terse::test::FrameAt& middle = records[records.size() / 2];
  std::string damaged = bytes;
  terse::test::flip_byte(damaged, middle.payload() + middle.stored / 2);
  terse::test::write_file(files[0], damaged);
  std::vector<reader::Problem> problems;
  reader::Options options;
  options.on_problem = [&problems](const reader::Problem& p) { problems.push_back(p); };
  std::vector<Seen> seen = read_dir(dir.path(), options);
  REQUIRE(!problems.empty());
  CHECK(!problems[0].torn_tail);
  CHECK(problems[0].source == files[0]);
  CHECK(problems[0].offset == middle.offset);
  CHECK(!seen.empty());
  CHECK(seen.size() < total);
  CHECK(seen.front().message == "batch 0 record 0 of a frame of its own");
  CHECK(seen.back().message == "batch 5 record 49 of a frame of its own");
  {
    reader::Reader r({dir.path()}, options);
    read_all(r);
    CHECK(r.summary().damaged > 0u);
  }

  // A torn tail: the end of the data, not damage.
  terse::test::write_file(files[0], bytes.substr(0, bytes.size() - 7));
  problems.clear();
  reader::Reader torn({files[0]}, options);
  std::vector<Seen> kept = read_all(torn);
  CHECK(!kept.empty());
  CHECK(kept.size() <= total);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].torn_tail);
  CHECK(torn.summary().damaged == 0u);
}

TEST_CASE("a path that cannot be opened throws OpenError; with report_open_failures it is a problem") {
  TempDir dir;
  CHECK_THROWS_AS(reader::Reader({dir / "missing.tlog"}), reader::OpenError);
  std::vector<reader::Problem> problems;
  reader::Options options;
  options.report_open_failures = true;
  options.on_problem = [&problems](const reader::Problem& p) { problems.push_back(p); };
  reader::Reader r({dir / "missing.tlog"}, options);
  reader::Record record;
  CHECK(!r.next(record));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].what.find("cannot open") != std::string::npos);
}

TEST_CASE("streams, memory and file descriptors read as files do") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  for (int k = 0; k < 3; ++k) TERSE_INFO("value {}", k * 10);
  terse::stop();
  std::vector<std::string> files = terse::test::log_files(dir.path());
  REQUIRE(files.size() == 1);
  const std::vector<std::string> expected{"value 0", "value 10", "value 20"};

  std::string bytes = terse::test::read_file(files[0]);
  reader::Reader memory = reader::Reader::from_memory(bytes);
  CHECK(messages(read_all(memory)) == expected);

  std::istringstream in(bytes);
  reader::Reader stream = reader::Reader::from_stream(in, "in");
  CHECK(messages(read_all(stream)) == expected);

  int fd = ::open(files[0].c_str(), O_RDONLY | terse::kOpenFlags);
  REQUIRE(fd >= 0);
  {
    reader::Options options;
    options.filter.sites = {"value"};
    reader::Reader from_fd = reader::Reader::from_fd(fd, files[0], options);
    CHECK(messages(read_all(from_fd)) == expected);
  }
  ::close(fd);
}

TEST_CASE("a cursor resumes right after the record it was taken at") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  for (int k = 0; k < 10; ++k) TERSE_INFO("step {}", k);
  terse::stop();

  reader::Options options;
  options.cursors = true;
  std::string cursor;
  {
    reader::Reader r({dir.path()}, options);
    reader::Record record;
    for (int k = 0; k < 4; ++k) REQUIRE(r.next(record));
    CHECK(record.message() == "step 3");
    cursor = r.cursor();
  }
  REQUIRE(!cursor.empty());
  reader::Reader again({dir.path()}, options);
  reader::ResumeResult resumed = again.resume_after(cursor);
  REQUIRE(resumed.ok);
  std::vector<Seen> rest = read_all(again);
  REQUIRE(rest.size() == 6);
  CHECK(rest.front().message == "step 4");

  reader::Reader bad({dir.path()}, options);
  reader::ResumeResult refused = bad.resume_after("not a cursor");
  CHECK(!refused.ok);
  CHECK(refused.malformed);
}

TEST_CASE("parallel decoding renders every record in order") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  constexpr int kCount = 2000;
  for (int k = 0; k < kCount; ++k) TERSE_INFO("n {}", k);
  terse::stop();

  reader::Reader r({dir.path()});
  std::string out;
  bool ran = r.decode_parallel(
      3,
      [] {
        return reader::Renderer([](const reader::Record& record, std::string& text) {
          text += record.message();
          text += '\n';
        });
      },
      [&out](std::string_view text) {
        out += text;
        return true;
      });
  REQUIRE(ran);
  std::string expected;
  for (int k = 0; k < kCount; ++k) expected += fmt::format("n {}\n", k);
  CHECK(out == expected);
  CHECK(r.summary().records == static_cast<std::uint64_t>(kCount));

  reader::Options follow;
  follow.follow = true;
  reader::Reader following({dir.path()}, follow);
  CHECK(!following.decode_parallel(
      3, [] { return reader::Renderer(); }, [](std::string_view) { return true; }));
}

#ifdef TERSE_LATENCY_HISTOGRAM_PATH
TEST_CASE("the latency histogram example reports what was logged") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  const std::vector<int> latencies{0, 1, 3, 3, 5, 100, 129, 700};
  for (int us : latencies) TERSE_INFO("request took {us} us", fmt::arg("us", us));
  TERSE_INFO("no number here: {}", "text");
  terse::stop();

  std::string out_path = dir / "histogram.txt";
  int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | terse::kOpenFlags, 0644);
  REQUIRE(fd >= 0);
  int status = terse::test::run_process({TERSE_LATENCY_HISTOGRAM_PATH, dir.path(), "--arg", "us"}, fd);
  ::close(fd);
  CHECK(terse::test::exit_code(status) == 0);

  // What the histogram must say, worked out here from the values logged.
  std::map<int, int> buckets;
  double sum = 0;
  for (int us : latencies) {
    int bucket = 0;
    while ((1 << bucket) <= us) ++bucket;
    ++buckets[bucket];
    sum += us;
  }
  std::string expected_tail = fmt::format("  count {} min 0 max 700 mean {:.3f}\n", latencies.size(),
                                          sum / static_cast<double>(latencies.size()));
  for (auto [bucket, n] : buckets)
    expected_tail += fmt::format("  [{}, {}) {}\n", bucket == 0 ? 0 : 1 << (bucket - 1), 1 << bucket, n);
  std::string out = terse::test::read_file(out_path);
#ifdef _WIN32
  // The example prints text as Windows programs do, each line ended by CR LF.
  for (std::size_t at; (at = out.find("\r\n")) != std::string::npos;) out.erase(at, 1);
#endif
  std::vector<std::string> lines = terse::test::split_lines(out);
  REQUIRE(!lines.empty());
  CHECK(ends_with(lines[0], " request took {us} us"));
  CHECK(lines[0].find("reader_test.cpp:") != std::string::npos);
  CHECK(out.substr(lines[0].size() + 1) == expected_tail);
}
#endif

namespace {

// Every record the reader gives, printed by `formatter`.
std::string format_all(const std::string& dir, const reader::Formatter& formatter) {
  reader::Reader r({dir});
  reader::Record record;
  std::string out;
  while (r.next(record)) formatter.append(record, out);
  return out;
}

void log_formatter_records() {
  {
    terse::Context request("request_id", 7);
    TERSE_INFO("login of {} with password {}", std::string("ann"), std::string("hunter2"));
  }
  TERSE_WARN("queue {name} at {depth}", fmt::arg("name", "jobs"), fmt::arg("depth", 12));
  TERSE_ERROR("{} in {}", 3.5, std::vector<std::string>{"hunter2", "x"});
}

}  // namespace

#ifdef TERSE_CLI_PATH
namespace {

std::string terse_cat(const std::vector<std::string>& args, const std::string& out_path) {
  int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | terse::kOpenFlags, 0644);
  REQUIRE(fd >= 0);
  std::vector<std::string> command{TERSE_CLI_PATH, "cat"};
  command.insert(command.end(), args.begin(), args.end());
  int status = terse::test::run_process(command, fd);
  ::close(fd);
  CHECK(terse::test::exit_code(status) == 0);
  return terse::test::read_file(out_path);
}

}  // namespace

TEST_CASE("a Formatter prints what terse cat prints") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  log_formatter_records();
  terse::stop();
  std::string out = dir / "cat.out";

  reader::FormatOptions precise;
  precise.utc = true;
  CHECK(format_all(dir.path(), reader::Formatter(precise)) == terse_cat({"--utc", "-o", "precise", dir.path()}, out));

  reader::FormatOptions shorter = precise;
  shorter.time_digits = 6;
  CHECK(format_all(dir.path(), reader::Formatter(shorter)) == terse_cat({"--utc", "-o", "short", dir.path()}, out));

  reader::FormatOptions pattern = precise;
  pattern.pattern = "{level:<8}|{file}:{line}|{message}|{context}";
  std::string lines = format_all(dir.path(), reader::Formatter(pattern));
  CHECK(lines == terse_cat({"--utc", "--format", pattern.pattern, dir.path()}, out));
  CHECK(terse::test::split_lines(lines).at(0).ends_with("|login of ann with password hunter2|request_id=7"));

  reader::FormatOptions json = precise;
  json.json = true;
  std::string objects = format_all(dir.path(), reader::Formatter(json));
  CHECK(objects == terse_cat({"--utc", "-o", "json", dir.path()}, out));
  std::vector<std::string> object_lines = terse::test::split_lines(objects);
  REQUIRE(object_lines.size() == 3);
  CHECK(object_lines[1].find(R"("message":"queue jobs at 12","args":{"name":"jobs","depth":12})") != std::string::npos);

  // Redaction: the rewrite reaches the message and every string argument,
  // as --mask does.
  std::string rules = dir / "rules.mask";
  std::ofstream(rules) << "hunter2 => ***\n";
  reader::FormatOptions masked = json;
  masked.rewrite = [](std::string& text) {
    for (std::size_t at; (at = text.find("hunter2")) != std::string::npos;) text.replace(at, 7, "***");
  };
  std::string hidden = format_all(dir.path(), reader::Formatter(masked));
  CHECK(hidden == terse_cat({"--utc", "-o", "json", "--mask", rules, dir.path()}, out));
  CHECK(hidden.find("hunter2") == std::string::npos);
  CHECK(hidden.find(R"("message":"login of ann with password ***","args":["ann","***"])") != std::string::npos);
}
#endif

TEST_CASE("a Formatter's message, its lines without arguments, and its errors") {
  TempDir dir;
  terse::start(test_config(dir.path()));
  log_formatter_records();
  terse::stop();

  reader::FormatOptions options;
  options.json = true;
  options.utc = true;
  reader::Formatter with_args(options);
  options.json_args = false;
  reader::Formatter without_args(options);
  options.rewrite = [](std::string& text) {
    if (text.find("hunter2") != std::string::npos) text = "[redacted]";
  };
  reader::Formatter rewriting(options);

  reader::Reader r({dir.path()});
  reader::Record record;
  int count = 0;
  while (r.next(record)) {
    ++count;
    std::string full, bare, message;
    with_args.append(record, full);
    without_args.append(record, bare);
    CHECK(full == record.json() + "\n");
    // The same object with "args" null: every other key stays, context too.
    std::size_t key = full.find(",\"args\":");
    REQUIRE(key != std::string::npos);
    std::size_t after = full.find(record.context().empty() ? "}\n" : ",\"context\":", key);
    CHECK(bare == full.substr(0, key) + ",\"args\":null" + full.substr(after));
    CHECK(rewriting.message(record, message));
    CHECK(message == (record.message().find("hunter2") != std::string::npos ? "[redacted]" : record.message()));
  }
  CHECK(count == 3);

  reader::FormatOptions bad;
  bad.pattern = "{time} {nonsense}";
  CHECK_THROWS_AS(reader::Formatter(bad), std::invalid_argument);
  bad.pattern = "{message}";
  bad.time_digits = 12;
  CHECK_THROWS_AS(reader::Formatter(bad), std::invalid_argument);
}

TEST_CASE("site ids tell call sites apart, and the summary has the bytes and the private-value mode") {
  TempDir first, second;
  terse::Config config = test_config(first.path());
  config.private_values = terse::PrivateValues::hash;
  config.private_key = "reader test key";
  terse::start(config);
  for (int i = 0; i < 3; ++i) {
    TERSE_INFO("site a {}", i);
    TERSE_INFO("site b {}", i);
  }
  terse::stop();
  terse::start(test_config(second.path()));
  TERSE_INFO("site a {}", 9);
  terse::stop();

  reader::Reader r({first.path()});
  std::map<std::string, std::set<std::uint64_t>> ids;
  reader::Record record;
  while (r.next(record)) ids[std::string(record.format())].insert(record.site_id());
  REQUIRE(ids.size() == 2);
  CHECK(ids["site a {}"].size() == 1);
  CHECK(ids["site b {}"].size() == 1);
  CHECK(*ids["site a {}"].begin() != *ids["site b {}"].begin());
  CHECK(*ids["site a {}"].begin() != 0);

  reader::Summary summary = r.summary();
  CHECK(summary.stored_records == 6);
  CHECK(summary.stored_bytes > 0);
  CHECK(summary.raw_bytes > 0);
  CHECK(summary.private_values == std::vector<std::string>{"hash"});

  // The same site in another file is another site to a table keyed by id.
  reader::Reader other({second.path()});
  REQUIRE(other.next(record));
  CHECK(record.format() == "site a {}");
  CHECK(record.site_id() != *ids["site a {}"].begin());
}
