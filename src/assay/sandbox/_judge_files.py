"""Files the judge (``_runner.py``) needs in the sandbox, made once per verifier.

- one folder, mounted read-only at ``/.assay`` in every sandbox (``judge_folder``; one mount
  instead of one per file: bubblewrap rereads the whole mount table after each one): the runner
  compiled (``runner.pyc``, which ``python`` runs as it would the source: compiling the runner
  cost about 7 ms of CPU on every run), its helpers' sources (``_proxy``, ``_candidate``,
  ``_fence``, ``_tests``, ``_shellrun``) and the same compiled (``name.code``, marshal), and an
  empty ``bash``, the mount point of:
- for shell checks, a copy of bash the sandbox's uid may execute but not read: executing a
  binary the process cannot read leaves it non-dumpable (the kernel's ``would_dump``), so the
  processes a shell check starts, same uid, cannot open bash's ``/proc/PID/mem`` or
  ``/proc/PID/fd`` or attach to it. As root the copy is root-owned, mode 0711; as a normal user
  (the sandbox then runs in a user namespace without capabilities) it is the user's, mode 0111.

They live in one folder per uid under the temporary directory, refused unless this uid owns it
and nobody else can write to it; the judge's folder is named for the digest of what it holds and
is made whole before it gets that name. Each is used only if it holds, byte for byte, what this
verifier would write (checked once per process; the bash copy by size alone where this uid
cannot read it): one changed since, or left by a crash or another program, is made again, never
run. Every later use checks that they are still the very files and folders checked (inode and
modification time, ``_unchanged``): should the folder vanish (a /tmp cleaner), another user could
make one of the same name. Past that, their protection is their owner and modes, as for assay's
own source files. Without it the sandbox mounts the runner's source and the
judge compiles the helpers' sources, and shell checks are refused (no protected bash).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import marshal
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from assay.sandbox._sandbox import Mount
from assay.sandbox._shellrun import PROTECTED_BASH

HELPERS = ("_proxy", "_candidate", "_fence", "_tests", "_shellrun", "_template")
CANDIDATE_MARK = "candidate| "
"""Starts every line of output the candidate's process printed in a python check (``_proxy``)."""
CANDIDATE_OUTPUT = "assay-candidate-output"
"""The first word of the line after which the judge writes the candidate's output
(``_runner._delimiter``: with half the run's nonce, which candidate code never sees)."""
INSIDE = "/.assay"
_HERE = Path(__file__).resolve().parent
_RUNNER = _HERE / "_runner.py"


def judge_mounts(shell: bool) -> list[Mount]:
    """Mounts to add to a run of the judge (python checks; ``shell`` for shell checks).

    The sandbox mounts ``judge_folder`` itself; without it, the helpers' sources are mounted
    one by one. A shell check gets the protected bash only where it can be installed: callers
    refuse to run a shell check without it (``PROTECTED_BASH`` absent from the mounts).
    """
    mounts = []
    if judge_folder() is None:
        mounts = [Mount(_HERE / f"{name}.py", f"{INSIDE}/{name}.py") for name in HELPERS]
    bash = protected_bash() if shell else None
    if bash is not None:
        mounts.append(Mount(bash, PROTECTED_BASH))
    return mounts


@lru_cache(maxsize=1)
def _folder() -> Path | None:
    uid = os.geteuid()
    folder = Path(tempfile.gettempdir()) / f".assay-judge-{uid}"
    try:
        folder.mkdir(mode=0o755, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return None
    if not _ours(info, stat.S_ISDIR):
        return None  # someone else's folder: never run what it holds
    return folder


def _ours(info: os.stat_result, kind: Callable[[int], bool], mode: int | None = None) -> bool:
    """Of ``kind``, owned by this uid, writable by nobody else (and exactly ``mode``)."""
    owned = kind(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022
    return owned and (mode is None or stat.S_IMODE(info.st_mode) == mode)


def _install(folder: Path, name: str, data: bytes, mode: int) -> Path | None:
    """``data`` at folder/name with ``mode``, owned by this uid: written (atomically) unless
    a file there already holds exactly ``data``; a different one is replaced."""
    target = folder / name
    try:
        if target.exists() and _same(target, mode, data):
            return target
        fd, temporary = tempfile.mkstemp(dir=folder)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, target)
        same = _same(target, mode, data)
    except OSError:
        return None
    return target if same else None


def _same(path: Path, mode: int, data: bytes) -> bool:
    """``path`` is ours, ``mode``, and holds ``data``: compared byte for byte where this uid
    can read it (root can; a normal user's 0111 bash it cannot, so there only its size)."""
    info = path.lstat()
    if not _ours(info, stat.S_ISREG, mode) or info.st_size != len(data):
        return False
    return not os.access(path, os.R_OK) or _content(path, mode) == data


@lru_cache(maxsize=1)
def _judge_files() -> dict[str, bytes]:
    """What ``judge_folder`` holds, by name."""
    sources = {"runner": _RUNNER.read_bytes()}
    sources.update((name, (_HERE / f"{name}.py").read_bytes()) for name in HELPERS)
    files = {"bash": b""}  # the protected bash's mount point (shell checks)
    for name, source in sources.items():
        code = compile(source, f"{INSIDE}/{name}.py", "exec", dont_inherit=True)
        files[f"{name}.py"] = source
        if name == "runner":  # a .pyc, which the interpreter runs as a script: its header first
            header = importlib.util.MAGIC_NUMBER + bytes(12)  # flags, then no source stamp
            files["runner.pyc"] = header + marshal.dumps(code)
        else:
            files[f"{name}.code"] = marshal.dumps(code)
    return files


def judge_folder() -> Path | None:
    """The folder the sandbox mounts at ``/.assay``, or None where it cannot be made.

    Used only when it holds exactly what this verifier would write, byte for byte: a folder of
    the right name whose files were changed, truncated or left by something else is moved
    aside and made again, never run. That is checked once per process, and on every call that
    the folder and its parent are still the very ones checked (``_unchanged``): the parent is
    in the world-writable temporary folder, and should it vanish (a /tmp cleaner) another user
    could make one of the same name holding a judge of their own.
    """
    folder = _judge_folder()
    if folder is not None and not _unchanged(folder.parent, folder):
        forget()
        folder = _judge_folder()
    return folder


def protected_bash() -> Path | None:
    """The protected bash (``_protected_bash``), still the file that was checked."""
    bash = _protected_bash()
    if bash is not None and not _unchanged(bash.parent, bash):
        forget()
        bash = _protected_bash()
    return bash


def forget() -> None:
    """Check the folders and files again at their next use."""
    for cached in (_folder, _judge_folder, _protected_bash):
        clear = getattr(cached, "cache_clear", None)  # None: replaced (a test's stand-in)
        if clear is not None:
            clear()
    _SEEN.clear()


_SEEN: dict[Path, tuple[int, int, int, int]] = {}
"""What was checked, by path: device, inode, type and modification time (a folder's changes
when an entry is added, removed or renamed)."""


def _identity(path: Path) -> tuple[int, int, int, int] | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    if info.st_uid != os.geteuid() or info.st_mode & 0o022:
        return None
    return info.st_dev, info.st_ino, stat.S_IFMT(info.st_mode), info.st_mtime_ns


def _seen(*paths: Path) -> None:
    """Remember ``paths`` as checked (their identity now)."""
    for path in paths:
        identity = _identity(path)
        if identity is not None:
            _SEEN[path] = identity


def _unchanged(*paths: Path) -> bool:
    """Each of ``paths`` is still the one checked (two ``lstat`` per run: a few microseconds)."""
    return all(_SEEN.get(path) is not None and _identity(path) == _SEEN[path] for path in paths)


@lru_cache(maxsize=1)
def _judge_folder() -> Path | None:
    folder = _folder()
    if folder is None:
        return None
    try:
        files = _judge_files()
    except OSError:
        return None
    digest = hashlib.sha256(sys.version.encode())
    for name, data in sorted(files.items()):
        digest.update(f"{name} {len(data)}\n".encode() + data)
    target = folder / f"judge-{digest.hexdigest()[:24]}"
    for _ in range(2):
        try:
            if not target.exists():
                _build(folder, target, files)
            if _holds(target, files):
                _seen(folder, target)
                return target
            stale = folder / f".stale-{os.urandom(8).hex()}"
            with contextlib.suppress(FileNotFoundError):  # another verifier moved it first
                os.rename(target, stale)
            shutil.rmtree(stale, ignore_errors=True)
        except OSError:
            return None
    return None


def _build(folder: Path, target: Path, files: dict[str, bytes]) -> None:
    """``files`` in a new folder, renamed to ``target`` once whole."""
    building = Path(tempfile.mkdtemp(dir=folder, prefix=".building-"))
    for name, data in files.items():
        (building / name).write_bytes(data)
        os.chmod(building / name, 0o644)
    os.chmod(building, 0o755)
    try:
        os.rename(building, target)
    except OSError:  # made meanwhile by another verifier process
        shutil.rmtree(building, ignore_errors=True)


def _holds(target: Path, files: dict[str, bytes]) -> bool:
    """``target`` is ours and holds exactly ``files``: names, modes (0644) and contents."""
    if not _ours(target.lstat(), stat.S_ISDIR) or sorted(os.listdir(target)) != sorted(files):
        return False
    return all(_content(target / name, 0o644) == data for name, data in files.items())


def _content(path: Path, mode: int) -> bytes | None:
    """The bytes of ``path`` if it is a regular file of ours with ``mode`` (never a link)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as opened:
        if not _ours(os.fstat(fd), stat.S_ISREG, mode):
            return None
        return opened.read()


@lru_cache(maxsize=1)
def _protected_bash() -> Path | None:
    folder, source = _folder(), shutil.which("bash")
    if folder is None or source is None:
        return None
    try:
        data = Path(source).resolve().read_bytes()
    except OSError:
        return None
    mode = 0o711 if os.geteuid() == 0 else 0o111
    bash = _install(folder, f"bash-{hashlib.sha256(data).hexdigest()[:16]}", data, mode)
    if bash is not None:
        _seen(folder, bash)
    return bash
