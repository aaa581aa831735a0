#include "open_contexts.hpp"

#include <algorithm>
#include <utility>

#include <terse/schema.hpp>
#include <terse/wire.hpp>

namespace terse::detail {

bool OpenContexts::track(std::uint32_t thread_index, std::uint64_t ticks, std::string_view args, bool& push,
                         std::uint64_t& serial) {
  wire::ByteReader r(args);
  std::uint8_t kind = 0;
  if (!r.le(kind) || !r.varint(serial)) return false;
  push = kind == static_cast<std::uint8_t>(schema::ControlKind::context_push);
  if (!push && kind != static_cast<std::uint8_t>(schema::ControlKind::context_pop)) return false;
  // A thread opens and closes contexts per request: its slots, and their
  // strings' memory, are kept for the next ones.
  OfThread& open = threads_[thread_index];
  if (push) {
    if (open.count == open.slots.size()) open.slots.emplace_back();
    Open& slot = open.slots[open.count++];
    slot.serial = serial;
    slot.ticks = ticks;
    slot.args.assign(args);
  } else {
    for (std::size_t i = 0; i < open.count; ++i) {
      if (open.slots[i].serial != serial) continue;
      // The snapshot orders them by serial: their order here does not matter.
      std::swap(open.slots[i], open.slots[open.count - 1]);
      --open.count;
      break;
    }
  }
  changed_ = true;
  return true;
}

// Each thread's in the order they were opened (their serials): that order,
// not the time across threads, is what a reader needs, and timestamps can tie.
void OpenContexts::snapshot(std::string& payload) {
  struct Listed {
    std::uint32_t thread;
    const Open* context;
  };
  std::vector<Listed> all;
  for (const auto& [thread, open] : threads_)
    for (std::size_t i = 0; i < open.count; ++i) all.push_back({thread, &open.slots[i]});
  std::sort(all.begin(), all.end(), [](const Listed& a, const Listed& b) {
    return a.thread != b.thread ? a.thread < b.thread : a.context->serial < b.context->serial;
  });
  payload.clear();
  changed_ = false;
  if (all.empty()) return;
  std::uint64_t previous = all.front().context->ticks;
  wire::put_le<std::uint64_t>(payload, previous);
  for (const Listed& o : all) {
    wire::put_varint(payload, schema::kControlSiteId);
    wire::put_varint(payload, o.thread);
    wire::put_varint(payload, wire::zigzag(static_cast<std::int64_t>(o.context->ticks - previous)));
    wire::put_bytes(payload, o.context->args);
    previous = o.context->ticks;
  }
}

}  // namespace terse::detail
