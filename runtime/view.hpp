// The records' second way out, beside the file: the console and the
// on_record callback. Declared here and defined in sinks/, which renders
// with the decoder library, so the runtime itself never includes the
// reader (runtime and decoder meet only in schema/).
#pragma once

#include <cstdint>
#include <memory>

#include <terse/terse.hpp>

#include "clock.hpp"

namespace terse::detail {

struct Batch;

class View {
 public:
  // Null when the config asks for neither a console nor a callback. Throws
  // Error for settings that cannot work (a bad console_format, a closed
  // console_fd).
  static std::unique_ptr<View> create(const Config& config, const Calibration& calibration);
  ~View();
  View(const View&) = delete;
  View& operator=(const View&) = delete;

  // Its threads; started with the IO threads, under the same signal mask.
  void start();
  // The writer, for every batch in order, before it writes it: copies what
  // it needs and never waits for the console or the callback (when they
  // are behind, the batch's records are counted as not shown instead).
  void offer(const Batch& batch);
  // After the writer's last batch: shows what is left (waiting a bounded
  // time for a stalled console) and ends the threads.
  void finish();

  // Callers of flush(): returns once the view has handled flush `sequence`,
  // and its console lines are written unless the console is stalled.
  void wait_for_flush(std::uint64_t sequence);
  // The same without waiting, for the signal handlers: async-signal-safe.
  bool shown_through(std::uint64_t sequence) const noexcept;
  // Something moved since the last call (records handled or bytes
  // written): a signal handler waits only while it does.
  std::uint64_t progress() const noexcept;

  void add_to(Stats& stats) const;

 private:
  struct Impl;
  explicit View(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace terse::detail
