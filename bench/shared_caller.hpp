// The benchmark's short record logged from inside a shared library linked to
// libterse.so, where thread-local access costs what it costs in a .so.
#pragma once

#include "harness.hpp"

namespace bench {

void log_short_from_library(const ShortArgs& a) noexcept;

}  // namespace bench
