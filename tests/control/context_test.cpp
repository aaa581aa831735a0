// Scoped context: terse::Context attaches a field to every record its
// thread logs while it lives; the decoder attaches them from the push and
// pop records, also where reading starts in a later file or in the middle
// of one, where files of two processes merge, and to the flight recorder's
// records. Read back through the decoder and the CLI (text, --format
// {context}, JSON, --context).
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <terse/std.hpp>
#include <terse/terse.hpp>

#include "file_helpers.hpp"
#include "json_reader.hpp"
#include "test_support.hpp"

using namespace terse;
using namespace terse::test;

namespace {

std::vector<std::pair<std::string, std::string>> messages_and_contexts(const Decoded& decoded) {
  std::vector<std::pair<std::string, std::string>> got;
  for (const Line& line : decoded.lines) got.emplace_back(line.message, line.context);
  return got;
}

void nested_scopes() {
  TERSE_INFO("before {}", 0);
  {
    Context request("request_id", 42);
    TERSE_INFO("in the request {}", 1);
    {
      Context user("user", std::string("ann"));
      TERSE_INFO("with the user {}", 2);
      {
        Context retry("request_id", 43);  // hides the outer request_id while it lives
        TERSE_INFO("in the retry {}", 3);
      }
      TERSE_INFO("back with the user {}", 4);
    }
    TERSE_INFO("back in the request {}", 5);
  }
  TERSE_INFO("after {}", 6);
}

const std::vector<std::pair<std::string, std::string>> kNested{{"before 0", ""},
                                                               {"in the request 1", "request_id=42"},
                                                               {"with the user 2", "request_id=42 user=ann"},
                                                               {"in the retry 3", "user=ann request_id=43"},
                                                               {"back with the user 4", "request_id=42 user=ann"},
                                                               {"back in the request 5", "request_id=42"},
                                                               {"after 6", ""}};

std::vector<std::string> cli_command(std::vector<std::string> args) {
  args.insert(args.begin(), terse_cli_path());
  return args;
}

std::optional<Json> json_line(const std::string& line) {
  auto object = parse_json(line);
  INFO(line);
  REQUIRE(object);
  return object;
}

}  // namespace

TEST_CASE("a context attaches its field to the thread's records while it lives; contexts nest") {
  TempDir dir("context-nested");
  start(test_config(dir.path()));
  nested_scopes();
  stop();

  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  CHECK(messages_and_contexts(decoded) == kNested);

  Run text = run_terse({"cat", "--format", "{message}", dir.path()});
  REQUIRE(text.exit_code == 0);
  CHECK(split_lines(text.out) == std::vector<std::string>{"before 0", "in the request 1 {request_id=42}",
                                                          "with the user 2 {request_id=42 user=ann}",
                                                          "in the retry 3 {user=ann request_id=43}",
                                                          "back with the user 4 {request_id=42 user=ann}",
                                                          "back in the request 5 {request_id=42}", "after 6"});
  Run placeholder = run_terse({"cat", "--format", "[{context}] {message}", dir.path()});
  REQUIRE(placeholder.exit_code == 0);
  CHECK(split_lines(placeholder.out)[2] == "[request_id=42 user=ann] with the user 2");
  CHECK(split_lines(placeholder.out)[0] == "[] before 0");

  Run json = run_terse({"cat", "-o", "json", dir.path()});
  REQUIRE(json.exit_code == 0);
  std::vector<std::string> lines = split_lines(json.out);
  REQUIRE(lines.size() == 7);
  CHECK(json_line(lines[0])->members.count("context") == 0);
  auto with_user = json_line(lines[2]);
  REQUIRE(with_user->members.count("context") == 1);
  Json& context = with_user->members["context"];
  REQUIRE(context.kind == Json::Kind::object);
  CHECK(context.members.size() == 2);
  CHECK(context.members["request_id"].kind == Json::Kind::number);
  CHECK(context.members["request_id"].number == 42);
  CHECK(context.members["user"].text == "ann");
  CHECK(json_line(lines[3])->members["context"].members["request_id"].number == 43);
}

TEST_CASE("a context's value is any loggable type, shown as fmt prints it and as JSON") {
  TempDir dir("context-types");
  start(test_config(dir.path()));
  {
    Context ratio("ratio", 1.5);
    Context name("name", "literal");
    Context ids("ids", std::vector<int>{1, 2, 3});
    Context flag("dry_run", true);
    TERSE_INFO("typed {}", 1);
  }
  stop();
  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  REQUIRE(decoded.lines.size() == 1);
  CHECK(decoded.lines[0].context == "ratio=1.5 name=literal ids=[1, 2, 3] dry_run=true");
  Run json = run_terse({"cat", "-o", "json", dir.path()});
  REQUIRE(json.exit_code == 0);
  CHECK(json.out.find(R"("context":{"ratio":1.5,"name":"literal","ids":[1,2,3],"dry_run":true})") != std::string::npos);
}

TEST_CASE("each thread has its own contexts") {
  TempDir dir("context-threads");
  start(test_config(dir.path()));
  constexpr int kThreads = 4;
  constexpr int kRequests = 50;
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &ready] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      Context worker("worker", t);
      for (int r = 0; r < kRequests; ++r) {
        Context request("request", t * 1000 + r);
        TERSE_INFO("worker {} handles {}", t, t * 1000 + r);
      }
      TERSE_INFO("worker {} done", t);
    });
  }
  for (auto& thread : threads) thread.join();
  TERSE_INFO("main {}", 0);
  stop();

  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  REQUIRE(decoded.lines.size() == kThreads * (kRequests + 1) + 1);
  for (const Line& line : decoded.lines) {
    int t = -1, request = -1;
    if (std::sscanf(line.message.c_str(), "worker %d handles %d", &t, &request) == 2) {
      CHECK(line.context == fmt::format("worker={} request={}", t, request));
    } else if (std::sscanf(line.message.c_str(), "worker %d done", &t) == 1) {
      CHECK(line.context == fmt::format("worker={}", t));
    } else {
      CHECK(line.message == "main 0");
      CHECK(line.context.empty());
    }
  }
}

TEST_CASE("--context keeps the records of one context") {
  TempDir dir("context-filter");
  start(test_config(dir.path()));
  for (int r = 0; r < 5; ++r) {
    Context request("request_id", r);
    Context user("user", r % 2 == 0 ? "ann" : "bob");
    TERSE_INFO("charged {} cents", r * 10);
    TERSE_WARN("slow {}", r);
  }
  TERSE_INFO("outside {}", 0);
  stop();

  Run one = run_terse({"cat", "-o", "cat", "--context", "request_id=3", dir.path()});
  REQUIRE(one.exit_code == 0);
  CHECK(one.out == "charged 30 cents {request_id=3 user=bob}\nslow 3 {request_id=3 user=bob}\n");
  Run both = run_terse({"cat", "-o", "cat", "--context", "user=ann", "--context", "request_id=2", dir.path()});
  REQUIRE(both.exit_code == 0);
  CHECK(both.out == "charged 20 cents {request_id=2 user=ann}\nslow 2 {request_id=2 user=ann}\n");
  Run ann = run_terse({"cat", "-o", "cat", "--level", "warn", "--context", "user=ann", dir.path()});
  REQUIRE(ann.exit_code == 0);
  CHECK(split_lines(ann.out) == std::vector<std::string>{"slow 0 {request_id=0 user=ann}",
                                                         "slow 2 {request_id=2 user=ann}",
                                                         "slow 4 {request_id=4 user=ann}"});
  Run none = run_terse({"cat", "--context", "user=carol", dir.path()});
  CHECK(none.exit_code == 0);
  CHECK(none.out.empty());
  Run bad = run_terse({"cat", "--context", "user", dir.path()});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("expected KEY=VALUE") != std::string::npos);
}

TEST_CASE("every file repeats the contexts open where it starts, so it reads alone") {
  TempDir dir("context-files");
  Config config = test_config(dir.path());
  config.roll_bytes = 4096;
  start(config);
  Context service("service", "billing");
  // Bytes that do not compress, so that 4 KiB files fill up.
  std::uint64_t state = 12345;
  auto noise = [&state] {
    std::string text(200, ' ');
    for (char& c : text) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      c = static_cast<char>('a' + (state >> 59));
    }
    return text;
  };
  int logged = 0;
  {
    Context request("request_id", 7);
    for (; logged < 200; ++logged) {
      TERSE_INFO("record {} {}", logged, noise());
      if (logged % 20 == 19) flush();  // batches apart, so that files roll between them
    }
  }
  TERSE_INFO("after the request {}", logged);
  stop();

  std::vector<std::string> files = log_files(dir.path());
  REQUIRE(files.size() >= 3);
  for (std::size_t f = 1; f < files.size(); ++f) {
    Decoded alone = decode_files({files[f]});
    REQUIRE(alone.intact());
    REQUIRE_FALSE(alone.lines.empty());
    for (const Line& line : alone.lines) {
      INFO(files[f] << ": " << line.message.substr(0, 20));
      CHECK(line.context == (line.message.starts_with("after") ? "service=billing" : "service=billing request_id=7"));
    }
  }
  Run last = run_terse({"cat", "-o", "cat", "--context", "service=billing", files.back()});
  REQUIRE(last.exit_code == 0);
  CHECK(last.out.find("after the request 200 {service=billing}\n") != std::string::npos);
}

TEST_CASE("a reader that resumes inside a file sees the contexts opened before its position") {
  TempDir dir("context-resume");
  start(test_config(dir.path()));
  {
    Context request("request_id", 5);
    for (int i = 0; i < 30; ++i) {
      TERSE_INFO("step {}", i);
      if (i % 10 == 9) flush();  // three records frames
    }
  }
  stop();
  Run all = run_terse({"cat", "-o", "json", "--show-cursor", dir.path()});
  REQUIRE(all.exit_code == 0);
  std::vector<std::string> lines = split_lines(all.out);
  REQUIRE(lines.size() == 30);
  std::string cursor = json_line(lines[14])->members["cursor"].text;
  Run rest = run_terse({"cat", "-o", "cat", "--after-cursor", cursor, dir.path()});
  REQUIRE(rest.exit_code == 0);
  std::vector<std::string> after = split_lines(rest.out);
  REQUIRE(after.size() == 15);
  CHECK(after.front() == "step 15 {request_id=5}");
  CHECK(after.back() == "step 29 {request_id=5}");
}

TEST_CASE("cat -f shows a context opened while it follows") {
  TempDir dir("context-follow");
  start(test_config(dir.path()));
  TERSE_INFO("before {}", 0);
  flush();
  Process cat(cli_command({"cat", "-f", "-o", "cat", dir.path()}), Process::Output::pipe);
  REQUIRE(cat.read_until([](const std::string& out) { return out.find("before 0\n") != std::string::npos; },
                         std::chrono::seconds(20)));
  {
    Context request("request_id", 9);
    TERSE_INFO("during {}", 1);
    flush();
    REQUIRE(cat.read_until([](const std::string& out) { return out.find("during 1") != std::string::npos; },
                           std::chrono::seconds(20)));
  }
  TERSE_INFO("after {}", 2);
  flush();
  REQUIRE(cat.read_until([](const std::string& out) { return out.find("after 2\n") != std::string::npos; },
                         std::chrono::seconds(20)));
  cat.stop();
  stop();
  CHECK(split_lines(cat.out) == std::vector<std::string>{"before 0", "during 1 {request_id=9}", "after 2"});
}

TEST_CASE("files of two processes merge with each record in its own process's context") {
  TempDir dir("context-merge");
  std::vector<pid_t> children;
  for (int worker = 0; worker < 2; ++worker) {
    pid_t pid = ::fork();
    if (pid == 0) {
      Config config = test_config(dir.path());
      config.crash_handler = false;
      start(config);
      Context process("worker", worker);
      for (int i = 0; i < 200; ++i) {
        Context request("request", worker * 1000 + i);
        TERSE_INFO("worker {} request {}", worker, worker * 1000 + i);
        if (i % 50 == 49) flush();
      }
      stop();
      std::_Exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
  }
  Run merged = run_terse({"cat", "-o", "cat", dir.path()});
  REQUIRE(merged.exit_code == 0);
  std::vector<std::string> lines = split_lines(merged.out);
  REQUIRE(lines.size() == 400);
  for (const std::string& line : lines) {
    int worker = -1, request = -1;
    REQUIRE(std::sscanf(line.c_str(), "worker %d request %d", &worker, &request) == 2);
    CHECK(line.ends_with(fmt::format("{{worker={} request={}}}", worker, request)));
  }
  Run one = run_terse({"cat", "-o", "cat", "--context", "worker=1", dir.path()});
  REQUIRE(one.exit_code == 0);
  CHECK(split_lines(one.out).size() == 200);
}

TEST_CASE("the flight recorder's records carry the contexts they were logged in") {
  TempDir dir("context-flight");
  Config config = test_config(dir.path());
  config.level = Level::info;
  config.flight_level = Level::debug;
  config.flight_bytes = 1024;  // the request's push gives way to later records
  start(config);
  {
    Context request("request_id", 11);
    for (int i = 0; i < 100; ++i) TERSE_DEBUG("looking {}", i);
    {
      Context step("step", "commit");
      TERSE_DEBUG("committing {}", 1);
    }
    TERSE_DEBUG("rolled back {}", 2);
    TERSE_ERROR("failed {}", 3);
  }
  flush();
  Stats stats = terse::stats();
  stop();

  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  REQUIRE(decoded.lines.size() > 3);
  const std::vector<Line>& lines = decoded.lines;
  for (std::size_t i = 0; i + 3 < lines.size(); ++i) {
    CHECK(lines[i].flight);
    CHECK(lines[i].context == "request_id=11");
  }
  std::size_t n = lines.size();
  CHECK(lines[n - 3].message == "committing 1");
  CHECK(lines[n - 3].context == "request_id=11 step=commit");
  CHECK(lines[n - 2].message == "rolled back 2");
  CHECK(lines[n - 2].context == "request_id=11");
  CHECK(lines[n - 1].message == "failed 3");
  CHECK_FALSE(lines[n - 1].flight);
  CHECK(lines[n - 1].context == "request_id=11");
  // Records only: the context pushes and pops written with them are not counted.
  CHECK(stats.flight_written == n - 1);
  CHECK(stats.flight_recorded == 102);
  CHECK(stats.flight_overwritten == 102 - (n - 1));
}

TEST_CASE("on_record and the console get the contexts too") {
  TempDir dir("context-callback");
  Config config = test_config(dir.path());
  std::vector<std::pair<std::string, std::string>> seen;  // context, JSON
  config.callback_level = Level::info;
  config.on_record = [&seen](const Record& r) { seen.emplace_back(std::string(r.context), std::string(r.json())); };
  start(config);
  {
    Context request("request_id", 3);
    Context user("user", "ann");
    TERSE_INFO("inside {}", 1);
  }
  TERSE_INFO("outside {}", 2);
  stop();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].first == "request_id=3 user=ann");
  CHECK(seen[0].second.find(R"("context":{"request_id":3,"user":"ann"})") != std::string::npos);
  CHECK(seen[1].first.empty());
  CHECK(seen[1].second.find("\"context\":") == std::string::npos);
}

TEST_CASE("a callback that misses records still sees the contexts they opened and closed") {
  TempDir dir("context-callback-behind");
  Config config = test_config(dir.path());
  std::mutex mutex;
  std::condition_variable cv;
  bool released = false;
  std::vector<std::pair<std::string, std::string>> seen;  // message, context
  config.callback_level = Level::info;
  config.on_record = [&](const Record& r) {
    std::unique_lock lock(mutex);
    seen.emplace_back(std::string(r.message).substr(0, 12), std::string(r.context));
    cv.wait_for(lock, std::chrono::seconds(60), [&] { return released; });
  };
  start(config);
  const std::string padding(8 << 10, 'p');
  // Batches of 800 KiB apart in time: past 4 MiB waiting for the stuck
  // callback, the view skips them, the context's pop among them.
  auto burst = [&](int b) {
    for (int i = 0; i < 100; ++i) TERSE_INFO("burst {} {} {}", b, i, padding);
    std::this_thread::sleep_for(std::chrono::milliseconds(80));
  };
  {
    Context request("request_id", 1);
    for (int b = 0; b < 8; ++b) burst(b);
  }
  for (int b = 8; b < 12; ++b) burst(b);
  {
    std::lock_guard lock(mutex);
    released = true;
  }
  cv.notify_all();
  flush();
  TERSE_INFO("after {}", 1);
  flush();
  Stats stats = terse::stats();
  stop();
  CHECK(stats.callback_missed > 0);
  std::lock_guard lock(mutex);
  REQUIRE_FALSE(seen.empty());
  CHECK(seen.front().second == "request_id=1");
  CHECK(seen.back() == std::pair<std::string, std::string>{"after 1", ""});
}

TEST_CASE("a context is not written while the logger is not running") {
  TempDir dir("context-not-running");
  {
    Context early("request_id", 1);  // before start(): nothing to attach it to
    start(test_config(dir.path()));
    TERSE_INFO("logged {}", 1);
    stop();
  }
  Decoded decoded = decode_dir(dir.path());
  REQUIRE(decoded.intact());
  REQUIRE(decoded.lines.size() == 1);
  CHECK(decoded.lines[0].context.empty());
}
