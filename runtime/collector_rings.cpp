// The rings' memory, kept by the IO thread: the rings of threads that
// ended are freed or kept as spares, idle rings give their pages back, and
// busy ones move to huge pages, made on a thread of their own.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <system_error>
#include <thread>

#include <terse/detail/test_hooks.hpp>

#include "buffers.hpp"
#include "collector.hpp"
#include "platform.hpp"

namespace terse::detail {

using namespace std::chrono_literals;

void Collector::release_abandoned(Batch& batch) {
  bool changed = false;
  for (ThreadBuffer* b : buffers_) {
    if (!b->abandoned.load(std::memory_order_acquire)) continue;
    if (b->committed.load(std::memory_order_acquire) != b->consumed.load(std::memory_order_relaxed)) continue;
    report_drops(batch, *b, ticks());  // its last drops, now that it can drop no more
    if (flight_on_) counters_.flight_overwritten.fetch_add(flight_.thread_ended(b->index), std::memory_order_relaxed);
    auto& registry = buffer_registry();
    {
      std::lock_guard lock(registry.mutex);
      std::erase(registry.buffers, b);
      registry.generation.fetch_add(1, std::memory_order_relaxed);
      counters_.dropped_released.fetch_add(b->all_dropped() - b->dropped_before_start, std::memory_order_relaxed);
    }
    destroy_thread_buffer(b);
    changed = true;
  }
  if (changed) {
    buffers_generation_ = 0;
    refresh_buffers();
  }
}

// A ring is idle once its commit position has stood still for
// release_idle_after_, as seen by checks a quarter of that apart; it is worth
// giving back once its thread wrote past the pages it takes by faults
// since it was new or last given back.
void Collector::release_idle_rings(std::chrono::steady_clock::time_point now) {
  if (release_idle_after_.count() == 0 || now < next_idle_check_) return;
  next_idle_check_ = now + std::max<std::chrono::steady_clock::duration>(release_idle_after_ / 4, 1ms);
  std::int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  std::int64_t idle_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(release_idle_after_).count();
  quiet_rings_.clear();
  for (ThreadBuffer* b : buffers_) {
    if (b->keep_mapped || b->abandoned.load(std::memory_order_acquire)) continue;
    std::uint64_t committed = b->committed.load(std::memory_order_acquire);
    if (committed != b->quiet_committed || b->quiet_since_ns == 0) {
      b->quiet_committed = committed;
      b->quiet_since_ns = now_ns;
      continue;
    }
    if (now_ns - b->quiet_since_ns < idle_ns || committed - b->given_back_at <= kFaultedRingBytes) continue;
    if (committed != b->consumed.load(std::memory_order_relaxed)) continue;
    quiet_rings_.push_back({b, committed});
  }
  if (quiet_rings_.empty()) return;
  counters_.idle_buffers_released.fetch_add(give_back_rings(quiet_rings_), std::memory_order_relaxed);
}

// A ring all ready has had half of it filled: its thread logs enough that
// the TLB misses of 4 KiB pages show in its calls' tail. The new memory is
// made ready on a thread of its own (order_huge_ring), while this one goes
// on draining and the thread logging in the old ring; the move waits for a
// pass that finds the ring drained between two calls.
void Collector::move_busy_rings() {
  if (huge_order_) settle_huge_order(false);
  if (!huge_rings_ || !buffer_settings().huge_pages.load(std::memory_order_relaxed)) return;
  busy_rings_.clear();
  // A ring on huge pages takes 2 MiB however small it is; a program with
  // hundreds of busy threads would take hundreds of MiB more (626 MiB at
  // the peak for 200 threads, against 225 on 4 KiB pages). The threads a
  // call's tail matters for are few: the first to fill half a ring get them.
  static const std::size_t most_huge_rings = std::max(8u, 2 * std::thread::hardware_concurrency());
  std::size_t huge_rings = huge_order_ ? 1 : 0;
  for (const ThreadBuffer* b : buffers_) huge_rings += b->first_mapping != nullptr || b->huge_ring != nullptr;
  for (ThreadBuffer* b : buffers_) {
    if (b->first_mapping != nullptr || b->huge_refused || b->abandoned.load(std::memory_order_acquire)) continue;
    if (b->huge_ring == nullptr && huge_rings >= most_huge_rings) continue;
    if (b->ready_until.load(std::memory_order_acquire) != ThreadBuffer::kAllReady) continue;
    if (b->huge_ring == nullptr) {
      if (!huge_order_) {
        order_huge_ring(*b);
        ++huge_rings;
      }
      continue;
    }
    std::uint64_t committed = b->committed.load(std::memory_order_acquire);
    if (committed == b->consumed.load(std::memory_order_relaxed)) busy_rings_.push_back({b, committed});
  }
  if (busy_rings_.empty()) return;
  counters_.rings_on_huge_pages.fetch_add(move_rings_to_huge_pages(busy_rings_), std::memory_order_relaxed);
}

namespace {
std::atomic<std::int64_t> g_huge_ring_delay_ms{0};
}  // namespace

void slow_huge_ring_making_for_tests(std::chrono::milliseconds delay) noexcept {
  g_huge_ring_delay_ms.store(delay.count(), std::memory_order_relaxed);
}

// Touching 2 MiB that the kernel backs with a huge page may first make it
// compact memory: 8-42 ms measured on the machines CI runs on, while two
// threads at 8 M records/s each fill their 1 MiB rings in 2 ms. On this
// thread that stall dropped up to a quarter of their records.
void Collector::order_huge_ring(const ThreadBuffer& buffer) {
  std::promise<char*> made;
  std::future<char*> memory = made.get_future();
  auto bytes = static_cast<std::size_t>(buffer.capacity);
  try {
    std::thread maker([made = std::move(made), bytes]() mutable {
      if (auto delay = g_huge_ring_delay_ms.load(std::memory_order_relaxed); delay > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(delay));
      made.set_value(map_huge(bytes));
    });
    name_thread(maker, "terse-huge");
    huge_order_.emplace(HugeRingOrder{&buffer, buffer.capacity, std::move(memory), std::move(maker)});
  } catch (const std::system_error&) {
    // No thread to be had: the ring stays on the pages it has.
  }
}

void Collector::settle_huge_order(bool wait) {
  HugeRingOrder& order = *huge_order_;
  if (!wait && order.memory.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  char* memory = order.memory.get();
  order.maker.join();
  // Still listed and still wanting it: the buffer may have been freed and
  // its address given to another, which takes it only at the same size.
  auto listed = std::find(buffers_.begin(), buffers_.end(), order.buffer);
  ThreadBuffer* b = listed == buffers_.end() ? nullptr : *listed;
  bool wanted = !wait && b != nullptr && !b->abandoned.load(std::memory_order_acquire) &&
                b->capacity == order.capacity && b->huge_ring == nullptr && b->first_mapping == nullptr;
  if (wanted) {
    b->huge_ring = memory;
    b->huge_refused = memory == nullptr;
  } else if (memory != nullptr) {
    unmap_populated(memory, huge_ring_bytes(static_cast<std::size_t>(order.capacity)));
  }
  huge_order_.reset();
}

}  // namespace terse::detail
