// What a Process does alike on every OS (process_posix.cpp, process_windows.cpp).
#include "process.hpp"

#include <fstream>
#include <sstream>

namespace terse::test {

std::string Process::stderr_text() const {
  std::ifstream in(stderr_path_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace terse::test
