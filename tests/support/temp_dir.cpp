#include "temp_dir.hpp"

#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

namespace terse::test {

TempDir::TempDir(const std::string& tag) {
  std::string pattern = (std::filesystem::temp_directory_path() / ("terse-" + tag + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::operator/(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }

}  // namespace terse::test
