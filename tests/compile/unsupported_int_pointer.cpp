// A pointer to non-char, non-void is refused (fmt refuses it too): its pointee is not logged.
// Compiled twice: with TERSE_COMPILE_BAD the build must fail; without it,
// the same file is the control that proves nothing else is broken.
#include <terse/terse.hpp>

void snippet() {
#ifdef TERSE_COMPILE_BAD
  int x = 0;
  int* p = &x;
  TERSE_INFO("{}", p);
#else
  int x = 0;
  void* p = &x;
  TERSE_INFO("{}", p);
#endif
}
