#include "merger.hpp"

#include <algorithm>
#include <system_error>
#include <tuple>

namespace terse::input {

Merger::Merger(const decoder::Reporter& reporter, const decoder::Filter& filter, bool follow)
    : reporter_(reporter), filter_(filter), follow_(follow) {}

bool Merger::add_paths(const std::vector<std::string>& paths) {
  round_ns_ = wall_clock_ns();
  bool ok = true;
  for (const auto& path : paths) {
    std::error_code ec;
    if (path == "-") {
      slots_.emplace_back().source = Source::standard_input(reporter_, filter_);
      slots_.back().source->set_keys(&keys_, &signers_);
      continue;
    }
    if (fs::is_directory(path, ec)) {
      dirs_.push_back(WatchedDir{path, absolute_dir(path)});
      if (!scan_dir(dirs_.back())) ok = false;
      continue;
    }
    fs::path file(path);
    Source& source = source_for(file, writers_.of(path));
    source.add(path);
    if (follow_) {
      std::string dir = file.parent_path().string();
      if (auto name = parse_name(file.filename().string())) source.watch(dir.empty() ? "." : dir, name->prefix);
    }
  }
  for (auto& slot : slots_) slot.source->sort_pending();
  return ok;
}

void Merger::new_round() {
  round_ns_ = wall_clock_ns();  // before looking: what is found was there by then
  for (auto& dir : dirs_) scan_dir(dir);
  for (auto& slot : slots_) slot.waiting = false;
}

std::chrono::milliseconds Merger::next_round_in() const {
  constexpr std::int64_t kPollNs = 100'000'000, kShortestNs = 5'000'000;
  std::int64_t wait = kPollNs;
  if (held_ns_) wait = std::clamp(*held_ns_ + kFollowGraceNs + 1'000'000 - wall_clock_ns(), kShortestNs, kPollNs);
  return std::chrono::milliseconds(wait / 1'000'000);
}

std::vector<std::string> Merger::directories() const {
  std::vector<std::string> found;
  for (const auto& dir : dirs_) found.push_back(dir.path);
  for (const auto& slot : slots_) {
    if (slot.source->is_stdin()) continue;
    std::string dir = fs::path(slot.source->label()).parent_path().string();
    found.push_back(dir.empty() ? "." : dir);
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

bool Merger::next(decoder::Record& record) {
  // One sequence (the common case) needs no holding back, unless it holds
  // a record from when another input was awaited: that one comes first (its
  // arguments live in the sequence's decoder until its next record).
  if (slots_.size() == 1 && !awaiting_first_log() && !slots_.front().has_head) return next_of_one(record);
  Slot* best = nullptr;
  for (auto& slot : slots_) {
    if (!slot.has_head && !slot.done && !slot.waiting) {
      slot.has_head = slot.source->next(slot.head);
      if (slot.has_head) {
        slot.head_file = slot.source->current_name();
      } else {
        found_nothing(slot);
      }
    }
    if (slot.has_head && (!best || slot.head.unix_ns < best->head.unix_ns)) best = &slot;
  }
  held_ns_.reset();
  if (!best) return false;
  if (follow_ && !may_take(*best)) {
    held_ns_ = best->head.unix_ns;
    return false;
  }
  record = best->head;
  best->has_head = false;
  took(*best, record, best->head_file);
  return true;
}

bool Merger::next_of_one(decoder::Record& record) {
  Slot& only = slots_.front();
  if (only.done || only.waiting) return false;
  if (only.source->next(record)) {
    took(only, record, only.source->current_name());
    return true;
  }
  found_nothing(only);
  return false;
}

Source* Merger::only_sequence() {
  if (follow_ || slots_.size() != 1) return nullptr;
  return slots_.front().source.get();
}

bool Merger::reads_stdin() const {
  return std::any_of(slots_.begin(), slots_.end(), [](const Slot& slot) { return slot.source->is_stdin(); });
}

void Merger::positions(std::vector<InputPosition>& out) const {
  order_.clear();
  for (const auto& slot : slots_)
    if (slot.position) order_.push_back(Entry{slot.dir_hash, &slot.log, slot.source->writer(), &*slot.position});
  for (const auto& carried : carried_)
    order_.push_back(Entry{carried.has_dir ? std::optional(carried.dir_hash) : std::nullopt, &carried.log,
                           carried.writer.value_or(0), &carried.at});
  std::sort(order_.begin(), order_.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.dir_hash, *a.log, a.writer) < std::tie(b.dir_hash, *b.log, b.writer);
  });
  out.resize(order_.size());
  for (std::size_t i = 0; i < order_.size(); ++i) {
    out[i].dir_hash = order_[i].dir_hash;
    out[i].at = *order_[i].at;
    out[i].writer = order_[i].writer != 0 ? std::optional(order_[i].writer) : std::nullopt;
  }
}

bool Merger::fits(const Slot& slot, const InputPosition& entry, const std::string& log) const {
  return !slot.source->is_stdin() && slot.log == log && (!entry.writer || *entry.writer == slot.source->writer());
}

// The inputs each cursor entry goes to. Entries are taken in their own
// directory first, so that a moved log of a NAME another input shares still
// finds the inputs left for it.
Result<std::vector<std::vector<std::size_t>>> Merger::match_entries(const std::vector<InputPosition>& entries,
                                                                    const std::vector<std::string>& logs) {
  std::vector<std::vector<std::size_t>> slots_of(entries.size());
  std::vector<bool> claimed(slots_.size(), false);
  for (std::size_t e = 0; e < entries.size(); ++e) {
    for (std::size_t i = 0; i < slots_.size() && entries[e].dir_hash; ++i) {
      if (!fits(slots_[i], entries[e], logs[e]) || *entries[e].dir_hash != slots_[i].dir_hash) continue;
      slots_of[e].push_back(i);
      claimed[i] = true;
    }
  }
  for (std::size_t e = 0; e < entries.size(); ++e) {
    if (!slots_of[e].empty()) continue;
    std::vector<std::size_t> moved;
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (!claimed[i] && fits(slots_[i], entries[e], logs[e])) moved.push_back(i);
    auto other_dir = [&](std::size_t i) { return slots_[i].dir_hash != slots_[moved.front()].dir_hash; };
    if (std::any_of(moved.begin(), moved.end(), other_dir)) {
      return Failure{"the cursor's place in " + entries[e].at.file + " fits inputs of the log '" + logs[e] +
                     "' in several directories, none of them the one the cursor was taken in; " +
                     "give the directories as they were"};
    }
    for (std::size_t i : moved) claimed[i] = true;
    slots_of[e] = std::move(moved);
  }
  return slots_of;
}

Result<> Merger::resume_after(const std::vector<InputPosition>& entries, std::vector<std::string>& notes) {
  std::vector<std::string> logs(entries.size());
  for (std::size_t e = 0; e < entries.size(); ++e) logs[e] = log_of(entries[e].at.file);
  auto slots_of = match_entries(entries, logs);
  if (!slots_of) return Failure{slots_of.why()};
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const InputPosition& entry = entries[e];
    for (std::size_t i : (*slots_of)[e]) {
      std::string note;
      if (Result<> resumed = resume_slot(slots_[i], entry.at, note); !resumed) return resumed;
      if (!note.empty() && std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
    }
    if (!(*slots_of)[e].empty()) continue;
    bool from_a_dir_given = entry.dir_hash && std::any_of(dirs_.begin(), dirs_.end(), [&](const WatchedDir& dir) {
                              return fnv1a32(dir.absolute) == *entry.dir_hash;
                            });
    if (!from_a_dir_given && !slots_.empty())
      return Failure{"the cursor is for " + entry.at.file + ", " + not_here(logs[e])};
    notes.push_back(entry.at.file + " is gone, and so are the files after it: " +
                    (follow_ ? "waiting for new ones" : "nothing to resume at"));
    carried_.push_back(
        Carried{entry.dir_hash.value_or(0), logs[e], entry.at, entry.dir_hash.has_value(), entry.writer});
  }
  return {};
}

std::uint64_t Merger::damaged() const {
  std::uint64_t total = 0;
  for (const auto& slot : slots_) total += slot.source->damaged();
  return total;
}

decoder::Summary Merger::totals() const {
  decoder::Summary total;
  for (const auto& slot : slots_) total.add(slot.source->totals());
  return total;
}

bool Merger::awaiting_first_log() const {
  return follow_ && std::any_of(dirs_.begin(), dirs_.end(), [](const WatchedDir& dir) { return !dir.has_log; });
}

void Merger::found_nothing(Slot& slot) {
  if (!follow_ || slot.source->is_stdin()) {
    slot.done = true;
    return;
  }
  slot.waiting = true;
  slot.checked_ns = round_ns_;
  if (slot.quiet_since_ns == kNever) slot.quiet_since_ns = round_ns_;
}

void Merger::took(Slot& slot, const decoder::Record& record, const std::string& file) {
  slot.latest_ns = std::max(slot.latest_ns, record.unix_ns);
  slot.quiet_since_ns = kNever;
  last_file_ = file;
  if (keep_positions_) {
    if (!slot.position) slot.position.emplace();
    slot.position->file = file;
    slot.position->frame_offset = record.frame_offset;
    slot.position->frame_index = record.frame_index;
    slot.position->ticks = record.ticks;
  }
}

// Whether an input that had nothing new at `checked_ns` (quiet since
// `quiet_since_ns`) can still show a record older than `time_ns`.
bool Merger::past(std::int64_t checked_ns, std::int64_t quiet_since_ns, std::int64_t time_ns) {
  if (checked_ns == kNever) return false;
  if (checked_ns - kFollowGraceNs >= time_ns) return true;
  return time_ns - checked_ns > kFollowGraceNs && checked_ns - quiet_since_ns >= kFollowGraceNs;
}

bool Merger::may_take(const Slot& from) const {
  std::int64_t time_ns = from.head.unix_ns;
  for (const auto& slot : slots_) {
    if (&slot == &from || slot.done || slot.has_head || slot.latest_ns >= time_ns) continue;
    if (!past(slot.checked_ns, slot.quiet_since_ns, time_ns)) return false;
  }
  for (const auto& dir : dirs_)
    if (!dir.has_log && !past(dir.checked_ns, dir.quiet_since_ns, time_ns)) return false;
  return true;
}

Result<> Merger::resume_slot(Slot& slot, const Position& at, std::string& note) {
  Result<> resumed = slot.source->resume_after(at.file, at.frame_offset, at.frame_index, at.ticks, note);
  if (resumed) slot.position = at;
  return resumed;
}

// Why a cursor's log is not among the inputs, naming those that are.
std::string Merger::not_here(const std::string& log) const {
  std::string logs;
  for (const auto& slot : slots_) {
    if (slot.source->is_stdin()) continue;
    logs += logs.empty() ? "'" : ", '";
    std::string dir = fs::path(slot.source->label()).parent_path().string();
    logs += slot.log + "' in " + (dir.empty() ? "." : dir);
  }
  return "which is not of the log '" + log + "' nor of any input given (here: " + logs + ")";
}

// One sequence: one writer's files of one NAME in one directory.
std::string Merger::slot_key(const fs::path& file, const std::optional<std::string>& writer) {
  return sequence_key(file) + '\0' + writer.value_or("");
}

Source& Merger::source_for(const fs::path& file, const std::optional<std::string>& writer) {
  std::string key = slot_key(file, writer);
  auto it = by_key_.find(key);
  if (it != by_key_.end()) return *slots_[it->second].source;
  by_key_[key] = slots_.size();
  Slot& slot = slots_.emplace_back();
  slot.source = std::make_unique<Source>(file.string(), reporter_, filter_, follow_);
  slot.source->set_keys(&keys_, &signers_);
  slot.log = log_of(file.filename().string());
  slot.dir_hash = fnv1a32(absolute_dir(file.parent_path()));
  slot.source->identify(writers_, writer);
  return *slot.source;
}

// A log that appeared while following takes up the cursor's entry kept
// for it; what the entry's file held was reported as lost already.
void Merger::take_up_carried(Slot& slot) {
  for (auto it = carried_.begin(); it != carried_.end(); ++it) {
    if (it->log != slot.log || (it->has_dir && it->dir_hash != slot.dir_hash)) continue;
    if (it->writer && *it->writer != slot.source->writer()) continue;
    std::string note;
    if (resume_slot(slot, it->at, note)) carried_.erase(it);
    return;
  }
}

bool Merger::scan_dir(WatchedDir& dir) {
  std::error_code ec;
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir.path, ec))
    if (entry.path().extension() == ".tlog") found.push_back(entry.path());
  if (ec && !(follow_ && ec == std::errc::no_such_file_or_directory)) {  // following: it may appear later
    if (reporter_) reporter_(decoder::Problem{dir.path, 0, "cannot list the directory: " + ec.message(), false});
    return false;
  }
  std::sort(found.begin(), found.end(), log_file_less);
  bool has_sequence = false;
  for (const auto& f : found) {
    auto writer = writers_.of(f.string());
    if (!writer && follow_) continue;  // too new to tell whose it is: the next round will
    has_sequence = true;
    std::string key = slot_key(f, writer);
    bool is_new = !by_key_.count(key);
    Source& source = source_for(f, writer);
    if (is_new) {
      if (follow_) {
        if (auto name = parse_name(f.filename().string())) source.watch(dir.path, name->prefix);
      }
      source.add(f.string());
      if (!carried_.empty()) take_up_carried(slots_[by_key_[key]]);
    } else if (!follow_) {
      source.add(f.string());
    }
    // Following, a known sequence finds its own newer files.
  }
  // A directory whose files are all too new to tell whose they are is still
  // awaited like an empty one: their writer may have logged before the
  // records the other inputs hold.
  if (has_sequence) {
    dir.has_log = true;
  } else if (!dir.has_log) {
    dir.checked_ns = round_ns_;
    if (dir.quiet_since_ns == kNever) dir.quiet_since_ns = round_ns_;
  }
  return true;
}

}  // namespace terse::input
