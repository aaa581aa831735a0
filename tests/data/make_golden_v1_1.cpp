// Writes golden-v1.1.tlog: a file of format 1.1 written by the runtime as it
// stood before the code was restructured (the "house" rework), kept so that
// every later change is checked against real bytes: tests/files/golden.cmake
// decodes it with the CLI and compares text and JSON byte for byte with
// golden-v1.1.txt and golden-v1.1.jsonl, which that same CLI printed.
//
// Run by hand only, never by ctest:
//   terse_make_golden_v1_1 OUT_DIR      -> OUT_DIR/golden-YYYYMMDD-001.tlog
//   terse cat --utc FILE > golden-v1.1.txt
//   terse cat --utc -o json FILE > golden-v1.1.jsonl
// Regenerating the file on purpose means checking the new text by hand first.
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
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

namespace golden {

enum class Stage { parse, plan, execute };

struct Endpoint {
  std::string host;
  int port;
};

struct Request {
  long id;
  Endpoint from;
  std::vector<int> shards;
  Stage stage;
  std::optional<std::string> user;
};

struct Money {
  long cents;
  std::string currency;
};

struct Celsius {
  double degrees;
};

}  // namespace golden

TERSE_FIELDS(golden::Request, id, from, shards, stage, user);

template <>
struct terse::codec<golden::Money> {
  static constexpr std::string_view format = "{}.{:02} {}";
  static auto fields(const golden::Money& m) { return std::tuple(m.cents / 100, m.cents % 100, m.currency); }
};

template <>
struct fmt::formatter<golden::Celsius> : fmt::formatter<double> {
  auto format(const golden::Celsius& c, fmt::format_context& ctx) const {
    auto out = fmt::formatter<double>::format(c.degrees, ctx);
    return fmt::format_to(out, " C");
  }
};
template <>
inline constexpr bool terse::format_eagerly<golden::Celsius> = true;

namespace {

using namespace std::chrono_literals;

void log_scalars_and_text() {
  TERSE_TRACE("trace {} {:+d} {:#x}", std::int8_t{-7}, 42, 255u);
  TERSE_DEBUG("debug {:.3f} {:e} {} {}", 3.14159f, 6.02e23, true, 'c');
  TERSE_INFO("text [{}] [{:>8}] [{:.3}] {}", "plain", "right", "truncated", std::string("owned"));
  TERSE_WARN("pointer {} null {}", static_cast<const void*>(nullptr), static_cast<const char*>(nullptr));
  TERSE_ERROR("positional {1} {0} dynamic [{2:{3}}]", "a", "b", 7, 5);
  TERSE_CRITICAL("long double {:.18f}", 1.0L / 3.0L);
}

void log_structured() {
  std::vector<int> shards{1, 2, 3};
  std::map<std::string, int> counts{{"a", 1}, {"b", 2}};
  std::set<std::string> tags{"x", "y"};
  std::array<double, 2> pair{0.5, -1.25};
  TERSE_INFO("containers {} {} {} {::x}", shards, counts, tags, shards);
  TERSE_INFO("tuple {} pair {} array {}", std::tuple(1, "two", 3.0), std::pair(4, 'x'), pair);
  golden::Request request{77, {"db.local", 5432}, shards, golden::Stage::plan, std::string("ann")};
  TERSE_INFO("request {}", request);
  TERSE_INFO("endpoint {} stage {}", golden::Endpoint{"cache", 6379}, golden::Stage::execute);
  TERSE_INFO("optional {} {} variant {} {}", std::optional<int>(3), std::optional<int>(),
             std::variant<int, std::string>(std::string("v")), std::variant<int, std::string>(9));
  TERSE_INFO("durations {} {} {:%H:%M:%S}", 42ms, 1500us, 3725s);
  TERSE_INFO("time point {:%Y-%m-%d}",
             std::chrono::system_clock::time_point(std::chrono::sys_days(std::chrono::year(2026) / 11 / 30)));
  TERSE_INFO("system {} {} {}", std::make_error_code(std::errc::timed_out), std::filesystem::path("/var/log/app"),
             std::thread::id());
  TERSE_INFO("codec {} eager {}", golden::Money{1250, "EUR"}, golden::Celsius{21.5});
  TERSE_INFO("named {user} took {ms} ms", fmt::arg("user", "bob"), fmt::arg("ms", 12));
  TERSE_WARN("secret {}", terse::secret(std::string("hunter2")));
}

// A long string repeated is written once per file (interning).
void log_repeated_long_strings() {
  std::string query(300, 'q');
  for (int i = 0; i < 5; ++i) TERSE_INFO("query {} #{}", query, i);
}

void log_from_threads() {
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 3; ++i) {
        TERSE_INFO("worker {} step {}", t, i);
        terse::flush();  // one thread at a time, so the file does not depend on scheduling
      }
    });
    threads.back().join();
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: {} OUT_DIR\n", argv[0]);
    return 2;
  }
  terse::Config cfg;
  cfg.directory = argv[1];
  cfg.name = "golden";
  cfg.level = terse::Level::trace;
  terse::start(cfg);
  log_scalars_and_text();
  log_structured();
  log_repeated_long_strings();
  log_from_threads();
  terse::stop();
  return 0;
}
