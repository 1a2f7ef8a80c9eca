"""Which Agda judges: Debian's 2.6.2.2 or the PyPI 2.6.4.3, each with its own agda-stdlib.

On these machines a batch check of a file importing ``Data.Nat.Properties`` costs 7-17 s with
Debian's Agda, almost all of it reading interfaces; the Agda packaged on PyPI
(``agda==2.6.4.3.post1``, built with heavy optimisation) reads the same library about three
times faster. The PyPI package ships only Agda's primitive library, so ``scripts/agda-toolchain``
copies Debian's agda-stdlib 1.7.1 *sources* into a folder of assay's own and builds this Agda's
interfaces there once (interfaces are per Agda version: the copy never shares Debian's
``.agdai``), then writes ``<copy>.BUILT``. A half-built copy has no ``BUILT`` and is never chosen
by "auto": inside the sandbox the library is read-only, so a missing interface could not be
written and the judgment would fail for a reason that is not the work's.

``Config.agda_toolchain`` picks: "debian" (the default for now), "pypi", or "auto" (PyPI when
installed and built, else Debian). The chosen toolchain's binary and version travel in every verdict; its library's path
is on every command line and its identity (a digest of the interfaces) in every cache key.
"""

from __future__ import annotations

import os
import shutil
import sys
from functools import lru_cache
from pathlib import Path

from assay._config import Config
from assay.proofs._toolchain import Toolchain, tree_identity, under, version_of

PYPI_VERSION = "2.6.4.3"
PYPI_MARK = "from agda.__main__ import main"
"""What the PyPI package's launcher script runs (so another ``agda`` in the same folder is not
taken for it)."""


def pypi_stdlib(config: Config) -> Path:
    """Where the PyPI Agda's agda-stdlib copy lives (``Config.agda_pypi_stdlib``)."""
    if config.agda_pypi_stdlib:
        return Path(config.agda_pypi_stdlib)
    return Path(sys.prefix) / "share" / "assay" / f"agda-{PYPI_VERSION}" / "agda-stdlib"


def pypi_launcher() -> Path | None:
    """The PyPI Agda's launcher in this Python's environment, or None when it is not installed."""
    launcher = Path(sys.prefix) / "bin" / "agda"
    try:
        head = launcher.read_bytes()[:512].decode("utf-8", errors="replace")
    except OSError:
        return None
    return launcher if PYPI_MARK in head else None


def debian_binary() -> str | None:
    """``agda`` on PATH, skipping this environment's own folder (the PyPI launcher lives there,
    and must never be paired with Debian's library, whose interfaces it cannot read)."""
    own = os.path.realpath(Path(sys.prefix) / "bin")
    folders = [
        folder
        for folder in os.environ.get("PATH", os.defpath).split(os.pathsep)
        if folder and os.path.realpath(folder) != own
    ]
    return shutil.which("agda", path=os.pathsep.join(folders))


def agda_toolchain(config: Config) -> Toolchain | None:
    """The Agda ``config`` selects on this machine, or None when it is not installed."""
    choice = config.agda_toolchain
    if choice in ("auto", "pypi"):
        found = _pypi(str(pypi_stdlib(config)))
        if found is not None or choice == "pypi":
            return found
    return _debian(config.agda_stdlib)


@lru_cache(maxsize=4)
def _debian(stdlib: str) -> Toolchain | None:
    binary = debian_binary()
    if binary is None:
        return None
    return Toolchain(
        "agda",
        os.path.realpath(binary),
        version_of([binary, "--version"]),
        tree_identity(Path(stdlib), "*.agdai"),
        search_path=(stdlib,),
    )


@lru_cache(maxsize=4)
def _pypi(stdlib: str) -> Toolchain | None:
    """The PyPI Agda with its built library copy; None when either is missing or unbuilt."""
    launcher = pypi_launcher()
    if launcher is None or not Path(stdlib + ".BUILT").is_file():
        return None
    version = version_of([str(launcher), "--version"])
    if PYPI_VERSION not in version:
        return None
    # The launcher is a Python script: the sandbox must see this environment (its interpreter,
    # the package and its primitive library) and the library copy, read-only.
    mounts = tuple(
        path
        for path in dict.fromkeys(
            [
                os.path.realpath(sys.prefix),
                os.path.realpath(sys.base_prefix),
                os.path.realpath(stdlib),
            ]
        )
        if not under(path, "/usr")
    )
    return Toolchain(
        "agda",
        str(launcher),
        version,
        tree_identity(Path(stdlib), "*.agdai"),
        search_path=(stdlib,),
        mounts=mounts,
    )


def forget_toolchains() -> None:
    """Look the toolchains up again (after ``scripts/agda-toolchain`` built the copy)."""
    _debian.cache_clear()
    _pypi.cache_clear()
