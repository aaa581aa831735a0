// An integer presentation type on a string is a format error.
// Compiled twice: with TERSE_COMPILE_BAD the build must fail; without it,
// the same file is the control that proves nothing else is broken.
#include <terse/terse.hpp>

void snippet() {
#ifdef TERSE_COMPILE_BAD
  TERSE_INFO("{:d}", "text");
#else
  TERSE_INFO("{:s}", "text");
#endif
}
