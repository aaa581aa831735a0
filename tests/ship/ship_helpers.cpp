#include "ship_helpers.hpp"

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include <catch2/catch.hpp>

#include "file_helpers.hpp"
#include "test_support.hpp"

namespace terse::test {

std::vector<std::string> ship_args(const std::string& bootstraps, const std::string& topic,
                                   const std::string& cursor_file, const std::vector<std::string>& extra,
                                   const std::vector<std::string>& paths) {
  std::vector<std::string> args{terse_cli_path(), "ship", "--brokers",     bootstraps,
                                "--topic",        topic,  "--cursor-file", cursor_file};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), paths.begin(), paths.end());
  return args;
}

std::vector<std::string> writer_args(const std::vector<std::string>& args) {
  std::vector<std::string> argv{TERSE_LIVE_WRITER_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::vector<std::string> cat_json(const std::vector<std::string>& args) {
  std::vector<std::string> all{"cat", "-o", "json"};
  all.insert(all.end(), args.begin(), args.end());
  Run run = run_terse(all);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  std::vector<std::string> lines;
  std::istringstream in(run.out);
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  return lines;
}

std::vector<std::uint64_t> sorted_hashes(const std::vector<std::string>& lines) {
  std::vector<std::uint64_t> hashes;
  hashes.reserve(lines.size());
  for (const auto& line : lines) hashes.push_back(fnv1a64(line));
  std::sort(hashes.begin(), hashes.end());
  return hashes;
}

std::vector<std::uint64_t> sorted_hashes(const TopicReader& reader) {
  std::vector<std::uint64_t> hashes;
  hashes.reserve(reader.count());
  reader.for_each([&](const MessageView& m) { hashes.push_back(fnv1a64(m.payload)); });
  std::sort(hashes.begin(), hashes.end());
  return hashes;
}

Tally compare(const std::vector<std::uint64_t>& expected, const std::vector<std::uint64_t>& read) {
  Tally tally;
  std::size_t i = 0, j = 0;
  while (i < expected.size() || j < read.size()) {
    if (j == read.size() || (i < expected.size() && expected[i] < read[j])) {
      ++tally.missing;
      ++i;
    } else if (i == expected.size() || read[j] < expected[i]) {
      ++tally.unexpected;
      ++j;
    } else {
      std::uint64_t h = expected[i];
      std::size_t want = 0, got = 0;
      while (i < expected.size() && expected[i] == h) ++want, ++i;
      while (j < read.size() && read[j] == h) ++got, ++j;
      if (got < want) tally.missing += want - got;
      if (got > want) tally.duplicates += got - want;
    }
  }
  return tally;
}

Tally stop_and_compare(Process& ship, TopicReader& reader, const std::vector<std::string>& expected, bool arrived) {
  ship.signal(SIGTERM);
  int code = ship.wait(std::chrono::seconds(60));
  INFO(ship.stderr_text());
  INFO(reader.last_error());
  REQUIRE(arrived);
  REQUIRE(code == 0);
  reader.stop();
  REQUIRE(reader.gaps().empty());
  return compare(sorted_hashes(expected), sorted_hashes(reader));
}

std::string final_cursor_file(const std::string& logs) {
  return cursor_of(cat_json({"--show-cursor", logs}).back()) + "\n";
}

std::string cursor_of(const std::string& json_line) {
  const std::string key = "\"cursor\":\"";
  std::size_t at = json_line.rfind(key);
  if (at == std::string::npos) return {};
  std::size_t end = json_line.find('"', at + key.size());
  return json_line.substr(at + key.size(), end - at - key.size());
}

double last_stat(const std::string& stderr_text, const std::string& key) {
  std::size_t at = stderr_text.rfind(" " + key + "=");
  if (at == std::string::npos) return -1;
  return std::atof(stderr_text.c_str() + at + key.size() + 2);
}

}  // namespace terse::test
