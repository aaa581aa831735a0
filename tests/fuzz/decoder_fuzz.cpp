// libFuzzer target for the decoder: any bytes, as a .tlog file or a stream
// of them, through frame reading, the dictionary, argument decoding and every
// renderer. Format strings come from the file, so rendering is attack
// surface too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <terse/crc.hpp>
#include <terse/decoder.hpp>
#include <terse/schema.hpp>
#include <terse/seal.hpp>
#include <terse/wire.hpp>

namespace {

using namespace terse;
using namespace terse::decoder;

// Aborts with a message: an oracle failure, not a sanitizer report.
[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "decoder_fuzz: %s\n", what);
  std::abort();
}

// Every JSON record must be one line of valid UTF-8 with no raw control
// byte, whatever the file held.
void check_json_line(std::string_view line) {
  if (line.empty() || line.back() != '\n') fail("JSON record does not end in a newline");
  line.remove_suffix(1);
  const auto* p = reinterpret_cast<const unsigned char*>(line.data());
  const auto* end = p + line.size();
  while (p < end) {
    unsigned char c = *p;
    if (c < 0x20) fail("JSON record holds a raw control byte");
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || static_cast<std::size_t>(end - p) < n) fail("JSON record is not valid UTF-8");
    for (std::size_t k = 1; k < n; ++k)
      if ((p[k] & 0xC0) != 0x80) fail("JSON record is not valid UTF-8");
    p += n;
  }
}

// Sealed files (FORMAT.md §11): the corpus's sealed-demo.tlog is sealed to
// this key, made for the fuzzer and published with it, so that the fuzzer
// reaches the opening of sealed frames and what lies behind them.
constexpr const char* kFuzzKey = R"(-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACBAreldPllCj+yt9xeMOo1WT+rgOWFk6OgNwSE7vSLM5wAAAKiSG5tmkhub
ZgAAAAtzc2gtZWQyNTUxOQAAACBAreldPllCj+yt9xeMOo1WT+rgOWFk6OgNwSE7vSLM5w
AAAEC1Xz1cred1qrcqy39rdvzvzK9Eh8uuXAXi+eRCuJwsK0Ct6V0+WUKP7K33F4w6jVZP
6uA5YWTo6A3BITu9IsznAAAAHmZ1enoga2V5LCBwdWJsaXNoZWQgb24gcHVycG9zZQECAw
QFBgc=
-----END OPENSSH PRIVATE KEY-----
)";

const std::vector<seal::SecretKey>& fuzz_keys() {
  static const std::vector<seal::SecretKey> keys = [] {
    std::vector<seal::SecretKey> out;
    if (auto key = seal::parse_secret_key(kFuzzKey, "the fuzz key")) out.push_back(*key);
    return out;
  }();
  return keys;
}

struct Counts {
  std::uint64_t records = 0;
  std::uint64_t problems = 0;
};

Counts decode_and_render(std::string_view bytes) {
  static const LinePattern default_line(kDefaultPattern);
  static const LinePattern specs_line("{level:>8}|{thread:x}|{file:.20}:{line:05}|{message:.300}");
  Counts counts;
  StreamDecoder decoder("<fuzz>", [&](const Problem& p) {
    // A torn tail is the end, not damage; nor is the notice that a sealed
    // file was read without any key, whose frames the decoder only counts.
    std::string_view what = p.what;
    bool keyless_notice = what.substr(0, 21) == "file is sealed to key" && what.size() >= 27 &&
                          what.substr(what.size() - 27) == "; its records are not shown";
    if (!p.torn_tail && !keyless_notice) ++counts.problems;
    if (p.what.empty()) fail("a problem without a reason");
  });
  decoder.set_keys(fuzz_keys());
  std::string out;
  Summary summary = decoder.decode_bytes(bytes, [&](const Record& record) {
    ++counts.records;
    out.clear();
    Result<> formatted = render_message(record, out);
    if (!formatted && formatted.why().empty()) fail("render_message failed without saying why");
    out.clear();
    default_line.append(out, record, TimeStyle{true});
    specs_line.append(out, record, TimeStyle{false});
    out.clear();
    append_json_record(out, record, TimeStyle{true});
    check_json_line(out);
    out.clear();
    append_json_record(out, record, TimeStyle{false});
    check_json_line(out);
  });
  if (summary.records != counts.records) fail("summary counts records the sink never saw");
  if (summary.damaged != counts.problems) fail("summary's damage count differs from the problems reported");
  return counts;
}

// Mutated bytes almost never carry valid CRC-32C checksums, which would keep
// the fuzzer at the frame layer. This copy has every frame's checksums
// recomputed (and an uncompressed frame's raw size matched to its stored
// size), so mutations reach the dictionary, records and formatting code.
std::string with_checksums_fixed(std::string_view input) {
  std::string bytes(input);
  auto* data = reinterpret_cast<unsigned char*>(bytes.data());
  std::size_t at = 0;
  while (at + schema::kFrameHeaderSize <= bytes.size()) {
    if (std::memcmp(data + at, schema::kFrameSync, sizeof schema::kFrameSync) != 0) {
      ++at;
      continue;
    }
    unsigned char* h = data + at;
    auto stored = wire::get_le<std::uint32_t>(h + 8);
    // A sealed frame stores its counter and tag besides (FORMAT.md §11.2).
    std::uint32_t overhead = (h[5] & schema::kFrameFlagSealed) ? seal::kOverheadBytes : 0;
    if ((h[5] & schema::kFrameFlagZstd) == 0 && stored >= overhead)
      wire::store_le<std::uint32_t>(h + 12, stored - overhead);
    std::size_t payload = at + schema::kFrameHeaderSize;
    bool whole = stored <= bytes.size() - payload;
    if (whole) wire::store_le<std::uint32_t>(h + 16, wire::crc32c(data + payload, stored));
    wire::store_le<std::uint32_t>(h + schema::kFrameHeaderCrcOffset, wire::crc32c(h, schema::kFrameHeaderCrcOffset));
    at = whole ? payload + stored : at + 1;
  }
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  decode_and_render(input);
  std::string fixed = with_checksums_fixed(input);
  if (fixed != input) decode_and_render(fixed);
  return 0;
}
