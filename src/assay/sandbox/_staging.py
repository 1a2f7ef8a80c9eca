"""Read-only snapshots of the files a sandbox may see, with permissions it can read.

The sandboxed user is unprivileged, so an agent's workspace (often private to its owner) is
copied into a private staging folder, directories 0755 and files 0644 (0755 when executable),
and mounted read-only. Symlinks are copied as links (they resolve inside the sandbox, where
nothing outside the mounts exists); sockets, FIFOs and devices are left out.

The copy is bounded by what it actually reads, not by what ``stat`` says: a workspace that
points at ``/proc/self`` (files whose size reads 0, folders that never end) or a file that grows
while it is copied stops at the cap with ``StagingTooLarge``. The walk is breadth-first without
recursion, with caps on entries and depth; a file is opened without following links or blocking
and copied only when the open descriptor is a regular file.

Below the source's own path everything goes through folder descriptors: each folder is opened
relative to its parent with ``O_NOFOLLOW`` and each copy is made relative to its destination
folder's descriptor. Path length never matters (a workspace of 250-character names 16 deep
copies like any other), and an agent process swapping a folder for a link mid-copy gets the link
copied as a link or the copy refused (``StagingRefused``, a finding about the work), never the
link's target copied by root.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from assay._errors import InvalidInput

SANDBOX_UID = 65534
"""The unprivileged uid (nobody) that sandboxed code runs as when assay runs as root."""
MAX_ENTRIES = 100_000
"""Entries (files, folders, links) a staged tree may hold."""
MAX_DEPTH = 128
"""Folders a staged tree may nest."""


class StagingTooLarge(InvalidInput):
    """The tree is larger than the staging limit; the caller reports inconclusive."""


class StagingRefused(StagingTooLarge):
    """The tree changed shape while it was copied (an entry vanished, or a folder became a
    link); like the caps, a finding about the tree, never assay's failure."""


_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_SHAPE_ERRORS = (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.ENAMETOOLONG)
"""Errors on the source side that come from the tree's shape (or its owner changing it)."""


def _too_large(max_bytes: int) -> StagingTooLarge:
    return StagingTooLarge(f"more than {max_bytes / (1024 * 1024):g} MiB")


def _refused(name: str, exc: OSError) -> StagingRefused:
    return StagingRefused(f"{name!r} changed while it was copied ({exc.strerror})")


def copy_file_capped(
    source: str | Path,
    destination: str | Path,
    budget: int,
    *,
    source_dir: int | None = None,
    destination_dir: int | None = None,
) -> int:
    """Copy one regular file (not a link, device or FIFO: those return -1 and copy nothing),
    reading at most ``budget + 1`` bytes; returns the bytes copied. The copy is 0644, or 0755
    when the source is executable. Names are relative to ``source_dir`` / ``destination_dir``
    when given. Raises StagingTooLarge past ``budget``, StagingRefused when the source vanished
    or became a link between listing and opening."""
    try:
        fd = os.open(
            source,
            os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC,
            dir_fd=source_dir,
        )
    except OSError as exc:
        if source_dir is not None and exc.errno in _SHAPE_ERRORS:
            raise _refused(str(source), exc) from None
        return -1
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return -1
        mode = 0o755 if info.st_mode & 0o111 else 0o644
        out = os.open(
            destination,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            mode,
            dir_fd=destination_dir,
        )
        copied = 0
        try:
            os.fchmod(out, mode)
            while True:
                try:
                    chunk = os.read(fd, min(1 << 20, budget + 1 - copied))
                except OSError:
                    break  # an unreadable file (/proc's mem, an I/O error) ends where it fails
                if not chunk:
                    break
                copied += len(chunk)
                if copied > budget:
                    raise StagingTooLarge("")
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view) :]
        finally:
            os.close(out)
        return copied
    finally:
        os.close(fd)


def _entries(folder: int) -> list[tuple[str, int]]:
    """(name, lstat mode) of an open folder's entries, sorted; an unlistable folder is empty."""
    found: list[tuple[str, int]] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    found.append((entry.name, entry.stat(follow_symlinks=False).st_mode))
    except OSError:
        return []
    return sorted(found)


def snapshot(source: Path, destination: Path, max_bytes: int, links: bool = True) -> int:
    """Copy ``source`` to ``destination`` (which must not exist); returns the bytes copied.

    ``links``: copy symbolic links as links (True) or leave them out. Below ``source`` every
    folder is opened relative to its parent's descriptor with ``O_NOFOLLOW`` and every copy is
    made relative to the destination folder's descriptor: path length never matters, and a
    folder swapped for a link while this runs is refused (StagingRefused), never followed.
    """
    os.mkdir(destination, 0o755)
    os.chmod(destination, 0o755)
    try:  # the source's own path is the caller's: a link there is followed
        top = os.open(source, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise _refused(str(source), exc) from None
    stack: list[tuple[int, int, Iterator[tuple[str, int]], int]] = []
    try:
        stack.append((top, os.open(destination, _DIR), iter(_entries(top)), 0))
    except OSError:
        os.close(top)
        raise
    total = 0
    entries = 0
    try:
        while stack:
            folder, target, children, depth = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                os.close(folder)
                os.close(target)
                continue
            name, mode = child
            entries += 1
            if entries > MAX_ENTRIES:
                raise StagingTooLarge(f"more than {MAX_ENTRIES} entries")
            if stat.S_ISLNK(mode):
                if links:
                    try:
                        where = os.readlink(name, dir_fd=folder)
                    except OSError as exc:
                        raise _refused(name, exc) from None
                    os.symlink(where, name, dir_fd=target)
            elif stat.S_ISDIR(mode):
                if depth + 1 > MAX_DEPTH:
                    raise StagingTooLarge(f"folders nested deeper than {MAX_DEPTH}")
                try:
                    inner = os.open(name, _DIR, dir_fd=folder)
                except OSError as exc:
                    if exc.errno in _SHAPE_ERRORS:
                        raise _refused(name, exc) from None
                    continue  # a folder root cannot open (in /proc) is left out, as a device is
                try:
                    os.mkdir(name, 0o755, dir_fd=target)
                    made = os.open(name, _DIR, dir_fd=target)
                    os.fchmod(made, 0o755)
                except BaseException:
                    os.close(inner)
                    raise
                stack.append((inner, made, iter(_entries(inner)), depth + 1))
            elif stat.S_ISREG(mode):
                copied = copy_file_capped(
                    name, name, max_bytes - total, source_dir=folder, destination_dir=target
                )
                total += max(copied, 0)
    except StagingTooLarge as exc:
        raise (_too_large(max_bytes) if not str(exc) else exc) from None
    finally:
        for folder, target, _, _ in stack:
            os.close(folder)
            os.close(target)
    return total


def _walk(root: Path) -> Iterator[tuple[str, int, str, bool]]:
    """Every entry under ``root`` but links: (path relative to root, its folder's descriptor,
    its name, whether it is a folder), through descriptors, without recursion; ``root`` itself
    first as ("", its descriptor, "", True)."""
    top = os.open(root, _DIR)
    stack: list[tuple[int, str, Iterator[tuple[str, int]]]] = [(top, "", iter(_entries(top)))]
    try:
        yield "", top, "", True
        while stack:
            folder, prefix, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                os.close(folder)
                continue
            name, mode = child
            if stat.S_ISDIR(mode):
                inner = os.open(name, _DIR, dir_fd=folder)
                stack.append((inner, f"{prefix}{name}/", iter(_entries(inner))))
                yield f"{prefix}{name}", inner, "", True
            elif not stat.S_ISLNK(mode):
                yield f"{prefix}{name}", folder, name, False
    finally:
        for folder, _, _ in stack:
            os.close(folder)


def make_readable(root: Path, executable_from: Path | None = None) -> None:
    """Directories 0755, files 0644, or 0755 when the original was executable."""
    for relative, folder, name, is_dir in _walk(root):
        if is_dir:
            os.fchmod(folder, 0o755)
            continue
        mode = 0o644
        if executable_from is not None:
            original = executable_from / relative
            if os.path.exists(original) and os.stat(original).st_mode & 0o111:
                mode = 0o755
        os.chmod(name, mode, dir_fd=folder)


def writable_by_sandbox(root: Path) -> None:
    """Hand a folder (and all in it) to the sandbox user, for a writable mount (/output, /proof).

    As root, the tree is chowned to the sandbox uid; otherwise the sandbox runs as the caller,
    who already owns it. Directories 0755, files 0644.
    """
    owner = os.geteuid() == 0
    for _, folder, name, is_dir in _walk(root):
        if is_dir:
            os.fchmod(folder, 0o755)
            if owner:
                os.fchown(folder, SANDBOX_UID, SANDBOX_UID)
            continue
        os.chmod(name, 0o644, dir_fd=folder)
        if owner:
            os.chown(name, SANDBOX_UID, SANDBOX_UID, dir_fd=folder, follow_symlinks=False)
