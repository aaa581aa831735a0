// Ring records rendered in the process that logged them, for stderr when no
// logger runs (runtime/record_text.hpp, for fallback.cpp): each is fed to the decoder library as
// a records payload of its own, whose argument bytes are then already
// their encoding (FORMAT.md §7.1), as the crash path writes them.
#include <cstring>
#include <string>
#include <vector>

#include <terse/decoder.hpp>
#include <terse/dictionary.hpp>
#include <terse/wire.hpp>

#include "runtime/record_text.hpp"
#include "runtime/registry.hpp"

namespace terse::detail {

struct RecordText::Impl {
  decoder::StreamDecoder decoder{"stderr", [](const decoder::Problem&) {}};
  decoder::LinePattern pattern{decoder::kDefaultPattern};
  decoder::TimeStyle style;
  std::vector<bool> sites_known;
  std::vector<std::uint32_t> threads_known;
  std::string dictionary;
  std::string payload;
};

RecordText::RecordText(const Calibration& calibration) : impl_(std::make_unique<Impl>()) {
  impl_->decoder.start_feed();
  impl_->decoder.feed_calibration(calibration.ticks, calibration.unix_ns, calibration.ticks_per_second);
}

RecordText::~RecordText() = default;

void RecordText::append(const ThreadBuffer& thread, const RingRecordHeader& header, const char* args,
                        std::string& out) {
  Impl& t = *impl_;
  std::uint32_t site_id = header.site_id & ~kRingFlightBit;
  t.dictionary.clear();
  if (site_id != schema::kControlSiteId) {
    if (t.sites_known.size() <= site_id) t.sites_known.resize(site_id + 1);
    if (!t.sites_known[site_id]) {
      if (const SiteInfo* site = site_info(site_id)) schema::append_entry(t.dictionary, site->entry());
      t.sites_known[site_id] = true;
    }
  }
  if (std::find(t.threads_known.begin(), t.threads_known.end(), thread.index) == t.threads_known.end()) {
    schema::append_entry(
        t.dictionary, schema::ThreadEntry{thread.index, thread.os_tid,
                                          std::string_view(thread.name, ::strnlen(thread.name, sizeof thread.name))});
    t.threads_known.push_back(thread.index);
  }
  if (!t.dictionary.empty()) t.decoder.feed_dictionary(t.dictionary);
  t.payload.clear();
  wire::put_le<std::uint64_t>(t.payload, header.ticks);
  wire::put_varint(t.payload, site_id);
  wire::put_varint(t.payload, thread.index);
  wire::put_varint(t.payload, 0);
  wire::put_varint(t.payload, header.args_size);
  t.payload.append(args, header.args_size);
  t.decoder.feed_records(t.payload);
  decoder::Record record;
  while (t.decoder.next(record)) t.pattern.append(out, record, t.style);
}

}  // namespace terse::detail
