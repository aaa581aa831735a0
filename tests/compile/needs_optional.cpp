// A std::optional logged without <terse/std/optional.hpp>.
// Compiled twice: with TERSE_COMPILE_BAD the build must fail with a message
// that names the header to include; without it, the control must build.
#include <terse/terse.hpp>

#include <optional>

void snippet() {
#ifdef TERSE_COMPILE_BAD
  std::optional<int> o(1);
  TERSE_INFO("{}", o);
#else
  std::optional<int> o(1);
  TERSE_INFO("{}", *o);
#endif
}
