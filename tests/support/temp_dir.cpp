#include "temp_dir.hpp"

#include <filesystem>
#include <random>
#include <stdexcept>
#include <system_error>

namespace terse::test {

// A fresh directory of its own: create_directory() fails on a name that exists, so another
// test, or another run, never shares it (what mkdtemp does, on every OS).
TempDir::TempDir(const std::string& tag) {
  std::random_device seed;
  std::mt19937_64 names(seed());
  const std::filesystem::path base = std::filesystem::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::filesystem::path candidate = base / ("terse-" + tag + "-" + std::to_string(names() % 1'000'000'000));
    std::error_code error;
    if (std::filesystem::create_directory(candidate, error)) {
      path_ = candidate.string();
      return;
    }
    if (error) throw std::system_error(error, "create_directory " + candidate.string());
  }
  throw std::runtime_error("no free temporary directory name for " + tag + " in " + base.string());
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::operator/(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }

}  // namespace terse::test
