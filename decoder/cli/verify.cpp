// `terse verify`: checks every frame of every file; exit 0 only when all of
// it is intact.
#include <cstdint>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include <terse/decoder.hpp>

#include "commands.hpp"
#include "log_files.hpp"
#include "output.hpp"
#include "source.hpp"

namespace terse::cli {
namespace {

const char* const kVerifyFooter = R"(Exit code 0 only when every frame of every file is intact; damage is listed on
stderr with the file and offset (a torn tail is where a writer stopped: the
records before it are all readable with 'terse cat'). In files of format 1.3 a
frame repeated, out of order or missing by its number is damage too.

Examples:
  terse verify logs/
  terse verify logs/app-20261129-001.tlog || echo damaged)";

// Checks one file and says what it found on stdout; true when it is intact.
bool verify_file(const std::string& path, const decoder::Reporter& reporter, unsigned threads) {
  std::uint64_t unformattable = 0;
  decoder::Summary summary;
  if (threads > 1) {
    // Each worker renders its frames' records and writes one byte for each
    // that does not render; the count is what comes out.
    decoder::RendererFactory make_renderer = [] {
      return [scratch = std::string()](const decoder::Record& record, std::string& out) mutable {
        scratch.clear();
        if (!decoder::render_message(record, scratch)) out += '!';
      };
    };
    summary = decode_path_parallel(
        path, threads, make_renderer,
        [&](std::string_view marks) {
          unformattable += marks.size();
          return true;
        },
        reporter);
  } else {
    std::string scratch;
    auto sink = [&](const decoder::Record& record) {
      scratch.clear();
      if (!decoder::render_message(record, scratch)) ++unformattable;
    };
    summary = decode_path(path, sink, reporter);
  }
  bool intact = summary.intact() && unformattable == 0;
  std::printf("%s: %s (%llu frames, %llu records%s%s)\n", path.c_str(), intact ? "ok" : "DAMAGED",
              static_cast<unsigned long long>(summary.frames), static_cast<unsigned long long>(summary.records),
              summary.torn_tail ? ", torn tail" : "",
              unformattable ? (", " + std::to_string(unformattable) + " unformattable").c_str() : "");
  return intact;
}

}  // namespace

CLI::App* add_verify_command(CLI::App& app, VerifyOptions& o) {
  auto* verify = app.add_subcommand("verify", "Check every frame; exit 0 only when all of it is intact");
  verify->footer(kVerifyFooter);
  verify->add_option("paths", o.paths, "Files, directories or - for standard input")->required();
  add_threads_option(*verify, o.threads);
  return verify;
}

int run_verify(const VerifyOptions& o) {
  bool ok = true;
  ProblemReporter problems("terse", TornTails::report);
  for (const auto& path : expand_paths(o.paths, ok))
    if (!verify_file(path, problems.reporter(), decoding_threads(o.threads))) ok = false;
  std::fflush(stdout);
  return ok ? kExitOk : kExitDamage;
}

}  // namespace terse::cli
