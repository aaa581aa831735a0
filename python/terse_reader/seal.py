"""Sealed files (FORMAT.md §11): OpenSSH ed25519 keys, the seal frame and the opening of frames.

Key files and fingerprints need only the standard library; opening a file needs PyNaCl
(libsodium), imported only when a sealed file is opened, so that plain files read without it.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import os
import struct
from typing import Any, Sequence

from .errors import TerseReadError

KEY_TYPE = b"ssh-ed25519"
PRIVATE_BEGIN = b"-----BEGIN OPENSSH PRIVATE KEY-----"
PRIVATE_END = b"-----END OPENSSH PRIVATE KEY-----"
PRIVATE_MAGIC = b"openssh-key-v1\x00"
MOST_KEY_FILE_BYTES = 64 << 10

SCHEME_ED25519 = 1
FILE_ID_BYTES = 16
PUBLIC_KEY_BYTES = 32
SEALED_KEY_BYTES = 80
SEAL_PAYLOAD_BYTES = 1 + FILE_ID_BYTES + PUBLIC_KEY_BYTES + SEALED_KEY_BYTES + 8  # 137
SIGNATURE_BYTES = 64
SIGNED_SEAL_PAYLOAD_BYTES = SEAL_PAYLOAD_BYTES + PUBLIC_KEY_BYTES + SIGNATURE_BYTES  # 233
# A context of its own, so that a writer's signature means nothing anywhere else (§11.1).
SIGNATURE_CONTEXT = b"terse seal frame\n"
MOST_SEAL_PAYLOAD_BYTES = 256
COUNTER_BYTES = 8
TAG_BYTES = 16
OVERHEAD_BYTES = COUNTER_BYTES + TAG_BYTES

NACL_MISSING = "needs PyNaCl (Debian: python3-nacl; pip: pynacl, or terse-reader[sealed]), which is not installed"


def nacl_bindings() -> Any:
    """PyNaCl's libsodium bindings, or None where PyNaCl is not installed."""
    try:
        import nacl.bindings
    except ImportError:
        return None
    return nacl.bindings


def _crypto_error() -> tuple[type[Exception], ...]:
    from nacl.exceptions import CryptoError

    # PyNaCl raises the builtin ValueError for some inputs of the wrong size.
    return CryptoError, ValueError


def _public_blob(public_key: bytes) -> bytes:
    return _ssh_string(KEY_TYPE) + _ssh_string(public_key)


def _ssh_string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def fingerprint(public_key: bytes) -> str:
    """``SHA256:…``, as ``ssh-keygen -l`` prints it, of a 32-byte Ed25519 public key."""
    digest = hashlib.sha256(_public_blob(bytes(public_key))).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


@dataclasses.dataclass(frozen=True, repr=False)
class SecretKey:
    """An Ed25519 private key as OpenSSH stores it: ``secret`` is libsodium's 64 bytes (the
    seed, then ``public_key``)."""

    public_key: bytes
    secret: bytes
    comment: str = ""
    path: str = ""

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)

    def __repr__(self) -> str:
        # The secret stays out of tracebacks and logs.
        return f"SecretKey({self.fingerprint}, comment={self.comment!r}, path={self.path!r})"


class _SshReader:
    """OpenSSH's wire strings (a u32 big-endian length, then the bytes); None when cut short."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def u32(self) -> int | None:
        if len(self.data) - self.pos < 4:
            return None
        (value,) = struct.unpack_from(">I", self.data, self.pos)
        self.pos += 4
        return int(value)

    def string(self) -> bytes | None:
        n = self.u32()
        if n is None or n > len(self.data) - self.pos:
            return None
        start = self.pos
        self.pos += n
        return self.data[start : self.pos]


def _ed25519_of_blob(blob: bytes, what: str) -> bytes:
    r = _SshReader(blob)
    key_type, key = r.string(), r.string()
    if key_type is None or key is None:
        raise TerseReadError(f"{what}: the public key is cut short")
    if key_type != KEY_TYPE:
        raise TerseReadError(f"{what}: a key of type {key_type.decode('ascii', 'replace')}; sealed logs take "
                             "ssh-ed25519 keys (ssh-keygen -t ed25519, or terse keygen)")
    if len(key) != PUBLIC_KEY_BYTES:
        raise TerseReadError(f"{what}: the ed25519 key is not 32 bytes")
    return key


def parse_key(text: bytes, what: str) -> SecretKey:
    """The key of an OpenSSH private key file's text (PROTOCOL.key, openssh-key-v1, one key,
    no passphrase); ``what`` names the file in the messages of the ``TerseReadError`` raised."""
    stripped = text.strip()
    if stripped.startswith((b"ssh-", b"ecdsa-", b"sk-")):
        raise TerseReadError(f"{what}: a public key; reading a sealed log takes the private key "
                             "(the file without .pub)")
    begin, end = text.find(PRIVATE_BEGIN), text.find(PRIVATE_END)
    if begin < 0 or end < begin:
        raise TerseReadError(f"{what}: not an OpenSSH private key (no BEGIN/END OPENSSH PRIVATE KEY lines)")
    body = b"".join(text[begin + len(PRIVATE_BEGIN) : end].split())
    try:
        data = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        raise TerseReadError(f"{what}: the key's base64 text is damaged or cut short") from None
    cut = TerseReadError(f"{what}: the private key is cut short or damaged")
    if not data.startswith(PRIVATE_MAGIC):
        raise TerseReadError(f"{what}: not an openssh-key-v1 private key")
    r = _SshReader(data[len(PRIVATE_MAGIC) :])
    cipher, kdf, kdf_options, count = r.string(), r.string(), r.string(), r.u32()
    if cipher is None or kdf is None or kdf_options is None or count is None:
        raise cut
    if cipher != b"none":
        raise _Locked(f"{what}{_LOCKED}")
    if count != 1:
        raise TerseReadError(f"{what}: the file holds {count} keys; terse_reader takes one")
    public_blob, section = r.string(), r.string()
    if public_blob is None or section is None:
        raise cut
    public_key = _ed25519_of_blob(public_blob, what)
    p = _SshReader(section)
    check1, check2 = p.u32(), p.u32()
    key_type, pk, sk, comment = p.string(), p.string(), p.string(), p.string()
    if check1 is None or check2 is None or key_type is None or pk is None or sk is None or comment is None:
        raise cut
    if check1 != check2:
        raise TerseReadError(f"{what}: the private key's check numbers differ (damaged)")
    if key_type != KEY_TYPE or pk != public_key or len(sk) != 64 or sk[32:] != public_key:
        raise TerseReadError(f"{what}: the private key does not match its public key (damaged)")
    sodium = nacl_bindings()
    # Without PyNaCl the seed cannot be checked here; opening a file needs PyNaCl anyway.
    if sodium is not None:
        derived, _ = sodium.crypto_sign_seed_keypair(sk[:32])
        if derived != public_key:
            raise TerseReadError(f"{what}: the private key does not match its public key (damaged)")
    return SecretKey(public_key, sk, comment.decode("utf-8", "replace"), what)


_LOCKED = ": the private key is protected by a passphrase"


class _Locked(TerseReadError):
    """What ``parse_key`` raises for a key protected by a passphrase, which ``load_key`` then
    has ssh-keygen unlock."""


def _unlock_with_ssh_keygen(locked: bytes, what: str) -> bytes:
    """The key file's text without its passphrase, as the C++ reader gets it:
    ssh-keygen rewrites a private copy (in memory on Linux), asking for the passphrase on the
    terminal or through SSH_ASKPASS; its KDF and cipher are not libsodium's."""
    import fcntl
    import subprocess
    import tempfile

    def above_standard(fd: int) -> int:
        # In a process that closed its standard input, the copy could be descriptor 0, which the
        # child's /dev/null would replace.
        if fd > 2:
            return fd
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
        os.close(fd)
        return moved

    fd, folder = -1, None
    if hasattr(os, "memfd_create"):
        fd = above_standard(os.memfd_create("terse-key", os.MFD_CLOEXEC))
        copy = f"/dev/fd/{fd}"
    else:
        folder = tempfile.mkdtemp(prefix="terse-key-")
        copy = os.path.join(folder, "key")
        fd = above_standard(os.open(copy, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, locked)
        try:
            # No standard input: a prompt goes to the terminal, or SSH_ASKPASS answers it.
            done = subprocess.run(["ssh-keygen", "-p", "-N", "", "-f", copy], pass_fds=(fd,) if folder is None else (),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except OSError as exc:
            raise TerseReadError(f"{what}{_LOCKED}; terse_reader unlocks such keys with ssh-keygen "
                                 f"(Debian: openssh-client), which could not run: {exc.strerror or exc}") from None
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").replace(copy, what)
            lines = [line for line in said.replace("\r", "\n").split("\n") if line.strip()]
            why = lines[-1] if lines else "it failed"
            raise TerseReadError(f"{what}{_LOCKED}, and ssh-keygen did not unlock it: {why}")
        os.lseek(fd, 0, os.SEEK_SET)
        size = os.fstat(fd).st_size
        return os.read(fd, size)
    finally:
        size = os.fstat(fd).st_size
        if size:
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, bytes(size))
        os.ftruncate(fd, 0)
        os.close(fd)
        if folder is not None:
            os.unlink(copy)
            os.rmdir(folder)


def _read_key_file(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            text = f.read(MOST_KEY_FILE_BYTES + 1)
    except OSError as exc:
        raise TerseReadError(f"cannot read key file {path}: {exc.strerror or exc}") from None
    if len(text) > MOST_KEY_FILE_BYTES:
        raise TerseReadError(f"{path} is not a key file (over 64 KiB)")
    return text


def load_key(path: str | os.PathLike[str]) -> SecretKey:
    """Reads an OpenSSH ed25519 private key file (``terse keygen FILE`` or
    ``ssh-keygen -t ed25519``); one protected by a passphrase is unlocked by ssh-keygen, which
    asks for it on the terminal or through SSH_ASKPASS. Raises ``TerseReadError`` naming the file
    when it is not one that opens sealed logs."""
    path = os.fspath(path)
    text = _read_key_file(path)
    try:
        return parse_key(text, path)
    except _Locked:
        return parse_key(_unlock_with_ssh_keygen(text, path), path)


def load_keys(key: Any) -> list[SecretKey]:
    """``read``'s ``key``: a key file's path, a ``SecretKey``, or a list of them; None takes the
    path in ``TERSE_KEY``, as the CLI's ``--key`` does."""
    if key is None:
        env = os.environ.get("TERSE_KEY")
        return [load_key(env)] if env else []
    try:
        items: Sequence[Any] = [key] if isinstance(key, (str, bytes, os.PathLike, SecretKey)) else list(key)
    except TypeError:
        items = [key]
    keys = []
    for item in items:
        if isinstance(item, SecretKey):
            keys.append(item)
        elif isinstance(item, (str, os.PathLike)):
            keys.append(load_key(item))
        else:
            raise TerseReadError(f"key: {item!r} is neither a key file's path nor a terse_reader.SecretKey")
    return keys


@dataclasses.dataclass(frozen=True, repr=False)
class PublicKey:
    """An Ed25519 public key as OpenSSH writes it (``ssh-ed25519 AAAA… comment``): a writer's,
    whose signature a sealed file's seal frame may carry (§11.1)."""

    public_key: bytes
    comment: str = ""
    path: str = ""

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)

    def __repr__(self) -> str:
        return f"PublicKey({self.fingerprint}, comment={self.comment!r}, path={self.path!r})"


def parse_public_key(text: bytes, what: str) -> PublicKey:
    """The key of an OpenSSH public key line, or of a private key file (its public half), as
    the CLI's ``--signer`` takes either; ``what`` names the file in the ``TerseReadError``."""
    stripped = text.strip()
    if PRIVATE_BEGIN in stripped:
        secret = parse_key(stripped, what)
        return PublicKey(secret.public_key, secret.comment, what)
    if not stripped:
        raise TerseReadError(f"{what}: empty, not a key")
    fields = stripped.split(None, 2)
    key_type = fields[0]
    if key_type != KEY_TYPE:
        if key_type.startswith((b"ssh-", b"ecdsa-")):
            raise TerseReadError(f"{what}: a key of type {key_type.decode('ascii', 'replace')}; sealed logs take "
                                 "ssh-ed25519 keys (ssh-keygen -t ed25519, or terse keygen)")
        raise TerseReadError(f"{what}: not an OpenSSH public key (\"ssh-ed25519 AAAA…\")")
    if len(fields) < 2:
        raise TerseReadError(f"{what}: the public key is cut short")
    try:
        blob = base64.b64decode(fields[1], validate=True)
    except (binascii.Error, ValueError):
        raise TerseReadError(f"{what}: the key's base64 text is damaged or cut short") from None
    public_key = _ed25519_of_blob(blob, what)
    sodium = nacl_bindings()
    # Without PyNaCl the point cannot be checked here; checking a signature needs PyNaCl anyway.
    if sodium is not None:
        try:
            sodium.crypto_sign_ed25519_pk_to_curve25519(public_key)
        except _crypto_error():
            raise TerseReadError(f"{what}: not a valid ed25519 public key") from None
    comment = fields[2].strip().decode("utf-8", "replace") if len(fields) > 2 else ""
    return PublicKey(public_key, comment, what)


def load_public_key(path: str | os.PathLike[str]) -> PublicKey:
    """Reads a writer's OpenSSH ed25519 public key file (``KEY.pub``, as ``terse keygen KEY``
    writes it; a private key file gives its public half); raises ``TerseReadError`` naming the
    file when it holds no such key."""
    path = os.fspath(path)
    return parse_public_key(_read_key_file(path), path)


def load_signers(signers: Any) -> list[PublicKey]:
    """``read``'s ``signers``: a public key file's path, a ``PublicKey`` (or a ``SecretKey``, for
    its public half), or a list of them; None takes the path in ``TERSE_SIGNER``, as the CLI's
    ``--signer`` does."""
    if signers is None:
        env = os.environ.get("TERSE_SIGNER")
        return [load_public_key(env)] if env else []
    try:
        items: Sequence[Any] = ([signers] if isinstance(signers, (str, bytes, os.PathLike, PublicKey, SecretKey))
                                else list(signers))
    except TypeError:
        items = [signers]
    keys = []
    for item in items:
        if isinstance(item, PublicKey):
            keys.append(item)
        elif isinstance(item, SecretKey):
            keys.append(PublicKey(item.public_key, item.comment, item.path))
        elif isinstance(item, (str, os.PathLike)):
            keys.append(load_public_key(item))
        else:
            raise TerseReadError(f"signers: {item!r} is neither a public key file's path nor a "
                                 "terse_reader.PublicKey")
    return keys


@dataclasses.dataclass
class SealFrame:
    """§11.1's seal frame, read without any key."""

    scheme: int
    file_id: bytes
    recipient: bytes
    sealed_key: bytes
    run_id: int
    payload: bytes  # whole, as every sealed frame binds it
    # The writer's key when the frame is signed, else empty; whether its signature holds, None
    # where it cannot be checked (no PyNaCl).
    signer: bytes = b""
    signature_valid: bool | None = None


def verify_signature(payload: bytes, signer: bytes) -> bool | None:
    """§11.1: whether the signature in a signed seal frame's payload holds, by ``signer``;
    None without PyNaCl."""
    sodium = nacl_bindings()
    if sodium is None:
        return None
    message = SIGNATURE_CONTEXT + bytes(payload[:SEAL_PAYLOAD_BYTES])
    signature = bytes(payload[SEAL_PAYLOAD_BYTES + PUBLIC_KEY_BYTES : SIGNED_SEAL_PAYLOAD_BYTES])
    # crypto_sign_open takes the signature in front of its message, and checks what
    # crypto_sign_verify_detached checks.
    try:
        sodium.crypto_sign_open(signature + message, bytes(signer))
    except _crypto_error():
        return False
    return True


def parse_seal_frame(payload: bytes) -> SealFrame:
    """Raises ``ValueError`` with the reason when the payload is not one this reader knows."""
    if not payload:
        raise ValueError("seal frame is empty")
    if payload[0] != SCHEME_ED25519:
        raise ValueError(f"seal frame names scheme {payload[0]}, which this reader does not know")
    # A later minor version may append fields; they are bound to every frame all the same.
    if not SEAL_PAYLOAD_BYTES <= len(payload) <= MOST_SEAL_PAYLOAD_BYTES:
        raise ValueError(f"seal frame has the wrong size ({len(payload)} bytes)")
    at = 1
    file_id = payload[at : at + FILE_ID_BYTES]
    at += FILE_ID_BYTES
    recipient = payload[at : at + PUBLIC_KEY_BYTES]
    at += PUBLIC_KEY_BYTES
    sealed_key = payload[at : at + SEALED_KEY_BYTES]
    at += SEALED_KEY_BYTES
    (run_id,) = struct.unpack_from("<Q", payload, at)
    at += 8
    seal = SealFrame(payload[0], file_id, recipient, sealed_key, int(run_id), bytes(payload))
    if len(payload) >= SIGNED_SEAL_PAYLOAD_BYTES:
        seal.signer = bytes(payload[at : at + PUBLIC_KEY_BYTES])
        seal.signature_valid = verify_signature(payload, seal.signer)
    elif len(payload) != SEAL_PAYLOAD_BYTES:
        # A signer without its whole signature.
        raise ValueError(f"seal frame has the wrong size ({len(payload)} bytes)")
    return seal


class FileOpener:
    """One sealed file's key, opened with the private key it was sealed to."""

    def __init__(self, sodium: Any, file_key: bytes, seal_payload: bytes) -> None:
        self._sodium = sodium
        self._file_key = file_key
        self._seal_payload = seal_payload

    @classmethod
    def open(cls, seal: SealFrame, keys: Sequence[SecretKey]) -> "FileOpener":
        """Raises ``ValueError`` saying why the file cannot be opened; its message starts with
        the words that follow "file is"."""
        sealed_to = fingerprint(seal.recipient)
        sodium = nacl_bindings()
        if sodium is None:
            raise ValueError(f"sealed to key {sealed_to}; opening it {NACL_MISSING}")
        key = next((k for k in keys if k.public_key == seal.recipient), None)
        if key is None:
            if not keys:
                raise ValueError(f"sealed to key {sealed_to}; give its private key with key=FILE or TERSE_KEY")
            given = ", ".join(k.fingerprint for k in keys)
            raise ValueError(f"sealed to key {sealed_to}; the key given is {given}, not that one")
        crypto_error = _crypto_error()
        try:
            x_pk = sodium.crypto_sign_ed25519_pk_to_curve25519(key.public_key)
            x_sk = sodium.crypto_sign_ed25519_sk_to_curve25519(key.secret)
        except crypto_error:
            raise ValueError(f"the key {sealed_to} cannot be used for X25519") from None
        try:
            file_key = sodium.crypto_box_seal_open(seal.sealed_key, x_pk, x_sk)
        except crypto_error:
            raise SealChanged(f"sealed to key {sealed_to}, but its file key does not open with it: "
                              "the seal frame was changed") from None
        return cls(sodium, file_key, seal.payload)

    def open_frame(self, header: bytes, stored: bytes) -> tuple[int, bytes] | None:
        """§11.2: the counter and the message of a sealed frame's stored payload, or None when
        it does not authenticate. ``header`` is the frame header as stored (its first 16 bytes
        are bound)."""
        if len(stored) < OVERHEAD_BYTES:
            return None
        (counter,) = struct.unpack_from("<Q", stored)
        nonce = bytes(stored[:COUNTER_BYTES]) + bytes(16)
        ad = bytes(header[:16]) + self._seal_payload
        # PyNaCl takes the ciphertext with its tag behind it: the stored bytes after the counter.
        try:
            message = self._sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(bytes(stored[COUNTER_BYTES:]), ad,
                                                                              nonce, self._file_key)
        except _crypto_error():
            return None
        return int(counter), bytes(message)


class SealChanged(ValueError):
    """The right key, but the seal frame's file key does not open: tampering (§11.5)."""
