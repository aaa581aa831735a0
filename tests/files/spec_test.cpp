// The spec and the code agree: every section of FORMAT.md that the tree
// cites exists, and the constants of schema/terse/schema.hpp are the values
// the spec states. TERSE_SOURCE_DIR is the root of the source tree.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <terse/schema.hpp>

namespace fs = std::filesystem;
namespace schema = terse::schema;

namespace {

const fs::path kRoot = TERSE_SOURCE_DIR;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string& spec() {
  static const std::string text = slurp(kRoot / "schema" / "FORMAT.md");
  return text;
}

// The part of the spec from the heading that starts with `heading` to the
// next heading of the same or a higher level.
std::string section(const std::string& heading) {
  const std::string& text = spec();
  std::size_t begin = text.find("\n" + heading);
  REQUIRE(begin != std::string::npos);
  std::size_t level = heading.find_first_not_of('#');
  std::size_t end = begin + 1;
  for (;;) {
    end = text.find("\n#", end + 1);
    if (end == std::string::npos || text.find_first_not_of('#', end + 1) - (end + 1) <= level) break;
  }
  return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

std::set<std::string> spec_sections() {
  std::set<std::string> numbers;
  static const std::regex heading(R"(^#+ §(\d+(\.\d+)*) )", std::regex::multiline);
  const std::string& text = spec();
  for (std::sregex_iterator it(text.begin(), text.end(), heading), end; it != end; ++it) numbers.insert((*it)[1]);
  return numbers;
}

bool is_build_output(const fs::path& relative) {
  std::string top = relative.begin()->string();
  return top.rfind("build", 0) == 0 || top.rfind('.', 0) == 0 || top == "demo-logs";
}

bool is_text_source(const fs::path& path) {
  static const std::set<std::string> extensions = {".cpp", ".hpp", ".h",  ".md", ".txt", ".cmake",
                                                   ".sh",  ".in",  ".py", ".1",  ".dict"};
  return extensions.count(path.extension().string()) > 0;
}

struct Citation {
  std::string where;     // file:line
  std::string document;  // the .md file named right before the §, if any
  std::string number;
};

// Every "§N" or "§N.M" in the tree's text files, but those of an RFC.
std::vector<Citation> citations() {
  static const std::regex cite(R"((?:([\w./-]+\.md) )?(RFC \d+ )?§(\d+(?:\.\d+)*))");
  std::vector<Citation> out;
  for (auto it = fs::recursive_directory_iterator(kRoot); it != fs::recursive_directory_iterator(); ++it) {
    fs::path relative = fs::relative(it->path(), kRoot);
    if (it->is_directory() && is_build_output(relative)) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || !is_text_source(it->path())) continue;
    std::istringstream lines(slurp(it->path()));
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
      for (std::sregex_iterator m(line.begin(), line.end(), cite), end; m != end; ++m) {
        if ((*m)[2].matched) continue;
        out.push_back({relative.string() + ":" + std::to_string(number), (*m)[1], (*m)[3]});
      }
    }
  }
  return out;
}

// A markdown table row's cells, trimmed.
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::istringstream in(row);
  std::string cell;
  std::getline(in, cell, '|');  // before the first bar
  while (std::getline(in, cell, '|')) {
    auto first = cell.find_first_not_of(' ');
    auto last = cell.find_last_not_of(' ');
    out.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
  }
  if (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

using Table = std::vector<std::vector<std::string>>;

// The table of `text` whose heading row starts with `first_heading`; its
// rows without the heading and the |---| line.
Table table(const std::string& text, const std::string& first_heading) {
  std::vector<Table> tables;
  std::istringstream lines(text);
  std::string line;
  bool in_table = false;
  while (std::getline(lines, line)) {
    bool is_row = line.rfind("|", 0) == 0;
    if (is_row && !in_table) tables.emplace_back();
    if (is_row) tables.back().push_back(cells(line));
    in_table = is_row;
  }
  Table found;
  for (const auto& t : tables) {
    if (t.size() < 2 || t[0].empty() || t[0][0] != first_heading) continue;
    REQUIRE(found.empty());
    found.assign(t.begin() + 2, t.end());
  }
  REQUIRE(!found.empty());
  return found;
}

// The row of `rows` whose first cell is `key`.
std::vector<std::string> row(const Table& rows, const std::string& key) {
  std::vector<std::string> out;
  for (const auto& r : rows) {
    if (r.empty() || r[0] != key) continue;
    REQUIRE(out.empty());
    out = r;
  }
  INFO("row " << key);
  REQUIRE(out.size() >= 3);
  return out;
}

// "`89 54 4C`" -> {0x89, 0x54, 0x4C}
std::vector<unsigned> hex_bytes(const std::string& cell) {
  std::vector<unsigned> out;
  std::istringstream in(cell.substr(cell.find('`') + 1, cell.find('`', cell.find('`') + 1) - cell.find('`') - 1));
  std::string byte;
  while (in >> byte) out.push_back(static_cast<unsigned>(std::stoul(byte, nullptr, 16)));
  return out;
}

template <std::size_t N>
std::vector<unsigned> as_vector(const unsigned char (&bytes)[N]) {
  return {bytes, bytes + N};
}

// The first number in a cell such as "`u16`, 1 for this version".
unsigned long number_in(const std::string& cell) {
  std::smatch m;
  REQUIRE(std::regex_search(cell, m, std::regex(R"((?:^|[ ,])(\d+))")));
  return std::stoul(m[1]);
}

}  // namespace

TEST_CASE("every FORMAT.md section cited in the tree exists in FORMAT.md") {
  auto sections = spec_sections();
  REQUIRE(sections.count("2") == 1);
  REQUIRE(sections.count("7.1") == 1);
  auto found = citations();
  CHECK(found.size() > 50);  // the scan sees the tree, not an empty directory
  for (const auto& c : found) {
    INFO(c.where << ": " << c.document << (c.document.empty() ? "" : " ") << "§" << c.number);
    CHECK((c.document.empty() || fs::path(c.document).filename() == "FORMAT.md"));
    CHECK(sections.count(c.number) == 1);
  }
}

TEST_CASE("the version the spec states is the version the code writes and reads") {
  std::smatch m;
  REQUIRE(
      std::regex_search(spec(), m, std::regex(R"(Format version: \*\*(\d+)\.(\d+)\*\* \(major (\d+), minor (\d+)\))")));
  CHECK(std::stoul(m[1]) == schema::kVersionMajor);
  CHECK(std::stoul(m[2]) == schema::kVersionMinor);
  CHECK(std::stoul(m[3]) == schema::kVersionMajor);
  CHECK(std::stoul(m[4]) == schema::kVersionMinor);

  std::string text = section("## §2 ");
  CHECK(text.find("Every file starts with " + std::to_string(schema::kPreambleSize) + " bytes") != std::string::npos);
  Table preamble = table(text, "offset");
  CHECK(hex_bytes(row(preamble, "0")[3]) == as_vector(schema::kMagic));
  auto major = row(preamble, "8");
  CHECK(major[2] == "version_major");
  CHECK(number_in(major[3]) == schema::kVersionMajor);
  auto minor = row(preamble, "10");
  CHECK(minor[2] == "version_minor");
  CHECK(number_in(minor[3]) == schema::kVersionMinor);
  auto crc = row(preamble, "12");
  CHECK(crc[2] == "preamble_crc");
  CHECK(std::stoul(crc[0]) == schema::kPreambleCrcOffset);
}

TEST_CASE("the frame header the spec states is the one the code uses") {
  std::string frames = section("## §3 ");
  CHECK(frames.find("each a " + std::to_string(schema::kFrameHeaderSize) + "-byte header") != std::string::npos);
  Table header = table(frames, "offset");
  CHECK(hex_bytes(row(header, "0")[3]) == as_vector(schema::kFrameSync));
  auto header_crc = row(header, std::to_string(schema::kFrameHeaderCrcOffset));
  CHECK(header_crc[2] == "header_crc");
  CHECK(std::stoul(header_crc[1]) + schema::kFrameHeaderCrcOffset == schema::kFrameHeaderSize);
  CHECK(frames.find("`raw_size` must not exceed 64 MiB (67 108 864)") != std::string::npos);
  CHECK(schema::kMaxFrameRawSize == 67108864u);
  CHECK(frames.find("bit 0 (0x01): payload is zstd-compressed") != std::string::npos);
  CHECK(schema::kFrameFlagZstd == 0x01);
  CHECK(frames.find("bit 1 (0x02): payload is sealed") != std::string::npos);
  CHECK(schema::kFrameFlagSealed == 0x02);

  const std::map<std::string, schema::FrameType> types = {{"info", schema::FrameType::info},
                                                          {"calibration", schema::FrameType::calibration},
                                                          {"dictionary", schema::FrameType::dictionary},
                                                          {"records", schema::FrameType::records},
                                                          {"seal", schema::FrameType::seal},
                                                          {"end", schema::FrameType::end}};
  for (const auto& [name, type] : types) {
    INFO(name);
    auto type_row = row(table(frames, "type"), std::to_string(static_cast<int>(type)));
    CHECK(type_row[1] == name);
  }
}

TEST_CASE("the type tags the spec states are the ones the code uses") {
  struct Tag {
    const char* name;
    int value;
    int size;
  };
  static constexpr Tag kTags[] = {
#define TERSE_X(name, value, size) {#name, value, size},
      TERSE_SCHEMA_TYPE_TAGS(TERSE_X)
#undef TERSE_X
  };
  Table tags = table(section("## §8 "), "tag");
  CHECK(tags.size() == std::size(kTags));
  for (const auto& tag : kTags) {
    INFO(tag.name);
    char value[8];
    std::snprintf(value, sizeof value, "0x%02X", tag.value);
    auto tag_row = row(tags, value);
    CHECK(tag_row[1] == tag.name);
    CHECK(schema::type_tag_size(static_cast<std::uint8_t>(tag.value)) == tag.size);
    if (tag.size == 0) {
      CHECK(tag_row[2] == "4 + n");  // a u32 length, then the bytes
    } else {
      CHECK(tag_row[2] == std::to_string(tag.size));
    }
  }
}
