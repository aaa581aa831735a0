#include "log_files.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <system_error>
#include <tuple>

#include <terse/file_name.hpp>

namespace terse::cli {

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
    std::sort(found.begin(), found.end(), log_file_less);
    for (const auto& f : found) files.push_back(f.string());
  }
  return files;
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

}  // namespace terse::cli
