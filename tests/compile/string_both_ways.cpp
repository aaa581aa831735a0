// A C string is stored once, either as text or as its address, so one
// argument cannot be both `{}` and `{:p}` in the same message.
#include <terse/terse.hpp>

void snippet(const char* text) {
#ifdef TERSE_COMPILE_BAD
  TERSE_INFO("{0} {0:p}", text);
#else
  TERSE_INFO("{0} {1:p}", text, text);
#endif
}
