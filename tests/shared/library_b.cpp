#include <terse/terse.hpp>

#include "shared_records.hpp"

namespace terse::test {

void library_b_log(int count) {
  for (int i = 0; i < count; ++i) TERSE_ERROR("library b record {} ratio {:.2f}", i, i / 8.0);
}

}  // namespace terse::test
