// A program that crashes still has every record it logged in its file, and ends with the code
// it would have ended with without terse: the crash handlers flush and pass on. The program
// is a process of its own (terse_crash_child), so this runs where fork() does not, Windows
// included (crash_test.cpp covers the POSIX signals one by one).
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "crash_child.hpp"
#include "process.hpp"
#include "test_support.hpp"

using namespace terse::test;

namespace {

// What ends a program that faults or aborts: a signal on POSIX (128 + its number here),
// on Windows an exit code, the exception's for a fault and 3 for abort().
#ifdef _WIN32
constexpr int kFaultExit = static_cast<int>(0xC0000005u);  // EXCEPTION_ACCESS_VIOLATION
constexpr int kAbortExit = 3;
#else
constexpr int kFaultExit = 128 + 11;  // SIGSEGV
constexpr int kAbortExit = 128 + 6;   // SIGABRT
#endif

void check_every_record(const std::string& directory, const std::string& how) {
  Decoded decoded = decode_dir(directory);
  REQUIRE(decoded.lines.size() == static_cast<std::size_t>(kCrashThreads * kCrashRecordsPerThread + 1));
  std::vector<int> next(kCrashThreads, 0);
  for (std::size_t k = 0; k + 1 < decoded.lines.size(); ++k) {
    int thread = decoded.lines[k].message[7] - '0';
    REQUIRE(thread >= 0);
    REQUIRE(thread < kCrashThreads);
    REQUIRE(decoded.lines[k].message == fmt::format("thread {} record {}", thread, next[thread]));
    ++next[thread];
  }
  CHECK(decoded.lines.back().message == fmt::format("about to end by {}", how));
}

int run_child(const std::string& directory, const std::string& how, const std::string& seal_to = {}) {
  TempDir err("crash-stderr");
  std::vector<std::string> args{TERSE_CRASH_CHILD_PATH, directory, how};
  if (!seal_to.empty()) args.push_back(seal_to);
  return exit_code(run_process(args, -1, err / "stderr"));
}

}  // namespace

TEST_CASE("a program that faults has every record in its file and ends as a fault ends it") {
  TempDir dir;
  CHECK(run_child(dir.path(), "fault") == kFaultExit);
  check_every_record(dir.path(), "fault");
}

TEST_CASE("a program that calls abort() has every record in its file and ends as abort() ends it") {
  TempDir dir;
  CHECK(run_child(dir.path(), "abort") == kAbortExit);
  check_every_record(dir.path(), "abort");
}

TEST_CASE("a program that calls std::terminate has every record in its file and aborts") {
  TempDir dir;
  CHECK(run_child(dir.path(), "terminate") == kAbortExit);
  check_every_record(dir.path(), "terminate");
}

#ifdef TERSE_TEST_SEALED
TEST_CASE("a sealed file of a program that faults or aborts ends with its end frame and opens whole with the key") {
  TempDir keys;
  auto [public_key, secret] = sealing_keys(keys);
  for (const auto& [how, expected_exit] : {std::pair{"fault", kFaultExit}, std::pair{"abort", kAbortExit}}) {
    INFO(how);
    TempDir dir;
    CHECK(run_child(dir.path(), how, public_key) == expected_exit);
    std::string bytes;
    Decoded decoded = decode_sealed_dir(dir.path(), secret, bytes);
    for (const auto& p : decoded.problems) FAIL_CHECK(p.what);
    // intact(): a sealed file without its end frame is not.
    for (const auto& summary : decoded.summaries) CHECK(summary.intact());
    REQUIRE(decoded.lines.size() == static_cast<std::size_t>(kCrashThreads * kCrashRecordsPerThread + 1));
    CHECK(decoded.lines.back().message == fmt::format("about to end by {}", how));
    CHECK(bytes.find("about to end by") == std::string::npos);
  }
}
#endif
