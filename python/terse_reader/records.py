"""One stream's frames turned into records (FORMAT.md §3.1, §4–§7.4, §11).

``StreamDecoder`` holds what a file's earlier frames said (dictionary, calibration, open
contexts, frame numbers, the file key of a sealed file) and forgets it at every preamble,
because §6, §7.3 and §11 make each file stand alone.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import math
import struct
from typing import Any, Callable, Iterator, Sequence

from . import dictionary as d
from . import render
from . import seal as sealing
from .errors import Malformed
from .frames import FLAG_SEALED, FLAG_ZSTD, Cursor, Frame, FrameReader, Preamble, decompress
from .values import Budget, read_raw, read_structured, read_top_level, scalar_from_raw

INFO, CALIBRATION, DICTIONARY, RECORDS, FLIGHT, RECORDS_COLUMNAR, FLIGHT_COLUMNAR, SEAL, END = range(1, 10)
RECORD_TYPES = (RECORDS, FLIGHT, RECORDS_COLUMNAR, FLIGHT_COLUMNAR)
MAX_SITES = 1 << 20
MAX_THREADS = 1 << 20
MAX_TEXT_BYTES = 64 << 20
MAX_CONTEXTS = 256
MAX_CONTEXT_TEXT = 4096
MASK64 = (1 << 64) - 1


class Record(dict):  # type: ignore[type-arg]
    """A record: exactly the keys and values of ``terse cat -o json``'s object for it (plus
    ``"rendered_exactly": False`` where the message may differ from fmt's), and what the text
    output needs besides."""

    time_ns: int
    ticks: int
    notes: list[str]
    context_text: str
    # A §7 kind 3 report, whose count is its message: the text line adds no " [N suppressed]".
    suppressed_report: bool = False

    utc: bool = False

    def text(self, utc: bool | None = None) -> str:
        """The line ``terse cat`` prints for the record (as with ``--utc`` when ``utc``; by
        default as the record was read)."""
        utc = self.utc if utc is None else utc
        when = text_time(self.time_ns, utc)
        level = self["level"] + (" (flight)" if self.get("flight") else "")
        line = f"{when} {level} [{self['thread']}] {self['file']}:{self['line']} {self['message']}"
        if self.get("suppressed") and not self.suppressed_report:
            line += f" [{self['suppressed']} suppressed]"
        if self.context_text:
            line += " {" + self.context_text + "}"
        return line


def text_time(unix_ns: int, utc: bool) -> str:
    seconds, ns = divmod(unix_ns, 10**9)
    y, mo, dd, h, mi, s = render.civil(seconds + (0 if utc else render.utc_offset(seconds)))
    return f"{y:04d}-{mo:02d}-{dd:02d} {h:02d}:{mi:02d}:{s:02d}.{ns:09d}"


LIMIT_NS = 9.2e18  # times are clamped inside int64, with room for rounding (§5)
INT64_MAX = (1 << 63) - 1


def _round_away(x: float) -> int:
    """llround: half away from zero."""
    r = math.trunc(x)
    if abs(x - r) >= 0.5:
        r += 1 if x > 0 else -1
    return r


def _signed64(v: int) -> int:
    v &= MASK64
    return v - (1 << 64) if v >> 63 else v


def _before(a: int, b: int) -> bool:
    """Tick order as §5 compares ticks: by their difference modulo 2^64, read as signed."""
    return _signed64(a - b) < 0


class Calibration:
    __slots__ = ("ticks", "unix_ns", "rate")

    def __init__(self, ticks: int, unix_ns: int, rate: float) -> None:
        self.ticks, self.unix_ns, self.rate = ticks, unix_ns, rate


class Clock:
    """§5: the last four calibration frames of a file, interpolated between where their line
    agrees with the later frame's rate."""

    def __init__(self) -> None:
        self.frames: list[Calibration] = []

    def add(self, cal: Calibration) -> None:
        frames = self.frames
        if frames and frames[-1].ticks == cal.ticks:
            frames.pop()
        if frames and not _before(frames[-1].ticks, cal.ticks):
            frames.clear()
        frames.append(cal)
        del frames[:-4]

    @property
    def calibrated(self) -> bool:
        return bool(self.frames)

    def convert(self, ticks: int) -> int:
        frames = self.frames
        if not frames:
            return ticks & INT64_MAX  # raw ticks, shown as if they were nanoseconds
        at = len(frames) - 1
        while at > 0 and _before(ticks, frames[at].ticks):
            at -= 1
        if at + 1 < len(frames) and not _before(ticks, frames[at].ticks):
            a, b = frames[at], frames[at + 1]
            # A b on a's line (what the writer writes) gives that line: the two
            # computations round differently, and the records read before b had only a.
            if b.unix_ns > a.unix_ns and b.unix_ns != self._along(a, b.ticks):
                span_ns = b.unix_ns - a.unix_ns
                span_ticks = float((b.ticks - a.ticks) & MASK64)
                rate = span_ticks * 1e9 / float(span_ns)
                if abs(rate - b.rate) <= b.rate * 0.01:
                    offset = float((ticks - a.ticks) & MASK64) * float(span_ns) / span_ticks
                    return a.unix_ns + min(_round_away(min(max(offset, 0.0), LIMIT_NS)), span_ns)
        return self._along(frames[at], ticks)

    @staticmethod
    def _along(point: Calibration, ticks: int) -> int:
        delta = float(_signed64(ticks - point.ticks)) * 1e9 / point.rate
        when = float(point.unix_ns) + delta
        if not when > -LIMIT_NS:
            return int(-LIMIT_NS)
        if not when < LIMIT_NS:
            return int(LIMIT_NS)
        return point.unix_ns + _round_away(min(max(delta, -LIMIT_NS), LIMIT_NS))


@dataclasses.dataclass
class SealedFile:
    """A sealed file opened with its key and read to its end (§11): its file id, the id of the
    file its writer closed before it (info key 10, §4; "" for none), both in hex, and whether
    it ends with its end frame. ``terse verify`` follows these to find a run's file whose end
    was cut off; this reader only gives them."""

    file_id: str
    previous: str = ""
    ended: bool = False
    # The fingerprint of the writer whose signature of the seal frame held (§11.1); "" for none.
    signed_by: str = ""


class StreamDecoder:
    """Decodes one stream (a file, or files concatenated); problems go to ``report``, called
    as ``report(source, offset, reason)``, or with two more arguments, ``tampering`` and
    ``torn_tail`` (``Problem``'s), where either is true. ``keys`` open sealed files (§11);
    ``sealed_files`` lists those opened, once read. ``signers`` are the writers' public keys
    of which one must have signed each sealed file (§11.1); ``signed_by`` lists the fingerprints
    of those whose signatures held, with the key or without."""

    def __init__(self, data: bytes, source: str, report: Callable[..., None],
                 utc: bool = False, keys: Sequence[sealing.SecretKey] = (),
                 signers: Sequence[sealing.PublicKey] = ()) -> None:
        self.data = data
        self.source = source
        self._report = report
        self.utc = utc
        self.keys = list(keys)
        self.signers = [k.public_key for k in signers]
        self.info: dict[int, Any] = {}
        self.frames_read = 0
        self.torn_tail = False
        # The fingerprints of the keys this stream's sealed files were sealed to.
        self.sealed_to: list[str] = []
        self.sealed_files: list[SealedFile] = []
        self.signed_by: list[str] = []
        self.reader: FrameReader | None = None
        # §3.1 tells frames lost to damage from missing ones by whether anything was lost
        # since the last numbered frame; as the reference reader, across files of a stream.
        self.lost_payloads = 0
        self.losses_at_number = 0
        self._reset()

    def report(self, offset: int, reason: str) -> None:
        """A problem inside a frame that was read whole: what its writer wrote, so never
        tampering, not even in a sealed file whose frame authenticated (§11.5)."""
        self._report(self.source, offset, reason)

    def report_frame(self, offset: int, reason: str) -> None:
        """A problem with the file's frames themselves (their bytes, their order): tampering once
        a key has opened the file (§11.5), as the writer never leaves them so."""
        if self.opener is not None:
            self.report_tampering(offset, reason)
        else:
            self._report(self.source, offset, reason)

    def report_tampering(self, offset: int, reason: str) -> None:
        self._report(self.source, offset, "tampering: " + reason, True, False)

    def _reset(self) -> None:
        self.sites: dict[int, d.Site] = {}
        self.threads: dict[int, d.Thread] = {}
        self.texts: dict[int, bytes] = {}
        self.text_bytes = 0
        self.clock = Clock()
        self.contexts: dict[int, list[list[Any]]] = {}
        self.flight_contexts: dict[int, list[list[Any]]] = {}
        self.in_flight_run = False
        self.highest = 0
        # Runs of numbers skipped so far, each (first, last, offset of the frame that skipped
        # them), by first; a later frame out of order takes its number out of its run.
        self.gaps: list[tuple[int, int, int]] = []
        self.unknown_frames = 0
        self.reported_sites: set[int] = set()
        self.no_clock_reported = False
        # The preamble's major version, 0 when it does not say (§2: a bad checksum).
        self.version_major = 0
        # §11: whether the file has a seal frame, its opener once a key given opened it, and
        # whether its end frame came.
        self.frames_in_file = 0
        self.file_sealed = False
        self.opener: sealing.FileOpener | None = None
        self.sealed_file: SealedFile | None = None
        self.file_ended = False
        self.info_opened = False

    def records(self) -> Iterator[Record]:
        # Payloads are decompressed here, after a sealed one has authenticated, so that one that
        # does not decompress is reported as what its writer wrote.
        reader = self.reader = FrameReader(self.data, self.report_frame, decompress=False)
        for item in reader:
            if isinstance(item, Preamble):
                self._end_of_file(item.offset + 16)
                self._reset()
                self.version_major = item.major if item.checked else 0
                continue
            self.frames_read += 1
            frame = self._unsealed(item)
            if frame is not None:
                yield from self._frame(frame)
        self._end_of_file(len(self.data))
        self.torn_tail = self.torn_tail or reader.torn_tail

    def _payload(self, frame: Frame) -> bytes | None:
        """The frame's payload decompressed (§3); None, reported, when it does not decompress."""
        if not frame.flags & FLAG_ZSTD:
            return frame.payload
        try:
            return decompress(frame.payload, frame.raw_size)
        except Malformed as exc:
            self.lost_payloads += 1
            self.report(frame.offset, f"{exc}; frame skipped")
            return None

    # ---- sealed files (§11) -------------------------------------------------------------

    def _end_of_file(self, offset: int) -> None:
        if self.opener is not None and self.sealed_file is not None:
            self.sealed_file.ended = self.file_ended
            self.sealed_files.append(self.sealed_file)
            self.sealed_file = None
        if self.opener is not None and not self.file_ended:
            self.file_ended = True  # said once
            self.torn_tail = True
            self._report(self.source, offset, "sealed file has no end frame: its writer did not close it (killed "
                         "or crashed) or its end was cut off", False, True)
        self._report_missing_frames()

    def _seal(self, frame: Frame) -> None:
        self.file_sealed = True
        if frame.flags & (FLAG_ZSTD | FLAG_SEALED):
            why = "seal frame is compressed or sealed itself"
        else:
            try:
                seal = sealing.parse_seal_frame(frame.payload)
            except ValueError as exc:
                why = str(exc)
            else:
                to = sealing.fingerprint(seal.recipient)
                if to not in self.sealed_to:
                    self.sealed_to.append(to)
                try:
                    self.opener = sealing.FileOpener.open(seal, self.keys)
                except sealing.SealChanged as exc:
                    # The key it names was given and does not open it.
                    self._check_signature(frame, seal)
                    self.report_tampering(frame.offset, f"file is {exc}")
                    return
                except ValueError as exc:
                    # With keys given, none of them this file's, its contents cannot be checked:
                    # a problem; with none given, only a notice of which key it needs.
                    self._check_signature(frame, seal)
                    self.report(frame.offset, f"file is {exc}" + ("" if self.keys else "; its records are not shown"))
                    return
                self.sealed_file = SealedFile(seal.file_id.hex())
                self._check_signature(frame, seal)
                if 0 < self.version_major < 3:
                    self.report_tampering(frame.offset, f"a seal frame in a file of format {self.version_major}.x, "
                                          "which has none")
                return
        self.report(frame.offset, f"file is sealed but its seal frame cannot be read ({why}); "
                    "its records are not shown")

    def _check_signature(self, frame: Frame, seal: sealing.SealFrame) -> None:
        """§11.1: who signed the seal, and whether it is a writer asked for. As the reference
        reader, tampering once a key has opened the file, and damage where none did."""
        if not seal.signer:
            if self.signers:
                self.report_frame(frame.offset, "the file is not signed, and a writer's signature was asked for "
                                  "(--signer)")
            return
        by = sealing.fingerprint(seal.signer)
        if seal.signature_valid is None:
            # Said only where it was asked for: opening the file says already that PyNaCl is missing.
            if self.signers:
                self.report_frame(frame.offset, f"the seal frame's signature by {by} cannot be checked: checking "
                                  f"it {sealing.NACL_MISSING}")
            return
        if not seal.signature_valid:
            self.report_frame(frame.offset, f"the seal frame's signature by {by} does not hold")
            return
        if by not in self.signed_by:
            self.signed_by.append(by)
        if self.sealed_file is not None:
            self.sealed_file.signed_by = by
        if self.signers and seal.signer not in self.signers:
            self.report_frame(frame.offset, f"the file is signed by {by}, not by a writer asked for (--signer)")

    def _unsealed(self, frame: Frame) -> Frame | None:
        """The frame as its type would have stored it, opened where the file is sealed (§11.2);
        None for a frame passed over (no key) or reported."""
        first = self.frames_in_file == 0
        self.frames_in_file += 1
        if first and self.version_major == 3 and frame.type != SEAL:
            # §11: only a sealed file is 3.x. Nothing was opened, so this is no tampering.
            self.report_frame(frame.offset, "a file of format 3.x that does not start with its seal frame")
        if frame.type == SEAL:
            if first:
                self._seal(frame)
            else:
                self.report_frame(frame.offset, "a seal frame inside the file, not at its start; skipped")
            return None
        sealed = bool(frame.flags & FLAG_SEALED)
        if self.file_ended and self.opener is not None:
            self.report_tampering(frame.offset, "a frame after the end frame of a sealed file; skipped")
            return None
        if not self.file_sealed:
            if not sealed:
                return frame
            self.file_sealed = True  # said once: every frame after is sealed too
            self.report(frame.offset, "sealed frames, but the file's seal frame is missing or damaged: "
                        "they cannot be opened")
        if self.opener is None:
            return None
        if not sealed:
            self.report_tampering(frame.offset, "a frame in the clear inside a sealed file; skipped")
            return None
        opened = self.opener.open_frame(frame.header, frame.payload)
        if opened is None:
            self.lost_payloads += 1
            self.report_tampering(frame.offset, "frame fails authentication: it was changed after it was written; "
                                  "skipped")
            return None
        counter, message = opened
        if not frame.flags & FLAG_ZSTD and len(message) != frame.raw_size:
            self.lost_payloads += 1
            self.report_tampering(frame.offset, "sealed frame's size differs from its header; skipped")
            return None
        # The info frame carries no frame number (§3.1): counter 0 is what places it (§11.3).
        if frame.type == INFO:
            if counter != 0 or self.info_opened:
                self.report_tampering(frame.offset, "an info frame that is not the file's own, or repeated; skipped")
                return None
        elif not self.info_opened:
            self.report_tampering(frame.offset, "the file's info frame is missing")
        self.info_opened = True
        return Frame(frame.offset, frame.type, message, frame.flags & ~FLAG_SEALED, frame.raw_size, frame.header)

    # ---- frame numbers (§3.1) ---------------------------------------------------------------

    def _number(self, number: int, offset: int) -> bool:
        """Checks a frame's number; False when the frame is a repeat and must be skipped."""
        losses = (self.reader.losses if self.reader is not None else 0) + self.lost_payloads
        lost_since = losses != self.losses_at_number
        self.losses_at_number = losses
        unknown, self.unknown_frames = self.unknown_frames, 0
        if number > self.highest:
            skipped = number - self.highest - 1
            # Numbers that damage or frames of unknown types may have taken are not missing.
            if skipped > unknown and not lost_since:
                bisect.insort(self.gaps, (self.highest + 1, number - 1, offset))
            self.highest = number
            return True
        at = bisect.bisect_right(self.gaps, (number, MASK64, MASK64)) - 1
        if at < 0 or self.gaps[at][1] < number:
            self.report_frame(offset, f"frame {number} repeats an earlier frame of the file; skipped")
            return False
        first, last, skipped_at = self.gaps.pop(at)
        if number < last:
            bisect.insort(self.gaps, (number + 1, last, skipped_at))
        if first < number:
            bisect.insort(self.gaps, (first, number - 1, skipped_at))
        self.report_frame(offset, f"frame {number} is out of order: it comes after frame {self.highest}")
        return True

    def _report_missing_frames(self) -> None:
        """At the end of a file: the numbers no frame of it had, as runs."""
        for first, last, offset in self.gaps:
            which = f"frame {first} is" if first == last else f"frames {first} to {last} are"
            self.report_frame(offset, f"{which} missing before the frame at this offset")
        self.gaps = []

    # ---- frames -------------------------------------------------------------------------

    def _frame(self, frame: Frame) -> Iterator[Record]:
        t = frame.type
        if t > END or t == 0:
            # Newer writers may add types (§10): skipped as stored, never decompressed. Type 0
            # is reserved, never a newer type, so no frame number can have gone to it (§3.1).
            if t > END:
                self.unknown_frames += 1
            self.in_flight_run = False
            return
        payload = self._payload(frame)
        if payload is None:
            return
        frame = Frame(frame.offset, t, payload, frame.flags & ~FLAG_ZSTD, frame.raw_size, frame.header)
        if t == INFO:
            self._info(frame.payload)
            self.in_flight_run = False
        elif t == CALIBRATION:
            self._calibration(frame)
        elif t == DICTIONARY:
            self._dictionary(frame)
        elif t in RECORD_TYPES:
            flight = t in (FLIGHT, FLIGHT_COLUMNAR)
            if flight and not self.in_flight_run:
                self.flight_contexts = {}
            self.in_flight_run = flight
            yield from self._records(frame, flight, t in (RECORDS_COLUMNAR, FLIGHT_COLUMNAR))
        elif t == END:
            self._end(frame)
            self.in_flight_run = False

    def _end(self, frame: Frame) -> None:
        """§11.4; like the reference reader, read wherever it comes: outside an opened sealed
        file its end changes nothing. Without a number it still ends the file."""
        try:
            number: int | None = Cursor(frame.payload).varint()
        except Malformed:
            number = None
        if number is None or self._number(number, frame.offset):
            self.file_ended = True

    def _info(self, payload: bytes) -> None:
        cur = Cursor(payload)
        try:
            while cur.left():
                key = cur.u8()
                value = cur.take(cur.varint())
                if key in (2, 5, 7):
                    self.info[key] = Cursor(value).varint()
                elif key == 9 and len(value) == 8:
                    self.info[key] = struct.unpack("<Q", value)[0]
                elif key == 10:
                    # Authenticated only in a sealed file opened with its key.
                    if self.sealed_file is not None and len(value) == sealing.FILE_ID_BYTES:
                        self.sealed_file.previous = self.info[key] = value.hex()
                else:
                    self.info[key] = value.decode("utf-8", "replace")
        except Malformed:
            pass  # §4: the info frame changes nothing in how records decode

    def _calibration(self, frame: Frame) -> None:
        # The number first: a frame whose contents are malformed still took its number.
        if len(frame.payload) > 24:
            try:
                number: int | None = Cursor(frame.payload, 24).varint()
            except Malformed:
                number = None  # bytes after offset 24 other than a number are ignored (§5)
            if number is not None and not self._number(number, frame.offset):
                return
        cur = Cursor(frame.payload)
        try:
            ticks, unix_ns, rate = cur.u64(), cur.i64(), cur.f64()
        except Malformed:
            self.report(frame.offset, "calibration frame shorter than 24 bytes")
            return
        if not (math.isfinite(rate) and rate > 0):
            self.report(frame.offset, f"calibration frame with rate {rate}")
            return
        self.clock.add(Calibration(ticks, unix_ns, rate))

    def _dictionary(self, frame: Frame) -> None:
        cur = Cursor(frame.payload)
        first = True
        while cur.left():
            at = cur.pos
            try:
                kind = cur.u8()
                body = cur.take(cur.varint())
            except Malformed:
                self.report(frame.offset, f"dictionary entry at payload offset {at} runs past the payload")
                return
            try:
                if kind == 4 and first:
                    try:
                        number: int | None = Cursor(body).varint()
                    except Malformed:
                        number = None  # then it is no number, and the frame is not counted
                    if number is not None and not self._number(number, frame.offset):
                        return
                elif kind == 1:
                    site = d.parse_site(body)
                    if site.site_id not in self.sites and len(self.sites) >= MAX_SITES:
                        self.report(frame.offset, "over 2^20 call sites; entry dropped")
                    else:
                        self.sites[site.site_id] = site
                        self.reported_sites.discard(site.site_id)
                elif kind == 2:
                    thread = d.parse_thread(body)
                    if thread.index not in self.threads and len(self.threads) >= MAX_THREADS:
                        self.report(frame.offset, "over 2^20 threads; entry dropped")
                    else:
                        self.threads[thread.index] = thread
                elif kind == 3:
                    tc = Cursor(body)
                    text_id = tc.varint()
                    data = tc.text(limit=MAX_TEXT_BYTES)
                    if self.text_bytes + len(data) > MAX_TEXT_BYTES:
                        self.report(frame.offset, "text entries over 64 MiB in this file; entry dropped")
                    else:
                        self.text_bytes += len(data)
                        self.texts[text_id] = data
            except Malformed as exc:
                self.report(frame.offset, f"malformed dictionary entry of kind {kind}: {exc}")
            first = False

    # ---- records ------------------------------------------------------------------------

    def _thread_shown(self, index: int) -> int:
        thread = self.threads.get(index)
        return thread.os_tid if thread is not None and thread.os_tid else index

    @staticmethod
    def _records_number(cur: Cursor, columnar: bool) -> int | None:
        """The frame's number (§3.1), from its first row, read ahead of the rows: a frame that
        repeats an earlier one is skipped before anything in it is reported."""
        peek = Cursor(cur.data, cur.pos, cur.end)
        try:
            if peek.varint() != 0:
                return None
            peek.varint()
            if not columnar:
                peek.varint()
            args = peek.take(peek.varint())
            return Cursor(args, 1).varint() if args[:1] == b"\x02" else None
        except Malformed:
            return None

    def _records(self, frame: Frame, flight: bool, columnar: bool) -> Iterator[Record]:
        cur = Cursor(frame.payload)
        try:
            ticks = cur.u64()
            column = None
            if columnar:
                tick_bytes = cur.varint()
                column = Cursor(cur.take(tick_bytes))
        except Malformed:
            self.report(frame.offset, "records frame too short")
            return
        number = self._records_number(cur, columnar)
        if number is not None and not self._number(number, frame.offset):
            return
        if not self.clock.calibrated and not self.no_clock_reported:
            self.no_clock_reported = True
            self.report(frame.offset, "records before any clock calibration; times are raw ticks")
        prev: dict[int, list[int]] = {}
        chain_broken: set[int] = set()
        contexts = self.flight_contexts if flight else self.contexts
        index = 0
        while cur.left():
            if column is not None:
                try:
                    if not column.left():
                        raise Malformed("")
                    delta = column.svarint()
                except Malformed:
                    self.report(frame.offset, f"tick column ends before record {index} (or is garbled there); "
                                "the rest of the frame is skipped")
                    return
            try:
                site_id = cur.varint()
                thread_index = cur.varint()
                if column is None:
                    delta = cur.svarint()
                args = cur.take(cur.varint())
            except Malformed:
                self.report(frame.offset, f"record {index} is malformed; the rest of the frame is skipped")
                return
            ticks = (ticks + delta) & MASK64
            if index == 0 and site_id == 0 and args[:1] == b"\x02":
                index += 1  # the frame's number, checked above
                continue
            index += 1
            if site_id == 0:
                record = self._control(args, thread_index, ticks, flight, contexts, frame.offset)
            else:
                record = self._record(site_id, thread_index, ticks, args, flight, contexts, prev, chain_broken,
                                      frame.offset)
            if record is not None:
                yield record
        if column is not None and column.left():
            self.report(frame.offset, f"tick column holds more ticks than its {index} records")

    def _args(self, site: d.Site, args: bytes, prev: list[int] | None,
              texts: dict[int, bytes]) -> tuple[int, list[Any], list[int], str | None]:
        """Splits ``args`` by the site's tags and undoes the deltas (§7.1), then decodes the
        values. A failure to split raises ``Malformed`` and ends the site's delta chain; a value
        that is wrong inside bytes that split (a structured value that does not match its type
        expression, an unknown text id) comes back as the fourth item and ends nothing."""
        cur = Cursor(args)
        suppressed = cur.varint() if site.limited and prev is not None else 0
        values: list[Any] = []
        raw_now = list(prev) if prev is not None else [0] * len(site.tags)
        later: list[tuple[int, bytes]] = []
        for i, tag in enumerate(site.tags):
            if tag in d.FIXED_WIDTH:
                stored = read_raw(cur, tag)
                previous = raw_now[i]
                if tag in (d.F32, d.F64):
                    raw = stored ^ previous
                else:
                    raw = (stored + previous) & ((1 << (8 * d.FIXED_WIDTH[tag])) - 1)
                raw_now[i] = raw
                values.append(scalar_from_raw(tag, raw))
            elif tag == d.STRUCTURED:
                later.append((i, cur.take(cur.u32())))
                values.append(None)
            elif tag == d.STRING:
                start = cur.pos
                header = cur.u32()
                if header == 0xFFFFFFFE:
                    cur.take(4)
                elif header == 0xFFFFFFFC:
                    cur.take(4)  # §8 (3.1): a patched string's text id, then its patches' size
                    cur.take(cur.u32())
                elif header == 0xFFFFFFFD:
                    cur.take(8)
                    cur.take(cur.u32() & 0x7FFFFFFF)
                elif header != 0xFFFFFFFF:
                    cur.take(header & 0x7FFFFFFF)
                later.append((i, args[start:cur.pos]))
                values.append(None)
            else:
                values.append(read_top_level(cur, tag, texts))
        if cur.left():
            raise Malformed("arguments do not fill args_size")
        budget = Budget()
        try:
            for i, data in later:
                sub = Cursor(data)
                if site.tags[i] == d.STRING:
                    values[i] = read_top_level(sub, d.STRING, texts)
                    continue
                node = site.types[i]
                assert node is not None
                values[i] = read_structured(sub, node, budget)
                if sub.left():
                    raise Malformed(f"structured argument {i} does not fill its size")
        except Malformed as exc:
            return suppressed, values, raw_now, str(exc)
        return suppressed, values, raw_now, None

    def _usable_site(self, site_id: int, offset: int) -> d.Site | None:
        site = self.sites.get(site_id)
        if site is None or site.broken:
            if site_id not in self.reported_sites:
                self.reported_sites.add(site_id)
                why = site.broken if site is not None else "is not in the dictionary"
                self.report(offset, f"records of site {site_id} skipped: {why}")
            return None
        return site

    def _record(self, site_id: int, thread_index: int, ticks: int, args: bytes, flight: bool,
                contexts: dict[int, list[list[Any]]], prev: dict[int, list[int]], chain_broken: set[int],
                offset: int) -> Record | None:
        site = self._usable_site(site_id, offset)
        if site is None:
            return None
        if site_id in chain_broken:
            self.report(offset, f"record of site {site_id} after one that did not match it; skipped")
            return None
        if site.context:
            self.report(offset, f"a record of context site {site_id}; skipped")
            return None
        try:
            suppressed, values, raw_now, wrong = self._args(site, args, prev.get(site_id, [0] * len(site.tags)),
                                                            self.texts)
        except Malformed as exc:
            chain_broken.add(site_id)
            self.report(offset, f"a record of site {site_id} does not match the site's argument types ({exc}); "
                        "its later records in this frame are skipped")
            return None
        prev[site_id] = raw_now
        if wrong is not None:
            self.report(offset, f"a record of site {site_id} has a value that does not match its type ({wrong}); "
                        "skipped")
            return None
        fmt = render.Formatter(self.utc)
        message = self._message(site, values, fmt)
        if site.names and any(site.names):
            json_args: Any = {name or str(i): render.json_value(site.types[i], v, fmt)
                              for i, (name, v) in enumerate(zip(site.names, values))}
        else:
            json_args = [render.json_value(site.types[i], v, fmt) for i, v in enumerate(values)]
        return self._make(ticks, offset, site.level_name, thread_index, site.file, site.line, message, json_args,
                          suppressed, flight, contexts, fmt.notes)

    def _message(self, site: d.Site, values: list[Any], fmt: render.Formatter) -> str:
        if site.parsed_format is None:
            try:
                site.parsed_format = render.parse_format(site.format, len(site.tags), site.names)
            except render.Unformattable as exc:
                site.parsed_format = exc
        try:
            if isinstance(site.parsed_format, render.Unformattable):
                raise site.parsed_format
            return fmt.message(site.parsed_format, values, site.tags, site.types)
        except render.Unformattable:
            # §8's own rendering of such a record: the notes of the failed attempt do not apply.
            fmt.notes.clear()
            parts = [fmt.arg(v, site.tags[i], site.types[i], "", {}) for i, v in enumerate(values)]
            return " | ".join(["<unformattable> " + site.format] + parts)

    def _make(self, ticks: int, offset: int, level: str, thread_index: int, file: str, line: int, message: str,
              args: Any, suppressed: int, flight: bool, contexts: dict[int, list[list[Any]]],
              notes: list[str]) -> Record:
        unix_ns = self.clock.convert(ticks)
        record = Record()
        record.time_ns = unix_ns
        record.ticks = ticks
        record.utc = self.utc
        record["time"] = render.rfc3339(unix_ns, self.utc)
        record["level"] = level
        record["thread"] = self._thread_shown(thread_index)
        record["file"] = file
        record["line"] = line
        record["message"] = message
        record["args"] = args
        if suppressed:
            record["suppressed"] = suppressed
        if flight:
            record["flight"] = True
        fields: dict[str, tuple[Any, str]] = {}
        for _, key, value, text in contexts.get(thread_index, []):
            fields.pop(key, None)
            fields[key] = (value, text)
        if fields:
            record["context"] = {k: v for k, (v, _) in fields.items()}
        record.context_text = " ".join(f"{k}={t}" for k, (_, t) in fields.items())
        if notes:
            record["rendered_exactly"] = False
        record.notes = notes
        return record

    def _control(self, args: bytes, thread_index: int, ticks: int, flight: bool,
                 contexts: dict[int, list[list[Any]]], offset: int) -> Record | None:
        cur = Cursor(args)
        try:
            kind = cur.u8()
            if kind == 1:
                count, first, last = cur.u64(), cur.u64(), cur.u64()
                t = self._thread_shown(thread_index)
                when = [text_time(self.clock.convert(t), self.utc) for t in (first, last)]
                noun = "record" if count == 1 else "records"
                message = f"{count} {noun} dropped on thread {t} between {when[0]} and {when[1]}"
                return self._make(ticks, offset, "warn", thread_index, "terse", 0, message, [count], 0, flight,
                                  contexts, [])
            if kind == 3:
                site_id, count = cur.varint(), cur.varint()
                site = self._usable_site(site_id, offset)
                if site is None:
                    return None
                noun = "call" if count == 1 else "calls"
                message = f"{count} {noun} suppressed after the site's last record"
                record = self._make(ticks, offset, site.level_name, thread_index, site.file, site.line, message,
                                    [], count, flight, contexts, [])
                record.suppressed_report = True
                return record
            if kind == 4:
                self._push(cur, thread_index, contexts, offset)
            elif kind == 5:
                serial = cur.varint()
                open_ = contexts.get(thread_index, [])
                contexts[thread_index] = [c for c in open_ if c[0] != serial]
        except Malformed as exc:
            self.report(offset, f"control record of kind {args[:1].hex()} is malformed ({exc})")
        return None

    def _push(self, cur: Cursor, thread_index: int, contexts: dict[int, list[list[Any]]], offset: int) -> None:
        serial = cur.varint()
        site_id = cur.varint()
        site = self.sites.get(site_id)
        if site is None or not site.context or len(site.tags) != 2 or site.tags[0] != d.STRING or site.broken:
            self.report(offset, f"context push names site {site_id}, which is not a usable context site; ignored")
            return
        _, values, _, wrong = self._args(site, cur.data[cur.pos:cur.end], None, {})
        if wrong is not None:
            raise Malformed(wrong)
        key_value, value = values
        key = render.scalar_json(key_value) or ""
        fmt = render.Formatter(self.utc)
        text = fmt.arg(value, site.tags[1], site.types[1], "", {})
        json_v = render.json_value(site.types[1], value, fmt)
        if len(json.dumps(json_v, ensure_ascii=False, separators=(",", ":")).encode()) > MAX_CONTEXT_TEXT:
            json_v = text[:MAX_CONTEXT_TEXT]  # §7.3: a value too big for JSON is shown as its text
        entry = [serial, key[:MAX_CONTEXT_TEXT], json_v, text[:MAX_CONTEXT_TEXT]]
        open_ = contexts.setdefault(thread_index, [])
        # A push of a serial already open takes the old one's field away and stands last.
        open_[:] = [c for c in open_ if c[0] != serial]
        if len(open_) >= MAX_CONTEXTS:
            self.report(offset, f"thread {thread_index} has over {MAX_CONTEXTS} open contexts; push ignored")
            return
        open_.append(entry)
