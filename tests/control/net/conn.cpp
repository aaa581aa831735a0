#include <terse/terse.hpp>

#include "../modules.hpp"

namespace levels_test {

void net_log(int round) {
  TERSE_DEBUG("net debug {}", round);
  TERSE_INFO("net info {}", round);
}

void net_fresh(int round) { TERSE_DEBUG("net fresh {}", round); }

}  // namespace levels_test
