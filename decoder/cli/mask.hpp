// `terse cat --mask RULES`: redaction of what is printed. RULES is a file of
// lines "REGEX => REPLACEMENT" (ECMAScript regex, $1-style groups in the
// replacement); blank lines and lines starting with # are ignored. Every
// rule applies, in file order, to the formatted message and to each string
// argument, so a value is hidden in -o json's "args" as well as in the text.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "filters.hpp"

namespace terse::cli {

struct MaskRule {
  std::regex pattern;
  std::string replacement;
};

// Throws UsageError naming the file and line for a rule that does not parse.
inline std::vector<MaskRule> load_mask_rules(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("--mask " + path + ": cannot read: " + std::strerror(errno));
  std::vector<MaskRule> rules;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    auto where = [&] { return "--mask " + path + ":" + std::to_string(number) + ": "; };
    // The first " =>" splits: regexes rarely hold it, and a replacement may.
    std::size_t arrow = line.find("=>", first);
    while (arrow != std::string::npos && (arrow == first || (line[arrow - 1] != ' ' && line[arrow - 1] != '\t')))
      arrow = line.find("=>", arrow + 1);
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

class Masker {
 public:
  explicit Masker(std::string path) : path_(std::move(path)) {
    rules_ = load_mask_rules(path_);
    changed();
  }

  void apply(std::string& text) const {
    for (const auto& rule : rules_) {
      if (!std::regex_search(text, rule.pattern)) continue;
      text = std::regex_replace(text, rule.pattern, rule.replacement);
    }
  }

  // Following: re-reads the rules when the file changed since they were
  // read. Called between records, so each record is masked by one set of
  // rules. A file that no longer parses keeps the rules in force; `error`
  // says why. True when new rules were loaded.
  bool reload_if_changed(std::string& error) {
    if (!changed()) return false;
    try {
      rules_ = load_mask_rules(path_);
      return true;
    } catch (const std::exception& e) {
      error = std::string(e.what()) + "; the earlier rules stay in force";
      return false;
    }
  }

  std::size_t size() const { return rules_.size(); }

 private:
  // Size and inode too: an editor that replaces the file within one
  // timestamp tick still counts as a change.
  bool changed() {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0) return false;  // mid-replace: look again next time
    Stamp now{st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_size, st.st_ino};
    if (now == stamp_) return false;
    stamp_ = now;
    return true;
  }

  struct Stamp {
    long long sec = -1, nsec = 0, size = 0;
    unsigned long long inode = 0;
    bool operator==(const Stamp&) const = default;
  };

  std::string path_;
  std::vector<MaskRule> rules_;
  Stamp stamp_;
};

}  // namespace terse::cli
