// Sealed files (FORMAT.md §11): the keys, the seal frame and the sealing and
// opening of frames, for the writer, the crash path and every reader. The
// cryptography is libsodium's, behind this header (decoder/seal.cpp, which
// every library of terse carries); a build without libsodium answers every
// call with a Failure that says so.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <terse/result.hpp>
#include <terse/schema.hpp>

namespace terse::seal {

// Whether this build can seal and open files at all.
bool available() noexcept;

inline constexpr std::size_t kPublicKeyBytes = 32;  // Ed25519
inline constexpr std::size_t kFileKeyBytes = 32;    // XChaCha20-Poly1305
inline constexpr std::size_t kFileIdBytes = 16;
inline constexpr std::size_t kSealedKeyBytes = 32 + kFileKeyBytes + 16;  // crypto_box_seal's
inline constexpr std::uint8_t kSchemeEd25519 = 1;
// The seal frame's payload as this version writes it: scheme, file id,
// recipient, sealed key, run id (FORMAT.md §4 key 9, in the clear so that
// readers without the key still tell writers apart).
inline constexpr std::size_t kSealPayloadBytes = 1 + kFileIdBytes + kPublicKeyBytes + kSealedKeyBytes + 8;
// A signed seal frame (FORMAT.md §11.1) appends the writer's Ed25519 public
// key and its signature of the bytes before them.
inline constexpr std::size_t kSignatureBytes = 64;
inline constexpr std::size_t kSignedSealPayloadBytes = kSealPayloadBytes + kPublicKeyBytes + kSignatureBytes;
// What sealing adds to a stored payload: the counter ahead, the tag behind.
inline constexpr std::size_t kCounterBytes = 8;
inline constexpr std::size_t kTagBytes = 16;
inline constexpr std::size_t kOverheadBytes = kCounterBytes + kTagBytes;
// The crash path's counters (§11.3): apart from every counter the writer's
// thread may use.
inline constexpr std::uint64_t kCrashCounterBase = std::uint64_t{1} << 63;

using PublicKeyBytes = std::array<unsigned char, kPublicKeyBytes>;

// A recipient: an Ed25519 public key, as in `ssh-keygen -t ed25519`'s .pub
// file, and what the file said about it.
struct PublicKey {
  PublicKeyBytes ed25519{};
  std::string comment;
};

// Its private half. The bytes are wiped when the key goes.
class SecretKey {
 public:
  SecretKey() = default;
  SecretKey(const SecretKey& other) = default;
  SecretKey& operator=(const SecretKey& other) = default;
  ~SecretKey();

  PublicKey public_key;
  std::array<unsigned char, 64> ed25519{};  // libsodium's: seed, then the public key
};

// "SHA256:…" as `ssh-keygen -l` prints it for the same key.
std::string fingerprint(const PublicKeyBytes& ed25519);

// Key files: an OpenSSH public key line ("ssh-ed25519 AAAA… comment") or an
// OpenSSH private key (its public half is taken), and for a secret key an
// OpenSSH private key. parse_secret_key() refuses one protected by a
// passphrase; read_secret_key() has ssh-keygen unlock it (it asks on the
// terminal or through SSH_ASKPASS; not on Windows), where a person reads
// logs, or refuses it, in a program that logs. `what` names the file in
// errors.
enum class Passphrase { ask_with_ssh_keygen, refuse };
Result<PublicKey> parse_public_key(std::string_view text, const std::string& what);
Result<SecretKey> parse_secret_key(std::string_view text, const std::string& what);
Result<PublicKey> read_public_key(const std::string& path);
Result<SecretKey> read_secret_key(const std::string& path, Passphrase passphrase = Passphrase::ask_with_ssh_keygen);

// A new key pair as OpenSSH writes one: the private key file's text and the
// public key's line.
struct KeyPairText {
  std::string secret;
  std::string public_line;
};
Result<KeyPairText> new_key_pair(const std::string& comment);

// What a seal frame says (§11.1), read without any key.
struct SealFrame {
  std::uint8_t scheme = 0;
  std::array<unsigned char, kFileIdBytes> file_id{};
  PublicKeyBytes recipient{};
  std::array<unsigned char, kSealedKeyBytes> sealed_key{};
  std::uint64_t run_id = 0;
  // Signed by its writer: the signer's key, and whether the signature holds.
  bool signed_by_writer = false;
  PublicKeyBytes signer{};
  bool signature_valid = false;
  std::string payload;  // whole, as it is bound to every sealed frame
};
Result<SealFrame> parse_seal_frame(std::string_view payload);

// The writer's side of one file: a fresh file key, sealed to the
// recipient. Copyable as plain bytes, so that the crash path can hold one
// without allocating; the key is wiped when it goes.
class FileSealer {
 public:
  FileSealer() = default;
  ~FileSealer();
  FileSealer(const FileSealer&) = default;
  FileSealer& operator=(const FileSealer&) = default;

  // With `signer`, the seal frame carries its signature (Config::sign_with).
  static Result<FileSealer> create(const PublicKey& recipient, std::uint64_t run_id, const SecretKey* signer = nullptr);
  bool ready() const noexcept { return ready_; }
  std::string_view seal_payload() const noexcept {
    return {reinterpret_cast<const char*>(seal_payload_.data()), seal_payload_size_};
  }
  // Writes a sealed frame into `out`, which has room for kFrameHeaderSize +
  // kOverheadBytes + message.size() bytes: the header (type, flags with the
  // sealed bit added, raw_size as given) and the counter, the message
  // encrypted and the tag. `message` is the payload as it would have been
  // stored (compressed or not). Async-signal-safe; returns the bytes written.
  std::size_t seal_frame(unsigned char* out, std::uint8_t type, std::uint8_t flags, std::uint32_t raw_size,
                         const unsigned char* message, std::size_t size, std::uint64_t counter) const noexcept;

 private:
  std::array<unsigned char, kFileKeyBytes> file_key_{};
  std::array<unsigned char, kSignedSealPayloadBytes> seal_payload_{};
  std::size_t seal_payload_size_ = 0;
  bool ready_ = false;
};

// The reader's side of one file: the file key, opened with the secret key
// the file was sealed to.
class FileOpener {
 public:
  FileOpener() = default;
  ~FileOpener();
  FileOpener(const FileOpener&) = default;
  FileOpener& operator=(const FileOpener&) = default;

  // Fails, naming the file's recipient, when no key given is it.
  static Result<FileOpener> open(const SealFrame& seal, const std::vector<SecretKey>& keys);
  // A sealed frame's stored payload to the message it sealed, or false when
  // it does not authenticate (or is too short to). `header` is the frame's
  // header as stored; `counter` gets the frame's counter.
  bool open_frame(const unsigned char* header, std::string_view stored, std::string& message,
                  std::uint64_t& counter) const;

 private:
  std::array<unsigned char, kFileKeyBytes> file_key_{};
  std::string seal_payload_;
};

}  // namespace terse::seal
