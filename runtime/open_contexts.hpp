// The contexts open on each thread (FORMAT.md §7.3), followed by the IO
// thread from the control records it collects: every new file repeats their
// pushes, so that a reader starting there knows them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace terse::detail {

class OpenContexts {
 public:
  // A context push or pop, the control record args of it. False for any
  // other record; `push` and `serial` say what it was.
  bool track(std::uint32_t thread_index, std::uint64_t ticks, std::string_view args, bool& push, std::uint64_t& serial);

  // Whether a push or pop came since the last snapshot.
  bool changed() const { return changed_; }

  // The open contexts' pushes as a records payload (FORMAT.md §7), empty
  // when none is open.
  void snapshot(std::string& payload);

 private:
  struct Open {
    std::uint64_t serial;
    std::uint64_t ticks;
    std::string args;  // its push's control record args
  };
  struct OfThread {
    std::vector<Open> slots;
    std::size_t count = 0;  // the first `count` slots are open
  };
  std::unordered_map<std::uint32_t, OfThread> threads_;  // by thread index
  bool changed_ = false;
};

}  // namespace terse::detail
