// What a file says about itself (format 1.3): a string cut to fit its
// thread's buffer is marked with its original length (FORMAT.md §8), and
// frames are numbered so that a repeated, missing or reordered frame is
// found (FORMAT.md §3.1) by `terse verify`, and a repeated one read once.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "file_helpers.hpp"

using namespace terse::test;

namespace {

bool mentions(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// A sample file of many records frames, and the ranges of its records frames.
struct Numbered {
  TempDir dir;
  Sample sample;
  std::vector<FrameAt> records;

  Numbered() {
    sample = write_sample(dir.path(), 6, 10, 1, "num");
    records = frames_of_type(sample.bytes, kRecordsFrame);
    REQUIRE(records.size() >= 4);
  }

  std::string frame_bytes(std::size_t i) const {
    return sample.bytes.substr(records[i].offset, records[i].end() - records[i].offset);
  }

  std::string write(const std::string& bytes) const {
    std::string path = dir / "edited.tlog";
    write_file(path, bytes);
    return path;
  }
};

std::vector<std::string> cat_lines(const std::string& path) {
  Run run = run_terse({"cat", "-o", "cat", path});
  return split_lines(run.out);
}

}  // namespace

TEST_CASE("a string cut to fit the buffer says so, with its original length, in text and JSON") {
  TempDir dir;
  const std::size_t size = std::size_t{3} << 20;  // three times the default 1 MiB buffer
  const std::string big(size, 'x');
  terse::start(test_config(dir.path()));
  TERSE_INFO("big {} end {}", big, 7);
  TERSE_INFO("small {} end", std::string(100, 'y'));
  terse::stop();

  Decoded decoded = decode_dir(dir.path());
  CHECK(decoded.intact());
  REQUIRE(decoded.lines.size() == 2);
  const std::string mark = fmt::format("... {} bytes total", size);
  const std::string& message = decoded.lines[0].message;
  CHECK(message.rfind("big xxxx", 0) == 0);
  CHECK(message.size() < size);
  CHECK(mentions(message, "x" + mark + " end 7"));
  CHECK(decoded.lines[1].message == fmt::format("small {} end", std::string(100, 'y')));

  auto files = log_files(dir.path());
  REQUIRE(files.size() == 1);
  Run text = run_terse({"cat", "-o", "cat", files[0]});
  CHECK(text.exit_code == 0);
  CHECK(mentions(text.out, "x" + mark + " end 7\n"));
  Run json = run_terse({"cat", "-o", "json", files[0]});
  CHECK(json.exit_code == 0);
  auto lines = split_lines(json.out);
  REQUIRE(lines.size() == 2);
  // The message and the argument's value both carry the mark.
  CHECK(mentions(lines[0], "x" + mark + " end 7\""));
  CHECK(mentions(lines[0], "x" + mark + "\",7]"));
  CHECK(!mentions(lines[1], "bytes total"));
}

TEST_CASE("an untouched numbered file verifies") {
  Numbered fx;
  Run run = run_terse({"verify", fx.sample.path});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  CHECK(cat_lines(fx.sample.path) == fx.sample.messages);
}

TEST_CASE("a records frame repeated verbatim fails verify, and cat prints its records once") {
  Numbered fx;
  std::string bytes = fx.sample.bytes;
  bytes.insert(fx.records[2].end(), fx.frame_bytes(2));
  std::string path = fx.write(bytes);
  Run run = run_terse({"verify", path});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 1);
  CHECK(mentions(run.err, "repeats an earlier frame"));
  CHECK(mentions(run.err, std::to_string(fx.records[2].end())));
  Run cat = run_terse({"cat", "-o", "cat", path});
  CHECK(split_lines(cat.out) == fx.sample.messages);
  CHECK(mentions(cat.err, "repeats an earlier frame"));
}

TEST_CASE("a records frame gone missing fails verify") {
  Numbered fx;
  std::string bytes = fx.sample.bytes;
  bytes.erase(fx.records[1].offset, fx.records[1].end() - fx.records[1].offset);
  Run run = run_terse({"verify", fx.write(bytes)});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 1);
  CHECK(mentions(run.err, "missing"));
}

TEST_CASE("two records frames swapped fail verify") {
  Numbered fx;
  // Records frames 1 and 2 are next to each other when nothing new was
  // described between them; swap the first such pair.
  std::size_t i = 0;
  while (i + 1 < fx.records.size() && fx.records[i].end() != fx.records[i + 1].offset) ++i;
  REQUIRE(i + 1 < fx.records.size());
  std::string bytes = fx.sample.bytes;
  std::string first = fx.frame_bytes(i), second = fx.frame_bytes(i + 1);
  bytes.replace(fx.records[i].offset, first.size() + second.size(), second + first);
  Run run = run_terse({"verify", fx.write(bytes)});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 1);
  CHECK(mentions(run.err, "out of order"));
}
