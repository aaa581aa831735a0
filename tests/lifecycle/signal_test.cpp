// A signal handler that logs while the thread it interrupts is logging:
// the program always finishes, and every record is written or counted.
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "process.hpp"
#include "test_support.hpp"

using namespace terse::test;

TEST_CASE(
    "a SIGALRM handler that logs every 50 us beside a thread logging flat out: every run finishes, nothing is lost "
    "unsaid") {
  const int runs = 20;
  const std::uint64_t records = scaled(1'000'000, 50'000);
  const int new_threads = 50;
  for (int run = 0; run < runs; ++run) {
    INFO("run " << run);
    TempDir dir;
    std::string logs = dir / "logs";
    std::vector<std::string> args;
    if (*program_emulator() != '\0') args.emplace_back(program_emulator());
    args.insert(args.end(), {TERSE_SIGNAL_PROGRAM, logs, std::to_string(records), std::to_string(new_threads)});
    Process program(args, Process::Output::pipe, dir / "stderr.txt");
    program.read_until([](const std::string& out) { return out.find('\n') != std::string::npos; },
                       std::chrono::seconds(120));
    REQUIRE(program.wait(std::chrono::seconds(30)) == 0);  // it never hangs
    CHECK(program.stderr_text().empty());
    const std::uint64_t signals = std::stoull(program.out);
    Decoded decoded = decode_dir(logs);
    REQUIRE(decoded.intact());
    std::uint64_t main_records = 0;
    std::uint64_t signal_records = 0;
    std::uint64_t new_thread_records = 0;
    std::uint64_t dropped = 0;
    std::uint64_t last_signal = 0;
    for (const auto& line : decoded.lines) {
      unsigned long long n = 0;
      if (line.dropped) {
        dropped += line.dropped_count;
      } else if (std::sscanf(line.message.c_str(), "main %llu", &n) == 1) {
        REQUIRE(n == main_records);  // in order, none lost, none damaged
        ++main_records;
      } else if (std::sscanf(line.message.c_str(), "signal %llu", &n) == 1) {
        CHECK(n > last_signal);
        CHECK(n <= signals);
        last_signal = n;
        ++signal_records;
      } else {
        REQUIRE(std::sscanf(line.message.c_str(), "new thread %llu", &n) == 1);
        ++new_thread_records;
      }
    }
    CHECK(main_records == records);
    CHECK(new_thread_records == static_cast<std::uint64_t>(new_threads));
    CHECK(signals > 0);
    // Written, or dropped and counted (those that interrupted a call).
    CHECK(signal_records + dropped == signals);
  }
}
