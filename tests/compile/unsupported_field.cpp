// An aggregate is loggable only if every field is: a field terse cannot
// store fails the build.
#include <terse/aggregate.hpp>

struct Node {
  int value;
#ifdef TERSE_COMPILE_BAD
  int* next;
#else
  const void* next;
#endif
};

void snippet() { TERSE_INFO("{}", Node{1, nullptr}); }
