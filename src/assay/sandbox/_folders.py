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
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path

from assay._errors import AssayError

_MS_NOSUID, _MS_NODEV = 0x2, 0x4
_MNT_DETACH = 2
_FULL_SLACK = 64 * 1024
"""Free space under which a capped folder counts as full (a write that failed for lack of room
may leave a few pages free)."""


class FolderError(AssayError):
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
        """Unmount the folder's size-capped tmpfs; a folder that is no longer mounted is fine."""
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


DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""Opening a folder by name relative to its parent's descriptor, never through a link."""


def sweep_stale(parent: Path, prefix: str, alive: Callable[[int], bool]) -> int:
    """Remove folders ``{prefix}{pid}-...`` under ``parent`` whose creating process is gone (it
    was killed before its own cleanup ran), unmounting any capped folder inside them first.
    Returns how many were removed.

    ``parent`` is usually the shared temporary folder, where any local user can plant a folder
    of that name: only folders this uid owns with mode 0700 (as ``mkdtemp`` makes them) are
    touched, and they are removed through descriptors (``remove_tree``), so a folder swapped for
    a link mid-sweep is unlinked, never followed."""
    removed = 0
    try:
        parent_fd = os.open(parent, DIR_FLAGS)
    except OSError:
        return 0
    try:
        with os.scandir(parent_fd) as found:
            names = [e.name for e in found if e.name.startswith(prefix)]
        for name in names:
            creator = name[len(prefix) :].split("-")[0]
            if "-" not in name[len(prefix) :] or not creator.isdigit() or alive(int(creator)):
                continue
            try:
                info = os.lstat(name, dir_fd=parent_fd)
            except OSError:
                continue
            if (
                not stat.S_ISDIR(info.st_mode)
                or info.st_uid != os.geteuid()
                or stat.S_IMODE(info.st_mode) != 0o700
            ):
                continue
            for point in _mount_points_under(parent / name):
                _libc().umount2(os.fsencode(point), _MNT_DETACH)
            with contextlib.suppress(OSError):
                _remove_at(parent_fd, name)
                removed += 1
    finally:
        os.close(parent_fd)
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

    Everything below ``root``'s own path is reached through folder descriptors (opened with
    ``O_NOFOLLOW``) and names relative to them, never through a path: a link, even one swapped
    in for a folder while this runs, is unlinked and never followed, and no path grows. Each
    subfolder is first moved up to sit directly under ``root`` (a rename on the same
    filesystem), so at most two folders are open at a time, whatever the depth.
    """
    parent, name = os.path.split(os.path.abspath(root))
    parent_fd = os.open(parent or "/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _remove_at(parent_fd, name)
    except FileNotFoundError:
        return
    finally:
        os.close(parent_fd)


def _remove_at(parent_fd: int, name: str) -> None:
    """Remove ``name`` (a file, a link or a whole folder) in the folder open as ``parent_fd``."""
    try:
        top = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno in (errno.ENOTDIR, errno.ELOOP):
            os.unlink(name, dir_fd=parent_fd)  # a file or a link: removed, never followed
            return
        raise
    moved: list[str] = []
    try:
        _empty(top, top, moved)
        index = 0
        while index < len(moved):
            try:
                folder = os.open(moved[index], DIR_FLAGS, dir_fd=top)
            except OSError as exc:
                if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise
                os.unlink(moved[index], dir_fd=top)
                moved[index] = ""
            else:
                try:
                    _empty(folder, top, moved)
                finally:
                    os.close(folder)
            index += 1
        for folder_name in moved:
            if folder_name:
                os.rmdir(folder_name, dir_fd=top)
    finally:
        os.close(top)
    os.rmdir(name, dir_fd=parent_fd)


def _empty(folder: int, top: int, moved: list[str]) -> None:
    """Unlink every non-folder in ``folder`` and move each subfolder up into ``top``."""
    with contextlib.suppress(OSError):
        os.fchmod(folder, 0o700)  # a folder the sandbox made unwritable still empties
    with os.scandir(folder) as entries:
        children = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
    for child, is_dir in children:
        if not is_dir:
            os.unlink(child, dir_fd=folder)
        elif folder == top:
            moved.append(child)
        else:
            target = f".assay-rm-{len(moved)}"
            while _exists_at(top, target):
                target += "x"
            os.rename(child, target, src_dir_fd=folder, dst_dir_fd=top)
            moved.append(target)


def _exists_at(folder: int, name: str) -> bool:
    try:
        os.lstat(name, dir_fd=folder)
    except FileNotFoundError:
        return False
    return True


def walk_files(
    root: Path, max_entries: int, max_depth: int
) -> Iterator[tuple[str, int, str, os.stat_result]]:
    """Regular files under ``root``: (path relative to ``root``, the descriptor of the folder
    holding it, its name, its lstat), depth-first in name order, through folder descriptors
    (so neither a link swapped in mid-walk nor a path past PATH_MAX matters); the descriptor is
    valid until the next item. Stops after ``max_entries`` entries of any kind and ignores what
    is deeper than ``max_depth``. Raises ``FolderError`` when the tree has more entries."""
    try:
        top = os.open(root, DIR_FLAGS)
    except OSError:
        return
    stack: list[tuple[int, str, Iterator[tuple[str, os.stat_result]], int]] = [
        (top, "", iter(_children(top)), 0)
    ]
    seen = 0
    try:
        while stack:
            fd, prefix, children, depth = stack[-1]
            entry = next(children, None)
            if entry is None:
                stack.pop()
                os.close(fd)
                continue
            seen += 1
            if seen > max_entries:
                raise FolderError(f"more than {max_entries} entries under {root.name}")
            name, info = entry
            if stat.S_ISDIR(info.st_mode):
                if depth + 1 < max_depth:
                    try:
                        inner = os.open(name, DIR_FLAGS, dir_fd=fd)
                    except OSError:
                        continue
                    stack.append((inner, f"{prefix}{name}/", iter(_children(inner)), depth + 1))
            elif stat.S_ISREG(info.st_mode):
                yield f"{prefix}{name}", fd, name, info
    finally:
        for fd, *_ in stack:
            os.close(fd)


def _children(folder: int) -> list[tuple[str, os.stat_result]]:
    """(name, lstat) of the entries of an open folder, sorted; what cannot be read is left out."""
    found: list[tuple[str, os.stat_result]] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    found.append((entry.name, entry.stat(follow_symlinks=False)))
    except OSError:
        return []
    return sorted(found, key=lambda item: item[0])
