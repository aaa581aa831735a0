// {:p} applies to pointers only.
// Compiled twice: with TERSE_COMPILE_BAD the build must fail; without it,
// the same file is the control that proves nothing else is broken.
#include <terse/terse.hpp>

void snippet() {
#ifdef TERSE_COMPILE_BAD
  TERSE_INFO("{:p}", 42);
#else
  TERSE_INFO("{:p}", static_cast<const void*>(nullptr));
#endif
}
