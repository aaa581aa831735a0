// Sealed logs on the command line: the --key option the reading commands
// share, and `terse keygen`, which makes a key pair for Config::encrypt_to.
#include <fcntl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <CLI/CLI.hpp>

#include <terse/portable_libc.hpp>
#include <terse/seal.hpp>

#include "commands.hpp"

namespace terse::cli {
namespace {

const char* const kKeygenFooter = R"(Writes FILE, the private key (readable by its owner only), and FILE.pub, the
public key, in OpenSSH's ed25519 format: `ssh-keygen -l -f FILE.pub` shows the
same fingerprint as terse. Give the public key to the programs that log
(Config::encrypt_to or TERSE_ENCRYPT_TO) and keep the private key where the
logs are read (terse cat --key FILE or TERSE_KEY). A key from
`ssh-keygen -t ed25519` works as well. The private key is written without a
passphrase; `ssh-keygen -p -f FILE` gives it one, and terse then has
ssh-keygen ask for it (on the terminal, or through SSH_ASKPASS) whenever the
key is read. An existing file is never overwritten.

Examples:
  terse keygen /etc/app/logs-key
  TERSE_ENCRYPT_TO=/etc/app/logs-key.pub ./app
  terse cat --key /etc/app/logs-key logs/)";

// Creates `path` with `text`, only if it does not exist.
bool write_new_file(const std::string& path, const std::string& text, int mode) {
  int fd = open_path(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, mode);
  if (fd < 0) {
    std::fprintf(stderr, "terse keygen: cannot create %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  std::string_view rest = text;
  while (!rest.empty()) {
    auto n = write_some(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::fprintf(stderr, "terse keygen: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
      ::close(fd);
      return false;
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  return ::close(fd) == 0;
}

}  // namespace

void add_key_option(CLI::App& command, std::vector<std::string>& keys) {
  command
      .add_option("--key", keys,
                  "Private key that opens sealed files (OpenSSH ed25519, as terse keygen or ssh-keygen -t ed25519 "
                  "writes it); may be given more than once")
      ->envname("TERSE_KEY")
      ->type_name("FILE");
}

bool read_keys(const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    auto key = seal::read_secret_key(path);
    if (!key) {
      std::fprintf(stderr, "terse: --key: %s\n", key.why().c_str());
      return false;
    }
  }
  return true;
}

void add_signer_option(CLI::App& command, std::vector<std::string>& signers) {
  command
      .add_option("--signer", signers,
                  "Public key of a writer (Config::sign_with's) that must have signed each sealed file; may be given "
                  "more than once")
      ->envname("TERSE_SIGNER")
      ->type_name("FILE");
}

bool read_signers(const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    auto key = seal::read_public_key(path);
    if (!key) {
      std::fprintf(stderr, "terse: --signer: %s\n", key.why().c_str());
      return false;
    }
  }
  return true;
}

CLI::App* add_keygen_command(CLI::App& app, KeygenOptions& o) {
  auto* keygen = app.add_subcommand("keygen", "Make a key pair for sealed logs (Config::encrypt_to, --key)");
  keygen->footer(kKeygenFooter);
  keygen->add_option("file", o.file, "The private key's file; the public key goes to FILE.pub")->required();
  keygen->add_option("-C,--comment", o.comment, "Comment in the public key (default: terse log key)");
  return keygen;
}

int run_keygen(const KeygenOptions& o) {
  auto pair = seal::new_key_pair(o.comment);
  if (!pair) {
    std::fprintf(stderr, "terse keygen: %s\n", pair.why().c_str());
    return kExitUsage;
  }
  if (!write_new_file(o.file, pair->secret, 0600)) return kExitUsage;
  if (!write_new_file(o.file + ".pub", pair->public_line, 0644)) return kExitUsage;
  auto key = seal::parse_public_key(pair->public_line, o.file + ".pub");
  std::printf("private key: %s\npublic key:  %s.pub\nfingerprint: %s\n", o.file.c_str(), o.file.c_str(),
              key ? seal::fingerprint(key->ed25519).c_str() : "?");
  return kExitOk;
}

}  // namespace terse::cli
