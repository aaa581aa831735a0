"""Primitive encodings (FORMAT.md §1) and the frame layer (§2, §3, §9).

The frame layer turns a file's bytes into preambles and verified payloads (decompressed, unless
the caller decompresses them itself). It trusts nothing it has not checked: a header's size is used
only once its checksum is good, and a payload only once its own checksum is, so a damaged frame
costs only itself. Sealed frames (§11) are handed on as stored: only the stream decoder, which
holds the file's key, can open them.
"""

from __future__ import annotations

import dataclasses
import io
import struct
from typing import Callable, Iterator

from .errors import Malformed

MAGIC = b"\x89TLOG\r\n\x1a"
SYNC = b"\xd7TF\xb1"
KNOWN_MAJORS = (1, 2, 3)
FLAG_ZSTD = 0x01
FLAG_SEALED = 0x02  # §11.2
SEAL_OVERHEAD = 24  # counter and tag, §11.2
MAX_RAW = 64 << 20
MAX_STORED = MAX_RAW + MAX_RAW // 128 + 4096


def _crc32c_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data: bytes | memoryview) -> int:
    """CRC-32C (Castagnoli), §1; table-driven because the standard library has none."""
    crc = 0xFFFFFFFF
    table = _CRC_TABLE
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


class Cursor:
    """Reads §1 encodings from a payload; running past its end raises ``Malformed``.

    Every read is bounded by ``end`` so that a length read from a hostile file can only make
    the reader fail, never read another structure's bytes.
    """

    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes, pos: int = 0, end: int | None = None) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    def left(self) -> int:
        return self.end - self.pos

    def take(self, n: int) -> bytes:
        if n < 0 or n > self.end - self.pos:
            raise Malformed("runs past the end")
        start = self.pos
        self.pos += n
        return self.data[start : self.pos]

    def u8(self) -> int:
        if self.pos >= self.end:
            raise Malformed("runs past the end")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def fixed(self, fmt: str, size: int) -> int | float:
        if size > self.end - self.pos:
            raise Malformed("runs past the end")
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return value

    def u16(self) -> int:
        return int(self.fixed("<H", 2))

    def u32(self) -> int:
        return int(self.fixed("<I", 4))

    def u64(self) -> int:
        return int(self.fixed("<Q", 8))

    def i64(self) -> int:
        return int(self.fixed("<q", 8))

    def f64(self) -> float:
        return float(self.fixed("<d", 8))

    def varint(self) -> int:
        value = 0
        for i in range(10):
            if self.pos >= self.end:
                raise Malformed("varint runs past the end")
            byte = self.data[self.pos]
            self.pos += 1
            if i == 9 and byte > 1:
                raise Malformed("varint over 64 bits")
            value |= (byte & 0x7F) << (7 * i)
            if not byte & 0x80:
                return value
        raise Malformed("varint longer than 10 bytes")

    def svarint(self) -> int:
        u = self.varint()
        return (u >> 1) ^ -(u & 1)

    def text(self, limit: int = 1 << 20) -> bytes:
        n = self.varint()
        if n > limit:
            raise Malformed("text over its bound")
        return self.take(n)


@dataclasses.dataclass
class Preamble:
    """``checked``: the preamble's checksum was good. When it was not, ``major`` is the version
    read on as (§2), not one the file states, so no rule that depends on the version applies."""

    offset: int
    major: int
    minor: int
    checked: bool = True


@dataclasses.dataclass
class Frame:
    """A frame whose checksums were good. ``payload`` is decompressed, except in a sealed frame
    (``flags & FLAG_SEALED``), whose payload is the stored one: it must be opened first (§11.2),
    with ``header`` (as stored) and ``raw_size``; and except where the ``FrameReader`` was told
    not to decompress, when ``flags & FLAG_ZSTD`` says that it is still compressed."""

    offset: int
    type: int
    payload: bytes
    flags: int = 0
    raw_size: int = 0
    header: bytes = b""


Report = Callable[[int, str], None]


def decompress(stored: bytes, raw_size: int) -> bytes:
    """One zstd frame that must give exactly ``raw_size`` bytes; reads at most one byte more so
    that a hostile frame cannot make us allocate past the §3 limit."""
    import zstandard

    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(stored), read_across_frames=False)
        out = bytearray()
        while len(out) <= raw_size:
            chunk = reader.read(raw_size + 1 - len(out))
            if not chunk:
                break
            out += chunk
    except Exception as exc:  # zstandard raises ZstdError and, on odd input, ValueError
        raise Malformed(f"zstd payload does not decompress ({exc})") from None
    if len(out) != raw_size:
        raise Malformed(f"zstd payload decompresses to {len(out)} bytes, not raw_size {raw_size}")
    return bytes(out)


def _header_ok(data: bytes, pos: int) -> bool:
    if len(data) - pos < 24 or data[pos : pos + 4] != SYNC:
        return False
    (crc,) = struct.unpack_from("<I", data, pos + 20)
    return crc32c(data[pos : pos + 20]) == crc


class FrameReader:
    """Walks one stream's bytes by §9; ``torn_tail`` says whether it ended inside a write.

    Everything it reports is damage to the frames themselves (§11.5 makes that tampering in a
    sealed file opened with its key). ``decompress=False`` hands compressed payloads on as
    stored, for a caller to whom a payload that does not decompress is damage inside a frame,
    not to it. ``losses`` counts the times bytes that may have held frames were skipped, which
    §3.1 needs to tell frames lost to damage from frames missing."""

    def __init__(self, data: bytes, report: Report, decompress: bool = True) -> None:
        self.data = data
        self.report = report
        self.decompress = decompress
        self.torn_tail = False
        self.losses = 0
        self._found: dict[bytes, int] = {}

    def _next(self, pattern: bytes, start: int) -> int:
        """The next ``pattern`` at or after ``start``, remembered so that a long run of false
        candidates does not rescan the rest of the data for the other pattern each time."""
        found = self._found.get(pattern)
        if found is None or (found != -1 and found < start):
            found = self.data.find(pattern, start)
            self._found[pattern] = found
        return found

    def _resync(self, pos: int, why: str) -> int | None:
        self.losses += 1
        start = pos + 1
        candidates = [i for i in (self._next(SYNC, start), self._next(MAGIC[:4], start)) if i >= 0]
        if not candidates:
            self.report(pos, f"{why}; no frame follows (skipped {len(self.data) - pos} bytes to the end)")
            return None
        found = min(candidates)
        self.report(pos, f"{why}; skipped {found - pos} bytes to offset {found}")
        return found

    def _preamble(self, pos: int) -> Preamble | None:
        """Reads a preamble at ``pos``; None ends the stream (torn, or an unknown major)."""
        data = self.data
        if len(data) - pos < 16:
            self.torn_tail = True
            return None
        major, minor, crc = struct.unpack_from("<HHI", data, pos + 8)
        if crc32c(data[pos : pos + 12]) != crc:
            self.report(pos, f"preamble checksum mismatch; reading on as format {KNOWN_MAJORS[-1]}.x")
            return Preamble(pos, KNOWN_MAJORS[-1], 0, checked=False)
        if major not in KNOWN_MAJORS:
            self.report(
                pos,
                f"format version {major}.{minor} is not supported "
                f"(this decoder reads {KNOWN_MAJORS[0]}.x to {KNOWN_MAJORS[-1]}.x); "
                "use a newer terse",
            )
            return None
        return Preamble(pos, major, minor)

    def __iter__(self) -> Iterator[Preamble | Frame]:
        data = self.data
        size = len(data)
        if size == 0:
            return
        pos: int | None = 0
        if data[:8] == MAGIC[: min(8, size)] and size < 16:
            self.torn_tail = True
            return
        if data[:8] != MAGIC:
            self.report(0, "not a terse log file")
            pos = 0 if data[:4] == SYNC else self._resync(0, "no magic number")
        while pos is not None and pos < size:
            if data[pos : pos + 8] == MAGIC:
                preamble = self._preamble(pos)
                if preamble is None:
                    return
                yield preamble
                pos += 16
                continue
            if size - pos < 24:
                self.torn_tail = True
                return
            if data[pos : pos + 4] != SYNC:
                pos = self._resync(pos, "no frame header (sync marker) where a frame should start")
                continue
            ftype, flags, reserved, stored, raw, pcrc, hcrc = struct.unpack_from("<BBHIIII", data, pos + 4)
            if crc32c(data[pos : pos + 20]) != hcrc:
                pos = self._resync(pos, "frame header checksum mismatch")
                continue
            overhead = SEAL_OVERHEAD if flags & FLAG_SEALED else 0
            if (reserved or flags & ~(FLAG_ZSTD | FLAG_SEALED) or raw > MAX_RAW or stored > MAX_STORED
                    or (not flags & FLAG_ZSTD and stored != raw + overhead)):
                pos = self._resync(pos, "frame header has invalid fields")
                continue
            body = pos + 24
            end = body + stored
            if end > size:
                self.torn_tail = True
                return
            stored_bytes = data[body:end]
            if crc32c(stored_bytes) != pcrc:
                if end == size or _header_ok(data, end) or data[end : end + 8] == MAGIC:
                    self.losses += 1
                    self.report(pos, f"frame payload checksum mismatch (type {ftype}); frame skipped")
                    pos = end
                else:
                    pos = self._resync(pos, f"frame payload checksum mismatch (type {ftype}), and the frame's "
                                       "size is contradicted by what follows it")
                continue
            if flags & FLAG_SEALED:
                yield Frame(pos, ftype, stored_bytes, flags, raw, data[pos : pos + 24])
                pos = end
                continue
            if flags & FLAG_ZSTD and self.decompress:
                try:
                    payload = decompress(stored_bytes, raw)
                except Malformed as exc:
                    self.report(pos, f"{exc}; frame skipped")
                    pos = end
                    continue
            else:
                payload = stored_bytes
            yield Frame(pos, ftype, payload, flags, raw)
            pos = end
