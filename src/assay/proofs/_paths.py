"""Which relative paths assay may stage a proof file at: checked names, never a path from text.

A proof's files are named after text the candidate or the author wrote (an Agda module header,
a Coq or Lean module name). Such a name becomes a path only when every part of it is a name in
the language's own grammar *and* a plain file name: no ``/`` or ``\\`` inside a part, no ``.``
or ``..`` part, no leading ``-`` (it would read as a command-line flag), nothing invisible, and
short enough for any file system. The staging (``_batch.stage``) checks again and creates every
file under its scratch folder without following links, so a name that slipped past a plan
still cannot write anywhere else.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Callable
from pathlib import Path

from assay._errors import InvalidInput

MAX_PART_BYTES = 200
MAX_PATH_BYTES = 1000
MAX_PARTS = 32


class UnsafePath(InvalidInput):
    """A file name assay will not stage: it is not a plain relative name inside the scratch folder."""


GRAMMARS: dict[str, tuple[str, Callable[[str], bool]]] = {}
"""Each language's source suffix: what a name part is, and its test. Filled by the language
modules (``source_grammar``) when the package loads."""


def source_grammar(suffix: str, what: str, valid: Callable[[str], bool]) -> None:
    """Declare that every part of a ``suffix`` source file's path must pass ``valid``."""
    GRAMMARS[suffix] = (what, valid)


def module_problem(name: str, suffix: str) -> str | None:
    """Why the dotted module ``name`` cannot name a ``suffix`` source file, or None."""
    if "/" in name or "\\" in name:
        reason: str | None = "a name part holding '/' or '\\' would name a folder"
    else:
        reason = _reason(name.replace(".", "/") + suffix)
    return None if reason is None else f"the module name {name[:120]!r} ({reason})"


def path_problem(relative: str) -> str | None:
    """Why ``relative`` is not a path assay stages a source file at, or None when it is."""
    reason = _reason(relative)
    return None if reason is None else f"the file name {relative[:120]!r} ({reason})"


def _reason(relative: str) -> str | None:
    if not relative or len(relative.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        return f"empty or longer than {MAX_PATH_BYTES} bytes"
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") for c in relative):
        return "it holds a control or invisible character"
    if relative.startswith("/") or "\\" in relative:
        return "not a relative name inside the scratch folder"
    parts = relative.split("/")
    if len(parts) > MAX_PARTS:
        return f"more than {MAX_PARTS} parts"
    for part in parts:
        if part in ("", ".", "..") or part.startswith("-"):
            return f"the part {part!r} is not a plain file name"
        if len(part.encode("utf-8", "surrogatepass")) > MAX_PART_BYTES:
            return f"a part is longer than {MAX_PART_BYTES} bytes"
    suffix = next((s for s in GRAMMARS if parts[-1].endswith(s)), None)
    if suffix is None:
        return None
    what, valid = GRAMMARS[suffix]
    for stem in [*parts[:-1], parts[-1][: -len(suffix)]]:
        if not valid(stem):
            return f"the part {stem[:80]!r} is not {what}"
    return None


MAX_SOURCE_BYTES = 4 * 1024 * 1024
"""The largest proof source assay reads from a path it was given (a hole file, a lane file)."""


def read_source(path: Path, max_bytes: int = MAX_SOURCE_BYTES) -> bytes:
    """The bytes of one regular file, at most ``max_bytes``: a FIFO, a device or ``/dev/zero``
    is refused at once (opened non-blocking, checked before reading), never read forever."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise InvalidInput(f"cannot read: {exc.strerror}", where=str(path)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InvalidInput("not a regular file", where=str(path))
        chunks, total = [], 0
        while chunk := os.read(fd, min(1 << 20, max_bytes + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise InvalidInput(f"larger than {max_bytes} bytes", where=str(path))
        return b"".join(chunks)
    finally:
        os.close(fd)
