// What --site and --thread (and terse::reader::Filter's sites and threads) match.
#include <algorithm>
#include <cctype>
#include <string>

#include "reader_detail.hpp"

namespace terse::input {
namespace {

// True when `path` is `suffix` or ends with "/" + suffix.
bool path_ends_with(const std::string& path, const std::string& suffix) {
  if (suffix.empty() || suffix.size() > path.size()) return false;
  if (path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
  return path.size() == suffix.size() || path[path.size() - suffix.size() - 1] == '/' || suffix.front() == '/';
}

}  // namespace

bool site_matches(const decoder::Site& site, const std::string& text) {
  if (site.format.find(text) != std::string::npos) return true;
  if (path_ends_with(site.file, text)) return true;
  std::size_t colon = text.rfind(':');
  if (colon != std::string::npos && colon + 1 < text.size() &&
      std::all_of(text.begin() + static_cast<std::ptrdiff_t>(colon) + 1, text.end(),
                  [](unsigned char c) { return std::isdigit(c); })) {
    std::string line = text.substr(colon + 1);
    return line.size() <= 9 && static_cast<std::uint32_t>(std::stoul(line)) == site.line &&
           path_ends_with(site.file, text.substr(0, colon));
  }
  return false;
}

bool thread_matches(const decoder::Thread& thread, const std::string& text) {
  if (!text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }) &&
      text.size() <= 19) {
    std::uint64_t id = std::stoull(text);
    return thread.shown_id() == id;
  }
  return !thread.name.empty() && thread.name == text;
}

}  // namespace terse::input
