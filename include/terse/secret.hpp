// terse::secret(value): the value is private. By default it never reaches
// the file (the decoder prints <private>); Config::private_values can store
// a keyed hash instead, or the value itself for debugging.
#pragma once

namespace terse {

template <typename T>
struct Secret {
  const T& value;
};

template <typename T>
Secret<T> secret(const T& value) noexcept {
  return Secret<T>{value};
}

}  // namespace terse
