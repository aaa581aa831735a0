// A scratch directory for a test or a benchmark, removed with everything in
// it when the object goes. Needs neither Catch2 nor terse, so bench/ uses it.
#pragma once

#include <string>

namespace terse::test {

class TempDir {
 public:
  // A fresh directory "terse-TAG-XXXXXX" under TMPDIR (or the system's
  // default); throws std::system_error when none can be made.
  explicit TempDir(const std::string& tag = "test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const;

 private:
  std::string path_;
};

}  // namespace terse::test
