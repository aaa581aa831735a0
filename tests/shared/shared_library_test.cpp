// The shared build: a program and two shared libraries, all linked to
// libterse.so, log into one runtime (one IO thread, one set of files).
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "shared_records.hpp"
#include "test_support.hpp"

using namespace terse::test;

TEST_CASE("a program and its shared libraries share one runtime") {
  TempDir dir;
  int status = run_process({TERSE_SHARED_PROGRAM, dir.path()}, -1, dir / "stderr.txt");
  INFO(read_file(dir / "stderr.txt"));
  REQUIRE(exit_code(status) == 0);

  std::vector<std::string> files = log_files(dir.path());
  std::set<std::string> names;
  for (const auto& file : files) names.insert(std::filesystem::path(file).filename().string().substr(0, 7));
  REQUIRE_FALSE(files.empty());
  CHECK(names == std::set<std::string>{"shared-"});

  std::vector<std::string> expected;
  for (int i = 0; i < kSharedRecordsEach; ++i) {
    expected.push_back(main_record(i));
    expected.push_back(library_a_record(i));
    expected.push_back(library_b_record(i));
  }
  Decoded decoded = decode_files(files);
  CHECK(decoded.intact());
  std::vector<std::string> messages;
  for (const auto& line : decoded.lines) messages.push_back(line.message);
  std::sort(expected.begin(), expected.end());
  std::sort(messages.begin(), messages.end());
  REQUIRE(messages.size() == expected.size());
  CHECK(messages == expected);
}
