"""Problems met while reading, and the one exception type the reader raises.

FORMAT.md §9 asks a reader to report damage with its source, offset and reason and to read on,
so damage is not an exception here: it is a ``Problem`` handed to the caller's ``on_problem``
callback (or issued as a ``TerseWarning`` when there is none). ``TerseReadError`` is raised only
when the caller asks for strictness or when there is nothing to read at all (a path that does not
exist); no other exception type is meant to escape the package.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Problem:
    """One reported problem: where (file and byte offset) and why.

    ``tampering``: in a sealed file read with its key (FORMAT.md §11.5), the problem shows a
    change made after the writer wrote the file, not damage a crash leaves; its reason starts
    with "tampering: ". Only damage to the frames themselves is tampering: a problem inside a
    frame that authenticated (a record that does not match its call site, say) is what the
    writer wrote, and is reported as damage. ``torn_tail``: the file ends where its writer
    stopped (a sealed file without its end frame, §11.4), not damage inside it.
    """

    source: str
    offset: int
    reason: str
    tampering: bool = False
    torn_tail: bool = False

    def __str__(self) -> str:
        return f"{self.source}: offset {self.offset}: {self.reason}"


class TerseReadError(Exception):
    """The reader's only exception: an unreadable input, or a problem in strict mode."""

    def __init__(self, message: str, problem: Problem | None = None) -> None:
        super().__init__(message)
        self.problem = problem


class TerseWarning(UserWarning):
    """Issued for each problem when the caller gave no ``on_problem`` callback."""


class Malformed(Exception):
    """Internal: a payload does not parse; caught inside the package, never escapes it."""
