// Writes golden-v2.1.tlog: a file of format 2.1, whose long strings that
// differ from an earlier one in a few bytes are that one patched (FORMAT.md
// §8, 3.1): JSON documents with a sequence number, in frames before and
// after the text entry they are patched from, patched in one place or in
// many, beside one repeated whole and one like no other; tests/files/golden.cmake decodes it with the CLI and
// compares text and JSON byte for byte with golden-v2.1.txt and
// golden-v2.1.jsonl, which that same CLI printed, and checks that it
// verifies.
//
// Run by hand only, never by ctest:
//   terse_make_golden_v2_1 OUT_DIR      -> OUT_DIR/golden-YYYYMMDD-001.tlog
//   terse cat --utc FILE > golden-v2.1.txt
//   terse cat --utc -o json FILE > golden-v2.1.jsonl
// Regenerating the file on purpose means checking the new text by hand first.
#include <string>

#include <fmt/format.h>

#include <terse/terse.hpp>

namespace {

std::string document(int variant, int sequence) {
  std::string items;
  for (int i = 0; i < 6; ++i)
    items += fmt::format(R"({}{{"sku":"item-{:03}-{}","qty":{},"note":"kept as it was"}})", i == 0 ? "" : ",",
                         variant * 10 + i, variant, i + 1);
  return fmt::format(R"({{"seq":"{:08}","variant":{},"items":[{}]}})", sequence, variant, items);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: {} OUT_DIR\n", argv[0]);
    return 2;
  }
  terse::Config cfg;
  cfg.directory = argv[1];
  cfg.name = "golden";
  cfg.level = terse::Level::info;
  cfg.read_environment = false;
  terse::start(cfg);
  int sequence = 0;
  for (int round = 0; round < 3; ++round) {
    // Two variants of one length and the same middle bytes: the first
    // document stays inline, the second becomes a text entry, and every one
    // after it, of either variant, is patched from it.
    for (int i = 0; i < 3; ++i) {
      for (int variant = 0; variant < 2; ++variant) {
        TERSE_INFO("order {} {} total {:.2f}", sequence, document(variant, sequence), sequence * 1.5);
        ++sequence;
      }
    }
    // Of another length than the others: interned whole from its second time.
    TERSE_WARN("same document {} (repeated)", document(2, 0) + std::string(20, '.'));
    TERSE_WARN("like no other {}", std::string(150, static_cast<char>('a' + round)));
    terse::flush();  // frames of their own: texts defined in one, patched in the next
  }
  terse::stop();
  return 0;
}
