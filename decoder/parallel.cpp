// ParallelDecoder: one thread reads and orders, workers decode and render,
// the calling thread writes (see decoder.hpp).
#if defined(__linux__) && !defined(TERSE_POSIX_ONLY)
#include <sched.h>
#endif

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include <zstd.h>

#include "stream_state.hpp"

namespace terse::decoder {

unsigned available_cpus() {
#if defined(__linux__) && !defined(TERSE_POSIX_ONLY)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return static_cast<unsigned>(CPU_COUNT(&set));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

namespace {

// A problem a worker found, and where in its frame's output it belongs.
struct LateProblem {
  Problem problem;
  std::size_t at = 0;  // bytes of the frame's output before it
  std::optional<std::uint32_t> unknown_site;
};

// One place in the output order: the problems the reading thread found
// since the last records frame, then (has_frame) what a worker made of the
// next one.
struct Slot {
  bool starts_file = false;  // a new file began before the frame: unknown sites are reported afresh
  std::vector<Problem> before;
  bool has_frame = false;
  detail::HandedFrame frame;
  // Written by the worker, read by the writer once `done` is set (both under the run's mutex).
  std::string text;
  std::vector<LateProblem> problems;
  std::uint64_t records = 0;
  std::uint64_t skipped = 0;
  bool done = false;
};

// What a worker's replica of the stream state must see, in stream order.
struct Step {
  enum class Kind { file_start, dictionary, calibration, records };
  Kind kind = Kind::records;
  std::shared_ptr<const std::string> payload;  // dictionary, calibration
  std::shared_ptr<Slot> slot;                  // records
};

// The reading thread stops at the next frame once the output is gone.
struct Stopped {};

// A frame's worth of problems is kept with its frame; beyond this many the
// reading thread passes them on alone, so damage without records frames
// between it is not held back without bound.
constexpr std::size_t kProblemsPerSlot = 64;

}  // namespace

struct ParallelDecoder::Run final : detail::FrameHandoff {
  Run(const ParallelDecoder& owner, int fd, std::string_view bytes, const RendererFactory& make_renderer)
      : owner_(owner),
        in_flight_limit_(owner.workers_ + 2),
        reader_(owner.source_, [this](const Problem& p) { reader_problem(p); }) {
    reader_.handoff = this;
    reader_.keys = owner.keys_;
    reader_.signers = owner.signers_;
    reader_.read_from(fd, bytes);
    open_ = std::make_shared<Slot>();
    for (unsigned i = 0; i < owner.workers_; ++i) {
      Worker& w = *workers_.emplace_back(std::make_unique<Worker>());
      w.render = make_renderer();
      auto report = [&w](const Problem& p) {
        if (w.slot) w.slot->problems.push_back(LateProblem{p, w.slot->text.size(), w.state->reporting_site});
      };
      w.state = std::make_unique<StreamDecoder::State>(owner.source_, report, owner.filter_);
      w.state->read_from(-1, {});
    }
  }

  Summary run(const ChunkWriter& write) {
    std::thread reading([this] { read_all(); });
    std::vector<std::thread> working;
    for (auto& w : workers_) working.emplace_back([this, &w] { work(*w); });
    std::uint64_t records = 0, skipped = 0, damaged = 0;
    std::unordered_set<std::uint32_t> unknown_sites_reported;
    bool open = true;
    for (;;) {
      std::shared_ptr<Slot> slot;
      {
        std::unique_lock lock(mutex_);
        written_.wait(lock, [this] { return !order_.empty() || reading_done_; });
        if (order_.empty()) break;
        slot = order_.front();
      }
      if (slot->starts_file) unknown_sites_reported.clear();
      for (const auto& problem : slot->before) owner_.reporter_(problem);
      if (slot->has_frame) {
        {
          std::unique_lock lock(mutex_);
          written_.wait(lock, [&slot] { return slot->done; });
        }
        std::string_view text = slot->text;
        std::size_t at = 0;
        for (const auto& late : slot->problems) {
          // As StreamDecoder::State::report_unknown_site decides, over the whole file.
          if (late.unknown_site &&
              !(unknown_sites_reported.size() < 1024 && unknown_sites_reported.insert(*late.unknown_site).second))
            continue;
          if (late.at > at) open = write(text.substr(at, late.at - at));
          at = late.at;
          if (!open) break;
          ++damaged;
          if (owner_.reporter_) owner_.reporter_(late.problem);
        }
        if (open && at < text.size()) open = write(text.substr(at));
        records += slot->records;
        skipped += slot->skipped;
      }
      {
        std::lock_guard lock(mutex_);
        order_.pop_front();
        if (!open) stopping_ = true;
        keep_spare(spare_texts_, std::move(slot->text));
      }
      room_.notify_one();
      if (!open) break;
    }
    if (!open) {
      for (auto& w : workers_) w->wake.notify_one();
      room_.notify_one();
    }
    reading.join();
    for (auto& t : working) t.join();
    Summary summary = reader_.summary;
    summary.records += records;
    summary.skipped += skipped;
    summary.damaged += damaged;
    return summary;
  }

 private:
  struct Worker {
    RecordRenderer render;
    std::unique_ptr<StreamDecoder::State> state;
    std::deque<Step> steps;
    std::condition_variable wake;
    Slot* slot = nullptr;         // the frame being walked, which its problems go to
    std::size_t last_output = 0;  // the size of its last frame's output, to reserve as much
  };

  void read_all() {
    try {
      Record unused;
      reader_.next(unused);  // with a handoff, next() walks no records and returns at the end
      push(std::exchange(open_, nullptr));
    } catch (const Stopped&) {
    }
    {
      std::lock_guard lock(mutex_);
      reading_done_ = true;
    }
    written_.notify_one();
    for (auto& w : workers_) w->wake.notify_one();
  }

  // On the reading thread, as its State reports them.
  void reader_problem(const Problem& problem) {
    open_->before.push_back(problem);
    if (open_->before.size() >= kProblemsPerSlot) {
      push(std::exchange(open_, std::make_shared<Slot>()));
    }
  }

  // Puts a slot in the output order (and its frame in a worker's steps),
  // once fewer than the limit are in flight.
  void push(std::shared_ptr<Slot> slot) {
    {
      std::unique_lock lock(mutex_);
      room_.wait(lock, [this] { return order_.size() < in_flight_limit_ || stopping_; });
      if (stopping_) throw Stopped{};
      order_.push_back(slot);
      if (slot->has_frame) workers_[next_worker_]->steps.push_back(Step{Step::Kind::records, nullptr, slot});
    }
    written_.notify_one();
    if (slot->has_frame) {
      workers_[next_worker_]->wake.notify_one();
      next_worker_ = (next_worker_ + 1) % workers_.size();
    }
  }

  void broadcast(Step::Kind kind, std::string_view payload) {
    auto shared = std::make_shared<const std::string>(payload);
    {
      std::lock_guard lock(mutex_);
      if (stopping_) throw Stopped{};
      for (auto& w : workers_) w->steps.push_back(Step{kind, shared, nullptr});
    }
    for (auto& w : workers_) w->wake.notify_one();
  }

  void file_start() override {
    open_->starts_file = true;
    broadcast(Step::Kind::file_start, {});
  }
  void dictionary(std::string_view payload) override { broadcast(Step::Kind::dictionary, payload); }
  void calibration(std::string_view payload) override { broadcast(Step::Kind::calibration, payload); }

  void records(detail::HandedFrame&& frame) override {
    std::shared_ptr<Slot> slot = std::exchange(open_, std::make_shared<Slot>());
    slot->has_frame = true;
    slot->frame = std::move(frame);
    push(std::move(slot));
    // The next frame decompresses into a buffer a worker is done with.
    std::lock_guard lock(mutex_);
    if (!spare_payloads_.empty()) {
      reader_.raw = std::move(spare_payloads_.back());
      spare_payloads_.pop_back();
    }
  }

  // Buffers go round instead of being allocated (and faulted in, and
  // zeroed) for every frame: a frame is a megabyte, its output several.
  void keep_spare(std::vector<std::string>& spares, std::string&& buffer) {
    if (buffer.capacity() > 0 && spares.size() < in_flight_limit_) spares.push_back(std::move(buffer));
  }

  void work(Worker& w) {
    StreamDecoder::State& s = *w.state;
    for (;;) {
      Step step;
      {
        std::unique_lock lock(mutex_);
        w.wake.wait(lock, [&] { return !w.steps.empty() || reading_done_ || stopping_; });
        if (stopping_ || w.steps.empty()) return;
        step = std::move(w.steps.front());
        w.steps.pop_front();
      }
      switch (step.kind) {
        case Step::Kind::file_start:
          s.reset_file();
          break;
        case Step::Kind::dictionary:
          s.quiet = true;
          s.dictionary(Frame{}, *step.payload);
          s.quiet = false;
          break;
        case Step::Kind::calibration:
          s.quiet = true;
          s.calibration(Frame{}, *step.payload);
          s.quiet = false;
          break;
        case Step::Kind::records:
          decode(w, *step.slot);
          {
            std::lock_guard lock(mutex_);
            step.slot->done = true;
          }
          written_.notify_one();
          break;
      }
    }
  }

  void decode(Worker& w, Slot& slot) {
    StreamDecoder::State& s = *w.state;
    {
      std::lock_guard lock(mutex_);
      keep_spare(spare_payloads_, std::move(s.raw));
      if (!spare_texts_.empty()) {
        slot.text = std::move(spare_texts_.back());
        spare_texts_.pop_back();
        slot.text.clear();
      }
    }
    w.slot = &slot;
    slot.text.reserve(w.last_output + w.last_output / 8);
    std::uint64_t records = s.summary.records, skipped = s.summary.skipped;
    s.take_handed(slot.frame);
    Record record;
    while (s.next_in_frame(record)) w.render(record, slot.text);
    s.in_records = false;
    slot.records = s.summary.records - records;
    slot.skipped = s.summary.skipped - skipped;
    w.last_output = slot.text.size();
    w.slot = nullptr;
  }

  const ParallelDecoder& owner_;
  // Slots between the reading thread and the writer: each worker busy with
  // one frame and one more waiting, so no worker waits for the reading
  // thread while memory holds a few frames and their output, not the file.
  const std::size_t in_flight_limit_;
  StreamDecoder::State reader_;
  std::shared_ptr<Slot> open_;  // the reading thread's: problems since the last frame handed on
  std::vector<std::unique_ptr<Worker>> workers_;
  std::size_t next_worker_ = 0;

  std::mutex mutex_;
  std::condition_variable room_;     // the reading thread waits for fewer slots in flight
  std::condition_variable written_;  // the writer waits for a slot, or for its frame to be done
  std::deque<std::shared_ptr<Slot>> order_;
  std::vector<std::string> spare_payloads_, spare_texts_;
  bool reading_done_ = false;
  bool stopping_ = false;
};

ParallelDecoder::ParallelDecoder(std::string source, Reporter reporter, unsigned workers)
    : source_(std::move(source)), reporter_(std::move(reporter)), workers_(std::max(1u, workers)) {}

ParallelDecoder::~ParallelDecoder() = default;

void ParallelDecoder::set_filter(Filter filter) { filter_ = std::move(filter); }

void ParallelDecoder::set_keys(std::vector<seal::SecretKey> keys) { keys_ = std::move(keys); }

void ParallelDecoder::set_signers(std::vector<seal::PublicKeyBytes> signers) { signers_ = std::move(signers); }

Summary ParallelDecoder::decode_fd(int fd, const RendererFactory& make_renderer, const ChunkWriter& write) {
  Run run(*this, fd, {}, make_renderer);
  return run.run(write);
}

Summary ParallelDecoder::decode_bytes(std::string_view bytes, const RendererFactory& make_renderer,
                                      const ChunkWriter& write) {
  Run run(*this, -1, bytes, make_renderer);
  return run.run(write);
}

}  // namespace terse::decoder
