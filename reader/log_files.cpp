#include "log_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <system_error>
#include <tuple>

#include <terse/crc.hpp>
#include <terse/file_name.hpp>
#include <terse/frame.hpp>
#include <terse/portable_libc.hpp>
#include <terse/reader.hpp>
#include <terse/schema.hpp>
#include <terse/seal.hpp>
#include <terse/wire.hpp>

namespace terse::input {

std::optional<LogFileName> parse_name(const std::string& file) {
  auto name = schema::parse_file_name(file);
  if (!name) return std::nullopt;
  return LogFileName{std::string(name->prefix), std::string(name->date), name->sequence};
}

bool log_file_less(const fs::path& a, const fs::path& b) {
  auto na = parse_name(a.filename().string());
  auto nb = parse_name(b.filename().string());
  if (na && nb) return std::tie(na->prefix, na->date, na->sequence) < std::tie(nb->prefix, nb->date, nb->sequence);
  return a.filename() < b.filename();
}

std::string sequence_key(const fs::path& file) {
  std::string dir = file.parent_path().lexically_normal().string();
  if (dir.empty()) dir = ".";
  auto name = parse_name(file.filename().string());
  return dir + '\0' + (name ? name->prefix : '\0' + file.filename().string());
}

std::string log_of(const std::string& file_name) {
  auto name = parse_name(file_name);
  return name ? name->prefix : file_name;
}

namespace {

// The runtime writes the info frame small and uncompressed; one bigger than
// this is not one it wrote.
constexpr std::size_t kInfoReadBytes = 4096;

// The values of the keys that name a writer, in key order, each behind its
// length so that no value can pass for two.
std::string writer_from_info(std::string_view payload) {
  wire::ByteReader in(payload);
  std::string keys[10];
  bool any = false;
  while (!in.empty()) {
    std::uint8_t key = 0;
    std::string_view value;
    if (!in.le(key) || !in.length_prefixed(value, payload.size())) return {};
    if (key >= sizeof keys / sizeof keys[0]) continue;
    keys[key].assign(value);
    any = true;
  }
  if (!any) return {};
  std::string writer;
  for (auto key : {schema::InfoKey::pid, schema::InfoKey::host, schema::InfoKey::program, schema::InfoKey::run_id}) {
    const std::string& value = keys[static_cast<std::size_t>(key)];
    writer += std::to_string(value.size()) + ':' + value;
  }
  return writer;
}

}  // namespace

std::optional<std::string> writer_of(const std::string& path) {
  int fd = open_path(path.c_str(), O_RDONLY);
  if (fd < 0) return std::nullopt;
  unsigned char bytes[kInfoReadBytes];
  std::size_t got = 0;
  for (ssize_t n; got < sizeof bytes && (n = read_some(fd, bytes + got, sizeof bytes - got)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  constexpr std::size_t kHeaderEnd = schema::kPreambleSize + schema::kFrameHeaderSize;
  if (got < kHeaderEnd) return std::nullopt;
  const unsigned char* header = bytes + schema::kPreambleSize;
  if (!schema::frame_sync_at(header) || !schema::frame_header_crc_ok(header)) return std::string();
  schema::FrameHeader frame = schema::decode_frame_header(header);
  if (frame.type == static_cast<std::uint8_t>(schema::FrameType::seal) && frame.flags == 0 &&
      frame.stored_size <= sizeof bytes - kHeaderEnd) {
    // A sealed file's info frame is sealed; its run id is in the clear
    // (FORMAT.md §11.1), and one run is one writer.
    if (got < kHeaderEnd + frame.stored_size) return std::nullopt;
    if (wire::crc32c(bytes + kHeaderEnd, frame.stored_size) != frame.payload_crc) return std::string();
    auto seal =
        seal::parse_seal_frame(std::string_view(reinterpret_cast<const char*>(bytes + kHeaderEnd), frame.stored_size));
    if (!seal) return std::string();
    return "sealed run " + std::to_string(seal->run_id);
  }
  if (frame.type != static_cast<std::uint8_t>(schema::FrameType::info) || frame.flags != 0 ||
      frame.stored_size > sizeof bytes - kHeaderEnd)
    return std::string();
  if (got < kHeaderEnd + frame.stored_size) return std::nullopt;
  if (wire::crc32c(bytes + kHeaderEnd, frame.stored_size) != frame.payload_crc) return std::string();
  return writer_from_info(std::string_view(reinterpret_cast<const char*>(bytes + kHeaderEnd), frame.stored_size));
}

std::uint64_t writer_hash(const std::string& writer) {
  if (writer.empty()) return 0;
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : writer) hash = (hash ^ c) * 1099511628211ull;
  return hash == 0 ? 1 : hash;
}

std::optional<std::string> WriterCache::of(const std::string& path) {
  auto it = known_.find(path);
  if (it != known_.end()) return it->second;
  auto writer = writer_of(path);
  if (writer) known_.emplace(path, *writer);
  return writer;
}

std::uint32_t fnv1a32(std::string_view bytes) {
  std::uint32_t hash = 2166136261u;
  for (unsigned char c : bytes) hash = (hash ^ c) * 16777619u;
  return hash;
}

std::string absolute_dir(const fs::path& dir) {
  std::error_code ec;
  fs::path full = fs::absolute(dir.empty() ? fs::path(".") : dir, ec).lexically_normal();
  if (!full.has_filename() && full.has_parent_path() && full != full.root_path()) full = full.parent_path();
  return full.string();
}

std::int64_t wall_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace terse::input

namespace terse::reader {

namespace fs = std::filesystem;

std::vector<std::string> expand_paths(const std::vector<std::string>& paths, bool& ok) {
  std::vector<std::string> files;
  for (const auto& path : paths) {
    std::error_code ec;
    if (path == "-" || !fs::is_directory(path, ec)) {
      files.push_back(path);
      continue;
    }
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(path, ec))
      if (entry.path().extension() == ".tlog") found.push_back(entry.path());
    if (ec) {
      std::fprintf(stderr, "terse: %s: %s\n", path.c_str(), ec.message().c_str());
      ok = false;
    }
    std::sort(found.begin(), found.end(), input::log_file_less);
    for (const auto& f : found) files.push_back(f.string());
  }
  return files;
}

}  // namespace terse::reader
