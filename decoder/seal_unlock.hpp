// A private key file protected by a passphrase, unlocked by OpenSSH's own
// ssh-keygen: its KDF (bcrypt_pbkdf) and ciphers are not libsodium's, and
// terse does not write cryptography of its own.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <terse/result.hpp>

namespace terse::seal {

// The key file's text without its passphrase. ssh-keygen asks for the
// passphrase itself, on the terminal or through SSH_ASKPASS; the unlocked
// copy lives in memory (Linux) or in a private temporary folder, and is
// wiped before this returns. `what` names the file in errors.
Result<std::string> unlock_with_ssh_keygen(std::string_view locked_text, const std::string& what);

// Zeroes key material where the compiler cannot drop the stores (seal.cpp).
void wipe(void* bytes, std::size_t size) noexcept;

}  // namespace terse::seal
