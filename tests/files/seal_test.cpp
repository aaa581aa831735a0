// Sealed files (FORMAT.md §11): written through Config::encrypt_to, read
// back with the private key by the real decoder and the CLI; without it (or
// with another key) a clear error naming the key; and every change to the
// file's frames reported as tampering, with only authenticated records shown.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <terse/crc.hpp>
#include <terse/portable_libc.hpp>
#include <terse/reader.hpp>
#include <terse/schema.hpp>
#include <terse/seal.hpp>
#include <terse/secret.hpp>
#include <terse/wire.hpp>

#include "file_helpers.hpp"

using namespace terse::test;
namespace schema = terse::schema;
namespace seal = terse::seal;

namespace {

bool mentions(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

constexpr const char* kSshKeygen = "/usr/bin/ssh-keygen";

// Environment variables set for a scope, then put back as they were.
class EnvironmentFor {
 public:
  explicit EnvironmentFor(const std::vector<std::pair<std::string, std::string>>& values) {
    for (const auto& [name, value] : values) {
      const char* before = std::getenv(name.c_str());
      saved_.push_back({name, before != nullptr ? std::optional<std::string>(before) : std::nullopt});
      set_environment(name.c_str(), value.c_str());
    }
  }
  ~EnvironmentFor() {
    for (const auto& [name, before] : saved_) {
      if (before) {
        set_environment(name.c_str(), before->c_str());
      } else {
        unset_environment(name.c_str());
      }
    }
  }
  EnvironmentFor(const EnvironmentFor&) = delete;
  EnvironmentFor& operator=(const EnvironmentFor&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// Runs ssh-keygen (Debian's openssh-client) with `args`; its output and exit code.
Run run_ssh_keygen(const std::vector<std::string>& args) {
  Run run;
  if (!std::filesystem::exists(kSshKeygen)) return run;
  TempDir out_dir;
  std::string out_path = out_dir / "out";
  int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | terse::kOpenFlags, 0600);
  REQUIRE(fd >= 0);
  std::vector<std::string> argv{kSshKeygen};
  argv.insert(argv.end(), args.begin(), args.end());
  run.exit_code = run_process(argv, fd, out_dir / "err");
  ::close(fd);
  run.out = read_file(out_path);
  return run;
}

// A key pair as terse keygen writes it, in `dir`.
struct KeyFiles {
  std::string secret_path;
  std::string public_path;
  seal::SecretKey secret;
};

KeyFiles make_keys(const TempDir& dir, const std::string& name) {
  auto pair = seal::new_key_pair("test key " + name);
  REQUIRE(pair);
  KeyFiles keys{dir / name, dir / (name + ".pub"), {}};
  write_file(keys.secret_path, pair->secret);
  write_file(keys.public_path, pair->public_line);
  auto secret = seal::read_secret_key(keys.secret_path);
  REQUIRE(secret);
  keys.secret = *secret;
  return keys;
}

std::string fingerprint_of(const KeyFiles& keys) { return seal::fingerprint(keys.secret.public_key.ed25519); }

bool any_tampering(const Decoded& decoded) {
  return std::any_of(decoded.problems.begin(), decoded.problems.end(),
                     [](const terse::decoder::Problem& p) { return p.tampering; });
}

// Every record given is one the writer logged, each at most as often as it
// was logged: a changed file may lose records (or give a moved frame's
// records where it was moved to), never show ones nobody logged.
bool only_logged(const Decoded& decoded, const std::vector<std::string>& logged) {
  std::multiset<std::string> left(logged.begin(), logged.end());
  for (const auto& line : decoded.lines) {
    auto it = left.find(line.message);
    if (it == left.end()) return false;
    left.erase(it);
  }
  return true;
}

// A sealed sample: uncompressed, so that plaintext would show in the bytes.
struct SealedFixture {
  TempDir dir;
  KeyFiles keys = make_keys(dir, "logs-key");
  Sample sample;
  std::vector<FrameAt> frames;

  SealedFixture() {
    sample = write_sample(dir / "logs", 6, 10, 0, "sealed", keys.public_path);
    frames = frames_of(sample.bytes);
  }
  std::vector<seal::SecretKey> key_list() const { return {keys.secret}; }
  Decoded decode(const std::string& bytes) const { return decode_bytes(bytes, key_list()); }
  std::string erase_frame(std::size_t index) const {
    std::string bytes = sample.bytes;
    bytes.erase(frames[index].offset, frames[index].end() - frames[index].offset);
    return bytes;
  }
  std::string frame_bytes(std::size_t index) const {
    return sample.bytes.substr(frames[index].offset, frames[index].end() - frames[index].offset);
  }
};

}  // namespace

TEST_CASE("a sealed file decodes with its key to what fmt::format printed, and holds no plaintext") {
  SealedFixture fx;
  REQUIRE(fx.frames.size() >= 5);
  CHECK(fx.frames[0].type == static_cast<std::uint8_t>(schema::FrameType::seal));
  CHECK(fx.frames.back().type == static_cast<std::uint8_t>(schema::FrameType::end));
  for (std::size_t i = 1; i < fx.frames.size(); ++i) {
    INFO("frame " << i);
    CHECK((fx.frames[i].flags & schema::kFrameFlagSealed) != 0);
  }
  CHECK(terse::wire::get_le<std::uint16_t>(reinterpret_cast<const unsigned char*>(fx.sample.bytes.data()) + 8) == 3);
  // Stored uncompressed, each message would be there byte for byte.
  CHECK(!mentions(fx.sample.bytes, "sealed record"));
  CHECK(!mentions(fx.sample.bytes, "examples"));
  CHECK(!mentions(fx.sample.bytes, "record {}"));

  Decoded decoded = fx.decode(fx.sample.bytes);
  INFO(describe(decoded));
  CHECK(decoded.intact());
  CHECK(messages_of(decoded) == fx.sample.messages);
  CHECK(decoded.summaries[0].sealed_unopened == 0);
  CHECK(decoded.summaries[0].sealed_to == std::vector<std::string>{fingerprint_of(fx.keys)});
}

TEST_CASE("a file that is not sealed is written as format 2.0, as before") {
  TempDir dir;
  Sample sample = write_sample(dir.path(), 2, 5, 1, "plain");
  CHECK(terse::wire::get_le<std::uint16_t>(reinterpret_cast<const unsigned char*>(sample.bytes.data()) + 8) == 2);
  CHECK(frames_of_type(sample.bytes, static_cast<std::uint8_t>(schema::FrameType::seal)).empty());
  CHECK(messages_of(decode_bytes(sample.bytes)) == sample.messages);
}

TEST_CASE("without the key a sealed file gives no record and names the key it was sealed to") {
  SealedFixture fx;
  Decoded decoded = decode_bytes(fx.sample.bytes);
  INFO(describe(decoded));
  CHECK(decoded.lines.empty());
  REQUIRE(decoded.problems.size() == 1);
  CHECK(mentions(decoded.problems[0].what, "sealed to key " + fingerprint_of(fx.keys)));
  CHECK(mentions(decoded.problems[0].what, "--key"));
  CHECK(decoded.summaries[0].damaged == 0);  // its structure is whole
  CHECK(decoded.summaries[0].sealed_unopened == fx.frames.size() - 1);
}

TEST_CASE("with another key a sealed file gives no record and names both keys") {
  SealedFixture fx;
  KeyFiles other = make_keys(fx.dir, "other-key");
  Decoded decoded = decode_bytes(fx.sample.bytes, {other.secret});
  INFO(describe(decoded));
  CHECK(decoded.lines.empty());
  REQUIRE(!decoded.problems.empty());
  CHECK(mentions(decoded.problems[0].what, fingerprint_of(fx.keys)));
  CHECK(mentions(decoded.problems[0].what, fingerprint_of(other)));
  CHECK(decoded.summaries[0].damaged > 0);
  // Both keys given: the right one opens it.
  Decoded both = decode_bytes(fx.sample.bytes, {other.secret, fx.keys.secret});
  CHECK(both.intact());
  CHECK(messages_of(both) == fx.sample.messages);
}

TEST_CASE("every change to a sealed file's frames is reported as tampering, and only logged records are shown") {
  SealedFixture fx;
  REQUIRE(fx.frames.size() >= 6);
  std::size_t last = fx.frames.size() - 1;

  SECTION("a byte changed, its checksums fixed, in any frame after the seal frame") {
    for (std::size_t i = 1; i <= last; ++i) {
      for (std::size_t at : {fx.frames[i].payload() + 3, fx.frames[i].end() - 1, fx.frames[i].payload() + 10}) {
        if (at >= fx.frames[i].end()) continue;
        std::string bytes = fx.sample.bytes;
        flip_byte(bytes, at);
        fix_checksum(bytes, fx.frames[i], true);
        Decoded decoded = fx.decode(bytes);
        INFO("frame " << i << " byte " << at << ": " << describe(decoded));
        CHECK(any_tampering(decoded));
        CHECK(only_logged(decoded, fx.sample.messages));
      }
    }
  }
  SECTION("a byte changed and the checksums left as they are") {
    for (std::size_t i = 1; i <= last; ++i) {
      std::string bytes = fx.sample.bytes;
      flip_byte(bytes, fx.frames[i].payload() + 5);
      Decoded decoded = fx.decode(bytes);
      INFO("frame " << i << ": " << describe(decoded));
      CHECK(any_tampering(decoded));
      CHECK(only_logged(decoded, fx.sample.messages));
    }
  }
  SECTION("a header field changed, its checksum fixed") {
    for (std::size_t i = 1; i <= last; ++i) {
      std::string bytes = fx.sample.bytes;
      increment_byte(bytes, fx.frames[i].offset + 4);  // the type
      fix_checksum(bytes, fx.frames[i], false);
      Decoded decoded = fx.decode(bytes);
      INFO("frame " << i << ": " << describe(decoded));
      CHECK(any_tampering(decoded));
      CHECK(only_logged(decoded, fx.sample.messages));
    }
  }
  SECTION("a frame removed") {
    for (std::size_t i = 1; i < last; ++i) {
      Decoded decoded = fx.decode(fx.erase_frame(i));
      INFO("frame " << i << ": " << describe(decoded));
      CHECK(any_tampering(decoded));
      CHECK(only_logged(decoded, fx.sample.messages));
    }
  }
  SECTION("a frame repeated") {
    for (std::size_t i = 1; i < last; ++i) {
      std::string bytes = fx.sample.bytes;
      bytes.insert(fx.frames[i].end(), fx.frame_bytes(i));
      Decoded decoded = fx.decode(bytes);
      INFO("frame " << i << ": " << describe(decoded));
      CHECK(any_tampering(decoded));
      CHECK(only_logged(decoded, fx.sample.messages));
    }
  }
  SECTION("two frames swapped") {
    for (std::size_t i = 1; i + 1 < last; ++i) {
      std::string bytes = fx.sample.bytes.substr(0, fx.frames[i].offset) + fx.frame_bytes(i + 1) + fx.frame_bytes(i) +
                          fx.sample.bytes.substr(fx.frames[i + 1].end());
      Decoded decoded = fx.decode(bytes);
      INFO("frames " << i << " and " << i + 1 << ": " << describe(decoded));
      CHECK(any_tampering(decoded));
      CHECK(only_logged(decoded, fx.sample.messages));
    }
  }
  SECTION("a frame of another file sealed to the same key put in") {
    Sample other = write_sample(fx.dir / "other-logs", 2, 5, 0, "forged", fx.keys.public_path);
    auto other_frames = frames_of(other.bytes);
    for (std::size_t i = 1; i + 1 < other_frames.size(); ++i) {
      std::string bytes = fx.sample.bytes;
      bytes.insert(fx.frames[2].offset,
                   other.bytes.substr(other_frames[i].offset, other_frames[i].end() - other_frames[i].offset));
      Decoded decoded = fx.decode(bytes);
      INFO("other file's frame " << i << ": " << describe(decoded));
      CHECK(any_tampering(decoded));
      CHECK(only_logged(decoded, fx.sample.messages));
    }
  }
  SECTION("a frame in the clear put in") {
    TempDir plain_dir;
    Sample plain = write_sample(plain_dir.path(), 1, 3, 0, "forged");
    auto plain_frames = frames_of(plain.bytes);
    std::string bytes = fx.sample.bytes;
    const FrameAt& records = plain_frames.back();
    bytes.insert(fx.frames[3].offset, plain.bytes.substr(records.offset, records.end() - records.offset));
    Decoded decoded = fx.decode(bytes);
    INFO(describe(decoded));
    CHECK(any_tampering(decoded));
    CHECK(only_logged(decoded, fx.sample.messages));
  }
  SECTION("the end cut off after a whole frame: not closed, which a reader reports") {
    std::string bytes = fx.sample.bytes.substr(0, fx.frames[last].offset);
    Decoded decoded = fx.decode(bytes);
    INFO(describe(decoded));
    CHECK(!decoded.intact());
    CHECK(decoded.summaries[0].torn_tail);
    bool said = std::any_of(decoded.problems.begin(), decoded.problems.end(),
                            [](const auto& p) { return mentions(p.what, "no end frame"); });
    CHECK(said);
  }
  SECTION("the seal frame's file id changed, its checksums fixed: nothing opens") {
    std::string bytes = fx.sample.bytes;
    flip_byte(bytes, fx.frames[0].payload() + 1);
    fix_checksum(bytes, fx.frames[0], true);
    Decoded decoded = fx.decode(bytes);
    INFO(describe(decoded));
    CHECK(any_tampering(decoded));
    CHECK(decoded.lines.empty());
  }
}

TEST_CASE("rolled sealed files each have a key of their own and an end frame") {
  TempDir dir;
  KeyFiles keys = make_keys(dir, "k");
  terse::Config config = test_config(dir / "logs");
  config.roll_bytes = 4096;
  config.compression_level = 0;
  config.encrypt_to = keys.public_path;
  terse::start(config);
  std::vector<std::string> expected;
  for (int i = 0; i < 600; ++i) {
    TERSE_INFO("rolled sealed record {} of {}", i, 600);
    expected.push_back(fmt::format("rolled sealed record {} of {}", i, 600));
    if (i % 50 == 0) terse::flush();
  }
  terse::stop();
  auto files = log_files(dir / "logs");
  REQUIRE(files.size() >= 3);
  std::set<std::string> seals;
  std::vector<std::string> got;
  for (const auto& file : files) {
    std::string bytes = read_file(file);
    auto frames = frames_of(bytes);
    REQUIRE(frames.front().type == static_cast<std::uint8_t>(schema::FrameType::seal));
    CHECK(frames.back().type == static_cast<std::uint8_t>(schema::FrameType::end));
    seals.insert(bytes.substr(frames.front().payload(), frames.front().stored));
    Decoded decoded = decode_bytes(bytes, {keys.secret});
    INFO(file << ": " << describe(decoded));
    CHECK(decoded.intact());
    for (const auto& line : decoded.lines) got.push_back(line.message);
  }
  CHECK(seals.size() == files.size());
  CHECK(got == expected);

  // Each file names the one closed before it (FORMAT.md §4 key 10), so that
  // verify finds a file whose end was cut off, though it reads alone like
  // one its writer never closed.
  Run whole = run_terse({"verify", "--key", keys.secret_path, dir / "logs"});
  INFO(whole.out << whole.err);
  CHECK(whole.exit_code == 0);
  CHECK(!mentions(whole.out, "TAMPERED"));
  std::string first = read_file(files[0]);
  auto first_frames = frames_of(first);
  write_file(files[0], first.substr(0, first_frames.back().offset));
  Run cut = run_terse({"verify", "--key", keys.secret_path, dir / "logs"});
  INFO(cut.out << cut.err);
  CHECK(cut.exit_code == 1);
  CHECK(mentions(cut.out, std::filesystem::path(files[0]).filename().string() + ": TAMPERED (its end was cut off"));
  std::filesystem::remove(files[1]);
  Run gone = run_terse({"verify", "--key", keys.secret_path, dir / "logs"});
  CHECK(mentions(gone.out, "is not among those checked"));
}

TEST_CASE("key files: OpenSSH's ed25519 keys work, and bad ones get a clear error") {
  TempDir dir;
  SECTION("terse keygen's keys read back as OpenSSH would") {
    KeyFiles keys = make_keys(dir, "k");
    auto from_public = seal::read_public_key(keys.public_path);
    auto from_private = seal::read_public_key(keys.secret_path);
    REQUIRE(from_public);
    REQUIRE(from_private);
    CHECK(from_public->ed25519 == keys.secret.public_key.ed25519);
    CHECK(from_private->ed25519 == keys.secret.public_key.ed25519);
    CHECK(from_public->comment == "test key k");
  }
  SECTION("ssh-keygen's keys seal and open a file, with ssh-keygen's fingerprint") {
    std::string key = dir / "id_ed25519";
    Run made = run_ssh_keygen({"-q", "-t", "ed25519", "-N", "", "-C", "ops", "-f", key});
    if (made.exit_code != 0) {
      WARN("ssh-keygen is not installed (Debian: openssh-client); skipped");
      return;
    }
    Run listed = run_ssh_keygen({"-l", "-f", key + ".pub"});
    auto secret = seal::read_secret_key(key);
    REQUIRE(secret);
    CHECK(mentions(listed.out, seal::fingerprint(secret->public_key.ed25519)));
    Sample sample = write_sample(dir / "logs", 2, 5, 1, "ssh", key + ".pub");
    Decoded decoded = decode_bytes(sample.bytes, {*secret});
    CHECK(decoded.intact());
    CHECK(messages_of(decoded) == sample.messages);
  }
  SECTION("a key with a passphrase, an RSA key, a public key for a private one, a cut or empty file") {
    std::string with_passphrase = dir / "pass";
    std::string rsa = dir / "rsa";
    bool have_ssh_keygen =
        run_ssh_keygen({"-q", "-t", "ed25519", "-N", "secret words", "-f", with_passphrase}).exit_code == 0 &&
        run_ssh_keygen({"-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", rsa}).exit_code == 0;
    if (have_ssh_keygen) {
      // Without ssh-keygen's help (no askpass answers, no terminal), a clear no.
      EnvironmentFor no_answer({{"SSH_ASKPASS", "false"}, {"SSH_ASKPASS_REQUIRE", "force"}});
      auto protected_key = seal::read_secret_key(with_passphrase);
      REQUIRE(!protected_key);
      CHECK(mentions(protected_key.why(), "passphrase"));
      auto rsa_public = seal::read_public_key(rsa + ".pub");
      REQUIRE(!rsa_public);
      CHECK(mentions(rsa_public.why(), "ssh-rsa"));
      CHECK(mentions(rsa_public.why(), "ed25519"));
      auto rsa_secret = seal::read_secret_key(rsa);
      REQUIRE(!rsa_secret);
    }
    KeyFiles keys = make_keys(dir, "k");
    auto public_for_secret = seal::read_secret_key(keys.public_path);
    REQUIRE(!public_for_secret);
    CHECK(mentions(public_for_secret.why(), "public key"));
    std::string whole = read_file(keys.secret_path);
    for (std::size_t cut : {whole.size() / 2, whole.size() - 40, std::size_t{20}}) {
      write_file(dir / "cut", whole.substr(0, cut));
      auto key = seal::read_secret_key(dir / "cut");
      INFO("cut at " << cut);
      CHECK(!key);
      CHECK(mentions(key.why(), dir / "cut"));
    }
    write_file(dir / "empty", "");
    CHECK(!seal::read_public_key(dir / "empty"));
    CHECK(!seal::read_public_key(dir / "missing"));
    std::string line = read_file(keys.public_path);
    write_file(dir / "cut.pub", line.substr(0, 30));
    CHECK(!seal::read_public_key(dir / "cut.pub"));
  }
  SECTION("a key protected by a passphrase: ssh-keygen unlocks it, asking through SSH_ASKPASS") {
    std::string key = dir / "locked";
    if (run_ssh_keygen({"-q", "-t", "ed25519", "-N", "secret words", "-C", "ops", "-f", key}).exit_code != 0) {
      WARN("ssh-keygen is not installed (Debian: openssh-client); skipped");
      return;
    }
    const std::string locked_bytes = read_file(key);
    auto askpass = [&](const std::string& name, const std::string& answer) {
      std::string script = dir / name;
      write_file(script, "#!/bin/sh\necho '" + answer + "'\n");
      std::filesystem::permissions(script, std::filesystem::perms::owner_all);
      return script;
    };
    std::string right = askpass("right", "secret words");
    std::string wrong = askpass("wrong", "other words");
    {
      EnvironmentFor answered({{"SSH_ASKPASS", right}, {"SSH_ASKPASS_REQUIRE", "force"}});
      auto secret = seal::read_secret_key(key);
      REQUIRE(secret);
      auto public_half = seal::read_public_key(key);  // in the clear, passphrase or not
      REQUIRE(public_half);
      CHECK(public_half->ed25519 == secret->public_key.ed25519);
      CHECK(secret->public_key.comment == "ops");
      Sample sample = write_sample(dir / "logs", 2, 5, 1, "locked", key + ".pub");
      Decoded decoded = decode_bytes(sample.bytes, {*secret});
      CHECK(decoded.intact());
      CHECK(messages_of(decoded) == sample.messages);
      Run cat = run_terse({"cat", "-o", "json", "--key", key, sample.path});
      CHECK(cat.exit_code == 0);
      CHECK(split_lines(cat.out).size() == sample.messages.size());
      CHECK(mentions(cat.out, sample.messages.back()));
#ifndef _WIN32
      // In a process whose standard input is closed, the copy and the pipe to ssh-keygen
      // would take descriptor 0, which ssh-keygen gets /dev/null on.
      int saved_stdin = ::dup(0);
      REQUIRE(saved_stdin >= 0);
      ::close(0);
      auto without_stdin = seal::read_secret_key(key);
      ::dup2(saved_stdin, 0);
      ::close(saved_stdin);
      CHECK(without_stdin);
      if (!without_stdin) FAIL_CHECK(without_stdin.why());
#endif
    }
    {
      EnvironmentFor answered({{"SSH_ASKPASS", wrong}, {"SSH_ASKPASS_REQUIRE", "force"}});
      auto secret = seal::read_secret_key(key);
      REQUIRE(!secret);
      CHECK(mentions(secret.why(), key + ": the private key is protected by a passphrase"));
      CHECK(mentions(secret.why(), "ssh-keygen did not unlock it"));
      CHECK(mentions(secret.why(), "incorrect passphrase"));
      CHECK(!mentions(secret.why(), "/dev/fd/"));  // named by its file, not by the copy's
      Run cat = run_terse({"cat", "--key", key, dir / "logs"});
      CHECK(cat.exit_code != 0);
      CHECK(mentions(cat.err, "passphrase"));
    }
    {
      EnvironmentFor no_ssh_keygen({{"SSH_ASKPASS", right}, {"SSH_ASKPASS_REQUIRE", "force"}, {"PATH", dir / "none"}});
      auto secret = seal::read_secret_key(key);
      REQUIRE(!secret);
      CHECK(mentions(secret.why(), "passphrase"));
      CHECK(mentions(secret.why(), "ssh-keygen"));
    }
    // A program that logs asks nobody: a signing key with a passphrase stops start().
    {
      EnvironmentFor answered({{"SSH_ASKPASS", right}, {"SSH_ASKPASS_REQUIRE", "force"}});
      terse::Config config = test_config(dir / "signed-logs");
      config.encrypt_to = key + ".pub";
      config.sign_with = key;
      std::string error = start_error(config);
      CHECK(mentions(error, "sign_with"));
      CHECK(mentions(error, "passphrase"));
      CHECK(mentions(error, "ssh-keygen -p"));
    }
    // The key file itself is never rewritten: ssh-keygen only ever sees a copy.
    CHECK(read_file(key) == locked_bytes);
  }
  SECTION("Config::encrypt_to with a bad key stops start() with the reason") {
    terse::Config config = test_config(dir / "logs");
    config.encrypt_to = dir / "missing.pub";
    CHECK(mentions(start_error(config), "encrypt_to"));
    CHECK(mentions(start_error(config), "missing.pub"));
    KeyFiles keys = make_keys(dir, "k");
    write_file(dir / "bad.pub", "ssh-ed25519 AAAAnotbase64!!\n");
    config.encrypt_to = dir / "bad.pub";
    CHECK(mentions(start_error(config), "bad.pub"));
  }
}

TEST_CASE("the CLI reads sealed files with --key or TERSE_KEY, and verify says what it checked") {
  SealedFixture fx;
  std::string path = fx.sample.path;

  Run plain = run_terse({"cat", "-o", "short", path});
  CHECK(plain.exit_code == 1);
  CHECK(plain.out.empty());
  CHECK(mentions(plain.err, fingerprint_of(fx.keys)));

  Run opened = run_terse({"cat", "--key", fx.keys.secret_path, path});
  CHECK(opened.exit_code == 0);
  CHECK(split_lines(opened.out).size() == fx.sample.messages.size());
  CHECK(mentions(opened.out, fx.sample.messages.back()));

  set_environment("TERSE_KEY", fx.keys.secret_path.c_str());
  Run from_environment = run_terse({"cat", "--threads", "1", path});
  unset_environment("TERSE_KEY");
  CHECK(from_environment.exit_code == 0);
  CHECK(from_environment.out == opened.out);

  Run structure = run_terse({"verify", path});
  CHECK(structure.exit_code == 0);
  CHECK(mentions(structure.out, "not checked"));
  CHECK(mentions(structure.out, fingerprint_of(fx.keys)));

  Run checked = run_terse({"verify", "--key", fx.keys.secret_path, path});
  CHECK(checked.exit_code == 0);
  CHECK(mentions(checked.out, ": ok ("));
  CHECK(!mentions(checked.out, "not checked"));

  std::string bytes = fx.sample.bytes;
  flip_byte(bytes, fx.frames[3].payload() + 12);
  fix_checksum(bytes, fx.frames[3], true);
  std::string changed = fx.dir / "changed.tlog";
  write_file(changed, bytes);
  Run tampered = run_terse({"verify", "--key", fx.keys.secret_path, changed});
  CHECK(tampered.exit_code == 1);
  CHECK(mentions(tampered.out, "TAMPERED"));
  CHECK(mentions(tampered.err, "tampering"));

  Run stats = run_terse({"stats", "--key", fx.keys.secret_path, path});
  CHECK(stats.exit_code == 0);
  CHECK(mentions(stats.out, std::to_string(fx.sample.messages.size())));

  Run bad_key = run_terse({"cat", "--key", fx.keys.public_path, path});
  CHECK(bad_key.exit_code == 2);
  CHECK(mentions(bad_key.err, "private key"));

  Run keygen_again = run_terse({"keygen", fx.keys.secret_path});
  CHECK(keygen_again.exit_code == 2);
  CHECK(mentions(keygen_again.err, "exists"));
}

TEST_CASE("the reader library follows a sealed file as it grows and resumes from a cursor in it") {
  TempDir dir;
  KeyFiles keys = make_keys(dir, "k");
  std::string logs = dir / "logs";
  terse::Config config = test_config(logs);
  config.encrypt_to = keys.public_path;
  terse::start(config);
  for (int i = 0; i < 10; ++i) TERSE_INFO("followed {}", i);
  terse::flush();

  std::vector<terse::reader::Problem> problems;
  terse::reader::Options options;
  options.follow = true;
  options.cursors = true;
  options.keys = {keys.secret_path};
  options.on_problem = [&](const terse::reader::Problem& p) { problems.push_back(p); };
  terse::reader::Reader follower({logs}, options);
  std::vector<std::string> seen;
  std::string cursor_after_5;
  auto read_until = [&](std::size_t count) {
    terse::reader::Record record;
    for (int round = 0; seen.size() < count && round < 500; ++round) {
      while (follower.next(record)) {
        seen.push_back(record.message());
        if (seen.size() == 5) cursor_after_5 = follower.cursor();
      }
      if (seen.size() < count) follower.wait();
    }
  };
  read_until(10);
  for (int i = 10; i < 20; ++i) TERSE_INFO("followed {}", i);
  terse::flush();
  read_until(20);
  terse::stop();  // the end frame comes last; the follower reads on without complaint
  follower.poll();
  terse::reader::Record record;
  CHECK(!follower.next(record));
  REQUIRE(seen.size() == 20);
  for (int i = 0; i < 20; ++i) CHECK(seen[static_cast<std::size_t>(i)] == fmt::format("followed {}", i));
  for (const auto& p : problems) FAIL_CHECK(p.what);

  terse::reader::Options again;
  again.keys = {keys.secret_path};
  again.cursors = true;
  terse::reader::Reader resumed({logs}, again);
  REQUIRE(!cursor_after_5.empty());
  resumed.resume_after(cursor_after_5);
  std::vector<std::string> rest;
  while (resumed.next(record)) rest.push_back(record.message());
  REQUIRE(rest.size() == 15);
  CHECK(rest.front() == "followed 5");
  CHECK(resumed.summary().damaged == 0);
}

TEST_CASE("on_record sees plaintext in process, and private values stay private inside a sealed file") {
  TempDir dir;
  KeyFiles keys = make_keys(dir, "k");
  terse::Config config = test_config(dir / "logs");
  config.encrypt_to = keys.public_path;
  std::vector<std::string> called;
  std::mutex mutex;
  config.callback_level = terse::Level::trace;
  config.on_record = [&](const terse::Record& record) {
    std::lock_guard lock(mutex);
    called.emplace_back(record.message);
  };
  terse::start(config);
  TERSE_INFO("order {} for {}", 42, terse::secret(std::string("card 4111")));
  TERSE_WARN("plain text {}", "visible in process");
  terse::stop();
  CHECK(called == std::vector<std::string>{"order 42 for <private>", "plain text visible in process"});
  auto files = log_files(dir / "logs");
  REQUIRE(files.size() == 1);
  std::string bytes = read_file(files[0]);
  CHECK(bytes.find("4111") == std::string::npos);
  Decoded decoded = decode_bytes(bytes, {keys.secret});
  CHECK(decoded.intact());
  CHECK(messages_of(decoded) == std::vector<std::string>{"order 42 for <private>", "plain text visible in process"});
}

TEST_CASE("a writer's signing key: verify --signer checks which writer sealed a file") {
  TempDir dir;
  KeyFiles reader_keys = make_keys(dir, "reader");
  KeyFiles writer_keys = make_keys(dir, "writer");
  KeyFiles other_writer = make_keys(dir, "other-writer");
  terse::Config config = test_config(dir / "logs");
  config.encrypt_to = reader_keys.public_path;
  config.sign_with = writer_keys.secret_path;
  terse::start(config);
  TERSE_INFO("signed record {}", 1);
  terse::stop();
  std::string logs = dir / "logs";

  Run signed_ok = run_terse({"verify", "--key", reader_keys.secret_path, "--signer", writer_keys.public_path, logs});
  INFO(signed_ok.out << signed_ok.err);
  CHECK(signed_ok.exit_code == 0);
  CHECK(mentions(signed_ok.out, "signed by " + fingerprint_of(writer_keys)));

  Run other = run_terse({"verify", "--key", reader_keys.secret_path, "--signer", other_writer.public_path, logs});
  CHECK(other.exit_code == 1);
  CHECK(mentions(other.out, "TAMPERED"));
  CHECK(mentions(other.err, "not by a writer asked for"));

  // Without the reader's key the signature is still checked.
  Run without_key = run_terse({"verify", "--signer", writer_keys.public_path, logs});
  CHECK(without_key.exit_code == 0);
  CHECK(mentions(without_key.out, "signed by"));

  // A changed signature: the seal frame no longer holds, and no frame opens.
  auto files = log_files(logs);
  REQUIRE(files.size() == 1);
  std::string bytes = read_file(files[0]);
  auto frames = frames_of(bytes);
  REQUIRE(frames[0].stored == seal::kSignedSealPayloadBytes);
  flip_byte(bytes, frames[0].end() - 5);
  fix_checksum(bytes, frames[0], true);
  Decoded decoded = decode_bytes(bytes, {reader_keys.secret});
  INFO(describe(decoded));
  CHECK(any_tampering(decoded));
  CHECK(decoded.lines.empty());
  bool said = std::any_of(decoded.problems.begin(), decoded.problems.end(),
                          [](const auto& p) { return mentions(p.what, "signature"); });
  CHECK(said);

  // An unsigned file where a signature is asked for.
  Sample plain = write_sample(dir / "unsigned", 1, 3, 1, "u", reader_keys.public_path);
  Run unsigned_run =
      run_terse({"verify", "--key", reader_keys.secret_path, "--signer", writer_keys.public_path, plain.path});
  CHECK(unsigned_run.exit_code == 1);
  CHECK(mentions(unsigned_run.err, "not signed"));

  terse::Config alone = test_config(dir / "alone");
  alone.sign_with = writer_keys.secret_path;
  CHECK(mentions(start_error(alone), "encrypt_to"));
}
