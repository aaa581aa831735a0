// A container logged without <terse/std/containers.hpp>.
// Compiled twice: with TERSE_COMPILE_BAD the build must fail with a message
// that names the header to include; without it, the control must build.
#include <terse/terse.hpp>

#include <vector>

void snippet() {
#ifdef TERSE_COMPILE_BAD
  std::vector<int> v{1, 2};
  TERSE_INFO("{}", v);
#else
  int v = 1;
  TERSE_INFO("{}", v);
#endif
}
