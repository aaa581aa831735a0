#include <terse/terse.hpp>

#include "../modules.hpp"

namespace levels_test {

namespace {
constexpr int kDebugLine = __LINE__ + 5;
}

void db_log(int round) {
  TERSE_TRACE("db trace {}", round);
  TERSE_DEBUG("db debug {}", round);
  TERSE_INFO("db info {}", round);
}

int db_debug_line() { return kDebugLine; }

void db_early(int round) { TERSE_INFO("db early {}", round); }

void db_late(int round) { TERSE_INFO("db late {}", round); }

}  // namespace levels_test
