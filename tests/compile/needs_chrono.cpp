// A duration logged without <terse/std/chrono.hpp>.
// Compiled twice: with TERSE_COMPILE_BAD the build must fail with a message
// that names the header to include; without it, the control must build.
#include <terse/terse.hpp>

#include <chrono>

void snippet() {
#ifdef TERSE_COMPILE_BAD
  TERSE_INFO("{}", std::chrono::milliseconds(5));
#else
  TERSE_INFO("{}", std::chrono::milliseconds(5).count());
#endif
}
