"""Decoded argument values (FORMAT.md §8, §8.1) and their decoding from bytes.

Values keep what rendering needs and a Python float or int cannot hold: which float width a
number had (an f32 prints its own shortest digits), a string's bytes and how it was cut, an f80
exactly. ``to_json`` and ``render`` turn them into what ``terse cat`` prints.
"""

from __future__ import annotations

import dataclasses
import struct
from fractions import Fraction
from typing import Any

from . import dictionary as d
from .errors import Malformed
from .frames import Cursor

MAX_ELEMENTS = 1 << 20
MAX_VALUES = 1 << 24


@dataclasses.dataclass(frozen=True)
class Char:
    byte: int


@dataclasses.dataclass(frozen=True)
class Pointer:
    address: int


@dataclasses.dataclass(frozen=True)
class Float:
    """A binary float of ``bits`` width (32, 64, 80 or 128); ``exact`` is its value, or None for
    inf/nan (then ``value`` says which)."""

    bits: int
    value: float
    exact: Fraction | None
    negative: bool


@dataclasses.dataclass(frozen=True)
class Str:
    data: bytes
    null: bool = False
    truncated: bool = False
    # The original length of a cut string (§8 header 0xFFFFFFFD), else None.
    original: int | None = None


@dataclasses.dataclass
class Seq:
    """A sequence, set or map (then ``items`` are (key, mapped) pairs); ``total`` is the real
    size of a truncated container, else None."""

    items: list[Any]
    total: int | None


@dataclasses.dataclass
class Variant:
    index: int  # -1: valueless
    value: Any


@dataclasses.dataclass
class Optional:
    present: bool
    value: Any


@dataclasses.dataclass
class Private:
    mode: int  # 0 omitted, 1 hashed, 2 clear
    value: Any


@dataclasses.dataclass
class ErrorCode:
    value: int
    category: Str


def float_from_bits(bits: int, raw: int) -> Float:
    if bits == 32:
        value = struct.unpack("<f", struct.pack("<I", raw))[0]
    else:
        value = struct.unpack("<d", struct.pack("<Q", raw))[0]
    negative = bool(raw >> (bits - 1))
    if value != value or value in (float("inf"), float("-inf")):
        return Float(bits, value, None, negative)
    return Float(bits, value, Fraction(value), negative)


def _extended(raw: bytes, bits: int) -> Float:
    """x87 80-bit or IEEE binary128, converted exactly (no platform long double needed)."""
    if bits == 80:
        significand, top = struct.unpack("<QH", raw)
        frac_bits, bias = 63, 16383
        negative = bool(top >> 15)
        exponent = top & 0x7FFF
        if exponent == 0x7FFF:
            special = float("nan") if significand & ((1 << 63) - 1) else float("inf")
            return Float(80, -special if negative else special, None, negative)
        mant = significand
        e = (exponent or 1) - bias - frac_bits
    else:
        lo, hi = struct.unpack("<QQ", raw)
        whole = hi << 64 | lo
        negative = bool(whole >> 127)
        exponent = (whole >> 112) & 0x7FFF
        fraction = whole & ((1 << 112) - 1)
        if exponent == 0x7FFF:
            special = float("nan") if fraction else float("inf")
            return Float(128, -special if negative else special, None, negative)
        mant = fraction | ((1 << 112) if exponent else 0)
        e = (exponent or 1) - 16383 - 112
    exact = Fraction(mant) * (Fraction(2) ** e)
    if negative:
        exact = -exact
    try:
        value = float(exact)
    except OverflowError:
        value = float("-inf") if negative else float("inf")
    return Float(bits, value, exact, negative)


class Budget:
    """The §8.1 per-record bounds on elements and values, so zero-byte elements cannot make a
    small record cost unbounded work."""

    __slots__ = ("elements", "values")

    def __init__(self) -> None:
        self.elements = 0
        self.values = 0

    def value(self) -> None:
        self.values += 1
        if self.values > MAX_VALUES:
            raise Malformed("record holds over 2^24 values")

    def container(self, n: int) -> None:
        self.elements += n
        if self.elements > MAX_ELEMENTS:
            raise Malformed("record holds over 2^20 container elements")


def _int(raw: int, tag: int) -> int:
    width = d.FIXED_WIDTH[tag] * 8
    if tag in d.SIGNED_TAGS and raw >> (width - 1):
        return raw - (1 << width)
    return raw


def scalar_from_raw(tag: int, raw: int) -> Any:
    """A fixed-size scalar from its recovered unsigned bits."""
    if tag in d.INT_TAGS:
        return _int(raw, tag)
    if tag == d.BOOLEAN:
        return raw != 0
    if tag == d.CHARACTER:
        return Char(raw)
    if tag == d.F32:
        return float_from_bits(32, raw)
    if tag == d.F64:
        return float_from_bits(64, raw)
    return Pointer(raw)


def read_raw(cur: Cursor, tag: int) -> int:
    width = d.FIXED_WIDTH[tag]
    return int.from_bytes(cur.take(width), "little")


def _patched(base: bytes, patches: Cursor) -> bytes:
    """A §8 patched string (3.1): ``base``, a text entry's bytes, with each of ``patches``
    applied in turn. Anything that does not make a string raises ``Malformed``, which the
    caller reports like an undefined text id."""
    out = bytearray()
    at = 0
    while patches.left():
        try:
            skip, removed, inserted = patches.varint(), patches.varint(), patches.varint()
        except Malformed:
            raise Malformed("patched string's patches do not fill their size") from None
        if removed == 0 and inserted == 0:
            raise Malformed("patched string holds a patch that neither removes nor inserts")
        # Slicing would stop at the entry's end unasked; §8 makes such a patch malformed.
        if skip > len(base) - at or removed > len(base) - at - skip:
            raise Malformed("patched string's patches reach past its text entry")
        if inserted > patches.left():
            raise Malformed("patched string's patches do not fill their size")
        if len(out) + skip + inserted > 0x7FFFFFFF:
            raise Malformed("patched string is over 2^31 - 1 bytes")
        out += base[at : at + skip]
        out += patches.take(inserted)
        at += skip + removed
    if len(out) + len(base) - at > 0x7FFFFFFF:
        raise Malformed("patched string is over 2^31 - 1 bytes")
    out += base[at:]
    return bytes(out)


def read_string(cur: Cursor, texts: dict[int, bytes] | None) -> Str:
    """A §8 string; ``texts`` is None inside structured values, where the interned, cut and
    patched headers are malformed."""
    header = cur.u32()
    if header == 0xFFFFFFFF:
        return Str(b"", null=True)
    if header == 0xFFFFFFFE:
        if texts is None:
            raise Malformed("interned string inside a structured value")
        text_id = cur.u32()
        if text_id not in texts:
            raise Malformed(f"string refers to text id {text_id}, not defined in this file")
        return Str(texts[text_id])
    if header == 0xFFFFFFFC:
        if texts is None:
            raise Malformed("patched string inside a structured value")
        text_id = cur.u32()
        patches = Cursor(cur.take(cur.u32()))
        if text_id not in texts:
            raise Malformed(f"patched string refers to text id {text_id}, not defined in this file")
        return Str(_patched(texts[text_id], patches))
    if header == 0xFFFFFFFD:
        if texts is None:
            raise Malformed("cut string inside a structured value")
        original = cur.u64()
        inner = cur.u32()
        if inner >= 0xFFFFFFFC:
            raise Malformed("cut string holds a reserved header")
        data = cur.take(inner & 0x7FFFFFFF)
        if original < len(data):
            raise Malformed("cut string's original length is below its stored length")
        return Str(data, truncated=True, original=original)
    return Str(cur.take(header & 0x7FFFFFFF), truncated=bool(header >> 31))


def read_top_level(cur: Cursor, tag: int, texts: dict[int, bytes]) -> Any:
    """The tags that are not delta-coded: f80, f128, string (structured is read elsewhere)."""
    if tag == d.F80:
        return _extended(cur.take(10), 80)
    if tag == d.F128:
        return _extended(cur.take(16), 128)
    return read_string(cur, texts)


def _count(cur: Cursor, budget: Budget) -> tuple[int, int | None]:
    header = cur.u32()
    n = header & 0x7FFFFFFF
    total = None
    if header >> 31:
        total = cur.u64()
        if total < n:
            raise Malformed("truncated container's real size is below its stored count")
    budget.container(n)
    return n, total


def read_structured(cur: Cursor, node: d.Node, budget: Budget) -> Any:
    """A value of ``node``'s type, depth first, as §8.1 "Values" lays it out."""
    budget.value()
    kind = node.kind
    if kind in d.SCALAR_TAGS:
        if kind in d.FIXED_WIDTH:
            return scalar_from_raw(kind, read_raw(cur, kind))
        if kind == d.STRING:
            return read_string(cur, None)
        return _extended(cur.take(10 if kind == d.F80 else 16), 80 if kind == d.F80 else 128)
    if kind in (d.SEQUENCE, d.SET):
        n, total = _count(cur, budget)
        return Seq([read_structured(cur, node.children[0], budget) for _ in range(n)], total)
    if kind == d.MAP:
        n, total = _count(cur, budget)
        key, mapped = node.children
        return Seq([(read_structured(cur, key, budget), read_structured(cur, mapped, budget)) for _ in range(n)], total)
    if kind in (d.TUPLE, d.AGGREGATE, d.USER):
        return [read_structured(cur, child, budget) for child in node.children]
    if kind == d.OPTIONAL:
        flag = cur.u8()
        if flag > 1:
            raise Malformed(f"optional with flag {flag}")
        return Optional(True, read_structured(cur, node.children[0], budget)) if flag else Optional(False, None)
    if kind == d.VARIANT:
        index = cur.u8()
        if index == 0xFF:
            return Variant(-1, None)
        if index >= len(node.children):
            raise Malformed(f"variant index {index} of {len(node.children)} alternatives")
        return Variant(index, read_structured(cur, node.children[index], budget))
    if kind == d.ENUM:
        return scalar_from_raw(node.tag, read_raw(cur, node.tag))
    if kind in (d.DURATION, d.TIME_POINT):
        return scalar_from_raw(node.tag, read_raw(cur, node.tag))
    if kind == d.ERROR_CODE:
        value = int(cur.fixed("<i", 4))
        return ErrorCode(value, read_string(cur, None))
    if kind in (d.PATH, d.PREFORMATTED):
        return read_string(cur, None)
    if kind == d.THREAD_ID:
        return cur.u64()
    if kind == d.MONOSTATE:
        return None
    if kind == d.PRIVATE:
        mode = cur.u8()
        if mode == 0:
            return Private(0, None)
        if mode == 1:
            return Private(1, cur.u64())
        if mode == 2:
            return Private(2, read_structured(cur, node.children[0], budget))
        raise Malformed(f"private value with mode {mode}")
    if kind == d.BITSET:
        raw = cur.take((node.n + 7) // 8)
        return int.from_bytes(raw, "little") & ((1 << node.n) - 1)
    raise Malformed(f"unknown type node 0x{kind:02x}")
