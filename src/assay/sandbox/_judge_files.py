"""Files the judge (``_runner.py``) needs beside it in the sandbox, made once per verifier.

- its helpers' sources (``_proxy``, ``_candidate``, ``_tests``, ``_shellrun``), and the same
  compiled by this interpreter (``name.code``, marshal): compiling them in the sandbox cost a few
  milliseconds on every check;
- for shell checks, a copy of bash the sandbox's uid may execute but not read: executing a
  binary the process cannot read leaves it non-dumpable (the kernel's ``would_dump``), so the
  processes a shell check starts, same uid, cannot open bash's ``/proc/PID/mem`` or
  ``/proc/PID/fd`` or attach to it. As root the copy is root-owned, mode 0711; as a normal user
  (the sandbox then runs in a user namespace without capabilities) it is the user's, mode 0111.

They live in one folder per uid under the temporary directory, refused unless this uid owns it
and nobody else can write to it. Without it the judge compiles the sources and runs /bin/bash.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import shutil
import stat
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

from assay.sandbox._sandbox import Mount
from assay.sandbox._shellrun import PROTECTED_BASH

HELPERS = ("_proxy", "_candidate", "_tests", "_shellrun")
CANDIDATE_MARK = "candidate| "
"""Starts every line of output the candidate's process printed in a python check (``_proxy``)."""
CANDIDATE_OUTPUT = "assay-candidate-output"
"""The first word of the line after which the judge writes the candidate's output
(``_runner._delimiter``: with half the run's nonce, which candidate code never sees)."""
INSIDE = "/.assay"
_HERE = Path(__file__).resolve().parent


def judge_mounts(shell: bool) -> list[Mount]:
    """Mounts to add to a run of the judge (python checks; ``shell`` for shell checks)."""
    mounts = [Mount(_HERE / f"{name}.py", f"{INSIDE}/{name}.py") for name in HELPERS]
    mounts += [Mount(path, f"{INSIDE}/{name}.code") for name, path in _compiled().items()]
    bash = _protected_bash() if shell else None
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
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & 0o022:
        return None  # someone else's folder: never run what it holds
    return folder


def _install(folder: Path, name: str, data: bytes, mode: int) -> Path | None:
    """``data`` at folder/name with ``mode``, written once (atomically), owned by this uid."""
    target = folder / name
    try:
        if not target.exists():
            fd, temporary = tempfile.mkstemp(dir=folder)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.chmod(temporary, mode)
            os.replace(temporary, target)
        info = target.lstat()
    except OSError:
        return None
    owned = stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid()
    return target if owned and stat.S_IMODE(info.st_mode) == mode else None


@lru_cache(maxsize=1)
def _compiled() -> dict[str, Path]:
    folder = _folder()
    if folder is None:
        return {}
    made: dict[str, Path] = {}
    tag = hashlib.sha256(sys.version.encode()).hexdigest()[:8]
    for name in HELPERS:
        source = (_HERE / f"{name}.py").read_bytes()
        code = compile(source, f"{INSIDE}/{name}.py", "exec", dont_inherit=True)
        digest = hashlib.sha256(source).hexdigest()[:16]
        path = _install(folder, f"{name}-{tag}-{digest}.code", marshal.dumps(code), 0o644)
        if path is not None:
            made[name] = path
    return made


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
    return _install(folder, f"bash-{hashlib.sha256(data).hexdigest()[:16]}", data, mode)
