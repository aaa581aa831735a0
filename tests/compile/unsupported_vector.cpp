// A container is not a loggable argument type.
// Compiled twice: with TERSE_COMPILE_BAD the build must fail; without it,
// the same file is the control that proves nothing else is broken.
#include <terse/terse.hpp>
#include <vector>
void snippet() {
#ifdef TERSE_COMPILE_BAD
  std::vector<int> v{1, 2}; TERSE_INFO("{}", v);
#else
  int v = 1; TERSE_INFO("{}", v);
#endif
}
