"""Reading an author's or caller's file: only a regular file, and never more than a cap.

Task files, withheld checks, proof obligations and answer files are named by people, and a name
can point at ``/dev/zero`` (endless), a FIFO (blocks forever) or a huge file. Each is opened
without blocking, checked to be a regular file on the open descriptor (so it cannot be swapped
between the check and the read), and read to at most ``cap + 1`` bytes.
"""

from __future__ import annotations

import os
import select
import stat
from pathlib import Path

from assay._errors import InvalidInput


class UnreadableFile(InvalidInput, OSError):
    """A named file that cannot be used as input: missing, not a regular file, over its cap, or
    not UTF-8. An OSError too, so code that already handles a failed read handles this one
    (its ``strerror`` is the reason, for handlers that print that)."""

    def __init__(self, message: str, *, where: str | None = None) -> None:
        super().__init__(message, where=where)
        self.strerror = message


_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
}


def read_regular(path: str | Path, cap: int, what: str) -> bytes:
    """The bytes of the regular file at ``path`` (links followed), at most ``cap`` of them.

    Raises UnreadableFile (an InvalidInput whose ``where`` is the path; the message names
    ``what``) when it is missing, unreadable, not a regular file, or larger than ``cap`` bytes.
    """
    where = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise UnreadableFile(f"cannot read: {exc.strerror}", where=where) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise UnreadableFile(
                f"is {kind}, not a regular file (the {what} must be one)", where=where
            )
        chunks: list[bytes] = []
        size = 0
        while size <= cap:
            chunk = os.read(fd, min(1 << 20, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except UnreadableFile:
        raise
    except OSError as exc:
        raise UnreadableFile(f"cannot read: {exc.strerror}", where=where) from None
    finally:
        os.close(fd)
    if size > cap:
        raise UnreadableFile(f"is larger than {cap} bytes (the cap for the {what})", where=where)
    return b"".join(chunks)


def read_regular_text(path: str | Path, cap: int, what: str) -> str:
    """``read_regular`` decoded as UTF-8; text that is not UTF-8 is an UnreadableFile too."""
    data = read_regular(path, cap, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(
            f"is not UTF-8 text (byte {exc.start}; the {what} must be)", where=str(path)
        ) from None


def readable(fd: int, timeout: float | None) -> bool:
    """Whether ``fd`` has data or every writer closed it, waiting up to ``timeout`` seconds
    (None: as long as it takes). ``poll``, not ``select``, which refuses descriptors from 1024
    on: a busy verifier has them (tests/adversarial/test_zygote_verifier_descriptors.py)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(None if timeout is None else max(0.0, timeout) * 1000))
