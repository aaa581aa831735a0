"""Messages by the fmt rules (FORMAT.md §8 "Rendering", §8.1 "Rendering"), and JSON values.

Python's format mini-language is close to fmt's but not equal (octal's ``#`` prefix, the
default presentation of floats, widths of wide characters, chrono specs, ``L``), so each
presentation is written out here by fmt's rules. Whatever this module cannot produce byte for
byte is still rendered as well as it can be, and ``Renderer.notes`` says why it may differ: the
record then carries ``"rendered_exactly": False`` instead of silently differing from fmt.
"""

from __future__ import annotations

import dataclasses
import math
import time
import unicodedata
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable

from . import dictionary as d
from .values import Char, Float, Pointer, Seq, Str

MAX_WIDTH = 65536


class Unformattable(Exception):
    """The format string breaks §8's rules; the site prints as ``<unformattable> …``."""


@dataclasses.dataclass
class Field:
    arg: int
    spec: str
    # The arguments of the spec's nested {} fields, which the spec names {0}, {1} in order.
    dyn: list[int] = dataclasses.field(default_factory=list)


def parse_format(fmt: str, arg_count: int, names: list[str]) -> list[str | Field]:
    """Splits a format string into literal text and fields, by fmt's replacement field grammar,
    and refuses what §8 says a reader must refuse."""
    pieces: list[str | Field] = []
    literal: list[str] = []
    auto = [0]
    mode: list[str] = []
    by_name = {n: i for i, n in enumerate(names) if n}

    def resolve(ident: str) -> int:
        if ident == "":
            if mode and mode[0] != "auto":
                raise Unformattable("mixes automatic and numbered arguments")
            mode[:] = ["auto"]
            index = auto[0]
            auto[0] += 1
        elif ident.isdigit():
            if mode and mode[0] != "manual":
                raise Unformattable("mixes automatic and numbered arguments")
            mode[:] = ["manual"]
            index = int(ident)
            if index > 1000:
                raise Unformattable("argument index over 1000")
        elif ident in by_name:
            index = by_name[ident]
        else:
            raise Unformattable(f"no argument named {ident}")
        if index >= arg_count:
            raise Unformattable(f"refers to argument {index} of {arg_count}")
        return index

    i, n = 0, len(fmt)
    while i < n:
        c = fmt[i]
        if c == "}":
            if i + 1 < n and fmt[i + 1] == "}":
                literal.append("}")
                i += 2
                continue
            raise Unformattable("unmatched '}'")
        if c != "{":
            literal.append(c)
            i += 1
            continue
        if i + 1 < n and fmt[i + 1] == "{":
            literal.append("{")
            i += 2
            continue
        j = i + 1
        while j < n and fmt[j] not in ":}":
            j += 1
        if j >= n:
            raise Unformattable("unterminated replacement field")
        arg = resolve(fmt[i + 1 : j])
        spec_parts: list[str] = []
        dyn: list[int] = []
        if fmt[j] == ":":
            j += 1
            depth = 0
            while j < n and not (fmt[j] == "}" and depth == 0):
                if fmt[j] == "{":
                    k = fmt.find("}", j)
                    if k < 0:
                        raise Unformattable("unterminated dynamic argument")
                    dyn.append(resolve(fmt[j + 1 : k]))
                    spec_parts.append("{" + str(len(dyn) - 1) + "}")
                    j = k + 1
                    continue
                spec_parts.append(fmt[j])
                j += 1
            if j >= n:
                raise Unformattable("unterminated replacement field")
        spec = "".join(spec_parts)
        field = Field(arg, spec, dyn)
        _check_literal_bounds(spec)
        if literal:
            pieces.append("".join(literal))
            literal = []
        pieces.append(field)
        i = j + 1
    if literal:
        pieces.append("".join(literal))
    return pieces


def _check_literal_bounds(spec: str) -> None:
    digits = ""
    for c in spec + " ":
        if c.isdigit():
            digits += c
        else:
            if digits and int(digits) > MAX_WIDTH:
                raise Unformattable("width or precision over 65536")
            digits = ""


@dataclasses.dataclass
class Spec:
    fill: str = " "
    align: str = ""
    sign: str = ""
    alt: bool = False
    zero: bool = False
    width: int = 0
    precision: int | None = None
    locale: bool = False
    type: str = ""


class Renderer:
    """Renders one record's message; ``notes`` collects why it may not be fmt's text."""

    def __init__(self, utc: bool = False) -> None:
        self.notes: list[str] = []
        # Time points in messages: fmt 9 prints them in local time.
        self.local_time = True
        self.utc = utc

    def inexact(self, why: str) -> None:
        if why not in self.notes:
            self.notes.append(why)

    # ---- specs ---------------------------------------------------------------------------

    def parse_spec(self, text: str, dyn: dict[str, int]) -> Spec:
        spec = Spec()
        i = 0
        if len(text) >= 2 and text[1] in "<>^" and text[0] not in "{}":
            spec.fill, spec.align, i = text[0], text[1], 2
        elif text[:1] in ("<", ">", "^"):
            spec.align, i = text[0], 1
        if text[i : i + 1] in ("+", "-", " "):
            spec.sign = text[i]
            i += 1
        if text[i : i + 1] == "#":
            spec.alt = True
            i += 1
        if text[i : i + 1] == "0":
            spec.zero = True
            i += 1
        width, i = self._number(text, i, dyn, "width")
        spec.width = width or 0
        if text[i : i + 1] == ".":
            spec.precision, i = self._number(text, i + 1, dyn, "precision")
            if spec.precision is None:
                spec.precision = 0
        if text[i : i + 1] == "L":
            spec.locale = True
            i += 1
        if text[i:] and len(text[i:]) == 1 and text[i] in "aAbBcdeEfFgGopsxX?":
            spec.type = text[i]
        elif text[i:]:
            self.inexact(f"format spec {{:{text}}} is not fmt's standard grammar")
        return spec

    def _number(self, text: str, i: int, dyn: dict[str, int], what: str) -> tuple[int | None, int]:
        if text[i : i + 1] == "{":
            k = text.find("}", i)
            value = dyn.get(text[i : k + 1], 0)
            if value > MAX_WIDTH:
                raise Unformattable(f"dynamic {what} over 65536")
            return value, k + 1
        j = i
        while j < len(text) and text[j].isdigit():
            j += 1
        return (int(text[i:j]) if j > i else None), j

    def pad(self, text: str, spec: Spec, default: str) -> str:
        width = display_width(text)
        if spec.width <= width:
            return text
        fill = spec.fill
        gap = spec.width - width
        align = spec.align or default
        if align == "<":
            return text + fill * gap
        if align == "^":
            return fill * (gap // 2) + text + fill * (gap - gap // 2)
        return fill * gap + text

    def numeric(self, sign: str, prefix: str, digits: str, spec: Spec) -> str:
        """fmt's numeric padding: a '0' flag fills with zeros after sign and prefix unless an
        alignment was given, in which case '0' becomes the fill."""
        if spec.zero and not spec.align:
            gap = spec.width - len(sign) - len(prefix) - len(digits)
            return sign + prefix + "0" * max(gap, 0) + digits
        if spec.zero:
            spec = dataclasses.replace(spec, fill="0")
        return self.pad(sign + prefix + digits, spec, ">")

    # ---- scalars -------------------------------------------------------------------------

    def integer(self, value: int, spec: Spec) -> str:
        t = spec.type or "d"
        if spec.locale:
            self.inexact("locale-dependent {:L}")
        if t == "c":
            return self.pad(chr(value) if 0 <= value < 0x110000 else "?", spec, "<")
        if t not in "dxXbBo":
            self.inexact(f"integer presentation '{t}'")
            t = "d"
        sign = "-" if value < 0 else (spec.sign if spec.sign in "+ " else "")
        a = abs(value)
        digits = {"d": str, "x": lambda v: f"{v:x}", "X": lambda v: f"{v:X}", "b": lambda v: f"{v:b}",
                  "B": lambda v: f"{v:b}", "o": lambda v: f"{v:o}"}[t](a)
        prefix = ""
        if spec.alt:
            prefix = {"d": "", "x": "0x", "X": "0X", "b": "0b", "B": "0B", "o": "0" if a else ""}[t]
        return self.numeric(sign, prefix, digits, spec)

    def boolean(self, value: bool, spec: Spec) -> str:
        if spec.type and spec.type != "s":
            return self.integer(int(value), spec)
        return self.pad("true" if value else "false", spec, "<")

    def char(self, byte: int, spec: Spec) -> str:
        if spec.type in ("", "c"):
            return self.pad(_byte_text(bytes([byte])), spec, "<")
        if spec.type == "?":
            return self.pad(escape_char(byte, self), spec, "<")
        if byte >= 0x80:
            self.inexact("a char over 0x7f as a number")
        return self.integer(byte, spec)

    def string(self, s: Str, spec: Spec) -> str:
        if s.null:
            return self.pad("(null)", spec, "<")
        text = _byte_text(s.data)
        if s.original is not None:
            text += f"... {s.original} bytes total"
        if spec.type == "?":
            return self.pad(escape_string(s.data, self) if s.original is None else '"' + text + '"', spec, "<")
        if spec.type not in ("", "s"):
            self.inexact(f"string presentation '{spec.type}'")
        if spec.precision is not None:
            text = text[: spec.precision]
        return self.pad(text, spec, "<")

    def pointer(self, address: int, spec: Spec) -> str:
        if spec.type not in ("", "p"):
            self.inexact(f"pointer presentation '{spec.type}'")
        return self.pad(f"0x{address:x}", spec, ">")

    def float(self, f: Float, spec: Spec) -> str:
        t = spec.type
        if spec.locale:
            self.inexact("locale-dependent {:L}")
        sign = "-" if f.negative else (spec.sign if spec.sign in "+ " else "")
        if f.exact is None:
            body = "nan" if f.value != f.value else "inf"
            if t in "EFGA" and t:
                body = body.upper()
            return self.pad(sign + body, dataclasses.replace(spec, fill=" " if spec.zero else spec.fill), ">")
        x = abs(f.exact)
        if t in ("a", "A"):
            digits = self._hex_float(f, spec)
        elif t == "" and spec.precision is None:
            if spec.alt:
                self.inexact("'#' with the shortest float presentation")
            digits = shortest(f)
        else:
            p = 6 if spec.precision is None else spec.precision
            kind = {"": "g", "e": "e", "E": "e", "f": "f", "F": "f", "g": "g", "G": "g"}.get(t)
            if kind is None:
                self.inexact(f"float presentation '{t}'")
                kind = "g"
            if t == "" and spec.alt:
                self.inexact("'#' with a float's precision and no type")
            digits = decimal_format(x, kind, p, spec.alt)
            if t in "EFG" and t:
                digits = digits.upper()
        return self.numeric(sign, "", digits, spec)

    def _hex_float(self, f: Float, spec: Spec) -> str:
        if f.bits != 64 and f.bits != 32 or spec.precision is not None:
            self.inexact("hexadecimal float with a precision or of a long double")
        v = abs(f.value)
        if v != 0 and v < 2.2250738585072014e-308:
            self.inexact("hexadecimal subnormal float")
        mantissa, _, exponent = v.hex()[2:].partition("p")
        whole, _, frac = mantissa.partition(".")
        frac = frac.rstrip("0")
        text = "0x" + whole + ("." + frac if frac else "") + "p" + exponent
        return text.upper() if spec.type == "A" else text


_TYPES = {"int": "bBcdoxX", "bool": "sbBcdoxX", "char": "c?bBdoxX", "float": "aAeEfFgG", "string": "s?",
          "pointer": "p"}


def check_spec(spec: Spec, value: Any) -> None:
    """What fmt refuses for the argument's type: such a record is "<unformattable>" (§8)."""
    if isinstance(value, bool):
        kind = "bool"
    elif isinstance(value, int):
        kind = "int"
    elif isinstance(value, Char):
        kind = "char"
    elif isinstance(value, Float):
        kind = "float"
    elif isinstance(value, Str):
        kind = "string"
    else:
        kind = "pointer"
    if spec.type and spec.type not in _TYPES[kind]:
        raise Unformattable(f"presentation '{spec.type}' for a {kind}")
    textual = kind == "string" or kind == "pointer" or (kind in ("bool", "char") and spec.type in ("", "s", "c", "?"))
    if textual and (spec.sign or spec.alt or spec.zero):
        raise Unformattable(f"a numeric flag for a {kind}")
    if spec.precision is not None and kind in ("int", "pointer") or (kind in ("bool", "char") and spec.precision
                                                                       is not None and not textual):
        raise Unformattable(f"a precision for a {kind}")


def _only_fill_align_width(spec: Spec, what: str) -> None:
    if spec.sign or spec.alt or spec.zero or spec.precision is not None or spec.locale or spec.type:
        raise Unformattable(f"{what} accepts only fill, align and width")


def display_width(text: str) -> int:
    """fmt counts East Asian wide and full-width characters as two columns."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _byte_text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _escape_cp(cp: int, quote: str) -> str:
    c = chr(cp)
    if c == quote or c == "\\":
        return "\\" + c
    if c == "\n":
        return "\\n"
    if c == "\r":
        return "\\r"
    if c == "\t":
        return "\\t"
    if cp < 0x20 or cp == 0x7F:
        return f"\\x{cp:02x}"
    return c


def escape_string(data: bytes, r: Renderer) -> str:
    """fmt 9's debug presentation of a string: quoted, with C escapes."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        r.inexact("escaping a string that is not valid UTF-8")
        text = data.decode("utf-8", "replace")
    out = []
    for c in text:
        if ord(c) >= 0x80 and not c.isprintable():
            r.inexact("escaping a non-printable non-ASCII character")
        out.append(_escape_cp(ord(c), '"'))
    return '"' + "".join(out) + '"'


def escape_char(byte: int, r: Renderer) -> str:
    if byte >= 0x80:
        r.inexact("escaping a char over 0x7f")
        return "'" + f"\\x{byte:02x}" + "'"
    return "'" + _escape_cp(byte, "'") + "'"


# ---- floats ---------------------------------------------------------------------------------


def _round_half_even(x: Fraction) -> int:
    n = math.floor(x)
    rest = x - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2):
        n += 1
    return n


def _exp10(x: Fraction) -> int:
    """floor(log10(x)) for x > 0, exactly."""
    e = math.floor(math.log10(float(x))) if 1e-300 < x < 1e300 else _slow_exp10(x)
    while Fraction(10) ** e > x:
        e -= 1
    while Fraction(10) ** (e + 1) <= x:
        e += 1
    return e


def _slow_exp10(x: Fraction) -> int:
    return math.floor((x.numerator.bit_length() - x.denominator.bit_length()) * math.log10(2))


_CHUNK = 10**4000


def _int_str(n: int) -> str:
    """str() of a non-negative int of any size (str() refuses over 4300 digits, and a long
    double's fixed notation may need 4933)."""
    if n < _CHUNK:
        return str(n)
    high, low = divmod(n, _CHUNK)
    return _int_str(high) + str(low).rjust(4000, "0")


def _sig_digits(x: Fraction, count: int) -> tuple[str, int]:
    """x > 0 rounded to ``count`` significant digits: (digits, decimal exponent of the first)."""
    e = _exp10(x)
    scaled = _round_half_even(x / Fraction(10) ** (e - count + 1))
    if scaled >= 10**count:
        e += 1
        scaled = _round_half_even(x / Fraction(10) ** (e - count + 1))
    return str(scaled), e


def _exp_text(e: int) -> str:
    return ("e-" if e < 0 else "e+") + f"{abs(e):02d}"


def decimal_format(x: Fraction, kind: str, p: int, alt: bool) -> str:
    """printf's %e, %f and %g of a non-negative exact value, which fmt follows for them."""
    if kind == "f":
        n = _round_half_even(x * 10**p)
        s = _int_str(n).rjust(p + 1, "0")
        return (s[:-p] + "." + s[-p:]) if p else (s + ("." if alt else ""))
    if kind == "e":
        if x == 0:
            digits, e = "0" * (p + 1), 0
        else:
            digits, e = _sig_digits(x, p + 1)
        return digits[0] + ("." + digits[1:] if p or alt else "") + _exp_text(e)
    precision = p or 1
    if x == 0:
        e = 0
    else:
        _, e = _sig_digits(x, precision)
    if -4 <= e < precision:
        text = decimal_format(x, "f", precision - 1 - e, alt)
    else:
        text = decimal_format(x, "e", precision - 1, alt)
    if not alt:
        mantissa, marker, exponent = text.partition("e")
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        text = mantissa + (marker + exponent if marker else "")
    return text


_SIGNIFICAND = {32: (24, -149), 64: (53, -1074), 80: (64, -16445), 128: (113, -16494)}


def _nearest(x: Fraction, bits: int) -> Fraction:
    """The value of width ``bits`` nearest to x > 0 (ties to even), ignoring overflow."""
    precision, min_exp = _SIGNIFICAND[bits]
    e = x.numerator.bit_length() - x.denominator.bit_length()
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    q = max(e - precision + 1, min_exp)
    m = _round_half_even(x / Fraction(2) ** q)
    return Fraction(m) * Fraction(2) ** q


def shortest_digits(f: Float) -> tuple[str, int]:
    """The fewest significant digits that read back as the same value of its own width, the
    nearest such when several have that length: what fmt's `{}` prints for float, double and
    long double alike."""
    x = abs(f.exact) if f.exact is not None else Fraction(0)
    if x == 0:
        return "0", 0
    if f.bits == 64:
        # repr is the shortest round-trip text of a double (the same digits as fmt's Dragonbox).
        sign_, digit_tuple, exponent = Decimal(repr(abs(f.value))).normalize().as_tuple()
        digits = "".join(map(str, digit_tuple))
        return digits, int(exponent) + len(digits) - 1
    for count in range(1, 40):
        digits, e = _sig_digits(x, count)
        if _nearest(Fraction(int(digits)) * Fraction(10) ** (e - count + 1), f.bits) == x:
            return digits.rstrip("0") or "0", e
    return _sig_digits(x, 40)


def shortest(f: Float) -> str:
    """fmt 9's `{}` of a float: its shortest digits, fixed notation for decimal exponents from
    -4 to 15, else exponent notation with at least two exponent digits."""
    digits, e = shortest_digits(f)
    if e < -4 or e >= 16:
        return digits[0] + ("." + digits[1:] if len(digits) > 1 else "") + _exp_text(e)
    if e < 0:
        return "0." + "0" * (-e - 1) + digits
    if len(digits) <= e + 1:
        return digits + "0" * (e + 1 - len(digits))
    return digits[: e + 1] + "." + digits[e + 1 :]


def float_json(f: Float) -> Any:
    """A float as the CLI's JSON writes it: its shortest digits, read back as a Python float."""
    if f.exact is None:
        return "nan" if f.value != f.value else ("-inf" if f.negative else "inf")
    text = shortest(f)
    value = float(text)
    return -value if f.negative else value


# ---- structured values (§8.1) ---------------------------------------------------------------

_UNITS = {(1, 10**18): "as", (1, 10**15): "fs", (1, 10**12): "ps", (1, 10**9): "ns", (1, 10**6): "µs",
          (1, 1000): "ms", (1, 100): "cs", (1, 10): "ds", (1, 1): "s", (10, 1): "das", (100, 1): "hs",
          (1000, 1): "ks", (10**6, 1): "Ms", (10**9, 1): "Gs", (10**12, 1): "Ts", (10**15, 1): "Ps",
          (10**18, 1): "Es", (60, 1): "m", (3600, 1): "h"}


def unit_suffix(node: d.Node) -> str:
    g = math.gcd(node.num, node.den)
    num, den = node.num // g, node.den // g
    if (num, den) in _UNITS:
        return _UNITS[(num, den)]
    return f"[{num}]s" if den == 1 else f"[{num}/{den}]s"


# Quoting contexts: how a string or char renders where it stands.
TOP, QUOTED, NESTED = 0, 1, 2

_STRFTIME_OK = set("YmdHMSFTDRjaAbByeIpnt%")


class Formatter(Renderer):
    """Renders arguments by their tag or type expression."""

    def arg(self, value: Any, tag: int, node: d.Node | None, spec_text: str, dyn: dict[str, int]) -> str:
        if tag == d.STRUCTURED and node is not None:
            return self.structured(node, value, spec_text, dyn, TOP)
        return self.scalar(value, spec_text, dyn)

    def scalar(self, value: Any, spec_text: str, dyn: dict[str, int]) -> str:
        spec = self.parse_spec(spec_text, dyn)
        check_spec(spec, value)
        if isinstance(value, bool):
            return self.boolean(value, spec)
        if isinstance(value, int):
            return self.integer(value, spec)
        if isinstance(value, Char):
            return self.char(value.byte, spec)
        if isinstance(value, Float):
            return self.float(value, spec)
        if isinstance(value, Str):
            return self.string(value, spec)
        if isinstance(value, Pointer):
            return self.pointer(value.address, spec)
        self.inexact("a value of unknown kind")
        return str(value)

    def _element(self, node: d.Node, value: Any, where: int) -> str:
        """An element of a range, tuple or the like, with fmt's quoting rules."""
        kind = node.kind
        if kind == d.STRING and where == QUOTED:
            if value.null:
                return "(null)"
            if value.truncated:
                self.inexact("a truncated string inside a structure")
            return escape_string(value.data, self)
        if kind == d.CHARACTER and where == QUOTED:
            return escape_char(value.byte, self)
        if kind in d.SCALAR_TAGS:
            return self.scalar(value, "", {})
        if kind in (d.SEQUENCE, d.SET):
            # Written by fmt 9 without parsing its formatter: its strings stay unquoted.
            return self.structured(node, value, "", {}, _IN_RANGE)
        return self.structured(node, value, "", {}, where)

    def structured(self, node: d.Node, value: Any, spec_text: str, dyn: dict[str, int], where: int) -> str:
        kind = node.kind
        if kind in d.SCALAR_TAGS:
            return self.scalar(value, spec_text, dyn)
        if kind in (d.SEQUENCE, d.SET, d.MAP):
            # fmt 9 quotes a range's strings only where it parsed the range's formatter: at the
            # top level, or for a range's elements when its spec has an element part. A range
            # inside a range, tuple, aggregate or optional is formatted unparsed.
            inner = QUOTED if where == TOP else NESTED
            brackets = "[]" if kind == d.SEQUENCE else "{}"
            elem_spec: str | None = None
            text = spec_text
            if text.startswith("n"):
                brackets = ""
                text = text[1:]
            if text.startswith(":"):
                elem_spec = text[1:]
                text = ""
            if text:
                self.inexact(f"range format spec {{:{spec_text}}}")
            if elem_spec is not None and kind == d.MAP:
                self.inexact("an element spec on a map")
                elem_spec = None
            body = ", ".join(self._seq_items(node, value, inner, elem_spec, dyn))
            return brackets[:1] + body + brackets[1:]
        if kind == d.TUPLE:
            self._empty_spec(spec_text)
            return "(" + ", ".join(self._element(c, v, QUOTED) for c, v in zip(node.children, value)) + ")"
        if kind == d.AGGREGATE:
            self._empty_spec(spec_text)
            fields = []
            for name, child, v in zip(node.names, node.children, value):
                text = self._element(child, v, QUOTED)
                fields.append(f"{name}: {text}" if any(node.names) else text)
            return "{" + ", ".join(fields) + "}"
        if kind == d.OPTIONAL:
            self._empty_spec(spec_text)
            if not value.present:
                return "none"
            # Formatted as fmt 10 does, whose optional parses the inner formatter: a range
            # inside quotes its strings as at the top level.
            child = node.children[0]
            if child.kind in (d.SEQUENCE, d.SET):
                return "optional(" + self.structured(child, value.value, "", {}, TOP) + ")"
            return "optional(" + self._element(child, value.value, QUOTED) + ")"
        if kind == d.VARIANT:
            self._empty_spec(spec_text)
            if value.index < 0:
                return "variant(valueless by exception)"
            return "variant(" + self._element(node.children[value.index], value.value, QUOTED) + ")"
        if kind == d.MONOSTATE:
            self._empty_spec(spec_text)
            return "monostate"
        if kind == d.ENUM:
            name = node.enumerators.get(value)
            if name is None:
                return self.scalar(value, spec_text, dyn)
            return self.string(Str(name.encode()), self.parse_spec(spec_text, dyn))
        if kind == d.DURATION:
            return self.duration(node, value, spec_text, dyn)
        if kind == d.TIME_POINT:
            return self.time_point(node, value, spec_text, dyn)
        if kind == d.ERROR_CODE:
            self._empty_spec(spec_text)
            return _byte_text(value.category.data) + ":" + str(value.value)
        if kind == d.PATH:
            # fmt 9's path formatter quotes the path, then applies fill, align and width.
            spec = self.parse_spec(spec_text, dyn)
            if spec.sign or spec.alt or spec.zero or spec.precision is not None or spec.type or spec.locale:
                self.inexact(f"format spec {{:{spec_text}}} on a path")
            return self.pad(escape_string(value.data, self), spec, "<")
        if kind == d.THREAD_ID:
            if spec_text:
                self.inexact("a format spec on a thread id")
            return str(value) if value else "thread::id of a non-executing thread"
        if kind == d.USER:
            text = self.user(node, value)
            return self.string(Str(text.encode()), self.parse_spec(spec_text, dyn))
        if kind == d.PRIVATE:
            if value.mode == 2:
                return self.structured_or_element(node.children[0], value.value, spec_text, dyn, where)
            text = "<private>" if value.mode == 0 else f"<private:{value.value >> 40:06x}>"
            return self.string(Str(text.encode()), self.parse_spec(spec_text, dyn))
        if kind == d.PREFORMATTED:
            return self.string(value, self.parse_spec(spec_text, dyn))
        if kind == d.BITSET:
            spec = self.parse_spec(spec_text, dyn)
            _only_fill_align_width(spec, "a bitset")
            bits = "".join("1" if value >> i & 1 else "0" for i in range(node.n - 1, -1, -1))
            return self.pad(bits, spec, "<")
        self.inexact(f"type node 0x{kind:02x}")
        return "?"

    def structured_or_element(self, node: d.Node, value: Any, spec_text: str, dyn: dict[str, int], where: int) -> str:
        if where in (QUOTED, _IN_RANGE) and not spec_text:
            return self._element(node, value, QUOTED if where == QUOTED else where)
        return self.structured(node, value, spec_text, dyn, where)

    def _seq_items(self, node: d.Node, value: Seq, inner: int, elem_spec: str | None,
                   dyn: dict[str, int]) -> list[str]:
        parts = []
        child_where = inner
        for item in value.items:
            if node.kind == d.MAP:
                # fmt 9 writes a map's keys and values as tuple elements: always quoted.
                key, mapped = item
                parts.append(self._element(node.children[0], key, QUOTED) + ": " +
                             self._element(node.children[1], mapped, QUOTED))
            else:
                parts.append(self._range_element(node.children[0], item, child_where, elem_spec, dyn))
        if value.total is not None:
            if not parts:
                self.inexact("a truncated container with no stored element")
            parts.append(f"... {value.total} total")
        return parts

    def _range_element(self, node: d.Node, value: Any, where: int, elem_spec: str | None,
                       dyn: dict[str, int]) -> str:
        # fmt 9 parses the element formatter only when the range spec has an element part
        # ("{::}", "{::x}"); a nested range parsed so quotes its strings as a top-level one.
        if elem_spec is not None:
            if node.kind in d.SCALAR_TAGS:
                return self.scalar(value, elem_spec, dyn)
            return self.structured(node, value, elem_spec, dyn, TOP)
        return self._element(node, value, where)

    def _empty_spec(self, spec_text: str) -> None:
        if spec_text:
            raise Unformattable(f"format spec {{:{spec_text}}} on a value that takes none")

    def user(self, node: d.Node, fields: list[Any]) -> str:
        if node.parsed_format is None:
            try:
                node.parsed_format = parse_format(node.format, len(node.children), [])
            except Unformattable as exc:
                node.parsed_format = exc
        if isinstance(node.parsed_format, Unformattable):
            self.inexact(f"a user type's format string ({node.parsed_format})")
            return node.format
        tags = [c.kind if c.kind in d.SCALAR_TAGS else d.STRUCTURED for c in node.children]
        return self.message(node.parsed_format, fields, tags, node.children)

    def duration(self, node: d.Node, count: Any, spec_text: str, dyn: dict[str, int]) -> str:
        if spec_text.startswith("%"):
            return self.chrono_duration(node, count, spec_text)
        if spec_text.strip(" <>^0123456789{}.*-_="):
            self.inexact(f"chrono format spec {{:{spec_text}}}")
        spec = self.parse_spec(spec_text, dyn)
        if isinstance(count, Float):
            number = self.float(count, Spec(precision=spec.precision, type="f" if spec.precision is not None else ""))
        else:
            number = str(count)
        return self.pad(number + unit_suffix(node), dataclasses.replace(spec, precision=None), "<")

    def chrono_duration(self, node: d.Node, count: Any, pattern: str) -> str:
        """fmt 9's %-specs for a duration: fields of the time since zero, for integer counts."""
        if isinstance(count, Float):
            self.inexact("a chrono spec on a floating-point duration")
            return self.float(count, Spec()) + unit_suffix(node)
        total = Fraction(count) * node.num / node.den
        negative = total < 0
        total = abs(total)
        whole = math.floor(total)
        fraction = total - whole
        digits = 0
        den = node.den // math.gcd(node.num, node.den)
        while den % 10 == 0 and den > 1:
            den //= 10
            digits += 1
        if den != 1 and fraction:
            self.inexact("%S of a period that is not a power of ten")

        def seconds() -> str:
            text = f"{whole % 60:02d}"
            if digits:
                text += "." + str(math.floor(fraction * 10**digits)).rjust(digits, "0")
            return text

        fields: dict[str, Callable[[], str]] = {
            "H": lambda: f"{whole // 3600 % 24:02d}",
            "M": lambda: f"{whole // 60 % 60:02d}",
            "S": seconds,
            "T": lambda: f"{whole // 3600 % 24:02d}:{whole // 60 % 60:02d}:" + seconds(),
            "R": lambda: f"{whole // 3600 % 24:02d}:{whole // 60 % 60:02d}",
            "Q": lambda: str(abs(count)),
            "q": lambda: unit_suffix(node),
            "%": lambda: "%",
            "n": lambda: "\n",
            "t": lambda: "\t",
        }
        out = ["-"] if negative else []
        i = 0
        while i < len(pattern):
            c = pattern[i]
            if c == "%" and i + 1 < len(pattern):
                field = fields.get(pattern[i + 1])
                if field is None:
                    self.inexact(f"chrono spec %{pattern[i + 1]}")
                    out.append(pattern[i : i + 2])
                else:
                    out.append(field())
                i += 2
                continue
            if c in "{}":
                self.inexact("a chrono spec with a dynamic width")
            out.append(c)
            i += 1
        return "".join(out)

    def time_point(self, node: d.Node, count: Any, spec_text: str, dyn: dict[str, int]) -> str:
        if node.clock != 1:
            return self.duration(node, count, spec_text, dyn)
        if isinstance(count, Float):
            self.inexact("a time point with a floating-point count")
            seconds = math.floor(count.value * node.num / node.den) if count.exact is not None else 0
        else:
            seconds = math.floor(Fraction(count) * node.num / node.den)
        pattern = spec_text or "%Y-%m-%d %H:%M:%S"
        if set(c for i, c in enumerate(pattern) if i and pattern[i - 1] == "%") - _STRFTIME_OK:
            self.inexact(f"chrono format spec {{:{spec_text}}}")
        try:
            tm = time.localtime(seconds) if self.local_time else time.gmtime(seconds)
            return time.strftime(pattern, tm)
        except (OverflowError, OSError, ValueError):
            self.inexact("a time point outside the C library's range")
            return str(count)

    # ---- whole messages ------------------------------------------------------------------

    def message(self, pieces: list[str | Field], args: list[Any], tags: list[int], types: list[d.Node | None]) -> str:
        out = []
        for piece in pieces:
            if isinstance(piece, str):
                out.append(piece)
                continue
            dyn: dict[str, int] = {}
            for k, index in enumerate(piece.dyn):
                value = args[index]
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise Unformattable("dynamic width or precision is not a non-negative integer")
                if value > MAX_WIDTH:
                    raise Unformattable("dynamic width or precision over 65536")
                dyn["{" + str(k) + "}"] = value
            out.append(self.arg(args[piece.arg], tags[piece.arg], types[piece.arg], piece.spec, dyn))
        return "".join(out)


_IN_RANGE = 3


# ---- JSON values (what `terse cat -o json` puts in "args" and "context") -------------------


def civil(seconds: int) -> tuple[int, int, int, int, int, int]:
    """UTC calendar fields of any second count (time.gmtime stops at the platform's time_t)."""
    days, rest = divmod(seconds, 86400)
    # Howard Hinnant's days_from_civil inverse, valid for every proleptic Gregorian day.
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (month <= 2)
    return year, month, day, rest // 3600, rest // 60 % 60, rest % 60


def utc_offset(seconds: int) -> int:
    """The local time zone's offset from UTC at that moment, in seconds (0 outside time_t)."""
    try:
        return time.localtime(seconds).tm_gmtoff
    except (OverflowError, OSError, ValueError):
        return 0


def rfc3339(unix_ns: int, utc: bool = True) -> str:
    """As terse cat's JSON "time": UTC with Z, or local time with its offset (Z when it is 0)."""
    seconds, ns = divmod(unix_ns, 10**9)
    offset = 0 if utc else utc_offset(seconds)
    y, mo, dd, h, mi, s = civil(seconds + offset)
    zone = "Z"
    if offset:
        sign = "+" if offset > 0 else "-"
        zone = f"{sign}{abs(offset) // 3600:02d}:{abs(offset) // 60 % 60:02d}"
    return f"{y:04d}-{mo:02d}-{dd:02d}T{h:02d}:{mi:02d}:{s:02d}.{ns:09d}{zone}"


def scalar_json(value: Any) -> Any:
    if isinstance(value, (bool, int)):
        return value
    if isinstance(value, Char):
        return _byte_text(bytes([value.byte]))
    if isinstance(value, Float):
        return float_json(value)
    if isinstance(value, Str):
        if value.null:
            return None
        text = _byte_text(value.data)
        return text + f"... {value.original} bytes total" if value.original is not None else text
    if isinstance(value, Pointer):
        return f"0x{value.address:x}"
    return None


def json_value(node: d.Node | None, value: Any, fmt: Formatter) -> Any:
    if node is None or node.kind in d.SCALAR_TAGS:
        return scalar_json(value)
    kind = node.kind
    if kind in (d.SEQUENCE, d.SET):
        items = [json_value(node.children[0], v, fmt) for v in value.items]
        if value.total is not None:
            items.append(f"... {value.total} total")
        return items
    if kind == d.MAP:
        key_node, mapped_node = node.children
        if key_node.kind in (d.STRING, d.ENUM):
            obj = {}
            for k, v in value.items:
                obj[str(json_value(key_node, k, fmt))] = json_value(mapped_node, v, fmt)
            if value.total is not None:
                obj["..."] = f"{value.total} total"
            return obj
        pairs: list[Any] = [[json_value(key_node, k, fmt), json_value(mapped_node, v, fmt)] for k, v in value.items]
        if value.total is not None:
            pairs.append(f"... {value.total} total")
        return pairs
    if kind == d.TUPLE:
        return [json_value(c, v, fmt) for c, v in zip(node.children, value)]
    if kind == d.AGGREGATE:
        if any(node.names):
            return {name: json_value(c, v, fmt) for name, c, v in zip(node.names, node.children, value)}
        return [json_value(c, v, fmt) for c, v in zip(node.children, value)]
    if kind == d.OPTIONAL:
        return json_value(node.children[0], value.value, fmt) if value.present else None
    if kind == d.VARIANT:
        return None if value.index < 0 else json_value(node.children[value.index], value.value, fmt)
    if kind == d.ENUM:
        return node.enumerators.get(value, value)
    if kind == d.DURATION or (kind == d.TIME_POINT and node.clock != 1):
        return {"count": scalar_json(value), "unit": unit_suffix(node)}
    if kind == d.TIME_POINT:
        if isinstance(value, Float):
            if value.exact is None:
                return None
            ns = math.floor(value.exact * node.num * 10**9 / node.den)
        else:
            ns = math.floor(Fraction(value) * node.num * 10**9 / node.den)
        try:
            return rfc3339(ns, True)  # UTC whatever the reader's zone, unlike the "time" key
        except (OverflowError, OSError, ValueError):
            return None
    if kind == d.ERROR_CODE:
        return {"category": _byte_text(value.category.data), "value": value.value}
    if kind in (d.PATH, d.PREFORMATTED):
        return scalar_json(value)
    if kind == d.THREAD_ID:
        return value
    if kind == d.MONOSTATE:
        return None
    if kind == d.USER:
        return Formatter().user(node, value)
    if kind == d.PRIVATE:
        if value.mode == 0:
            return None
        if value.mode == 1:
            return f"<private:{value.value >> 40:06x}>"
        return json_value(node.children[0], value.value, fmt)
    if kind == d.BITSET:
        return "".join("1" if value >> i & 1 else "0" for i in range(node.n - 1, -1, -1))
    return None
