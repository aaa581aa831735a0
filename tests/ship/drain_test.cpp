// `terse ship --once` while the broker does not answer: it waits for the
// broker however long, as a following ship does; the first SIGTERM gives the
// records produced --drain-timeout to be acknowledged, a second one ends the
// wait at once (exit 3, they are sent again at the next start).
#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

#include "kafka_harness.hpp"
#include "ship_helpers.hpp"
#include "test_support.hpp"

using namespace terse::test;
using namespace std::chrono_literals;

namespace {

constexpr long kRecords = 2000;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Logs of kRecords records, and a one-broker cluster that is down.
struct Setup {
  TempDir dir;
  std::string logs = dir / "logs";
  MockCluster cluster{1};
  std::vector<std::string> expected;

  Setup() {
    Process writer(writer_args({logs, "app", "mix", std::to_string(kRecords)}), dir / "writer.err");
    REQUIRE(writer.wait(60s) == 0);
    expected = cat_json({logs});
    REQUIRE(expected.size() == static_cast<std::size_t>(kRecords));
    cluster.create_topic("logs", 2);
    cluster.broker_down(1);
  }

  std::vector<std::string> once(const std::string& drain_timeout) {
    return ship_args(cluster.bootstraps(), "logs", dir / "cursor",
                     {"--once", "--drain-timeout", drain_timeout, "--stats-interval", "0.1"}, {logs});
  }
};

// Every record read and produced, none acknowledged: what ship does next is
// its drain. The stats line says so (lag_records counts the unacknowledged).
bool all_read_none_acknowledged(Process& ship) {
  for (auto until = std::chrono::steady_clock::now() + 60s; std::chrono::steady_clock::now() < until;) {
    if (!ship.running()) return false;
    if (last_stat(ship.stderr_text(), "lag_records") == static_cast<double>(kRecords)) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

// The broker comes back: ship delivers everything, saves the final cursor and exits 0.
void delivered_once_back(Setup& s, Process& ship) {
  TopicReader reader(s.cluster.bootstraps(), "logs");
  s.cluster.broker_up(1);
  int code = ship.wait(60s);
  INFO(ship.stderr_text());
  REQUIRE(code == 0);
  REQUIRE(reader.wait_for_count(s.expected.size(), 30s));
  std::this_thread::sleep_for(300ms);
  reader.stop();
  Tally tally = compare(sorted_hashes(s.expected), sorted_hashes(reader));
  CHECK(tally.missing == 0);
  CHECK(tally.duplicates == 0);
  CHECK(tally.unexpected == 0);
  CHECK(read_file(s.dir / "cursor") == final_cursor_file(s.logs));
}

}  // namespace

TEST_CASE("--once waits for an unreachable broker past --drain-timeout, until it answers") {
  Setup s;
  Process ship(s.once("1"), s.dir / "ship.err");
  REQUIRE(all_read_none_acknowledged(ship));
  // Three times --drain-timeout with no signal: still waiting.
  std::this_thread::sleep_for(3s);
  INFO(ship.stderr_text());
  REQUIRE(ship.running());
  delivered_once_back(s, ship);
}

TEST_CASE("--once: the first SIGTERM after everything was read drains up to --drain-timeout") {
  Setup s;
  Process ship(s.once("60"), s.dir / "ship.err");
  REQUIRE(all_read_none_acknowledged(ship));
  ship.signal(SIGTERM);
  std::this_thread::sleep_for(1500ms);
  INFO(ship.stderr_text());
  REQUIRE(ship.running());
  delivered_once_back(s, ship);
}

TEST_CASE("--once: a second SIGTERM ends the drain at once, exit 3, the cursor stays before the records") {
  Setup s;
  Process ship(s.once("60"), s.dir / "ship.err");
  REQUIRE(all_read_none_acknowledged(ship));
  ship.signal(SIGTERM);
  std::this_thread::sleep_for(500ms);
  REQUIRE(ship.running());
  ship.signal(SIGTERM);
  int code = ship.wait(20s);
  std::string err = ship.stderr_text();
  INFO(err);
  CHECK(code == 3);
  CHECK(contains(err, std::to_string(kRecords) + " records were not acknowledged before a second signal"));
  if (std::ifstream(s.dir / "cursor").good()) CHECK(read_file(s.dir / "cursor") != final_cursor_file(s.logs));
}
