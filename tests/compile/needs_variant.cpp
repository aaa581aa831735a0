// A std::variant logged without <terse/std/variant.hpp>.
// Compiled twice: with TERSE_COMPILE_BAD the build must fail with a message
// that names the header to include; without it, the control must build.
#include <terse/terse.hpp>

#include <variant>

void snippet() {
#ifdef TERSE_COMPILE_BAD
  std::variant<int, double> v(1);
  TERSE_INFO("{}", v);
#else
  std::variant<int, double> v(1);
  TERSE_INFO("{}", v.index());
#endif
}
