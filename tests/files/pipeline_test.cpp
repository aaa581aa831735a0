// The queue of batches between the collector and the writer.
#include <chrono>
#include <cstdint>
#include <thread>

#include <catch2/catch.hpp>

#include "pipeline.hpp"

using terse::detail::Batch;
using terse::detail::BatchQueue;

namespace {

// The collector hands `behind` batches to a writer that has not started on
// them, then the writer catches up: the way a writer that falls behind now
// and then sees the queue.
void fall_behind_and_catch_up(BatchQueue& queue, Batch*& filling, int behind) {
  for (int i = 0; i < behind; ++i) {
    queue.submit(filling);
    filling = queue.take();
  }
  const auto now = std::chrono::steady_clock::now();
  for (;;) {
    BatchQueue::Work work = queue.wait_for_work(&now);
    if (work.batch == nullptr) break;
    queue.finish(work, false);
  }
}

}  // namespace

// Each extra batch is mapped with its pages touched, which held the
// collector up for a millisecond or more while rings filling at 8 M
// records/s had room for two: freed as soon as the writer caught up and
// mapped again at its next lag, they made two threads at that rate drop
// records under Overflow::drop.
TEST_CASE("a writer that falls behind again and again keeps its extra batches until it stops", "[pipeline]") {
  BatchQueue queue;
  queue.prepare();
  Batch* filling = queue.take();
  fall_behind_and_catch_up(queue, filling, 5);
  const std::uint64_t made_at_first = queue.extra_batches_made();
  CHECK(made_at_first > 0);
  for (int round = 0; round < 20; ++round) fall_behind_and_catch_up(queue, filling, 5);
  CHECK(queue.extra_batches_made() == made_at_first);
  CHECK(queue.batches_held() > 3);
  // Keeping up for a while, the writer gives the extra ones back.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  for (int round = 0; round < 10; ++round) fall_behind_and_catch_up(queue, filling, 1);
  CHECK(queue.batches_held() == 3);
}
