"""Which proof toolchains this machine has, their versions and library identities.

Each is looked up once per process. A missing toolchain is not an error of the work: the kinds
report it as inconclusive, naming what is missing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
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
    return Toolchain("coq", os.path.realpath(binary), _version([binary, "--version"]), library)


@lru_cache(maxsize=1)
def lean() -> Toolchain | None:
    """Lean through ``lake`` (a Lake project is the judging unit); None where lake is absent."""
    binary = shutil.which("lake")
    if binary is None:
        return None
    return Toolchain(
        "lean", os.path.realpath(binary), _version([binary, "env", "lean", "--version"]), "lake"
    )
