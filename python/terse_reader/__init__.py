"""terse_reader: read terse ``.tlog`` files from Python, by ``schema/FORMAT.md`` alone.

``read(path)`` yields one dict per record with the keys and values ``terse cat -o json``
prints for it (``time, level, thread, file, line, message, args`` and, where they apply,
``suppressed``, ``flight``, ``context``). A directory yields its log files as the CLI reads it:
the files of one writer (same NAME, and the same host, pid, program and run id in their info
frames) one after another in sequence-number order, different writers merged by record time.

Messages are rendered by fmt's rules. Where this package cannot promise fmt's exact text
(chrono specs, ``{:L}``, hexadecimal long doubles, escapes of odd characters and the like), the
record has one more key, ``"rendered_exactly": False``, and its ``message`` is the nearest
rendering it can make; ``record.notes`` says why. Records without that key are exact.

Damage never raises: every problem (its source, byte offset and reason, as FORMAT.md §9
reports them) goes to ``on_problem`` when given, else it is issued as a ``TerseWarning``; with
``strict=True`` the first problem raises ``TerseReadError``, the only exception the package
raises (also for a path that cannot be read, and for a key file that is not a key).

Sealed files (format 3.0, FORMAT.md §11) open with the private key they were sealed to:
``read(path, key="logs-key")`` (a list of keys, or ``TERSE_KEY`` as for the CLI); this needs
PyNaCl, which plain files do not. Without their key they show no records and a problem names
the key they need; with it, a change made to their frames is a problem marked ``tampering``
and only records that authenticated are shown (what is wrong inside a frame that authenticated
was written so, and is damage like any other). ``signers=`` (``TERSE_SIGNER``) names writers'
public keys, one of which must have signed each sealed file's seal frame (§11.1).
"""

from __future__ import annotations

import heapq
import os
import re
import warnings
from typing import Any, Callable, Iterable, Iterator, Union

from .errors import Problem, TerseReadError, TerseWarning
from .records import Record, StreamDecoder
from .seal import PublicKey, SecretKey, fingerprint, load_key, load_keys, load_public_key, load_signers

__all__ = ["read", "to_dataframe", "load_key", "load_public_key", "fingerprint", "SecretKey", "PublicKey", "Record",
           "Problem", "TerseReadError", "TerseWarning"]

PathLike = Union[str, "os.PathLike[str]"]
KeyLike = Union[str, "os.PathLike[str]", SecretKey]
SignerLike = Union[str, "os.PathLike[str]", PublicKey, SecretKey]
_NAME = re.compile(r"^(?P<name>.*)-(?P<date>\d{8})-(?P<seq>\d{3,9})\.tlog$")


def _reporter(on_problem: Callable[[Problem], None] | None, strict: bool) -> Callable[..., None]:
    def report(source: str, offset: int, reason: str, tampering: bool = False, torn_tail: bool = False) -> None:
        problem = Problem(source, offset, reason, tampering, torn_tail)
        if strict:
            raise TerseReadError(str(problem), problem)
        if on_problem is not None:
            on_problem(problem)
        else:
            warnings.warn(str(problem), TerseWarning, stacklevel=3)

    return report


def _load(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise TerseReadError(f"{path}: {exc.strerror or exc}") from None


def _file_records(path: str, report: Callable[..., None], utc: bool, keys: list[SecretKey],
                  signers: list[PublicKey]) -> Iterator[Record]:
    decoder = StreamDecoder(_load(path), path, report, utc, keys, signers)
    for record in decoder.records():
        record.source = path
        yield record


def _writer_identity(path: str) -> tuple[Any, ...]:
    """Info keys 2, 3, 4 and 9 (§4), read from the file's first frame without decoding the rest;
    files that do not say are all one writer. A sealed file's info frame is sealed, so its seal
    frame's run id, in the clear for this (§11.1), stands for them: one run is one writer."""
    from .frames import FLAG_SEALED, Frame, FrameReader
    from .records import INFO, SEAL
    from .seal import parse_seal_frame

    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return ()
    decoder = StreamDecoder(head, path, lambda *_: None)
    for item in FrameReader(head, lambda *_: None):
        if isinstance(item, Frame):
            if item.type == INFO and not item.flags & FLAG_SEALED:
                decoder._info(item.payload)
            elif item.type == SEAL and not item.flags:
                try:
                    return ("sealed run", parse_seal_frame(item.payload).run_id)
                except ValueError:
                    pass
            break
    info = decoder.info
    return tuple(info.get(k) for k in (2, 3, 4, 9))


def _sequences(directory: str) -> list[list[str]]:
    """The directory's ``.tlog`` files grouped into writers' sequences, each in §2.1 order."""
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".tlog"))
    except OSError as exc:
        raise TerseReadError(f"{directory}: {exc.strerror or exc}") from None
    groups: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    for n in names:
        m = _NAME.match(n)
        key: tuple[Any, ...]
        if m:
            order = (m["name"], m["date"], int(m["seq"]))
            key = (m["name"],)
        else:
            order = (n, "", 0)
            key = (n,)
        path = os.path.join(directory, n)
        groups.setdefault(key + _writer_identity(path), []).append(order + (path,))
    first = sorted(groups.values(), key=lambda files: min(files)[:3])
    return [[f[3] for f in sorted(files)] for files in first]


def _time_key(record: Record) -> int:
    return record.time_ns


def read(path: PathLike | Iterable[PathLike], *, key: KeyLike | Iterable[KeyLike] | None = None,
         on_problem: Callable[[Problem], None] | None = None, strict: bool = False,
         utc: bool = False, signers: SignerLike | Iterable[SignerLike] | None = None) -> Iterator[Record]:
    """Yields the records of a ``.tlog`` file, a directory of them, or several such paths.

    The ``time`` key is RFC 3339 in local time with its offset, as ``terse cat -o json``
    prints it, or in UTC (``Z``) with ``utc=True``, as ``terse cat --utc`` does;
    ``record.time_ns`` is the same instant in nanoseconds since 1970-01-01 UTC.

    ``key`` opens sealed files (FORMAT.md §11): an OpenSSH ed25519 private key file's path, a
    ``SecretKey`` from ``load_key``, or a list of them. Left out, the path in the environment
    variable ``TERSE_KEY`` is taken, as the CLI's ``--key`` takes it; ``key=[]`` gives none. The
    keys are read at once: a file that is not such a key raises ``TerseReadError`` here, before
    any record.

    ``signers`` are writers' public keys (``Config::sign_with``'s, as ``terse keygen`` writes
    ``KEY.pub``; a path, a ``PublicKey`` from ``load_public_key``, or a list of them), as the
    CLI's ``--signer`` takes them, and ``TERSE_SIGNER`` when left out: a sealed file whose seal
    frame none of them signed is a problem, tampering when the file was opened with its key.
    A signature that does not hold is one whether signers were given or not.
    """
    keys = load_keys(key)
    signer_keys = load_signers(signers)
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    return _read(paths, keys, signer_keys, _reporter(on_problem, strict), utc)


def _read(paths: list[PathLike], keys: list[SecretKey], signers: list[PublicKey], report: Callable[..., None],
          utc: bool) -> Iterator[Record]:
    sequences: list[list[str]] = []
    for p in paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            sequences.extend(_sequences(p))
        else:
            sequences.append([p])

    def sequence(files: list[str]) -> Iterator[Record]:
        for f in files:
            yield from _file_records(f, report, utc, keys, signers)

    if len(sequences) == 1:
        yield from sequence(sequences[0])
    else:
        yield from heapq.merge(*(sequence(s) for s in sequences), key=_time_key)


def to_dataframe(path: PathLike | Iterable[PathLike], **kwargs: Any) -> Any:
    """The records of ``read(path, **kwargs)`` as a pandas DataFrame (one column per key, with a
    ``datetime64[ns, UTC]`` time). pandas is imported only here, so it is not a requirement."""
    try:
        import pandas
    except ImportError:
        raise TerseReadError("to_dataframe needs pandas (Debian: python3-pandas; pip: pandas)") from None
    rows = list(read(path, **kwargs))
    frame = pandas.DataFrame(rows)
    if rows:
        frame["time"] = pandas.to_datetime([r.time_ns for r in rows], unit="ns", utc=True)
    return frame
