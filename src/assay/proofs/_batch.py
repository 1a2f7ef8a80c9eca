"""Running one batch judgment in the sandbox: stage the sources, run the steps, time them.

The sources are written into a fresh scratch folder (mounted at /proof, writable, owned by the
sandbox user) with no compiled interface of the candidate in it, so the candidate is always
checked from source. The toolchain and its library are read-only (they live under /usr). The
folder is a size- and entry-capped tmpfs (``CappedFolder``) when assay runs as root, so what the
toolchain writes there (interfaces, compiled files) cannot fill the host's disk.

Staging writes only under the scratch folder, whatever the file names say: every name is checked
(``_paths.path_problem``: a plain relative name in the language's grammar) and every folder and
file is created relative to an open folder descriptor with ``O_NOFOLLOW`` (``openat``-style), so
neither an absolute or ``..`` name nor a symbolic link can lead a write elsewhere. The scratch
folder is created private to assay and handed to the sandbox user only after staging.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import stat
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from assay._errors import SandboxUnavailable
from assay.proofs._paths import UnsafePath, path_problem
from assay.sandbox import (
    SANDBOX_UID,
    CappedFolder,
    FolderError,
    Limits,
    Mount,
    RunResult,
    Sandbox,
    remove_tree,
)

WORKDIR = "/proof"
INTERFACE_SUFFIXES: set[str] = set()
"""What a compiled interface is named, in every language (``compiled_suffixes``): a staged file
named so would make a judgment not "checked from source"."""
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Batch:
    """What one batch judgment ran: each step's result (up to the first that failed), the
    time all took, whether the candidate was checked from source, and the staged files."""

    runs: list[RunResult]
    elapsed_ms: int
    checked_from_source: bool
    files: dict[str, str]
    """Relative path -> sha256 of every staged source."""


def _hand_over(fd: int, mode: int) -> None:
    """Give one staged folder or file to the sandbox user (by descriptor: no path is followed)."""
    os.fchmod(fd, mode)
    if os.geteuid() == 0:
        os.fchown(fd, SANDBOX_UID, SANDBOX_UID)


def _write(root: int, name: str, data: bytes) -> None:
    problem = path_problem(name)
    if problem is not None:
        raise UnsafePath(f"refused to stage {problem}")
    *folders, leaf = name.split("/")
    opened: list[int] = []
    try:
        at = root
        for folder in folders:
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, 0o700, dir_fd=at)
            at = os.open(folder, _DIR_FLAGS, dir_fd=at)
            opened.append(at)
            _hand_over(at, 0o755)
        try:
            fd = os.open(leaf, _FILE_FLAGS, 0o600, dir_fd=at)
        except FileExistsError:
            if stat.S_ISDIR(os.stat(leaf, dir_fd=at, follow_symlinks=False).st_mode):
                raise
            os.unlink(leaf, dir_fd=at)  # removes a link itself, never what it points to
            fd = os.open(leaf, _FILE_FLAGS, 0o600, dir_fd=at)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            _hand_over(fd, 0o644)
        finally:
            os.close(fd)
    except OSError as exc:
        raise UnsafePath(f"refused to stage {name[:120]!r}: {exc.strerror}") from None
    finally:
        for fd in reversed(opened):
            os.close(fd)


def stage(folder: Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` under ``folder`` only, then hand ``folder`` to the sandbox user.

    Raises UnsafePath for a name that is not a plain relative source name (plans refuse such
    names first, so this is the second line) or that meets a link or folder on the way.
    """
    root = os.open(folder, _DIR_FLAGS)
    try:
        for name, data in files.items():
            _write(root, name, data)
        _hand_over(root, 0o755)
    finally:
        os.close(root)


SCRATCH_BYTES = 512 * 1024 * 1024
SCRATCH_ENTRIES = 20_000


def scratch(parent: Path) -> CappedFolder:
    """The folder a judgment (or a lane) writes: a size- and entry-capped tmpfs as root, inside
    ``parent`` (private to assay, so nothing else can reach it before the sandbox starts)."""
    owner = SANDBOX_UID if os.geteuid() == 0 else os.getuid()
    try:
        return CappedFolder(parent / "work", SCRATCH_BYTES, SCRATCH_ENTRIES, owner)
    except FolderError as exc:
        raise SandboxUnavailable(str(exc)) from None


def clear(folder: Path) -> None:
    """Remove everything inside ``folder`` (links themselves, never what they point to)."""
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            remove_tree(Path(entry.path))  # iterative: any depth
        else:
            os.unlink(entry.path)


def compiled_suffixes(*suffixes: str) -> None:
    """Declare the suffixes of a language's compiled files (its module does, when it loads)."""
    INTERFACE_SUFFIXES.update(suffixes)


def _has_interfaces(folder: Path) -> bool:
    suffixes = tuple(sorted(INTERFACE_SUFFIXES))
    walked = os.walk(folder)  # os.walk does not follow links into folders
    return any(name.endswith(suffixes) for _, _, names in walked for name in names)


@dataclass(frozen=True)
class Alone:
    """The first step runs alone: in a scratch folder of its own holding only ``sources``, and
    the folder the later steps see is not mounted at all. Afterwards trusted code copies out
    ``output`` (one regular file, opened without following links, at most ``max_bytes``) into
    that folder; nothing else the step wrote survives it. For a step that runs the candidate's
    code while compiling it (Lean's elaboration runs tactics), so that code cannot plant or
    change files the trusted steps read."""

    sources: tuple[str, ...]
    output: str
    max_bytes: int


def _run_step(
    sandbox: Sandbox, step: Sequence[str], folder: Path, limits: Limits, read_only: Sequence[str]
) -> RunResult:
    return sandbox.run(
        list(step),
        cwd=WORKDIR,
        mounts=[
            Mount(folder, WORKDIR, writable=True),
            *(Mount(Path(path), path) for path in read_only),
        ],
        limits=limits,
        untrusted=True,
    )


def _take_output(folder: Path, alone: Alone) -> bytes | None:
    """The step's one output: a regular file (no link, no fifo) of at most ``max_bytes``."""
    root = os.open(folder, _DIR_FLAGS)
    try:
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(alone.output, flags, dir_fd=root)
    except OSError:
        return None
    finally:
        os.close(root)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > alone.max_bytes:
            return None
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > alone.max_bytes:
                return None
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _run_alone(
    sandbox: Sandbox,
    files: Mapping[str, bytes],
    step: Sequence[str],
    limits: Limits,
    read_only: Sequence[str],
    alone: Alone,
    folder: Path,
) -> RunResult:
    """Run ``step`` in its own folder and copy its output into ``folder``; a step that exits 0
    without a proper output fails (exit 1: the candidate did not compile to what was asked)."""
    with tempfile.TemporaryDirectory(prefix="assay-alone-") as name, scratch(Path(name)) as capped:
        own = capped.path
        stage(own, {source: files[source] for source in alone.sources})
        run = _run_step(sandbox, step, own, limits, read_only)
        if run.exit_code != 0:
            return run
        data = _take_output(own, alone)
    if data is None:
        why = (
            f"\nassay: the step left no {alone.output} that is a regular file of at most "
            f"{alone.max_bytes} bytes"
        )
        return dataclasses.replace(run, exit_code=1, output=run.output + why)
    root = os.open(folder, _DIR_FLAGS)
    try:
        _write(root, alone.output, data)
    finally:
        os.close(root)
    return run


def run_batch(
    sandbox: Sandbox,
    files: Mapping[str, bytes],
    steps: Sequence[Sequence[str]],
    limits: Limits,
    read_only: Sequence[str] = (),
    alone: Alone | None = None,
) -> Batch:
    """Run each step in order (stopping at the first that does not exit 0) over ``files``.

    ``read_only``: host folders the steps also see, read-only at the same path (a toolchain
    installed outside /usr, e.g. Lean's under ``~/.elan``). ``alone``: the first step runs in
    a folder of its own (see ``Alone``)."""
    with tempfile.TemporaryDirectory(prefix="assay-proof-") as name, scratch(Path(name)) as capped:
        folder = capped.path
        stage(folder, files)
        from_source = not _has_interfaces(folder)
        runs: list[RunResult] = []
        start = time.monotonic()
        for index, step in enumerate(steps):
            if index == 0 and alone is not None:
                run = _run_alone(sandbox, files, step, limits, read_only, alone, folder)
            else:
                run = _run_step(sandbox, step, folder, limits, read_only)
            runs.append(run)
            if run.exit_code != 0:
                break
        elapsed = int((time.monotonic() - start) * 1000)
    digests = {n: hashlib.sha256(d).hexdigest() for n, d in sorted(files.items())}
    return Batch(runs, elapsed, from_source, digests)
