"""Folders a sandboxed process may write: size-capped, walked without recursion, always removed.

A host folder bind-mounted writable (the run's /tmp, a checker's /output) is only as bounded as
the filesystem under it. As root, each is its own tmpfs mounted on the host with a size and an
inode cap, so a full folder is ``ENOSPC`` inside the sandbox, a fact the parent can read
afterwards (``full``), and removing it is one unmount, however deep the tree inside. Its pages
are charged to the memory cgroup of the process that wrote them, so they also count against the
run's memory limit. Without root a plain folder is used: no cap beyond ``RLIMIT_FSIZE`` per file,
and the parent walks it within fixed bounds.

Walks here never recurse (Python 3.11's ``os.walk`` and ``shutil.rmtree`` do, and 1,500 nested
folders exhaust the interpreter's stack) and never follow symbolic links.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
from collections import deque
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path

_MS_NOSUID, _MS_NODEV = 0x2, 0x4
_MNT_DETACH = 2
_FULL_SLACK = 64 * 1024
"""Free space under which a capped folder counts as full (a write that failed for lack of room
may leave a few pages free)."""


class FolderError(Exception):
    """A capped folder could not be made or removed (assay's machinery, not the work)."""


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


class CappedFolder:
    """A writable folder of at most ``size_bytes`` and ``inodes`` entries (a tmpfs, as root).

    ``owner`` is the uid and gid that own its top (the sandbox user, or this user); ``mode`` its
    permissions. Use as a context manager, or call ``close``: the folder and all in it go.
    """

    def __init__(
        self, path: Path, size_bytes: int, inodes: int, owner: int, mode: int = 0o755
    ) -> None:
        self.path = path
        self.size_bytes = size_bytes
        self.mounted = False
        path.mkdir(mode=0o700)
        if os.geteuid() == 0:
            options = f"size={size_bytes},nr_inodes={inodes},mode={mode:o},uid={owner},gid={owner}"
            result = _libc().mount(
                b"assay-scratch",
                os.fsencode(path),
                b"tmpfs",
                _MS_NOSUID | _MS_NODEV,
                options.encode(),
            )
            if result != 0:
                code = ctypes.get_errno()
                with contextlib.suppress(OSError):
                    path.rmdir()
                raise FolderError(f"cannot mount a tmpfs at {path}: {os.strerror(code)}")
            self.mounted = True
        else:
            os.chmod(path, mode)

    def full(self) -> bool:
        """Whether the folder ran out of room or entries (meaningful only when ``mounted``)."""
        if not self.mounted:
            return False
        info = os.statvfs(self.path)
        return info.f_bavail * info.f_frsize < _FULL_SLACK or info.f_favail == 0

    def close(self) -> None:
        if self.mounted:
            if _libc().umount2(os.fsencode(self.path), _MNT_DETACH) != 0:
                code = ctypes.get_errno()
                if code != errno.EINVAL:  # EINVAL: no longer a mount point
                    raise FolderError(f"cannot unmount {self.path}: {os.strerror(code)}")
            self.mounted = False
        try:
            os.rmdir(self.path)  # the usual case: the tmpfs, and all in it, went with the unmount
        except OSError:
            remove_tree(self.path)

    def __enter__(self) -> CappedFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def sweep_stale(parent: Path, prefix: str, alive: Callable[[int], bool]) -> int:
    """Remove folders ``{prefix}{pid}-...`` under ``parent`` whose creating process is gone (it
    was killed before its own cleanup ran), unmounting any capped folder inside them first.
    Returns how many were removed."""
    removed = 0
    for path in parent.glob(f"{prefix}*-*"):
        creator = path.name[len(prefix) :].split("-")[0]
        if not creator.isdigit() or alive(int(creator)):
            continue
        for point in _mount_points_under(path):
            _libc().umount2(os.fsencode(point), _MNT_DETACH)
        with contextlib.suppress(OSError):
            remove_tree(path)
            removed += 1
    return removed


def _mount_points_under(folder: Path) -> list[str]:
    """Mount points at or below ``folder``, deepest first (from /proc/self/mountinfo)."""
    top = str(folder).rstrip("/") + "/"
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    points = []
    for line in lines:
        fields = line.split()
        if len(fields) > 4:
            point = fields[4].encode().decode("unicode_escape")  # mountinfo escapes as \040
            if (point + "/").startswith(top):
                points.append(point)
    return sorted(points, key=len, reverse=True)


def remove_tree(root: Path) -> None:
    """Remove ``root`` and everything under it, at any depth, without recursion.

    Each subfolder is first moved up to sit directly under ``root`` (a rename on the same
    filesystem), so no path ever grows past one level and no stack of open folders builds up.
    Symbolic links are removed, never followed.
    """
    if not os.path.lexists(root):
        return
    if not stat.S_ISDIR(os.lstat(root).st_mode):
        os.unlink(root)
        return
    flat: list[str] = [str(root)]
    index = 0
    moved = 0
    while index < len(flat):
        folder = flat[index]
        index += 1
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o700)  # a folder the sandbox made unwritable still empties
        with os.scandir(folder) as entries:
            children = list(entries)
        for entry in children:
            if entry.is_dir(follow_symlinks=False):
                if folder == str(root):
                    flat.append(entry.path)
                    continue
                moved += 1
                target = os.path.join(root, f".assay-rm-{moved}")
                while os.path.lexists(target):
                    moved += 1
                    target = os.path.join(root, f".assay-rm-{moved}")
                os.rename(entry.path, target)
                flat.append(target)
            else:
                os.unlink(entry.path)
    for folder in reversed(flat):
        os.rmdir(folder)


def walk_files(
    root: Path, max_entries: int, max_depth: int
) -> Iterator[tuple[Path, os.stat_result]]:
    """Regular files under ``root`` (path, lstat), breadth-first and sorted, never following
    links; stops after ``max_entries`` entries of any kind and ignores what is deeper than
    ``max_depth``. Raises ``FolderError`` when the tree has more entries than allowed."""
    if not root.is_dir() or root.is_symlink():
        return
    queue: deque[tuple[Path, int]] = deque([(root, 0)])
    seen = 0
    while queue:
        folder, depth = queue.popleft()
        try:
            with os.scandir(folder) as entries:
                children = sorted(entries, key=lambda e: e.name)
        except OSError:
            continue
        for entry in children:
            seen += 1
            if seen > max_entries:
                raise FolderError(f"more than {max_entries} entries under {root.name}")
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                if depth + 1 < max_depth:
                    queue.append((Path(entry.path), depth + 1))
            elif stat.S_ISREG(info.st_mode):
                yield Path(entry.path), info
