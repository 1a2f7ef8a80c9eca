"""What a proof toolchain is (binary, version, library identity) and the helpers that find one.

Each language finds its own (``ProofLanguage.toolchain``, from ``Config``), once per process and
configuration. A missing toolchain is not an error of the work: the kinds report it as
inconclusive, naming what is missing.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Toolchain:
    """One installed checker: what runs, which version, and the library it judges against."""

    language: str
    binary: str
    version: str
    library: str
    """Identity of the library the judgments may import (path and a digest of what is there)."""
    checker: str = ""
    """An independent checker of the compiled output, where the language has one (coqchk)."""
    search_path: tuple[str, ...] = ()
    """The library folders a judgment imports from (Agda: agda-stdlib; Lean: ``LEAN_PATH``,
    Lean's own included)."""
    mounts: tuple[str, ...] = ()
    """Host folders a judgment must see (read-only, same path): a toolchain outside /usr."""
    launch: tuple[str, ...] = ()
    """What a command starts with, before the checker's own arguments, when that is not the
    ``binary`` alone: a launcher and the runtime options it is given (Agda: ``+RTS ... -RTS``).
    Part of every step, so of the verdict's command and of the cache key."""
    fallback: Toolchain | None = None
    """The toolchain that judges instead when this one cannot read its own library for a file
    (Agda under ``agda_toolchain="auto"``: Debian's, behind the PyPI one); None: no other."""
    lacking: frozenset[str] = frozenset()
    """Library modules this toolchain has no compiled form of (the PyPI Agda's
    ``agda-stdlib.SKIPPED``): a file importing one is judged by ``fallback``."""

    @property
    def command(self) -> tuple[str, ...]:
        """The start of every command line that runs this checker (``launch`` or ``binary``)."""
        return self.launch or (self.binary,)


def version_of(argv: list[str]) -> str:
    """The first line ``argv`` prints (its version), or "unknown"."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (
        (out.stdout or out.stderr).strip().splitlines()[0]
        if (out.stdout or out.stderr)
        else "unknown"
    )


def tree_identity(root: Path, pattern: str) -> str:
    """The path and a digest of (name, size, mtime) of the library's interface files."""
    if not root.is_dir():
        return "none"
    digest = hashlib.sha256()
    for path in sorted(root.rglob(pattern)):
        stat = path.stat()
        digest.update(f"{path.relative_to(root)}:{stat.st_size}:{int(stat.st_mtime)}\n".encode())
    return f"{root}@{digest.hexdigest()[:16]}"


def under(path: str, root: str) -> bool:
    """Whether ``path`` (links resolved) is ``root`` or inside it."""
    return os.path.realpath(path) == root or os.path.realpath(path).startswith(root + "/")


def first_line(argv: list[str], cwd: Path) -> str | None:
    """The first line ``argv`` prints in ``cwd``, or None when it fails."""
    try:
        out = subprocess.run(
            argv, capture_output=True, text=True, timeout=120, check=False, cwd=cwd
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = out.stdout.strip().splitlines()
    return lines[0].strip() if out.returncode == 0 and lines else None


def existing(paths: tuple[str, ...]) -> tuple[str, ...]:
    """The ``paths`` that exist on this machine (a sandbox mount of a missing path fails)."""
    return tuple(path for path in paths if os.path.exists(path))
