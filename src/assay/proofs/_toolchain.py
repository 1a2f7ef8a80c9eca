"""Which proof toolchains this machine has, their versions and library identities.

Each is looked up once per process. A missing toolchain is not an error of the work: the kinds
report it as inconclusive, naming what is missing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

AGDA_STDLIB = Path(os.environ.get("ASSAY_AGDA_STDLIB", "/usr/share/agda-stdlib"))


@dataclass(frozen=True)
class Toolchain:
    language: str
    binary: str
    version: str
    library: str
    """Identity of the library the judgments may import (path and a digest of what is there)."""
    checker: str = ""
    """An independent checker of the compiled output, where the language has one (coqchk)."""
    search_path: tuple[str, ...] = ()
    """Lean: the library folders a judgment imports from (``LEAN_PATH``), Lean's own included."""
    mounts: tuple[str, ...] = ()
    """Host folders a judgment must see (read-only, same path): a toolchain outside /usr."""


def _version(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (
        (out.stdout or out.stderr).strip().splitlines()[0]
        if (out.stdout or out.stderr)
        else "unknown"
    )


def _tree_identity(root: Path, pattern: str) -> str:
    """The path and a digest of (name, size, mtime) of the library's interface files."""
    if not root.is_dir():
        return "none"
    digest = hashlib.sha256()
    for path in sorted(root.rglob(pattern)):
        stat = path.stat()
        digest.update(f"{path.relative_to(root)}:{stat.st_size}:{int(stat.st_mtime)}\n".encode())
    return f"{root}@{digest.hexdigest()[:16]}"


@lru_cache(maxsize=1)
def agda() -> Toolchain | None:
    binary = shutil.which("agda")
    if binary is None:
        return None
    library = _tree_identity(AGDA_STDLIB, "*.agdai")
    return Toolchain("agda", os.path.realpath(binary), _version([binary, "--version"]), library)


@lru_cache(maxsize=1)
def coq() -> Toolchain | None:
    binary = shutil.which("coqc")
    if binary is None:
        return None
    where = _version([binary, "-where"])
    library = _tree_identity(Path(where) / "theories", "*.vo") if where != "unknown" else "unknown"
    checker = shutil.which("coqchk")
    if checker is None:
        return None  # without the independent checker no Coq verdict can be green
    version = _version([binary, "--version"]) + " / " + _version([checker, "--version"])
    return Toolchain("coq", os.path.realpath(binary), version, library, os.path.realpath(checker))


LEAN_PROJECT_VARIABLE = "ASSAY_LEAN_PROJECT"
"""A Lake project folder (its ``lean-toolchain``, ``lake-manifest.json`` and built packages, e.g.
Mathlib) whose toolchain and libraries Lean judgments use; unset: the default toolchain, core only."""


@lru_cache(maxsize=1)
def lean() -> Toolchain | None:
    """Lean where ``lake`` is on PATH; None elsewhere. See :func:`lean_in`."""
    if shutil.which("lake") is None:
        return None
    project = os.environ.get(LEAN_PROJECT_VARIABLE)
    return lean_in(Path(project) if project else None)


def lean_in(project: Path | None) -> Toolchain | None:
    """The Lean toolchain and libraries that apply in ``project`` (None: an empty folder).

    Everything is asked *in that folder*, where its ``lean-toolchain`` applies (elan picks the
    toolchain by folder): the installation prefix (``lean --print-prefix``), so judgments call
    that ``lean`` directly and never ``lake`` (which would read a lakefile the solution could
    write); its version; and the library path (``lake env printenv LEAN_PATH``). The library's
    identity digests the toolchain file, the Lake manifest and every ``.olean`` on that path
    (name, size, mtime), so rebuilding or updating a library changes every cache key.
    """
    with tempfile.TemporaryDirectory(prefix="assay-lean-") as empty:
        folder = project if project is not None else Path(empty)
        lean_command = shutil.which("lean") or str(
            Path(shutil.which("lake") or "lake").parent / "lean"
        )
        prefix = _output([lean_command, "--print-prefix"], folder)
        if prefix is None or not Path(prefix).is_dir():
            return None
        binary = str(Path(prefix) / "bin" / "lean")
        version = _output([binary, "--version"], folder) or "unknown"
        own = str(Path(prefix) / "lib" / "lean")
        found = _output(["lake", "env", "printenv", "LEAN_PATH"], folder) if project else None
    if project is not None and found is None:
        return None  # a project whose library path cannot be read judges nothing
    search = [entry for entry in (found or "").split(os.pathsep) if entry]
    search = [*dict.fromkeys([*search, own])]
    digest = hashlib.sha256(f"{prefix}\n{version}\n".encode())
    for name in ("lean-toolchain", "lake-manifest.json"):
        path = (project or Path("/nonexistent")) / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"-"))
    for entry in search:
        digest.update(_tree_identity(Path(entry), "*.olean").encode() + b"\n")
    mounts = tuple(path for path in dict.fromkeys([prefix, *search]) if not _under(path, "/usr"))
    return Toolchain(
        "lean",
        binary,
        version,
        f"{project or 'core'}@{digest.hexdigest()[:16]}",
        search_path=tuple(search),
        mounts=mounts,
    )


def _under(path: str, root: str) -> bool:
    return os.path.realpath(path) == root or os.path.realpath(path).startswith(root + "/")


def _output(argv: list[str], cwd: Path) -> str | None:
    """The first line ``argv`` prints in ``cwd``, or None when it fails."""
    try:
        out = subprocess.run(
            argv, capture_output=True, text=True, timeout=120, check=False, cwd=cwd
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = out.stdout.strip().splitlines()
    return lines[0].strip() if out.returncode == 0 and lines else None
