"""Read-only snapshots of the files a sandbox may see, with permissions it can read.

The sandboxed user is unprivileged, so an agent's workspace (often private to its owner) is
copied into a private staging folder, directories 0755 and files 0644 (0755 when executable),
and mounted read-only. Symlinks are copied as links (they resolve inside the sandbox, where
nothing outside the mounts exists); sockets, FIFOs and devices are left out.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

SANDBOX_UID = 65534
"""The unprivileged uid (nobody) that sandboxed code runs as when assay runs as root."""


class StagingTooLarge(Exception):
    """The tree is larger than the staging limit; the caller reports inconclusive."""


def snapshot(source: Path, destination: Path, max_bytes: int) -> int:
    """Copy ``source`` to ``destination`` (which must not exist); returns the bytes copied."""
    total = 0

    def copy(src: str, dst: str) -> str:
        nonlocal total
        total += os.lstat(src).st_size
        if total > max_bytes:
            raise StagingTooLarge(f"more than {max_bytes // (1024 * 1024)} MiB")
        return str(shutil.copyfile(src, dst, follow_symlinks=False))

    def skip_special(folder: str, names: list[str]) -> set[str]:
        skipped = set()
        for name in names:
            mode = os.lstat(os.path.join(folder, name)).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                skipped.add(name)
        return skipped

    shutil.copytree(source, destination, symlinks=True, ignore=skip_special, copy_function=copy)
    make_readable(destination, executable_from=source)
    return total


def make_readable(root: Path, executable_from: Path | None = None) -> None:
    """Directories 0755, files 0644, or 0755 when the original was executable."""
    os.chmod(root, 0o755)
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, 0o755)
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                continue
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
    for top, dirs, names in os.walk(root):
        for entry in dirs + names:
            path = os.path.join(top, entry)
            os.chmod(path, 0o755 if os.path.isdir(path) else 0o644)
            if os.geteuid() == 0:
                os.chown(path, SANDBOX_UID, SANDBOX_UID)
    os.chmod(root, 0o755)
    if os.geteuid() == 0:
        os.chown(root, SANDBOX_UID, SANDBOX_UID)
