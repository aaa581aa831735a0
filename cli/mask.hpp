// `--mask RULES`: redaction of what is printed or shipped. RULES is a file of
// lines "REGEX => REPLACEMENT" (ECMAScript regex, $1-style groups in the
// replacement); blank lines and lines starting with # are ignored. Every
// rule applies, in file order, to the formatted message and to each string
// argument, so a value is hidden in -o json's "args" as well as in the text.
#pragma once

#include <regex>
#include <string>
#include <vector>

#include <terse/result.hpp>

namespace terse::cli {

struct MaskRule {
  std::regex pattern;
  std::string replacement;
};

// Throws UsageError naming the file and line for a rule that does not parse.
std::vector<MaskRule> load_mask_rules(const std::string& path);

class Masker {
 public:
  // Throws UsageError as load_mask_rules does.
  explicit Masker(std::string path);

  void apply(std::string& text) const;

  // Following: re-reads the rules when the file changed since they were
  // read. Called between records, so each record is masked by one set of
  // rules. A file that no longer parses keeps the rules in force, and the
  // failure says why. True when new rules were loaded, false when the file
  // did not change.
  Result<bool> reload_if_changed();

  std::size_t size() const { return rules_.size(); }
  const std::string& path() const { return path_; }

 private:
  bool changed();

  struct Stamp {
    long long sec = -1, nsec = 0, size = 0;
    unsigned long long inode = 0;
    bool operator==(const Stamp&) const = default;
  };

  std::string path_;
  std::vector<MaskRule> rules_;
  Stamp stamp_;
};

// Between two rounds of following: reloads the rules if their file changed
// and says on stderr, after `program`, what came of it.
void reload_mask(Masker& mask, const char* program);

}  // namespace terse::cli
