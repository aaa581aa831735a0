#include "mask.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "filters.hpp"

namespace terse::cli {
namespace {

// The first " =>" splits: regexes rarely hold it, and a replacement may.
std::size_t find_arrow(const std::string& line, std::size_t first) {
  std::size_t arrow = line.find("=>", first);
  while (arrow != std::string::npos && (arrow == first || (line[arrow - 1] != ' ' && line[arrow - 1] != '\t')))
    arrow = line.find("=>", arrow + 1);
  return arrow;
}

}  // namespace

std::vector<MaskRule> load_mask_rules(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("--mask " + path + ": cannot read: " + std::strerror(errno));
  std::vector<MaskRule> rules;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    auto where = [&] { return "--mask " + path + ":" + std::to_string(number) + ": "; };
    std::size_t arrow = find_arrow(line, first);
    if (arrow == std::string::npos)
      throw UsageError(where() + "expected 'REGEX => REPLACEMENT', e.g. '(1[3-9]\\d)\\d{4}(\\d{4}) => $1****$2'");
    std::string regex = line.substr(first, arrow - first);
    while (!regex.empty() && (regex.back() == ' ' || regex.back() == '\t')) regex.pop_back();
    std::string replacement = line.substr(arrow + 2);
    if (!replacement.empty() && (replacement.front() == ' ' || replacement.front() == '\t')) replacement.erase(0, 1);
    try {
      rules.push_back(MaskRule{std::regex(regex, std::regex::ECMAScript | std::regex::optimize), replacement});
    } catch (const std::regex_error& e) {
      throw UsageError(where() + "bad regex '" + regex + "': " + e.what());
    }
  }
  return rules;
}

Masker::Masker(std::string path) : path_(std::move(path)) {
  rules_ = load_mask_rules(path_);
  changed();
}

void Masker::apply(std::string& text) const {
  for (const auto& rule : rules_) {
    if (!std::regex_search(text, rule.pattern)) continue;
    text = std::regex_replace(text, rule.pattern, rule.replacement);
  }
}

Result<bool> Masker::reload_if_changed() {
  if (!changed()) return false;
  try {
    rules_ = load_mask_rules(path_);
    return true;
  } catch (const std::exception& e) {
    return Failure{std::string(e.what()) + "; the earlier rules stay in force"};
  }
}

// Size and inode too: an editor that replaces the file within one
// timestamp tick still counts as a change.
bool Masker::changed() {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) return false;  // mid-replace: look again next time
#if defined(__APPLE__)
  const timespec& modified = st.st_mtimespec;
#elif defined(_WIN32)
  // stat() has whole seconds there, and a rewrite within one of the same size would go unseen:
  // the file system's own time has 100 ns.
  std::error_code error;
  const auto written = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::filesystem::last_write_time(path_, error).time_since_epoch())
                           .count();
  if (error) return false;
  const timespec modified{static_cast<time_t>(written / 1'000'000'000), static_cast<long>(written % 1'000'000'000)};
#else
  const timespec& modified = st.st_mtim;
#endif
  Stamp now{modified.tv_sec, modified.tv_nsec, st.st_size, st.st_ino};
  if (now == stamp_) return false;
  stamp_ = now;
  return true;
}

void reload_mask(Masker& mask, const char* program) {
  Result<bool> reloaded = mask.reload_if_changed();
  if (!reloaded) {
    std::fprintf(stderr, "%s: %s\n", program, reloaded.why().c_str());
  } else if (*reloaded) {
    std::fprintf(stderr, "%s: --mask %s: reloaded (%zu rules)\n", program, mask.path().c_str(), mask.size());
  }
}

}  // namespace terse::cli
