// `terse verify`: checks every frame of every file; exit 0 only when all of
// it is intact. Each file is read through terse::reader.
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include <terse/reader.hpp>

#include "commands.hpp"
#include "output.hpp"

namespace terse::cli {
namespace {

const char* const kVerifyFooter = R"(Exit code 0 only when every frame of every file is intact; damage is listed on
stderr with the file and offset (a torn tail is where a writer stopped: the
records before it are all readable with 'terse cat'). In files of format 1.3 a
frame repeated, out of order or missing by its number is damage too.

A sealed file (format 3.0) checked with its key (--key or TERSE_KEY) is
TAMPERED when any byte was changed, a frame removed, repeated, moved or added
in the clear, or its end cut off: its writer never leaves it so. One that its
writer did not close (killed, crashed, still writing) ends without its end
frame, which is reported like a torn tail; a later file of the same run
names it, though, when its end was cut off: verify on the directory then
says TAMPERED. Without the key only the frames' checksums are checked, and
verify says that the contents were not.

Examples:
  terse verify logs/
  terse verify logs/app-20261129-001.tlog || echo damaged
  terse verify --key /etc/app/logs-key logs/)";

// Checks one file and says what it found on stdout; true when it is intact.
bool verify_file(const std::string& path, const reader::ProblemHandler& on_problem, unsigned threads,
                 const std::vector<std::string>& keys, const std::vector<std::string>& signers,
                 std::vector<reader::Summary::SealedFile>& sealed) {
  std::uint64_t unformattable = 0;
  reader::Options options;
  options.report_open_failures = true;  // said, and counted as damage
  options.on_problem = on_problem;
  options.keys = keys;
  options.signers = signers;
  reader::Reader input({path}, std::move(options));
  // Each worker renders its frames' records and writes one byte for each
  // that does not render; the count is what comes out.
  reader::RendererFactory make_renderer = [] {
    return [scratch = std::string()](const reader::Record& record, std::string& out) mutable {
      scratch.clear();
      if (!record.message(scratch)) out += '!';
    };
  };
  auto count_marks = [&](std::string_view marks) {
    unformattable += marks.size();
    return true;
  };
  if (threads <= 1 || !input.decode_parallel(threads, make_renderer, count_marks)) {
    std::string scratch;
    reader::Record record;
    while (input.next(record)) {
      scratch.clear();
      if (!record.message(scratch)) ++unformattable;
    }
  }
  reader::Summary summary = input.summary();
  sealed = summary.sealed_files;
  bool intact = summary.damaged == 0 && !summary.torn_tail && unformattable == 0;
  std::string notes;
  if (summary.torn_tail) notes += ", torn tail";
  if (unformattable) notes += ", " + std::to_string(unformattable) + " unformattable";
  if (summary.tampered) notes += ", " + std::to_string(summary.tampered) + " signs of tampering";
  if (summary.sealed_unopened) {
    // Only the frames' checksums could be checked: the structure, not who wrote what.
    notes += "; sealed to ";
    for (std::size_t i = 0; i < summary.sealed_to.size(); ++i) notes += (i ? ", " : "") + summary.sealed_to[i];
    notes += ": " + std::to_string(summary.sealed_unopened) + " frames not opened, their contents not checked (no key)";
  }
  if (!summary.signed_by.empty()) {
    notes += "; signed by ";
    for (std::size_t i = 0; i < summary.signed_by.size(); ++i) notes += (i ? ", " : "") + summary.signed_by[i];
  }
  // A file replaced by one that is not sealed would read as any old file does.
  if (!keys.empty() && summary.sealed_to.empty()) notes += "; not sealed, so nothing in it is authenticated";
  const char* verdict = summary.tampered ? "TAMPERED" : intact ? "ok" : "DAMAGED";
  std::printf("%s: %s (%llu frames, %llu records%s)\n", path.c_str(), verdict,
              static_cast<unsigned long long>(summary.frames), static_cast<unsigned long long>(summary.stored_records),
              notes.c_str());
  return intact;
}

}  // namespace

CLI::App* add_verify_command(CLI::App& app, VerifyOptions& o) {
  auto* verify = app.add_subcommand("verify", "Check every frame; exit 0 only when all of it is intact");
  verify->footer(kVerifyFooter);
  verify->add_option("paths", o.paths, "Files, directories or - for standard input")->required();
  add_threads_option(*verify, o.threads);
  add_key_option(*verify, o.keys);
  add_signer_option(*verify, o.signers);
  return verify;
}

// FORMAT.md §11.4: each sealed file names the file its writer closed just
// before it. One so named that ends without its end frame had it cut off.
// One so named that is not among the files checked may have been removed by
// retention as well as by someone else, so that is only said.
bool check_sealed_chain(const std::vector<std::pair<std::string, reader::Summary::SealedFile>>& files) {
  std::map<std::string, std::pair<std::string, bool>> by_id;  // id -> path, ended
  for (const auto& [path, file] : files) by_id[file.id] = {path, file.ended};
  bool ok = true;
  for (const auto& [path, file] : files) {
    if (file.previous.empty()) continue;
    auto before = by_id.find(file.previous);
    if (before == by_id.end()) {
      std::printf(
          "%s: the file its writer closed before it is not among those checked (removed by retention, or "
          "by someone)\n",
          path.c_str());
    } else if (!before->second.second) {
      std::printf("%s: TAMPERED (its end was cut off: %s, which its writer wrote next, says it was closed)\n",
                  before->second.first.c_str(), path.c_str());
      ok = false;
    }
  }
  return ok;
}

int run_verify(const VerifyOptions& o) {
  if (!read_keys(o.keys) || !read_signers(o.signers)) return kExitUsage;
  bool ok = true;
  ProblemReporter problems("terse", TornTails::report);
  std::vector<std::pair<std::string, reader::Summary::SealedFile>> sealed;
  for (const auto& path : reader::expand_paths(o.paths, ok)) {
    std::vector<reader::Summary::SealedFile> files;
    if (!verify_file(path, problems.handler(), decoding_threads(o.threads), o.keys, o.signers, files)) ok = false;
    for (auto& file : files) sealed.emplace_back(path, std::move(file));
  }
  if (!check_sealed_chain(sealed)) ok = false;
  std::fflush(stdout);
  return ok ? kExitOk : kExitDamage;
}

}  // namespace terse::cli
