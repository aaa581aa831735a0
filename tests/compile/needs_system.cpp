// A std::error_code logged without <terse/std/system.hpp>.
// Compiled twice: with TERSE_COMPILE_BAD the build must fail with a message
// that names the header to include; without it, the control must build.
#include <terse/terse.hpp>

#include <system_error>

void snippet() {
#ifdef TERSE_COMPILE_BAD
  std::error_code e;
  TERSE_INFO("{}", e);
#else
  std::error_code e;
  TERSE_INFO("{}", e.value());
#endif
}
