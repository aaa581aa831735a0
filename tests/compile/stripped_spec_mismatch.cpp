// A call removed by TERSE_MIN_LEVEL must still have a valid format, or the error appears only when the level is
// lowered. Built with TERSE_MIN_LEVEL=3 (warn), so TERSE_DEBUG is stripped. Compiled twice: with TERSE_COMPILE_BAD the
// build must fail; without it, the same file is the control that proves nothing else is broken.
#include <terse/terse.hpp>
void snippet() {
#ifdef TERSE_COMPILE_BAD
  TERSE_DEBUG("{:d}", "text");
#else
  TERSE_DEBUG("{:s}", "text");
#endif
}
