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

``Config.agda_toolchain`` picks: "auto" (the default), "debian" or "pypi". "auto" is the PyPI
Agda when it is installed and built, with Debian's behind it as its ``fallback``; else Debian's.
agda-stdlib 1.7.1 has modules without an interface in the PyPI copy (they do not check under
2.6.4.3, or import one that does not: ``<copy>.SKIPPED``), and the sandbox's library is
read-only, so the PyPI Agda could not judge a file importing one. Under "auto" such a file goes
to Debian's Agda *before* any judgment (``for_sources``: every import of every file of the plan,
read conservatively: a file Agda's lexer cannot read, an import without a name, a module in
``SKIPPED`` or a library source without its interface beside it all choose Debian's). Both
Agdas are honest judges: the choice only changes which one speaks, never after a refutation.
The chosen toolchain's binary and version travel in every verdict; its library's path is on
every command line and its identity (a digest of the interfaces) in every cache key.

Runtime options (``Config.agda_tuned_runtime``): with GHC's default 1 MiB nursery the garbage
collector takes about 45 % of a stdlib judgment. Debian's ``agda`` takes ``+RTS ... -RTS`` on
its command line; the PyPI one cannot (its runtime refuses most options), so it is started by
``_agda_launch``, a plain script that hands the options to the runtime as ``-with-rtsopts``
would. The launcher is used only when ``--assay-check`` says it matches this installation and a
probe through it prints the same version; otherwise the plain ``agda`` script runs. No ``-M``
heap cap is added: a cap below the sandbox's memory limit would turn a judgment the sandbox
stops (a limit, inconclusive) into a heap overflow, and the chosen nursery adds a bounded amount
(measured in ``benchmarks/proofs.py``) to a judgment's peak memory.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from assay._config import Config
from assay.proofs._agda_imports import imported
from assay.proofs._agda_lex import AgdaLexError, tokens
from assay.proofs._paths import module_problem
from assay.proofs._toolchain import Toolchain, first_line, tree_identity, under, version_of

PYPI_VERSION = "2.6.4.3"
PYPI_MARK = "from agda.__main__ import main"
"""What the PyPI package's launcher script runs (so another ``agda`` in the same folder is not
taken for it)."""


PYPI_RTS_OPTIONS: tuple[str, ...] = ("-A128m", "-O512m")
"""The PyPI Agda's garbage-collector options: a 128 MiB nursery, and no major collection before
the old generation holds 512 MiB (chosen by A/B runs on a stdlib judgment: see docs/proofs.md)."""
DEBIAN_RTS_OPTIONS: tuple[str, ...] = ()
"""Debian's Agda's, given on its command line when there are any (it was linked with ``-rtsopts``
and keeps its own ``-M3.5G -I0``). None: the same options cut its collector's time (6.6 s to 2.2 s
of CPU under ``+RTS -s``) but not its total in A/B runs (CPU 13.9-16.4 s against 15.0-17.1 s,
within the noise of a shared machine), so its command stays the plain one a user would run."""
LAUNCHER = Path(__file__).with_name("_agda_launch.py")


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
    """The Agda ``config`` selects on this machine, or None when it is not installed. Under
    "auto" the PyPI one carries Debian's as its ``fallback`` (see ``for_sources``)."""
    choice, tuned = config.agda_toolchain, config.agda_tuned_runtime
    if choice == "pypi":
        return _pypi(str(pypi_stdlib(config)), tuned)
    if choice == "auto":
        found = _auto(str(pypi_stdlib(config)), config.agda_stdlib, tuned)
        if found is not None:
            return found
    return _debian(config.agda_stdlib, tuned)


def agda_toolchain_for(config: Config, texts: Iterable[str]) -> Toolchain | None:
    """The Agda that judges a plan whose files are ``texts`` (``for_sources`` of the configured
    one): what the batch judge, the interaction lane and ``assay prove`` all ask."""
    found = agda_toolchain(config)
    return None if found is None else for_sources(found, texts)


def for_sources(toolchain: Toolchain, texts: Iterable[str]) -> Toolchain:
    """``toolchain``, or its ``fallback`` when one of ``texts`` imports a module its library
    cannot give it (``needs_fallback``)."""
    if toolchain.fallback is not None and needs_fallback(toolchain, texts):
        return toolchain.fallback
    return toolchain


def needs_fallback(toolchain: Toolchain, texts: Iterable[str]) -> bool:
    """Whether a file among ``texts`` may import a module ``toolchain``'s library lacks. Read
    conservatively (a "yes" only costs speed): a text Agda's lexer cannot read, an ``import``
    with no name or an unusable one, a module in ``toolchain.lacking``, or a library source with
    no interface beside it. Modules outside the library (Agda's builtins, the plan's own files)
    are the toolchain's own business."""
    for text in texts:
        try:
            names = imported(tokens(text))
        except AgdaLexError:
            return True
        for name in names:
            if name is None or module_problem(name, ".agda") is not None:
                return True
            if name in toolchain.lacking or not _interface_present(toolchain.search_path, name):
                return True
    return False


def _interface_present(folders: tuple[str, ...], module: str) -> bool:
    """False when ``module``'s source is in one of the library ``folders`` without its
    interface beside it; True when it has one, or is not a library module at all."""
    for folder in folders:
        source = Path(folder, *module.split(".")).with_suffix(".agda")
        if source.is_file():
            return source.with_suffix(".agdai").is_file()
    return True


def lacking_modules(stdlib: str) -> frozenset[str]:
    """The modules ``scripts/agda-toolchain`` left without an interface in a library copy
    (``<copy>.SKIPPED``, and ``<copy>.FAILED`` for good measure); empty when neither exists."""
    names: set[str] = set()
    for suffix in (".SKIPPED", ".FAILED"):
        try:
            names.update(Path(stdlib + suffix).read_text(encoding="utf-8").split())
        except (OSError, UnicodeDecodeError):
            continue
    return frozenset(names)


@lru_cache(maxsize=4)
def _auto(pypi_library: str, debian_library: str, tuned: bool) -> Toolchain | None:
    """The PyPI Agda with Debian's behind it; None when the PyPI one is not usable here."""
    found = _pypi(pypi_library, tuned)
    if found is None:
        return None
    return replace(found, fallback=_debian(debian_library, tuned))


def rts_block(options: tuple[str, ...]) -> tuple[str, ...]:
    """``options`` as GHC's runtime reads them from a command line."""
    return ("+RTS", *options, "-RTS") if options else ()


@lru_cache(maxsize=4)
def _debian(stdlib: str, tuned: bool) -> Toolchain | None:
    binary = debian_binary()
    if binary is None:
        return None
    real = os.path.realpath(binary)
    version = version_of([binary, "--version"])
    launch: tuple[str, ...] = ()
    if tuned and DEBIAN_RTS_OPTIONS:
        probe = (real, *rts_block(DEBIAN_RTS_OPTIONS))
        if version_of([*probe, "--version"]) == version:  # it takes these options
            launch = probe
    return Toolchain(
        "agda",
        real,
        version,
        tree_identity(Path(stdlib), "*.agdai"),
        search_path=(stdlib,),
        launch=launch,
    )


def interpreter_of(script: Path) -> str | None:
    """The interpreter a ``#!`` script names (the PyPI ``agda`` script's Python), or None."""
    try:
        head = script.read_bytes()[:512].split(b"\n", 1)[0].decode("utf-8", errors="replace")
    except OSError:
        return None
    words = head.removeprefix("#!").split()
    return (
        words[0] if head.startswith("#!") and len(words) == 1 and os.path.isabs(words[0]) else None
    )


def pypi_launch(launcher: Path, version: str) -> tuple[str, ...]:
    """How to start the PyPI Agda with ``PYPI_RTS_OPTIONS`` (``_agda_launch`` run by the
    package script's own Python), or () when the launcher does not match this installation or
    a probe through it does not print ``version``: the plain script then runs."""
    python = interpreter_of(launcher)
    if python is None:
        return ()
    start = (python, "-I", "-S", str(LAUNCHER))  # -S: no ``site`` (see _agda_launch.site_folders)
    if first_line([*start, "--assay-check"], LAUNCHER.parent) != "ok":
        return ()
    tuned = (*start, *rts_block(PYPI_RTS_OPTIONS))
    return tuned if version_of([*tuned, "--version"]) == version else ()


@lru_cache(maxsize=4)
def _pypi(stdlib: str, tuned: bool) -> Toolchain | None:
    """The PyPI Agda with its built library copy; None when either is missing or unbuilt."""
    launcher = pypi_launcher()
    if launcher is None or not Path(stdlib + ".BUILT").is_file():
        return None
    version = version_of([str(launcher), "--version"])
    if PYPI_VERSION not in version:
        return None
    launch = pypi_launch(launcher, version) if tuned else ()
    # The launcher is a Python script: the sandbox must see this environment (its interpreter,
    # the package and its primitive library), the library copy and the tuned launcher (which
    # lives in assay's sources: outside the environment in an editable install), read-only.
    mounts = tuple(
        path
        for path in dict.fromkeys(
            [
                os.path.realpath(sys.prefix),
                os.path.realpath(sys.base_prefix),
                os.path.realpath(stdlib),
                *([os.path.realpath(LAUNCHER)] if launch else []),
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
        launch=launch,
        lacking=lacking_modules(stdlib),
    )


def forget_toolchains() -> None:
    """Look the toolchains up again (after ``scripts/agda-toolchain`` built the copy)."""
    _debian.cache_clear()
    _pypi.cache_clear()
    _auto.cache_clear()
