// The format must be known at compile time, or it cannot be checked.
// Compiled twice: with TERSE_COMPILE_BAD the build must fail; without it,
// the same file is the control that proves nothing else is broken.
#include <string>
#include <terse/terse.hpp>
void snippet() {
#ifdef TERSE_COMPILE_BAD
  std::string format = "{}";
  TERSE_INFO(format, 1);
#else
  static constexpr char format[] = "{}";
  TERSE_INFO(format, 1);
#endif
}
