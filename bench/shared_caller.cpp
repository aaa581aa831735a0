#include "shared_caller.hpp"

#include <terse/terse.hpp>

namespace bench {

void log_short_from_library(const ShortArgs& a) noexcept {
  TERSE_INFO("request {} took {} us status {} path {}", a.request, a.took_us, a.status, a.path);
}

}  // namespace bench
