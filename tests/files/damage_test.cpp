// Damaged files: a torn tail is end of file, a bad frame costs only itself,
// and the reader says where it found each problem (FORMAT.md, "Reading a
// damaged file").
#include <algorithm>
#include <random>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <terse/schema.hpp>

#include "file_helpers.hpp"

using namespace terse::test;
namespace schema = terse::schema;

namespace {

// A file with many records frames: 12 groups of 20 records, stored
// uncompressed so that a flipped payload byte lands in record bytes.
struct Fixture {
  TempDir dir;
  Sample sample;
  std::vector<FrameAt> frames;
  std::vector<std::size_t> through;  // records decoded up to each frame's end

  explicit Fixture(int compression_level = 0) {
    sample = write_sample(dir.path(), 12, 20, compression_level, "dmg");
    frames = frames_of(sample.bytes);
    through = records_through(sample.bytes, frames);
    REQUIRE(through.back() == sample.messages.size());
  }

  std::vector<std::size_t> records_frame_indexes() const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < frames.size(); ++i)
      if (frames[i].type == kRecordsFrame) out.push_back(i);
    return out;
  }

  // The messages left once frame `index` is gone.
  std::vector<std::string> without_frame(std::size_t index) const {
    std::size_t begin = index == 0 ? 0 : through[index - 1];
    std::size_t end = through[index];
    std::vector<std::string> out(sample.messages.begin(), sample.messages.begin() + static_cast<long>(begin));
    out.insert(out.end(), sample.messages.begin() + static_cast<long>(end), sample.messages.end());
    return out;
  }

  // Records of every frame that ends at or before `cut`.
  std::vector<std::string> whole_before(std::size_t cut) const {
    std::size_t count = 0;
    for (std::size_t i = 0; i < frames.size(); ++i)
      if (frames[i].end() <= cut) count = through[i];
    return {sample.messages.begin(), sample.messages.begin() + static_cast<long>(count)};
  }

  bool is_frame_boundary(std::size_t cut) const {
    if (cut == schema::kPreambleSize) return true;
    for (const auto& f : frames)
      if (f.end() == cut) return true;
    return false;
  }

  std::string write(const std::string& name, const std::string& bytes) const {
    std::string path = dir / name;
    write_file(path, bytes);
    return path;
  }
};

bool mentions(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("the sample file decodes intact before any damage") {
  Fixture fx;
  Decoded decoded = decode_bytes(fx.sample.bytes);
  INFO(describe(decoded));
  CHECK(decoded.intact());
  CHECK(messages_of(decoded) == fx.sample.messages);
  CHECK(fx.records_frame_indexes().size() >= 4);
  auto run = run_terse({"verify", fx.sample.path});
  CHECK(run.exit_code == 0);
  CHECK(mentions(run.out, "ok"));
}

// ---- truncation ------------------------------------------------------------

TEST_CASE("a file cut at every byte of its last frames keeps every whole frame before the cut") {
  Fixture fx;
  auto records = fx.records_frame_indexes();
  REQUIRE(records.size() >= 3);
  std::size_t from = fx.frames[records[records.size() - 3]].offset;
  for (std::size_t cut = from; cut < fx.sample.bytes.size(); ++cut) {
    INFO("cut at " << cut);
    Decoded decoded = decode_bytes(fx.sample.bytes.substr(0, cut));
    INFO(describe(decoded));
    REQUIRE(messages_of(decoded) == fx.whole_before(cut));
    REQUIRE(decoded.summaries.size() == 1);
    if (fx.is_frame_boundary(cut)) {
      CHECK(decoded.intact());
    } else {
      CHECK(decoded.summaries[0].torn_tail);
      CHECK_FALSE(decoded.intact());
      REQUIRE_FALSE(decoded.problems.empty());
      CHECK(decoded.problems.back().torn_tail);
      CHECK(decoded.summaries[0].damaged == 0);  // the end of the data, not damage
    }
  }
}

TEST_CASE("a file cut at sampled points across its whole length never loses a whole frame") {
  Fixture fx(1);  // compressed frames, as written by default
  std::mt19937 rng(20240601);
  std::vector<std::size_t> cuts{0, 1, 7, 8, 15, 16, 17, 39, 40, 41};
  std::uniform_int_distribution<std::size_t> pick(0, fx.sample.bytes.size() - 1);
  for (int i = 0; i < 300; ++i) cuts.push_back(pick(rng));
  for (std::size_t cut : cuts) {
    INFO("cut at " << cut);
    Decoded decoded = decode_bytes(fx.sample.bytes.substr(0, cut));
    INFO(describe(decoded));
    CHECK(messages_of(decoded) == fx.whole_before(cut));
    if (cut > 0 && !fx.is_frame_boundary(cut)) CHECK(decoded.summaries[0].torn_tail);
  }
}

TEST_CASE("a file cut inside its preamble is a torn tail, not a foreign file") {
  Fixture fx;
  for (std::size_t cut = 1; cut < schema::kPreambleSize; ++cut) {
    INFO("cut at " << cut);
    Decoded decoded = decode_bytes(fx.sample.bytes.substr(0, cut));
    CHECK(decoded.lines.empty());
    CHECK(decoded.summaries[0].torn_tail);
    for (const auto& p : decoded.problems) CHECK_FALSE(mentions(p.what, "not a terse log file"));
  }
}

TEST_CASE("verify flags a truncated file, naming the file and an offset") {
  Fixture fx;
  const FrameAt& last = fx.frames.back();
  std::size_t cut = last.offset + schema::kFrameHeaderSize + last.stored / 2;
  std::string path = fx.write("cut.tlog", fx.sample.bytes.substr(0, cut));
  auto run = run_terse({"verify", path});
  CHECK(run.exit_code == 1);
  CHECK(mentions(run.out, "DAMAGED"));
  CHECK(mentions(run.out, "torn tail"));
  CHECK(mentions(run.err, path));
  CHECK(mentions(run.err, "offset " + std::to_string(last.offset)));

  // cat prints every whole frame and treats the torn tail as the end of the
  // data, as `tail` would on a live file: no complaint, exit code 0.
  auto cat = run_terse({"cat", "--format", "{message}", path});
  CHECK(cat.exit_code == 0);
  CHECK(cat.err.empty());
  CHECK(split_lines(cat.out) == fx.whole_before(cut));
}

// ---- flipped bytes ----------------------------------------------------------

TEST_CASE("a flipped byte in a records frame's payload loses that frame only") {
  Fixture fx;
  for (std::size_t index : fx.records_frame_indexes()) {
    const FrameAt& f = fx.frames[index];
    for (std::size_t at : {f.payload(), f.payload() + f.stored / 2, f.end() - 1}) {
      INFO("frame " << index << " at " << f.offset << ", byte " << at);
      std::string bytes = fx.sample.bytes;
      flip_byte(bytes, at);
      Decoded decoded = decode_bytes(bytes);
      INFO(describe(decoded));
      CHECK(messages_of(decoded) == fx.without_frame(index));
      CHECK(decoded.problems.size() == 1);
      CHECK(any_problem_at(decoded, f.offset));
      CHECK_FALSE(decoded.intact());
    }
  }
}

TEST_CASE("a flipped byte in a frame header resyncs to the next frame") {
  Fixture fx;
  auto records = fx.records_frame_indexes();
  std::size_t index = records[records.size() / 2];
  const FrameAt& f = fx.frames[index];
  for (std::size_t k = 0; k < schema::kFrameHeaderSize; ++k) {
    INFO("header byte " << k << " of the frame at " << f.offset);
    std::string bytes = fx.sample.bytes;
    flip_byte(bytes, f.offset + k);
    Decoded decoded = decode_bytes(bytes);
    INFO(describe(decoded));
    CHECK(messages_of(decoded) == fx.without_frame(index));
    CHECK(any_problem_at(decoded, f.offset));
    CHECK_FALSE(decoded.intact());
    // The resync message says where reading resumed: the next frame.
    bool resumed = false;
    for (const auto& p : decoded.problems)
      resumed = resumed || mentions(p.what, "offset " + std::to_string(fx.frames[index + 1].offset));
    CHECK(resumed);
  }
}

TEST_CASE("a header whose stored size shrank, checksum fixed, costs the frame and the reader resyncs") {
  Fixture fx;
  auto records = fx.records_frame_indexes();
  std::size_t index = records[1];
  std::string bytes = fx.sample.bytes;
  shrink_size(bytes, fx.frames[index], 3);
  fix_checksum(bytes, fx.frames[index], false);
  Decoded decoded = decode_bytes(bytes);
  INFO(describe(decoded));
  CHECK(messages_of(decoded) == fx.without_frame(index));
  CHECK(any_problem_at(decoded, fx.frames[index].offset));
}

TEST_CASE("a payload changed behind a fixed checksum loses at most that frame's records") {
  // A checksum cannot catch this; the record parser must, without crashing.
  Fixture fx;
  auto records = fx.records_frame_indexes();
  std::size_t index = records[2];
  const FrameAt& f = fx.frames[index];
  for (std::size_t at = f.payload(); at < f.end(); at += 7) {
    INFO("byte " << at);
    std::string bytes = fx.sample.bytes;
    increment_byte(bytes, at, 0x41);
    fix_checksum(bytes, f, true);
    Decoded decoded = decode_bytes(bytes);
    INFO(describe(decoded));
    // Records of every other frame come through untouched.
    auto all = messages_of(decoded);
    std::size_t begin = index == 0 ? 0 : fx.through[index - 1];
    REQUIRE(all.size() >= begin);
    CHECK(std::equal(fx.sample.messages.begin(), fx.sample.messages.begin() + static_cast<long>(begin), all.begin()));
    std::size_t after = fx.sample.messages.size() - fx.through[index];
    REQUIRE(all.size() >= after);
    CHECK(std::equal(fx.sample.messages.end() - static_cast<long>(after), fx.sample.messages.end(),
                     all.end() - static_cast<long>(after)));
  }
}

TEST_CASE("garbage between frames is skipped and reported where it starts") {
  Fixture fx;
  auto records = fx.records_frame_indexes();
  std::size_t index = records[1];
  std::size_t at = fx.frames[index].offset;
  for (std::size_t length : {1u, 3u, 23u, 24u, 100u, 5000u}) {
    INFO("garbage of " << length << " bytes at " << at);
    std::string garbage;
    for (std::size_t i = 0; i < length; ++i) garbage += static_cast<char>('a' + i % 26);
    std::string bytes = fx.sample.bytes;
    bytes.insert(at, garbage);
    Decoded decoded = decode_bytes(bytes);
    INFO(describe(decoded));
    CHECK(messages_of(decoded) == fx.sample.messages);
    REQUIRE(decoded.problems.size() == 1);
    CHECK(decoded.problems[0].offset == at);
    CHECK(mentions(decoded.problems[0].what, "skipped " + std::to_string(length) + " bytes"));
  }
}

TEST_CASE("verify flags a flipped payload byte, a flipped header byte and inserted garbage") {
  Fixture fx;
  auto records = fx.records_frame_indexes();
  const FrameAt& f = fx.frames[records[1]];

  std::string payload = fx.sample.bytes;
  flip_byte(payload, f.payload() + 1);
  std::string header = fx.sample.bytes;
  flip_byte(header, f.offset + 5);
  std::string garbage = fx.sample.bytes;
  garbage.insert(f.offset, "not a frame at all");

  for (const auto& [name, bytes] :
       {std::pair{"payload.tlog", payload}, std::pair{"header.tlog", header}, std::pair{"garbage.tlog", garbage}}) {
    INFO(name);
    std::string path = fx.write(name, bytes);
    auto run = run_terse({"verify", path});
    CHECK(run.exit_code == 1);
    CHECK(mentions(run.out, "DAMAGED"));
    CHECK(mentions(run.err, path + ": offset " + std::to_string(f.offset)));
  }
}

// ---- the preamble -----------------------------------------------------------

TEST_CASE("a file with a bad magic number is named as not a terse log") {
  Fixture fx;
  std::string bytes = fx.sample.bytes;
  increment_byte(bytes, 2);
  Decoded decoded = decode_bytes(bytes);
  INFO(describe(decoded));
  REQUIRE_FALSE(decoded.problems.empty());
  CHECK(decoded.problems[0].offset == 0);
  CHECK(mentions(decoded.problems[0].what, "not a terse log file"));

  std::string path = fx.write("magic.tlog", bytes);
  auto run = run_terse({"verify", path});
  CHECK(run.exit_code == 1);
  CHECK(mentions(run.err, path + ": offset 0: not a terse log file"));
}

TEST_CASE("a text file is not a terse log") {
  TempDir dir;
  for (const std::string text : {"hello\n", "2024-01-01 12:00:00 INFO something happened here\n"}) {
    INFO(text);
    Decoded decoded = decode_bytes(text);
    CHECK(decoded.lines.empty());
    REQUIRE_FALSE(decoded.problems.empty());
    CHECK(mentions(decoded.problems[0].what, "not a terse log file"));
    std::string path = dir / "text.tlog";
    write_file(path, text);
    auto run = run_terse({"verify", path});
    CHECK(run.exit_code == 1);
    CHECK(mentions(run.err, "not a terse log file"));
  }
}

TEST_CASE("an unsupported major version is refused with a clear message") {
  Fixture fx;
  std::string bytes = fx.sample.bytes;
  put_u16(bytes, 8, schema::kVersionMajor + 1);
  put_u16(bytes, 10, 3);
  fix_preamble_checksum(bytes);
  Decoded decoded = decode_bytes(bytes);
  INFO(describe(decoded));
  CHECK(decoded.lines.empty());
  REQUIRE(decoded.problems.size() == 1);
  CHECK(decoded.problems[0].offset == 0);
  std::string version = std::to_string(schema::kVersionMajor + 1) + ".3";
  CHECK(mentions(decoded.problems[0].what, "version " + version + " is not supported"));

  std::string path = fx.write("v2.tlog", bytes);
  auto run = run_terse({"verify", path});
  CHECK(run.exit_code == 1);
  CHECK(mentions(run.err, path));
  CHECK(mentions(run.err, "not supported"));
  auto cat = run_terse({"cat", path});
  CHECK(cat.exit_code == 1);
  CHECK(cat.out.empty());
}

TEST_CASE("a damaged preamble is reported and the frames behind it still decode") {
  Fixture fx;
  for (std::size_t at : {8u, 9u, 10u, 12u, 15u}) {
    INFO("preamble byte " << at);
    std::string bytes = fx.sample.bytes;
    flip_byte(bytes, at);
    Decoded decoded = decode_bytes(bytes);
    INFO(describe(decoded));
    CHECK(messages_of(decoded) == fx.sample.messages);
    REQUIRE(decoded.problems.size() == 1);
    CHECK(decoded.problems[0].offset == 0);
    CHECK(mentions(decoded.problems[0].what, "preamble checksum"));
  }
}

TEST_CASE("a newer minor version of the same major version still decodes") {
  Fixture fx;
  std::string bytes = fx.sample.bytes;
  put_u16(bytes, 10, schema::kVersionMinor + 7);
  fix_preamble_checksum(bytes);
  Decoded decoded = decode_bytes(bytes);
  INFO(describe(decoded));
  CHECK(decoded.intact());
  CHECK(messages_of(decoded) == fx.sample.messages);
}

TEST_CASE("an unknown frame type is skipped without complaint") {
  Fixture fx;
  auto records = fx.records_frame_indexes();
  std::size_t index = records[0];
  std::string bytes = fx.sample.bytes;
  // Retype one records frame as a type from the future.
  bytes[fx.frames[index].offset + 4] = static_cast<char>(0x7E);
  fix_checksum(bytes, fx.frames[index], false);
  Decoded decoded = decode_bytes(bytes);
  INFO(describe(decoded));
  CHECK(decoded.problems.empty());
  CHECK(messages_of(decoded) == fx.without_frame(index));
}

// ---- degenerate and combined inputs -----------------------------------------

TEST_CASE("a zero-length file holds no records and is not an error") {
  TempDir dir;
  Decoded decoded = decode_bytes("");
  CHECK(decoded.lines.empty());
  CHECK(decoded.intact());
  std::string path = dir / "empty.tlog";
  write_file(path, "");
  auto cat = run_terse({"cat", path});
  CHECK(cat.exit_code == 0);
  CHECK(cat.out.empty());
  CHECK(cat.err.empty());
  CHECK(run_terse({"verify", path}).exit_code == 0);
}

TEST_CASE("a file of only the preamble holds no records and is intact") {
  Fixture fx;
  std::string bytes = fx.sample.bytes.substr(0, schema::kPreambleSize);
  Decoded decoded = decode_bytes(bytes);
  INFO(describe(decoded));
  CHECK(decoded.lines.empty());
  CHECK(decoded.intact());
  std::string path = fx.write("preamble.tlog", bytes);
  auto cat = run_terse({"cat", path});
  CHECK(cat.exit_code == 0);
  CHECK(cat.out.empty());
  CHECK(run_terse({"verify", path}).exit_code == 0);
}

TEST_CASE("two files concatenated decode as one stream, from memory and through stdin") {
  TempDir a, b;
  Sample first = write_sample(a.path(), 3, 10, 1, "first");
  Sample second = write_sample(b.path(), 4, 10, 0, "second");
  std::vector<std::string> expected = first.messages;
  expected.insert(expected.end(), second.messages.begin(), second.messages.end());
  std::string both = first.bytes + second.bytes;

  Decoded decoded = decode_bytes(both);
  INFO(describe(decoded));
  CHECK(decoded.intact());
  CHECK(messages_of(decoded) == expected);

  std::string path = a / "both.bin";
  write_file(path, both);
  auto cat = run_terse({"cat", "--format", "{message}", "-"}, path);
  CHECK(cat.exit_code == 0);
  CHECK(cat.err.empty());
  CHECK(split_lines(cat.out) == expected);
  auto verify = run_terse({"verify", "-"}, path);
  CHECK(verify.exit_code == 0);
}

namespace {

// A file from "another program": call sites the sample writer never used,
// so only this file's own dictionary can decode it.
Sample write_other(const std::string& directory) {
  terse::start(test_config(directory));
  Sample sample;
  for (int i = 0; i < 30; ++i) {
    TERSE_INFO("other program step {} of {}", i, 30);
    sample.messages.push_back(fmt::format("other program step {} of {}", i, 30));
    if (i % 10 == 9) terse::flush();
  }
  finish_sample(directory, sample);
  return sample;
}

}  // namespace

// A torn frame's intact header claims bytes that belong to the next file
// on the pipe; the reader must find that file's preamble inside them.
TEST_CASE("a torn first file in a concatenation does not cost the second file anything") {
  TempDir a, b;
  Sample first = write_sample(a.path(), 3, 10, 0, "first");
  Sample second = write_other(b.path());
  auto records = frames_of_type(first.bytes, kRecordsFrame);
  REQUIRE(records.size() >= 2);
  // Cut the first file a few bytes into its last records frame, as a crash
  // mid-write would, then start the second file right there: the cut frame's
  // header promises more payload than follows before the next preamble.
  const FrameAt& torn = records.back();
  std::string cut = first.bytes.substr(0, torn.payload() + 6);
  std::string bytes = cut + second.bytes;
  std::size_t kept = decode_bytes(cut).lines.size();
  std::vector<std::string> expected(first.messages.begin(), first.messages.begin() + static_cast<long>(kept));
  expected.insert(expected.end(), second.messages.begin(), second.messages.end());

  Decoded decoded = decode_bytes(bytes);
  INFO(describe(decoded));
  CHECK(messages_of(decoded) == expected);
  CHECK(any_problem_at(decoded, torn.offset));
}

// A service may log the bytes of a .tlog file as a string argument. Inside a
// damaged frame those bytes are a preamble and frames with good checksums;
// read as real ones, they would add records nobody logged into this file and
// make the reader forget its dictionary at their magic number.
TEST_CASE("a damaged frame holding a logged .tlog file is skipped whole, not searched for frames") {
  TempDir a, b;
  Sample inner = write_other(a.path());
  terse::Config config = test_config(b.path());
  config.compression_level = 0;
  terse::start(config);
  Sample outer;
  for (int i = 0; i < 3; ++i) {
    TERSE_INFO("before {}", i);
    outer.messages.push_back(fmt::format("before {}", i));
  }
  terse::flush();
  TERSE_INFO("received a file: {}", inner.bytes);
  outer.messages.push_back(fmt::format("received a file: {}", inner.bytes));
  terse::flush();
  for (int i = 0; i < 3; ++i) {
    TERSE_INFO("after {}", i);
    outer.messages.push_back(fmt::format("after {}", i));
  }
  finish_sample(b.path(), outer);
  REQUIRE(messages_of(decode_bytes(outer.bytes)) == outer.messages);

  auto records = frames_of_type(outer.bytes, kRecordsFrame);
  auto holder = std::find_if(records.begin(), records.end(), [&](const FrameAt& f) {
    return outer.bytes.substr(f.payload(), f.stored).find(inner.bytes) != std::string::npos;
  });
  REQUIRE(holder != records.end());
  std::string bytes = outer.bytes;
  flip_byte(bytes, holder->payload());
  Decoded decoded = decode_bytes(bytes);
  INFO(describe(decoded));
  std::vector<std::string> expected = outer.messages;
  expected.erase(expected.begin() + 3);
  CHECK(messages_of(decoded) == expected);
  CHECK(decoded.problems.size() == 1);
  CHECK(any_problem_at(decoded, holder->offset));
}

TEST_CASE("a file cut at a frame boundary and followed by another decodes both") {
  TempDir a, b;
  Sample first = write_sample(a.path(), 3, 10, 0, "first");
  Sample second = write_other(b.path());
  auto records = frames_of_type(first.bytes, kRecordsFrame);
  std::string cut = first.bytes.substr(0, records.back().offset);
  std::size_t kept = decode_bytes(cut).lines.size();
  std::vector<std::string> expected(first.messages.begin(), first.messages.begin() + static_cast<long>(kept));
  expected.insert(expected.end(), second.messages.begin(), second.messages.end());
  Decoded decoded = decode_bytes(cut + second.bytes);
  INFO(describe(decoded));
  CHECK(decoded.intact());
  CHECK(messages_of(decoded) == expected);
}
