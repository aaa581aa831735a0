// terse::reader over the decoder and the inputs layer: a Reader is a Merger
// of the paths given (the same one `terse cat` reads through) or one
// StreamDecoder over a stream, and a Record is a view of the decoder's record.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <sstream>
#include <system_error>
#include <thread>

#include <terse/portable_libc.hpp>
#include <terse/reader.hpp>
#include <terse/schema.hpp>
#include <terse/seal.hpp>

#include "cursor.hpp"
#include "merger.hpp"
#include "reader_detail.hpp"

namespace terse::reader {

namespace fs = std::filesystem;
using detail::Access;
using detail::RecordData;

const char* level_name(Level level) {
  auto value = static_cast<std::uint8_t>(level);
  return value < schema::kLevelCount ? schema::level_name(value) : "?";
}

namespace {

decoder::TimeStyle style_of(const RecordData& data) {
  decoder::TimeStyle style;
  style.utc = data.utc;
  return style;
}

}  // namespace

// ---- records -------------------------------------------------------------------

namespace {
const decoder::Record& rec(const detail::RecordData* data) { return *data->record; }
}  // namespace

RecordKind Record::kind() const {
  switch (rec(data_).kind) {
    case decoder::RecordKind::log:
      return RecordKind::log;
    case decoder::RecordKind::dropped:
      return RecordKind::dropped;
    case decoder::RecordKind::suppressed:
      return RecordKind::suppressed;
  }
  return RecordKind::log;
}

Level Record::level() const {
  const auto& r = rec(data_);
  return r.site ? static_cast<Level>(r.site->level) : Level::warn;
}

std::int64_t Record::time_ns() const { return rec(data_).unix_ns; }
std::uint64_t Record::ticks() const { return rec(data_).ticks; }

Thread Record::thread() const {
  const decoder::Thread& t = *rec(data_).thread;
  return Thread{t.index, t.os_tid, t.name};
}

std::string_view Record::file() const {
  const auto& r = rec(data_);
  return r.site ? std::string_view(r.site->file) : std::string_view();
}

std::uint32_t Record::line() const {
  const auto& r = rec(data_);
  return r.site ? r.site->line : 0;
}

std::string_view Record::format() const {
  const auto& r = rec(data_);
  return r.site ? std::string_view(r.site->format) : std::string_view();
}

std::uint64_t Record::site_id() const {
  const auto& r = rec(data_);
  return r.site ? r.site->serial : 0;
}

std::string Record::message() const {
  std::string out;
  message(out);
  return out;
}

bool Record::message(std::string& out) const {
  decoder::TimeStyle style = style_of(*data_);
  return decoder::render_message(rec(data_), out, &style).ok();
}

std::vector<Value> Record::args() const {
  const auto& r = rec(data_);
  std::vector<Value> values;
  if (r.kind != decoder::RecordKind::log || !r.site) return values;
  values.reserve(r.args.size());
  for (std::size_t k = 0; k < r.args.size(); ++k) {
    const decoder::Arg& a = r.args[k];
    values.push_back(detail::argument_value(*r.site, a));
    if (k < r.site->arg_names.size()) values.back().name = r.site->arg_names[k];
  }
  return values;
}

std::vector<std::string> Record::arg_names() const {
  const auto& r = rec(data_);
  return r.site && r.kind == decoder::RecordKind::log ? r.site->arg_names : std::vector<std::string>{};
}

std::vector<ContextField> Record::context() const {
  const auto& r = rec(data_);
  std::vector<ContextField> fields;
  for (std::size_t k = 0; k < r.context.size(); ++k)
    if (decoder::context_shows(r.context, k))
      fields.push_back(ContextField{r.context[k].key, r.context[k].text, r.context[k].json});
  return fields;
}

bool Record::flight() const { return rec(data_).flight; }
std::uint64_t Record::suppressed() const { return rec(data_).suppressed; }
std::uint64_t Record::dropped_count() const { return rec(data_).dropped_count; }
std::int64_t Record::dropped_first_ns() const { return rec(data_).dropped_first_ns; }
std::int64_t Record::dropped_last_ns() const { return rec(data_).dropped_last_ns; }

std::string Record::json() const {
  std::string out;
  decoder::append_json_record(out, rec(data_), style_of(*data_));
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

Position Record::position() const {
  const auto& r = rec(data_);
  return Position{data_->file ? *data_->file : std::string(), r.frame_offset, r.frame_index};
}

// ---- filters -------------------------------------------------------------------

decoder::Filter detail::decoder_filter(const Filter& f) {
  decoder::Filter out;
  out.since_ns = f.since_ns;
  out.until_ns = f.until_ns;
  auto low = static_cast<std::uint8_t>(f.min_level), high = static_cast<std::uint8_t>(f.max_level);
  bool all_levels = low == 0 && high >= schema::kLevelCount - 1;
  if (!all_levels || !f.sites.empty() || f.site) {
    out.site = [low, high, sites = f.sites, custom = f.site](const decoder::Site& site) {
      if (site.level < low || site.level > high) return false;
      if (!sites.empty() &&
          std::none_of(sites.begin(), sites.end(), [&](const std::string& s) { return input::site_matches(site, s); }))
        return false;
      return !custom || custom(SiteInfo{static_cast<Level>(site.level), site.file, site.line, site.format});
    };
  }
  if (!f.threads.empty()) {
    out.thread = [threads = f.threads](const decoder::Thread& thread) {
      return std::any_of(threads.begin(), threads.end(),
                         [&](const std::string& t) { return input::thread_matches(thread, t); });
    };
  }
  // Drop reports print as warnings from "terse": they pass a level filter
  // that admits warn, and no site selection; they belong to no context.
  constexpr auto kWarn = static_cast<std::uint8_t>(Level::warn);
  out.dropped = f.sites.empty() && !f.site && low <= kWarn && high >= kWarn && f.context.empty();
  out.context = f.context;
  return out;
}

// ---- the reader ------------------------------------------------------------------

struct Reader::Impl {
  Options options;
  decoder::Filter filter;
  decoder::Reporter reporter;
  Summary summary;

  // Paths: every input merged by time.
  std::unique_ptr<input::Merger> merger;
  std::vector<input::InputPosition> positions;

  // A stream: one decoder over bytes or an fd.
  std::string name;
  std::string bytes;
  std::unique_ptr<decoder::StreamDecoder> stream;
  std::vector<seal::SecretKey> keys;          // Options::keys, read
  std::vector<seal::PublicKeyBytes> signers;  // Options::signers, read

  decoder::Record current;
  std::string stream_file;  // the name a stream's records give; for paths the merger keeps each record's
  RecordData data;

  explicit Impl(Options o) : options(std::move(o)), filter(detail::decoder_filter(options.filter)) {
    if (options.on_problem) {
      reporter = [this](const decoder::Problem& p) {
        options.on_problem(Problem{p.source, p.offset, p.what, p.torn_tail, p.bad_resume, p.tampering});
      };
    }
    data.record = &current;
    data.file = &stream_file;
    data.utc = options.utc;
    for (const auto& path : options.keys) {
      auto key = seal::read_secret_key(path);
      if (!key) throw OpenError(key.why());
      keys.push_back(std::move(*key));
    }
    for (const auto& path : options.signers) {
      auto key = seal::read_public_key(path);
      if (!key) throw OpenError(key.why());
      signers.push_back(key->ed25519);
    }
  }

  void start_stream(std::string stream_name) {
    name = std::move(stream_name);
    stream_file = fs::path(name).filename().string();
    stream = std::make_unique<decoder::StreamDecoder>(name, reporter);
    stream->set_filter(filter);
    stream->set_keys(keys);
    stream->set_signers(signers);
  }
};

namespace {

// Whether `path` can be read at all, before anything is: what OpenError says.
void check_openable(const std::string& path, bool follow) {
  if (path == "-") return;
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (fs::is_directory(status)) {
    fs::directory_iterator it(path, ec);
    if (ec) throw OpenError("cannot open " + path + ": " + ec.message());
    return;
  }
  if (follow && !fs::exists(status)) return;  // tail -F: it may appear
  int fd = open_path(path.c_str(), O_RDONLY);
  if (fd < 0) {
    throw OpenError("cannot open " + path + ": " + std::strerror(errno) +
                    (errno == ENOENT ? " (check the path; a directory works too)" : ""));
  }
  ::close(fd);
}

}  // namespace

Reader::Reader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Reader::Reader(const std::vector<std::string>& paths, Options options)
    : impl_(std::make_unique<Impl>(std::move(options))) {
  Impl& m = *impl_;
  if (!m.options.report_open_failures)
    for (const auto& path : paths) check_openable(path, m.options.follow);
  m.merger = std::make_unique<input::Merger>(m.reporter, m.filter, m.options.follow);
  m.merger->set_keys(m.keys, m.signers);
  m.data.file = &m.merger->last_file();  // the merger keeps the name of each record's file
  if (m.options.cursors) m.merger->keep_positions();
  if (!m.merger->add_paths(paths)) ++m.summary.unreadable_inputs;
}

Reader Reader::from_memory(std::string_view bytes, std::string name, Options options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  impl->bytes.assign(bytes);
  impl->start_stream(std::move(name));
  impl->stream->start_bytes(impl->bytes);
  return Reader(std::move(impl));
}

Reader Reader::from_stream(std::istream& in, std::string name, Options options) {
  std::ostringstream all;
  all << in.rdbuf();
  return from_memory(all.str(), std::move(name), std::move(options));
}

Reader Reader::from_fd(int fd, std::string name, Options options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  impl->start_stream(std::move(name));
  impl->stream->start_fd(fd);
  return Reader(std::move(impl));
}

Reader::Reader(Reader&&) noexcept = default;
Reader& Reader::operator=(Reader&&) noexcept = default;
Reader::~Reader() = default;

bool Reader::next(Record& record) {
  Impl& m = *impl_;
  bool got = false;
  if (m.merger) {
    got = m.merger->next(m.current);
  } else {
    got = m.stream->next(m.current);
  }
  if (!got) return false;
  ++m.summary.records;
  record = Access::view(m.data);
  return true;
}

std::vector<std::string> Reader::watched_directories() const {
  return impl_->merger ? impl_->merger->directories() : std::vector<std::string>{};
}

std::chrono::milliseconds Reader::poll_interval() const {
  return impl_->merger ? impl_->merger->next_round_in() : std::chrono::milliseconds(100);
}

void Reader::poll() {
  if (impl_->merger) impl_->merger->new_round();
}

void Reader::wait() {
  std::this_thread::sleep_for(poll_interval());
  poll();
}

std::string Reader::cursor() const {
  if (!impl_->merger) return {};
  impl_->merger->positions(impl_->positions);
  if (impl_->positions.empty()) return {};
  return input::encode_cursor(impl_->positions);
}

ResumeResult Reader::resume_after(const std::string& cursor) {
  ResumeResult result;
  if (!impl_->merger) {
    result.ok = false;
    result.error = "cursors name places in files, and a stream has none";
    return result;
  }
  Result<std::vector<input::InputPosition>> inputs = input::parse_cursor(cursor);
  if (!inputs) {
    result.ok = false;
    result.malformed = true;
    result.error = inputs.why();
    return result;
  }
  Result<> resumed = impl_->merger->resume_after(*inputs, result.notes);
  result.ok = resumed.ok();
  result.error = resumed.why();
  return result;
}

bool Reader::decode_parallel(unsigned workers, const RendererFactory& make_renderer, const ChunkWriter& write) {
  Impl& m = *impl_;
  if (!m.merger || m.options.follow || m.options.cursors) return false;
  input::Source* only = m.merger->only_sequence();
  if (!only) return false;
  bool stopped = false;
  decoder::ChunkWriter writer = [&](std::string_view text) {
    if (!write(text)) stopped = true;
    return !stopped;
  };
  bool utc = m.options.utc;
  only->drain([&](int fd, const std::string& source, decoder::Summary& summary) {
    std::string file = fs::path(source).filename().string();
    decoder::RendererFactory factory = [&make_renderer, &file, utc] {
      Renderer render = make_renderer();
      return decoder::RecordRenderer([render, &file, utc](const decoder::Record& r, std::string& out) {
        RecordData data{&r, &file, utc};
        render(Access::view(data), out);
      });
    };
    decoder::ParallelDecoder decoder(source, m.reporter, workers);
    decoder.set_filter(m.filter);
    decoder.set_keys(m.keys);
    decoder.set_signers(m.signers);
    summary = decoder.decode_fd(fd, factory, writer);
    m.summary.records += summary.records - summary.skipped;
    return !stopped;
  });
  return true;
}

Summary Reader::summary() const {
  Summary s = impl_->summary;
  decoder::Summary totals = impl_->merger ? impl_->merger->totals() : impl_->stream->summary();
  s.damaged = impl_->merger ? impl_->merger->damaged() : totals.damaged;
  s.frames = totals.frames;
  s.stored_records = totals.records;
  s.stored_bytes = totals.stored_bytes;
  s.raw_bytes = totals.raw_bytes;
  s.torn_tail = totals.torn_tail;
  s.private_values = totals.private_values;
  s.tampered = totals.tampered;
  s.sealed_unopened = totals.sealed_unopened;
  s.sealed_to = totals.sealed_to;
  s.signed_by = totals.signed_by;
  for (const auto& file : totals.sealed_files) s.sealed_files.push_back({file.id, file.previous, file.ended});
  return s;
}

unsigned available_cpus() { return decoder::available_cpus(); }

}  // namespace terse::reader
