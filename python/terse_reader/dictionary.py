"""Dictionary entries (FORMAT.md §6) and type expressions (§8.1).

A site is parsed once, when its entry is read, including its format string and type
expressions, so that a site that cannot be rendered is reported once and its records skipped
cheaply.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .errors import Malformed
from .frames import Cursor

LEVELS = ("trace", "debug", "info", "warn", "error", "critical")

# §8 tag numbers.
I8, I16, I32, I64, U8, U16, U32, U64 = range(1, 9)
BOOLEAN, CHARACTER, F32, F64, F80, F128, STRING, POINTER, STRUCTURED = range(9, 18)
INT_TAGS = frozenset(range(I8, U64 + 1))
SIGNED_TAGS = frozenset((I8, I16, I32, I64))
# Width in bytes of the fixed-size tags, which §7.1 delta-codes.
FIXED_WIDTH = {I8: 1, I16: 2, I32: 4, I64: 8, U8: 1, U16: 2, U32: 4, U64: 8, BOOLEAN: 1, CHARACTER: 1,
               F32: 4, F64: 8, POINTER: 8}
SCALAR_TAGS = frozenset(range(I8, POINTER + 1))

MAX_DEPTH = 16
MAX_NODES = 4096
MAX_TYPE_TEXT = 1 << 20
MAX_FIELDS = 255
MAX_ENUMERATORS = 65536
MAX_BITSET = 1 << 20


@dataclasses.dataclass
class Node:
    """One node of a type expression; ``kind`` is the §8.1 byte (or the scalar tag)."""

    kind: int
    children: list["Node"] = dataclasses.field(default_factory=list)
    names: list[str] = dataclasses.field(default_factory=list)
    name: str = ""
    format: str = ""
    tag: int = 0
    num: int = 1
    den: int = 1
    clock: int = 0
    n: int = 0
    enumerators: dict[int, str] = dataclasses.field(default_factory=dict)
    parsed_format: Any = None


SEQUENCE, SET, MAP, TUPLE, AGGREGATE, OPTIONAL, VARIANT, ENUM = range(0x40, 0x48)
DURATION, TIME_POINT, ERROR_CODE, PATH, THREAD_ID, MONOSTATE, USER, PRIVATE = range(0x48, 0x50)
PREFORMATTED, BITSET = 0x50, 0x51


class _TypeParser:
    def __init__(self, cur: Cursor) -> None:
        self.cur = cur
        self.nodes = 0
        self.text = 0

    def _text(self) -> str:
        raw = self.cur.text()
        self.text += len(raw)
        if self.text > MAX_TYPE_TEXT:
            raise Malformed("type expressions hold over 1 MiB of text")
        return raw.decode("utf-8", "replace")

    def _count(self, bound: int) -> int:
        n = self.cur.varint()
        if n > bound:
            raise Malformed(f"type expression has {n} members, over {bound}")
        return n

    def parse(self, depth: int = 1) -> Node:
        if depth > MAX_DEPTH:
            raise Malformed("type expression nests over 16 levels")
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise Malformed("type expressions hold over 4096 nodes")
        cur = self.cur
        kind = cur.u8()
        if kind in SCALAR_TAGS:
            return Node(kind, tag=kind)
        if kind in (SEQUENCE, SET, OPTIONAL, PRIVATE):
            return Node(kind, [self.parse(depth + 1)])
        if kind == MAP:
            return Node(kind, [self.parse(depth + 1), self.parse(depth + 1)])
        if kind in (TUPLE, VARIANT):
            n = self._count(MAX_FIELDS)
            return Node(kind, [self.parse(depth + 1) for _ in range(n)])
        if kind == AGGREGATE:
            name = self._text()
            n = self._count(MAX_FIELDS)
            names, children = [], []
            for _ in range(n):
                names.append(self._text())
                children.append(self.parse(depth + 1))
            return Node(kind, children, names, name=name)
        if kind == ENUM:
            tag = cur.u8()
            if tag not in INT_TAGS:
                raise Malformed(f"enum with underlying tag {tag}")
            name = self._text()
            n = self._count(MAX_ENUMERATORS)
            enumerators: dict[int, str] = {}
            for _ in range(n):
                value = cur.svarint()
                label = self._text()
                enumerators.setdefault(value, label)
            return Node(kind, name=name, tag=tag, enumerators=enumerators)
        if kind in (DURATION, TIME_POINT):
            clock = cur.u8() if kind == TIME_POINT else 0
            tag = cur.u8()
            if tag not in INT_TAGS and tag not in (F32, F64):
                raise Malformed(f"duration with rep tag {tag}")
            num, den = cur.varint(), cur.varint()
            if num < 1 or den < 1:
                raise Malformed("duration period not positive")
            return Node(kind, tag=tag, num=num, den=den, clock=clock if clock in (0, 1, 2) else 0)
        if kind in (ERROR_CODE, PATH, THREAD_ID, MONOSTATE, PREFORMATTED):
            return Node(kind)
        if kind == USER:
            name = self._text()
            fmt = self._text()
            n = self._count(MAX_FIELDS)
            return Node(kind, [self.parse(depth + 1) for _ in range(n)], name=name, format=fmt)
        if kind == BITSET:
            n = cur.varint()
            if n > MAX_BITSET:
                raise Malformed(f"bitset of {n} bits")
            return Node(kind, n=n)
        raise Malformed(f"unknown type expression node 0x{kind:02x}")


@dataclasses.dataclass
class Site:
    site_id: int
    level: int
    line: int
    file: str
    format: str
    tags: list[int]
    types: list[Node | None]
    names: list[str]
    flags: int
    # Why the site cannot be rendered (reported once), or None.
    broken: str | None = None
    parsed_format: Any = None
    reported: bool = False

    @property
    def limited(self) -> bool:
        return bool(self.flags & 1)

    @property
    def context(self) -> bool:
        return bool(self.flags & 2)

    @property
    def level_name(self) -> str:
        return LEVELS[self.level] if self.level < len(LEVELS) else "unknown"


@dataclasses.dataclass
class Thread:
    index: int
    os_tid: int
    name: str


def parse_site(body: bytes) -> Site:
    cur = Cursor(body)
    site_id = cur.varint()
    if site_id == 0 or site_id > 0xFFFFFFFF:
        raise Malformed(f"site id {site_id} out of range")
    level = cur.u8()
    line = cur.varint()
    file = cur.text().decode("utf-8", "replace")
    fmt = cur.text().decode("utf-8", "replace")
    arg_count = cur.varint()
    if arg_count > 255:
        raise Malformed(f"site with {arg_count} arguments")
    tags = list(cur.take(arg_count))
    types: list[Node | None] = [None] * arg_count
    names: list[str] = []
    flags = 0
    broken = None
    if cur.left():
        type_count = cur.varint()
        structured = [i for i, t in enumerate(tags) if t == STRUCTURED]
        parser = _TypeParser(cur)
        if type_count > arg_count:
            raise Malformed("more type expressions than arguments")
        for k in range(type_count):
            node = parser.parse()
            if k < len(structured):
                types[structured[k]] = node
        if cur.left():
            name_count = cur.varint()
            if name_count not in (0, arg_count):
                raise Malformed(f"{name_count} argument names for {arg_count} arguments")
            names = [cur.text().decode("utf-8", "replace") for _ in range(name_count)]
            if cur.left():
                flags = cur.varint()
    for i, tag in enumerate(tags):
        if tag not in SCALAR_TAGS and tag not in (F80, F128, STRING, STRUCTURED):
            broken = f"argument {i} has the reserved type tag 0x{tag:02x}"
        elif tag == STRUCTURED and types[i] is None:
            broken = f"argument {i} is structured but has no type expression"
    return Site(site_id, level, line, file, fmt, tags, types, names, flags, broken)


def parse_thread(body: bytes) -> Thread:
    cur = Cursor(body)
    index = cur.varint()
    if index == 0 or index > 0xFFFFFFFF:
        raise Malformed(f"thread index {index} out of range")
    os_tid = cur.varint()
    name = cur.text().decode("utf-8", "replace")
    return Thread(index, os_tid, name)
