// FORMAT.md §11 with libsodium: keys as OpenSSH writes them, the file key
// sealed to the recipient, frames under XChaCha20-Poly1305.
#include <terse/seal.hpp>

#include <cerrno>
#include <cstring>

#include <terse/frame.hpp>
#include <terse/portable_libc.hpp>
#include <terse/wire.hpp>

#include "seal_unlock.hpp"

#ifdef TERSE_HAVE_SODIUM
#include <sodium.h>
#endif

namespace terse::seal {

void wipe(void* bytes, std::size_t size) noexcept {
#ifdef TERSE_HAVE_SODIUM
  sodium_memzero(bytes, size);
#else
  auto* p = static_cast<volatile unsigned char*>(bytes);
  for (std::size_t i = 0; i < size; ++i) p[i] = 0;
#endif
}

namespace {

constexpr std::size_t kMostKeyFileBytes = 64 << 10;
// What parse_secret_key() says of a key file protected by a passphrase (after its name), which
// read_secret_key() then has ssh-keygen unlock.
constexpr std::string_view kLockedByPassphrase = ": the private key is protected by a passphrase";

// What reads and writes keys, only with libsodium.
#ifdef TERSE_HAVE_SODIUM

constexpr std::string_view kKeyType = "ssh-ed25519";
constexpr std::string_view kPrivateBegin = "-----BEGIN OPENSSH PRIVATE KEY-----";
constexpr std::string_view kPrivateEnd = "-----END OPENSSH PRIVATE KEY-----";
constexpr std::string_view kPrivateMagic{"openssh-key-v1\0", 15};

// OpenSSH's wire strings: a u32 big-endian length, then the bytes.
class SshReader {
 public:
  explicit SshReader(std::string_view bytes) : rest_(bytes) {}
  bool string(std::string_view& out) {
    std::uint32_t n;
    if (!u32(n) || n > rest_.size()) return false;
    out = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return true;
  }
  bool u32(std::uint32_t& out) {
    if (rest_.size() < 4) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) out = out << 8 | static_cast<unsigned char>(rest_[static_cast<std::size_t>(i)]);
    rest_.remove_prefix(4);
    return true;
  }
  std::string_view rest() const { return rest_; }

 private:
  std::string_view rest_;
};

void put_ssh_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift & 0xFF));
}
void put_ssh_string(std::string& out, std::string_view bytes) {
  put_ssh_u32(out, static_cast<std::uint32_t>(bytes.size()));
  out.append(bytes);
}

std::string public_blob(const PublicKeyBytes& key) {
  std::string blob;
  put_ssh_string(blob, kKeyType);
  put_ssh_string(blob, std::string_view(reinterpret_cast<const char*>(key.data()), key.size()));
  return blob;
}

// The Ed25519 key of an "ssh-ed25519" public key blob.
Result<PublicKeyBytes> key_of_blob(std::string_view blob, const std::string& what) {
  SshReader r(blob);
  std::string_view type, key;
  if (!r.string(type) || !r.string(key)) return Failure{what + ": the public key is cut short"};
  if (type != kKeyType) {
    return Failure{what + ": a key of type " + std::string(type) +
                   "; sealed logs take ssh-ed25519 keys (ssh-keygen -t ed25519, or terse keygen)"};
  }
  if (key.size() != kPublicKeyBytes) return Failure{what + ": the ed25519 key is not 32 bytes"};
  PublicKeyBytes out;
  std::memcpy(out.data(), key.data(), out.size());
  return out;
}

// What a writer's signature covers (FORMAT.md §11.1): a context of its own,
// so that the signature means nothing anywhere else, then the seal frame's
// bytes before the signer's key.
constexpr std::string_view kSignatureContext = "terse seal frame\n";
std::string signed_message(const unsigned char* seal, std::size_t size) {
  std::string message(kSignatureContext);
  message.append(reinterpret_cast<const char*>(seal), size);
  return message;
}
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

#endif

Result<std::string> read_key_file(const std::string& path) {
  int fd = open_path(path.c_str(), O_RDONLY);
  if (fd < 0) return Failure{"cannot open key file " + path + ": " + std::strerror(errno)};
  std::string text;
  char chunk[4096];
  for (;;) {
    auto n = read_some(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      return Failure{"cannot read key file " + path + ": " + std::strerror(error)};
    }
    if (n == 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
    if (text.size() > kMostKeyFileBytes) {
      ::close(fd);
      return Failure{path + " is not a key file (over 64 KiB)"};
    }
  }
  ::close(fd);
  return text;
}

#ifdef TERSE_HAVE_SODIUM

bool sodium_ready() noexcept {
  static const bool initialised = sodium_init() >= 0;
  return initialised;
}

Result<std::string> from_base64(std::string_view text, const std::string& what) {
  std::string bytes(text.size() * 3 / 4 + 3, '\0');
  std::size_t n = 0;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(bytes.data()), bytes.size(), text.data(), text.size(),
                        " \t\r\n", &n, nullptr, sodium_base64_VARIANT_ORIGINAL) != 0) {
    return Failure{what + ": the key's base64 text is damaged or cut short"};
  }
  bytes.resize(n);
  return bytes;
}

std::string to_base64(std::string_view bytes, int variant) {
  std::string text(sodium_base64_encoded_len(bytes.size(), variant), '\0');
  sodium_bin2base64(text.data(), text.size(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                    variant);
  text.resize(std::strlen(text.c_str()));
  return text;
}

// The associated data of a sealed frame (§11.2): the header's first 16
// bytes, then the seal frame's payload.
struct AssociatedData {
  unsigned char bytes[16 + 256];
  std::size_t size = 0;
};
bool associated_data(const unsigned char* header, std::string_view seal_payload, AssociatedData& ad) noexcept {
  if (seal_payload.size() > sizeof ad.bytes - 16) return false;
  std::memcpy(ad.bytes, header, 16);
  std::memcpy(ad.bytes + 16, seal_payload.data(), seal_payload.size());
  ad.size = 16 + seal_payload.size();
  return true;
}

void nonce_of(std::uint64_t counter, unsigned char (&nonce)[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES]) noexcept {
  std::memset(nonce, 0, sizeof nonce);
  for (int i = 0; i < 8; ++i) nonce[i] = static_cast<unsigned char>(counter >> (8 * i));
}

#endif

}  // namespace

#ifdef TERSE_HAVE_SODIUM

namespace {
bool verify_signature(std::string_view payload, const PublicKeyBytes& signer) {
  if (!sodium_ready()) return false;
  std::string message = signed_message(reinterpret_cast<const unsigned char*>(payload.data()), kSealPayloadBytes);
  const auto* signature = reinterpret_cast<const unsigned char*>(payload.data()) + kSealPayloadBytes + kPublicKeyBytes;
  return crypto_sign_verify_detached(signature, reinterpret_cast<const unsigned char*>(message.data()), message.size(),
                                     signer.data()) == 0;
}
}  // namespace

static_assert(crypto_box_SEALBYTES + kFileKeyBytes == kSealedKeyBytes);
static_assert(crypto_aead_xchacha20poly1305_ietf_KEYBYTES == kFileKeyBytes);
static_assert(crypto_aead_xchacha20poly1305_ietf_ABYTES == kTagBytes);
static_assert(crypto_sign_PUBLICKEYBYTES == kPublicKeyBytes && crypto_sign_SECRETKEYBYTES == 64);

bool available() noexcept { return sodium_ready(); }

std::string fingerprint(const PublicKeyBytes& ed25519) {
  std::string blob = public_blob(ed25519);
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(blob.data()), blob.size());
  return "SHA256:" + to_base64(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest),
                               sodium_base64_VARIANT_ORIGINAL_NO_PADDING);
}

namespace {

// The private key file's one key (PROTOCOL.key of OpenSSH), unencrypted; with `public_half`,
// only its public key, which a file protected by a passphrase holds in the clear too.
Result<SecretKey> parse_private_file(std::string_view text, const std::string& what, bool public_half = false) {
  auto begin = text.find(kPrivateBegin);
  auto end = text.find(kPrivateEnd);
  if (begin == std::string_view::npos || end == std::string_view::npos || end < begin)
    return Failure{what + ": not an OpenSSH private key (no BEGIN/END OPENSSH PRIVATE KEY lines)"};
  auto bytes = from_base64(text.substr(begin + kPrivateBegin.size(), end - begin - kPrivateBegin.size()), what);
  if (!bytes) return Failure{bytes.why()};
  std::string_view all = *bytes;
  auto cut = Failure{what + ": the private key is cut short or damaged"};
  if (all.substr(0, kPrivateMagic.size()) != kPrivateMagic)
    return Failure{what + ": not an openssh-key-v1 private key"};
  SshReader r(all.substr(kPrivateMagic.size()));
  std::string_view cipher, kdf, kdf_options, public_key, private_section;
  std::uint32_t keys;
  if (!r.string(cipher) || !r.string(kdf) || !r.string(kdf_options) || !r.u32(keys)) return cut;
  if (keys != 1) return Failure{what + ": the file holds " + std::to_string(keys) + " keys; terse takes one"};
  if (!r.string(public_key) || !r.string(private_section)) return cut;
  auto ed25519 = key_of_blob(public_key, what);
  if (!ed25519) return Failure{ed25519.why()};
  if (public_half) {
    SecretKey half;
    half.public_key.ed25519 = *ed25519;
    return half;
  }
  // read_secret_key() has ssh-keygen unlock such a key first.
  if (cipher != "none") return Failure{what + std::string(kLockedByPassphrase)};
  SshReader p(private_section);
  std::uint32_t check1, check2;
  std::string_view type, pk, sk, comment;
  if (!p.u32(check1) || !p.u32(check2) || !p.string(type) || !p.string(pk) || !p.string(sk) || !p.string(comment))
    return cut;
  if (check1 != check2) return Failure{what + ": the private key's check numbers differ (damaged)"};
  if (type != kKeyType || pk.size() != kPublicKeyBytes || sk.size() != 64 ||
      std::memcmp(pk.data(), ed25519->data(), kPublicKeyBytes) != 0) {
    return Failure{what + ": the private key does not match its public key (damaged)"};
  }
  SecretKey key;
  std::memcpy(key.ed25519.data(), sk.data(), 64);
  // The secret's seed must give the public key it says it has.
  unsigned char derived_pk[crypto_sign_PUBLICKEYBYTES];
  unsigned char derived_sk[crypto_sign_SECRETKEYBYTES];
  crypto_sign_seed_keypair(derived_pk, derived_sk, key.ed25519.data());
  wipe(derived_sk, sizeof derived_sk);
  if (std::memcmp(derived_pk, ed25519->data(), kPublicKeyBytes) != 0)
    return Failure{what + ": the private key does not match its public key (damaged)"};
  key.public_key.ed25519 = *ed25519;
  key.public_key.comment = std::string(comment);
  return key;
}

}  // namespace

Result<PublicKey> parse_public_key(std::string_view text, const std::string& what) {
  if (!sodium_ready()) return Failure{"libsodium failed to initialise"};
  text = trim(text);
  if (text.find(kPrivateBegin) != std::string_view::npos) {
    auto secret = parse_private_file(text, what, true);
    if (!secret) return Failure{secret.why()};
    return secret->public_key;
  }
  if (text.empty()) return Failure{what + ": empty, not a key"};
  auto space = text.find_first_of(" \t");
  std::string_view type = text.substr(0, space);
  if (type != kKeyType) {
    if (type.substr(0, 4) == "ssh-" || type.substr(0, 6) == "ecdsa-")
      return Failure{what + ": a key of type " + std::string(type) +
                     "; sealed logs take ssh-ed25519 keys (ssh-keygen -t ed25519, or terse keygen)"};
    return Failure{what + ": not an OpenSSH public key (\"ssh-ed25519 AAAA…\")"};
  }
  if (space == std::string_view::npos) return Failure{what + ": the public key is cut short"};
  std::string_view rest = trim(text.substr(space));
  auto comment_at = rest.find_first_of(" \t");
  auto bytes = from_base64(rest.substr(0, comment_at), what);
  if (!bytes) return Failure{bytes.why()};
  auto ed25519 = key_of_blob(*bytes, what);
  if (!ed25519) return Failure{ed25519.why()};
  PublicKey key;
  key.ed25519 = *ed25519;
  if (comment_at != std::string_view::npos) key.comment = std::string(trim(rest.substr(comment_at)));
  unsigned char x25519[crypto_scalarmult_curve25519_BYTES];
  if (crypto_sign_ed25519_pk_to_curve25519(x25519, key.ed25519.data()) != 0)
    return Failure{what + ": not a valid ed25519 public key"};
  return key;
}

Result<SecretKey> parse_secret_key(std::string_view text, const std::string& what) {
  if (!sodium_ready()) return Failure{"libsodium failed to initialise"};
  if (trim(text).substr(0, kKeyType.size()) == kKeyType)
    return Failure{what + ": a public key; reading a sealed log takes the private key (the file without .pub)"};
  return parse_private_file(text, what);
}

Result<KeyPairText> new_key_pair(const std::string& comment) {
  if (!sodium_ready()) return Failure{"libsodium failed to initialise"};
  unsigned char pk[crypto_sign_PUBLICKEYBYTES];
  unsigned char sk[crypto_sign_SECRETKEYBYTES];
  crypto_sign_keypair(pk, sk);
  PublicKeyBytes public_key;
  std::memcpy(public_key.data(), pk, sizeof pk);
  std::string blob = public_blob(public_key);
  std::string section;
  std::uint32_t check = randombytes_random();
  put_ssh_u32(section, check);
  put_ssh_u32(section, check);
  put_ssh_string(section, kKeyType);
  put_ssh_string(section, std::string_view(reinterpret_cast<const char*>(pk), sizeof pk));
  put_ssh_string(section, std::string_view(reinterpret_cast<const char*>(sk), sizeof sk));
  wipe(sk, sizeof sk);
  put_ssh_string(section, comment);
  for (char pad = 1; section.size() % 8 != 0; ++pad) section.push_back(pad);
  std::string file(kPrivateMagic);
  put_ssh_string(file, "none");
  put_ssh_string(file, "none");
  put_ssh_string(file, "");
  put_ssh_u32(file, 1);
  put_ssh_string(file, blob);
  put_ssh_string(file, section);
  wipe(section.data(), section.size());
  std::string base64 = to_base64(file, sodium_base64_VARIANT_ORIGINAL);
  wipe(file.data(), file.size());
  KeyPairText out;
  out.secret.append(kPrivateBegin).push_back('\n');
  for (std::size_t at = 0; at < base64.size(); at += 70) out.secret.append(base64, at, 70).push_back('\n');
  out.secret.append(kPrivateEnd).push_back('\n');
  wipe(base64.data(), base64.size());
  out.public_line = std::string(kKeyType) + " " + to_base64(blob, sodium_base64_VARIANT_ORIGINAL);
  if (!comment.empty()) out.public_line += " " + comment;
  out.public_line += "\n";
  return out;
}

Result<FileSealer> FileSealer::create(const PublicKey& recipient, std::uint64_t run_id, const SecretKey* signer) {
  if (!sodium_ready()) return Failure{"libsodium failed to initialise"};
  unsigned char x25519[crypto_scalarmult_curve25519_BYTES];
  if (crypto_sign_ed25519_pk_to_curve25519(x25519, recipient.ed25519.data()) != 0)
    return Failure{"not a valid ed25519 public key: " + fingerprint(recipient.ed25519)};
  FileSealer sealer;
  randombytes_buf(sealer.file_key_.data(), sealer.file_key_.size());
  unsigned char* p = sealer.seal_payload_.data();
  *p++ = kSchemeEd25519;
  randombytes_buf(p, kFileIdBytes);
  p += kFileIdBytes;
  std::memcpy(p, recipient.ed25519.data(), kPublicKeyBytes);
  p += kPublicKeyBytes;
  if (crypto_box_seal(p, sealer.file_key_.data(), sealer.file_key_.size(), x25519) != 0)
    return Failure{"cannot seal a file key to " + fingerprint(recipient.ed25519)};
  p += kSealedKeyBytes;
  wire::store_le<std::uint64_t>(p, run_id);
  sealer.seal_payload_size_ = kSealPayloadBytes;
  if (signer != nullptr) {
    p += 8;
    std::memcpy(p, signer->public_key.ed25519.data(), kPublicKeyBytes);
    std::string message = signed_message(sealer.seal_payload_.data(), kSealPayloadBytes);
    crypto_sign_detached(p + kPublicKeyBytes, nullptr, reinterpret_cast<const unsigned char*>(message.data()),
                         message.size(), signer->ed25519.data());
    sealer.seal_payload_size_ = kSignedSealPayloadBytes;
  }
  sealer.ready_ = true;
  return sealer;
}

std::size_t FileSealer::seal_frame(unsigned char* out, std::uint8_t type, std::uint8_t flags, std::uint32_t raw_size,
                                   const unsigned char* message, std::size_t size,
                                   std::uint64_t counter) const noexcept {
  schema::FrameHeader header;
  header.type = type;
  header.flags = static_cast<std::uint8_t>(flags | schema::kFrameFlagSealed);
  header.stored_size = static_cast<std::uint32_t>(size + kOverheadBytes);
  header.raw_size = raw_size;
  unsigned char head[schema::kFrameHeaderSize];
  schema::encode_frame_header(header, head);  // its checksums follow once the payload is known
  AssociatedData ad;
  associated_data(head, seal_payload(), ad);
  unsigned char nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
  nonce_of(counter, nonce);
  unsigned char* payload = out + schema::kFrameHeaderSize;
  wire::store_le<std::uint64_t>(payload, counter);
  unsigned long long tag_size = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt_detached(payload + kCounterBytes, payload + kCounterBytes + size,
                                                      &tag_size, message, size, ad.bytes, ad.size, nullptr, nonce,
                                                      file_key_.data());
  header.payload_crc = wire::crc32c(payload, header.stored_size);
  schema::encode_frame_header(header, head);
  std::memcpy(out, head, sizeof head);
  return schema::kFrameHeaderSize + header.stored_size;
}

Result<FileOpener> FileOpener::open(const SealFrame& seal, const std::vector<SecretKey>& keys) {
  if (!sodium_ready()) return Failure{"libsodium failed to initialise"};
  std::string sealed_to = fingerprint(seal.recipient);
  if (seal.scheme != kSchemeEd25519)
    return Failure{"sealed with scheme " + std::to_string(seal.scheme) + ", which this terse does not know"};
  const SecretKey* key = nullptr;
  for (const SecretKey& candidate : keys)
    if (candidate.public_key.ed25519 == seal.recipient) key = &candidate;
  if (key == nullptr) {
    std::string why = "sealed to key " + sealed_to;
    if (keys.empty()) return Failure{why + "; give its private key with --key FILE or TERSE_KEY"};
    why += "; the key given is ";
    for (std::size_t i = 0; i < keys.size(); ++i) why += (i ? ", " : "") + fingerprint(keys[i].public_key.ed25519);
    return Failure{why + ", not that one"};
  }
  unsigned char x_pk[crypto_scalarmult_curve25519_BYTES];
  unsigned char x_sk[crypto_scalarmult_curve25519_BYTES];
  if (crypto_sign_ed25519_pk_to_curve25519(x_pk, key->public_key.ed25519.data()) != 0 ||
      crypto_sign_ed25519_sk_to_curve25519(x_sk, key->ed25519.data()) != 0) {
    return Failure{"the key " + sealed_to + " cannot be used for X25519"};
  }
  FileOpener opener;
  int opened =
      crypto_box_seal_open(opener.file_key_.data(), seal.sealed_key.data(), seal.sealed_key.size(), x_pk, x_sk);
  wipe(x_sk, sizeof x_sk);
  if (opened != 0)
    return Failure{"sealed to key " + sealed_to +
                   ", but its file key does not open with it: the seal frame was changed"};
  opener.seal_payload_ = seal.payload;
  return opener;
}

bool FileOpener::open_frame(const unsigned char* header, std::string_view stored, std::string& message,
                            std::uint64_t& counter) const {
  if (stored.size() < kOverheadBytes) return false;
  const auto* payload = reinterpret_cast<const unsigned char*>(stored.data());
  counter = wire::get_le<std::uint64_t>(payload);
  std::size_t size = stored.size() - kOverheadBytes;
  AssociatedData ad;
  if (!associated_data(header, seal_payload_, ad)) return false;
  unsigned char nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
  nonce_of(counter, nonce);
  message.resize(size);
  return crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
             reinterpret_cast<unsigned char*>(message.data()), nullptr, payload + kCounterBytes, size,
             payload + kCounterBytes + size, ad.bytes, ad.size, nonce, file_key_.data()) == 0;
}

#else  // without libsodium

namespace {
bool verify_signature(std::string_view, const PublicKeyBytes&) { return false; }
Failure unavailable() {
  return Failure{"this terse was built without libsodium, so it cannot seal or open sealed logs"};
}
}  // namespace

bool available() noexcept { return false; }
// Without SHA-256 the key itself names it.
std::string fingerprint(const PublicKeyBytes& ed25519) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string name = "ed25519:";
  for (unsigned char byte : ed25519) {
    name += kDigits[byte >> 4];
    name += kDigits[byte & 15];
  }
  return name;
}
Result<PublicKey> parse_public_key(std::string_view, const std::string&) { return unavailable(); }
Result<SecretKey> parse_secret_key(std::string_view, const std::string&) { return unavailable(); }
Result<KeyPairText> new_key_pair(const std::string&) { return unavailable(); }
Result<FileSealer> FileSealer::create(const PublicKey&, std::uint64_t, const SecretKey*) { return unavailable(); }
std::size_t FileSealer::seal_frame(unsigned char*, std::uint8_t, std::uint8_t, std::uint32_t, const unsigned char*,
                                   std::size_t, std::uint64_t) const noexcept {
  return 0;
}
Result<FileOpener> FileOpener::open(const SealFrame&, const std::vector<SecretKey>&) { return unavailable(); }
bool FileOpener::open_frame(const unsigned char*, std::string_view, std::string&, std::uint64_t&) const {
  return false;
}

#endif

SecretKey::~SecretKey() { wipe(ed25519.data(), ed25519.size()); }
FileSealer::~FileSealer() { wipe(file_key_.data(), file_key_.size()); }
FileOpener::~FileOpener() { wipe(file_key_.data(), file_key_.size()); }

Result<PublicKey> read_public_key(const std::string& path) {
  auto text = read_key_file(path);
  if (!text) return Failure{text.why()};
  return parse_public_key(*text, path);
}

Result<SecretKey> read_secret_key(const std::string& path, Passphrase passphrase) {
  auto text = read_key_file(path);
  if (!text) return Failure{text.why()};
  auto key = parse_secret_key(*text, path);
  const bool locked = !key && key.why() == path + std::string(kLockedByPassphrase);
  if (locked && passphrase == Passphrase::refuse) {
    key = Failure{key.why() +
                  ", which a program that logs is not asked for; give it a copy without one "
                  "(ssh-keygen -p -N \"\" -f COPY)"};
  } else if (locked) {
    auto unlocked = unlock_with_ssh_keygen(*text, path);
    if (!unlocked) {
      key = Failure{unlocked.why()};
    } else {
      key = parse_secret_key(*unlocked, path);
      wipe(unlocked->data(), unlocked->size());
    }
  }
  wipe(text->data(), text->size());
  return key;
}

Result<SealFrame> parse_seal_frame(std::string_view payload) {
  if (payload.empty()) return Failure{"seal frame is empty"};
  SealFrame seal;
  seal.scheme = static_cast<std::uint8_t>(payload[0]);
  if (seal.scheme != kSchemeEd25519)
    return Failure{"seal frame names scheme " + std::to_string(seal.scheme) + ", which this terse does not know"};
  // Later versions may append fields; all of it is bound to every frame.
  if (payload.size() < kSealPayloadBytes || payload.size() > 256) return Failure{"seal frame has the wrong size"};
  const char* p = payload.data() + 1;
  std::memcpy(seal.file_id.data(), p, kFileIdBytes);
  p += kFileIdBytes;
  std::memcpy(seal.recipient.data(), p, kPublicKeyBytes);
  p += kPublicKeyBytes;
  std::memcpy(seal.sealed_key.data(), p, kSealedKeyBytes);
  p += kSealedKeyBytes;
  seal.run_id = wire::get_le<std::uint64_t>(reinterpret_cast<const unsigned char*>(p));
  p += 8;
  if (payload.size() >= kSignedSealPayloadBytes) {
    seal.signed_by_writer = true;
    std::memcpy(seal.signer.data(), p, kPublicKeyBytes);
    seal.signature_valid = verify_signature(payload, seal.signer);
  } else if (payload.size() != kSealPayloadBytes) {
    return Failure{"seal frame has the wrong size"};
  }
  seal.payload = std::string(payload);
  return seal;
}

}  // namespace terse::seal
