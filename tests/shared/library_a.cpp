#include <string_view>

#include <terse/terse.hpp>

#include "shared_records.hpp"

namespace terse::test {

void library_a_log(int count) {
  for (int i = 0; i < count; ++i) TERSE_WARN("library a record {} name {}", i, std::string_view("alpha"));
}

}  // namespace terse::test
