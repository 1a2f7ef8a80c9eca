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
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections import deque
from pathlib import Path

SANDBOX_UID = 65534
"""The unprivileged uid (nobody) that sandboxed code runs as when assay runs as root."""
MAX_ENTRIES = 100_000
"""Entries (files, folders, links) a staged tree may hold."""
MAX_DEPTH = 128
"""Folders a staged tree may nest."""


class StagingTooLarge(Exception):
    """The tree is larger than the staging limit; the caller reports inconclusive."""


def _too_large(max_bytes: int) -> StagingTooLarge:
    return StagingTooLarge(f"more than {max_bytes / (1024 * 1024):g} MiB")


def copy_file_capped(source: str | Path, destination: str | Path, budget: int) -> int:
    """Copy one regular file (not a link, device or FIFO: those return -1 and copy nothing),
    reading at most ``budget + 1`` bytes; returns the bytes copied. The copy is 0644, or 0755
    when the source is executable. Raises StagingTooLarge past ``budget``."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return -1
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return -1
        mode = 0o755 if info.st_mode & 0o111 else 0o644
        out = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
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


def snapshot(source: Path, destination: Path, max_bytes: int, links: bool = True) -> int:
    """Copy ``source`` to ``destination`` (which must not exist); returns the bytes copied.

    ``links``: copy symbolic links as links (True) or leave them out.
    """
    os.mkdir(destination)
    os.chmod(destination, 0o755)
    total = 0
    entries = 0
    queue: deque[tuple[str, str, int]] = deque([(str(source), str(destination), 0)])
    try:
        while queue:
            folder, target_folder, depth = queue.popleft()
            try:
                with os.scandir(folder) as found:
                    children = sorted(found, key=lambda e: e.name)
            except OSError:
                continue  # a folder that cannot be listed is left out, as a device is
            for entry in children:
                entries += 1
                if entries > MAX_ENTRIES:
                    raise StagingTooLarge(f"more than {MAX_ENTRIES} entries")
                try:
                    mode = entry.stat(follow_symlinks=False).st_mode
                except OSError:
                    continue
                target = os.path.join(target_folder, entry.name)
                if stat.S_ISLNK(mode):
                    if links:
                        with contextlib.suppress(OSError):
                            os.symlink(os.readlink(entry.path), target)
                elif stat.S_ISDIR(mode):
                    if depth + 1 > MAX_DEPTH:
                        raise StagingTooLarge(f"folders nested deeper than {MAX_DEPTH}")
                    os.mkdir(target)
                    os.chmod(target, 0o755)
                    queue.append((entry.path, target, depth + 1))
                elif stat.S_ISREG(mode):
                    copied = copy_file_capped(entry.path, target, max_bytes - total)
                    total += max(copied, 0)
    except StagingTooLarge as exc:
        raise (_too_large(max_bytes) if not str(exc) else exc) from None
    return total


def _folders_and_files(root: Path) -> tuple[list[str], list[str]]:
    """Every folder and non-link file under ``root`` (root first), without recursion."""
    folders, files = [str(root)], []
    index = 0
    while index < len(folders):
        with os.scandir(folders[index]) as found:
            for entry in found:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                elif not entry.is_symlink():
                    files.append(entry.path)
        index += 1
    return folders, files


def make_readable(root: Path, executable_from: Path | None = None) -> None:
    """Directories 0755, files 0644, or 0755 when the original was executable."""
    folders, files = _folders_and_files(root)
    for folder in folders:
        os.chmod(folder, 0o755)
    for path in files:
        mode = 0o644
        if executable_from is not None:
            original = executable_from / os.path.relpath(path, root)
            if os.path.exists(original) and os.stat(original).st_mode & 0o111:
                mode = 0o755
        os.chmod(path, mode)


def writable_by_sandbox(root: Path) -> None:
    """Hand a folder (and all in it) to the sandbox user, for a writable mount (/output, /proof).

    As root, the tree is chowned to the sandbox uid; otherwise the sandbox runs as the caller,
    who already owns it. Directories 0755, files 0644.
    """
    folders, files = _folders_and_files(root)
    for paths, mode in ((folders, 0o755), (files, 0o644)):
        for path in paths:
            os.chmod(path, mode)
            if os.geteuid() == 0:
                os.chown(path, SANDBOX_UID, SANDBOX_UID)
