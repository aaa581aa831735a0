// One object per thread that the thread's end destroys: what `thread_local T` is, except with
// MinGW-w64's GCC, whose emulated thread-local storage can be freed before the destructors of
// the thread_local objects in it run (GCC bug 80816): a destructor then works on freed memory,
// and an object with a virtual function (fmt::memory_buffer) ends the program. There the
// object lives on the heap, and a POSIX thread key's destructor, which needs no thread-local
// storage, deletes it.
#pragma once

#if defined(__MINGW32__)
#include <pthread.h>
#endif

namespace terse {

// The calling thread's T, value-initialized on its first use in the thread. `Site` makes the
// object one of its own: pass a lambda written where the object is used, as
// `auto& buffer = per_thread<std::string>([] {});`.
template <typename T, typename Site>
T& per_thread(Site) {
#if defined(__MINGW32__)
  static const pthread_key_t key = [] {
    pthread_key_t made;
    pthread_key_create(&made, [](void* object) { delete static_cast<T*>(object); });
    return made;
  }();
  constinit thread_local T* object = nullptr;
  if (object == nullptr) {
    object = new T();
    pthread_setspecific(key, object);
  }
  return *object;
#else
  thread_local T object{};
  return object;
#endif
}

}  // namespace terse
