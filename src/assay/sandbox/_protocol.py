"""The external-checker protocol: a filesystem contract, the same on every backend.

::

    /input/manifest.json            what is being checked, with sha256 and size of every file
    /input/artifacts/{role}/...     the submission's files, by role
    /input/reference/{key}/...      reference inputs bound by the verifier
    /output/result.json             {"result": "verified"|"refuted"|"inconclusive", "summary": ...}
    /output/evidence/...            optional evidence files (hashed and kept)
    fd 3 (ASSAY_RESULT_FD=3)        with the "fd" result channel: the result, instead of the file

/output is writable by every process of the sandbox, and they all run as one uid: a checker
that runs submission code cannot keep that code from rewriting /output/result.json. Such a
checker is started through ``with_result_channel``: it concludes by writing the same JSON on
descriptor 3, a unix socket only its first process holds, and /output/result.json is ignored
(the evidence files stay in /output, and are then writable by the submission too). The checker
must not pass descriptor 3 on (Python's ``subprocess`` closes it by default; a shell runs
submission code with ``3>&-``). Its submission can still kill it: that is ``error``.

The schemas are ``schemas/manifest.schema.json`` and ``schemas/result.schema.json`` beside this
module. Reading /output never follows a symlink: a checker cannot make the verifier read a host
file by linking to it.

/output is the one host folder a checker writes. As root it is its own tmpfs of at most
``OUTPUT_MB`` and ``OUTPUT_ENTRIES`` (mounted by the verifier, unmounted after), so a checker
cannot fill the host's disk and a tree of any depth goes with one unmount. Its evidence is walked
breadth-first without recursion, within ``EVIDENCE_FILES_LIMIT`` files and ``EVIDENCE_DEPTH``
levels, each file is hashed from at most ``EVIDENCE_BYTES_LIMIT`` bytes read and all of them
from ``EVIDENCE_TOTAL_LIMIT`` (sparse files take no room in /output). Results and evidence are
opened without following links or blocking and must be regular files (a FIFO there is the
checker's failure, never a hang). Inputs are staged and listed through folder descriptors, so
neither path length nor a link swapped in mid-copy matters; a submission that cannot be staged
is refuted (``SubmissionUnstageable``). The scratch folder is removed whatever happens (without
recursion: Python 3.11's ``shutil.rmtree`` recurses).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import Field

from assay._errors import InvalidInput, SandboxUnavailable
from assay._strict import StrictJSONError, loads_strict
from assay._wire import WireModel
from assay.sandbox._cgroup import pid_alive
from assay.sandbox._folders import CappedFolder, FolderError, remove_tree, sweep_stale, walk_files
from assay.sandbox._limits import Limits
from assay.sandbox._result import RunResult
from assay.sandbox._sandbox import RESULT_ARG, Mount, Sandbox
from assay.sandbox._staging import (
    MAX_DEPTH,
    MAX_ENTRIES,
    SANDBOX_UID,
    StagingTooLarge,
    copy_file_capped,
    make_readable,
    snapshot,
    writable_by_sandbox,
)

SCHEMAS = Path(__file__).with_name("schemas")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
RESULT_LIMIT = 64 * 1024
EVIDENCE_FILES_LIMIT = 1000
EVIDENCE_DEPTH = 32
EVIDENCE_BYTES_LIMIT = 64 * 1024 * 1024
"""Bytes of one evidence file that are hashed; a larger file is a problem with the output."""
EVIDENCE_TOTAL_LIMIT = 64 * 1024 * 1024
"""Bytes hashed over all evidence files together (counted on bytes read): /output holds no
more, and sparse files that take no room in it must not make the verifier hash gigabytes."""
OUTPUT_MB = 64
OUTPUT_ENTRIES = 10_000
VERDICTS = ("verified", "refuted", "inconclusive")


class InputTooLarge(InvalidInput):
    """The inputs cannot be staged within the limits (the references: the author's problem)."""


class SubmissionUnstageable(InputTooLarge):
    """The submission's artifacts cannot be staged (too large, or changed while copied): a
    finding about the work, which the caller refutes."""


class _OverCap(OSError):
    """A file read past the number of bytes it may be hashed from."""


def _sha256(
    path: Path | str, limit: int | None = None, dir_fd: int | None = None
) -> tuple[str, int]:
    """The sha256 and size of a regular file (``path`` relative to ``dir_fd`` when given), read
    without following a link or blocking; at most ``limit`` bytes are read (OSError past it)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file")
        digest = hashlib.sha256()
        size = 0
        while block := os.read(fd, 1 << 20):
            size += len(block)
            if limit is not None and size > limit:
                raise _OverCap(f"larger than {limit} bytes")
            digest.update(block)
    finally:
        os.close(fd)
    return digest.hexdigest(), size


def _copy_in(source: Path, destination: Path, budget: int) -> int:
    """Copy a file or a tree (no symlinks, special files left out) within ``budget`` bytes
    actually read; returns the bytes copied. Raises StagingTooLarge (or StagingRefused)."""
    if source.is_symlink():
        return 0
    if source.is_dir():
        return snapshot(source, destination, budget, links=False)
    destination.parent.mkdir(parents=True, exist_ok=True)
    return max(copy_file_capped(source, destination, budget), 0)


def _listing(root: Path, group: Path) -> list[dict[str, Any]]:
    files = []
    prefix = group.relative_to(root).as_posix()
    for relative, folder, name, _ in walk_files(group, MAX_ENTRIES, MAX_DEPTH + 1):
        digest, size = _sha256(name, dir_fd=folder)
        files.append({"path": f"{prefix}/{relative}", "sha256": digest, "size": size})
    return sorted(files, key=lambda f: str(f["path"]))


def stage_input(
    scratch: Path,
    artifacts: Mapping[str, Path],
    references: Mapping[str, Path],
    max_bytes: int,
) -> tuple[Path, Path, dict[str, Any]]:
    """Build /input (with its manifest) and an empty /output under ``scratch``.

    A file is placed under its role's folder by name; a folder's contents are placed there.
    """
    root, output = scratch / "input", scratch / "output"
    budget = max_bytes
    manifest: dict[str, Any] = {"schema": "assay.manifest/1", "artifacts": {}, "references": {}}
    for section, folder, entries in (
        ("artifacts", "artifacts", artifacts),
        ("references", "reference", references),
    ):
        for name, source in entries.items():
            group = root / folder / name
            group.parent.mkdir(parents=True, exist_ok=True)
            try:
                if source.is_dir() and not source.is_symlink():
                    budget -= _copy_in(source, group, budget)
                else:
                    group.mkdir()
                    budget -= _copy_in(source, group / source.name, budget)
            except StagingTooLarge as exc:
                if section == "artifacts":
                    raise SubmissionUnstageable(
                        f"the submission cannot be staged (artifact {name!r}: {exc})"
                    ) from None
                raise InputTooLarge(
                    f"the checker's inputs cannot be staged (reference {name!r}: {exc})"
                ) from None
            manifest[section][name] = _listing(root, group)
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    make_readable(root)
    output.mkdir()
    writable_by_sandbox(output)
    return root, output, manifest


class CheckerReport(WireModel):
    """What the checker concluded, or why its output cannot be used (``problem``).

    assay's reading of the protocol's output, part of a ``program`` check's record (never a
    document of its own, and not cleaned: the outcome that quotes it is, when serialised); the
    checker's own ``/output/result.json`` is ``document``, as written.
    """

    result: str | None = None
    """verified, refuted or inconclusive; None when the output cannot be used."""
    summary: str = ""
    """The checker's one-sentence summary."""
    document: dict[str, Any] = Field(default_factory=dict)
    """The result document exactly as the checker wrote it (other fields are its evidence)."""
    result_sha256: str | None = None
    """The sha256 of the result's bytes."""
    evidence: tuple[dict[str, Any], ...] = ()
    """Each evidence file under /output/evidence: ``{"path", "sha256", "size"}``."""
    problem: str | None = None
    """Why the output cannot be used (the run is then ``error``), when it cannot."""


def _read_no_follow(path: Path, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of a regular file, opened without following a link or
    blocking (a FIFO left at the path must not hang the verifier), checked on the descriptor."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file")
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    return data


def read_output(
    output: Path, channel: bytes | None = None, fd_channel: bool = False
) -> CheckerReport:
    """Parse the result strictly: any defect is a ``problem`` (the caller records error).

    ``fd_channel``: the result is what arrived on the checker's private channel (``channel``,
    None when it could not be read to its end) and /output/result.json is ignored: anything the
    checker runs could have written it."""
    if fd_channel:
        where = f"the result channel (fd {RESULT_FD})"
        if not channel:
            return CheckerReport(problem=f"the checker wrote nothing on {where}")
        raw = channel
    else:
        where = "/output/result.json"
        try:
            raw = _read_no_follow(output / "result.json", RESULT_LIMIT)
        except FileNotFoundError:
            return CheckerReport(problem="the checker wrote no /output/result.json")
        except OSError as exc:
            return CheckerReport(
                problem=f"/output/result.json cannot be read safely ({exc.strerror or exc})"
            )
    if len(raw) > RESULT_LIMIT:
        return CheckerReport(problem=f"{where} carried more than {RESULT_LIMIT} bytes")
    try:
        document = loads_strict(raw)
    except StrictJSONError as exc:
        return CheckerReport(problem=f"{where} is not strict JSON: {exc}")
    if not isinstance(document, dict):
        return CheckerReport(problem=f"{where} is not a JSON object")
    result = document.get("result")
    if result not in VERDICTS:
        return CheckerReport(
            problem=f"{where} has result {result!r}; a checker may only say "
            "verified, refuted or inconclusive"
        )
    summary = document.get("summary", "")
    if not isinstance(summary, str):
        return CheckerReport(problem=f"{where}: summary must be a string")
    try:
        evidence = _evidence(output / "evidence")
    except (FolderError, OSError) as exc:
        return CheckerReport(problem=f"/output/evidence cannot be read within its limits: {exc}")
    return CheckerReport(
        result=result,
        summary=summary,
        document=document,
        result_sha256=hashlib.sha256(raw).hexdigest(),
        evidence=tuple(evidence),
    )


def _evidence(folder: Path) -> list[dict[str, Any]]:
    """Evidence files (at most ``EVIDENCE_FILES_LIMIT``, ``EVIDENCE_DEPTH`` deep), hashed.

    Raises FolderError when the tree is larger than the checker may leave, OSError when a file
    cannot be hashed within ``EVIDENCE_BYTES_LIMIT`` (or all of them within
    ``EVIDENCE_TOTAL_LIMIT``)."""
    if folder.is_symlink() or not folder.is_dir():
        return []
    files: list[dict[str, Any]] = []
    left = EVIDENCE_TOTAL_LIMIT
    for relative, parent, name, _ in walk_files(folder, EVIDENCE_FILES_LIMIT * 10, EVIDENCE_DEPTH):
        try:
            digest, size = _sha256(name, min(EVIDENCE_BYTES_LIMIT, left), dir_fd=parent)
        except _OverCap:
            if left < EVIDENCE_BYTES_LIMIT:
                raise _OverCap(
                    f"the evidence files hold more than {EVIDENCE_TOTAL_LIMIT} bytes together"
                ) from None
            raise
        left -= size
        files.append({"path": f"{folder.name}/{relative}", "sha256": digest, "size": size})
        if len(files) >= EVIDENCE_FILES_LIMIT:
            break
    return files


@dataclass(frozen=True)
class CheckerRun:
    """One checker run: how the process ended, what it concluded, what it was given."""

    run: RunResult
    report: CheckerReport
    manifest: dict[str, Any]
    command: tuple[str, ...]

    @property
    def failure(self) -> str | None:
        """Why the checker itself failed (recorded as error), or None when it concluded."""
        if self.run.limit == "time":
            return "the checker did not finish within its time limit"
        if self.run.limit is not None:
            return f"the checker hit its {self.run.limit} limit"
        if self.run.signal is not None:
            return f"the checker was killed by signal {self.run.signal}"
        if self.run.exit_code != 0:
            return f"the checker exited with code {self.run.exit_code}"
        return self.report.problem


RESULT_FD = 3
"""The descriptor on which a checker started through ``with_result_channel`` concludes."""
_CHANNEL_SCRIPT = (
    'fd=$1; shift; if [ "$fd" != 3 ]; then exec 3>&"$fd" && eval "exec $fd>&-" || exit 126; fi; '
    'export ASSAY_RESULT_FD=3; exec "$@"'
)
_CHANNEL_PREFIX = ("/bin/bash", "-c", _CHANNEL_SCRIPT, "assay-checker", RESULT_ARG)


def with_result_channel(command: list[str]) -> list[str]:
    """``command`` started with the private result channel as its descriptor 3.

    The channel is a unix socket only the checker's first process holds (``ASSAY_RESULT_FD=3``
    in its environment): a process it starts gets it only if the checker lets it inherit it
    (Python's ``subprocess`` closes it by default; a shell checker runs submission code with
    ``3>&-``). Unlike a pipe, a socket cannot be reopened through ``/proc/PID/fd/3``, and
    ptrace and ``pidfd_getfd`` are refused by the seccomp filter, so a submission the checker
    runs cannot write the verdict. The wrapper (part of the command, hence of the checker's
    digest) moves the run's end to 3 and ``exec``s the checker."""
    return [*_CHANNEL_PREFIX, *command]


def uses_result_channel(command: list[str] | tuple[str, ...]) -> bool:
    """True when the checker's command was wrapped to conclude on its private result descriptor."""
    return tuple(command[: len(_CHANNEL_PREFIX)]) == _CHANNEL_PREFIX


def default_command(checker: Path) -> list[str]:
    """How to start a checker file or folder: ``python3`` for a .py file, else exec it."""
    if checker.is_dir():
        for name in ("check.py", "checker.py", "main.py"):
            if (checker / name).is_file():
                return ["python3", f"/checker/{name}"]
        return ["/checker/check"]
    if checker.suffix == ".py":
        return ["python3", f"/checker/{checker.name}"]
    return [f"/checker/{checker.name}"]


def run_checker(
    sandbox: Sandbox,
    command: list[str] | None,
    checker: Path | None,
    artifacts: Mapping[str, Path],
    references: Mapping[str, Path],
    limits: Limits,
    max_bytes: int,
) -> CheckerRun:
    """Stage the inputs, run the checker in the sandbox, read its output.

    Raises InputTooLarge when the inputs exceed ``max_bytes``, SandboxUnavailable when it
    cannot run at all.
    """
    if sandbox.isolation != "bwrap":
        raise SandboxUnavailable(
            "external checkers need bubblewrap: the protocol's /input and /output are mount points"
        )
    if command is None:
        if checker is None:
            raise ValueError("a command or a checker is required")
        command = default_command(checker)
    with _scratch() as scratch:
        root, output, manifest = stage_input(scratch, artifacts, references, max_bytes)
        with _capped_output(output) as capped:
            mounts = [Mount(root, "/input"), Mount(capped.path, "/output", writable=True)]
            cwd = "/input"
            if checker is not None:
                staged = scratch / "checker"
                if checker.is_dir():
                    snapshot(checker, staged, max_bytes)
                else:
                    staged.mkdir()
                    copy_file_capped(checker.resolve(), staged / checker.name, max_bytes)
                    make_readable(staged, executable_from=checker.parent)
                mounts.append(Mount(staged, "/checker"))
                cwd = "/checker"
            run = sandbox.run(command, cwd=cwd, mounts=mounts, limits=limits, untrusted=True)
            report = (
                read_output(capped.path, run.channel, uses_result_channel(command))
                if run.exit_code == 0 and run.limit is None
                else CheckerReport()
            )
    return CheckerRun(run, report, manifest, tuple(command))


_SCRATCH_PREFIX = "assay-checker-"


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    """A private scratch folder, removed (without recursion) however the block ends.

    Its name carries this process's pid, so that what a verifier killed mid-run left behind
    (the folder, and the /output tmpfs mounted in it) is removed by the next one."""
    _sweep_once()
    scratch = Path(tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{os.getpid()}-"))
    try:
        yield scratch
    finally:
        remove_tree(scratch)


@lru_cache(maxsize=1)
def _sweep_once() -> int:
    return sweep_stale(Path(tempfile.gettempdir()), _SCRATCH_PREFIX, pid_alive)


@contextlib.contextmanager
def _capped_output(output: Path) -> Iterator[CappedFolder]:
    """/output as a capped folder owned by the sandbox user (a tmpfs as root)."""
    output.rmdir()  # stage_input made it plain; it becomes the capped folder's mount point
    owner = SANDBOX_UID if os.geteuid() == 0 else os.getuid()
    try:
        folder = CappedFolder(output, OUTPUT_MB * 1024 * 1024, OUTPUT_ENTRIES, owner)
    except FolderError as exc:
        raise SandboxUnavailable(str(exc)) from None
    with folder:
        if not folder.mounted:
            writable_by_sandbox(folder.path)
        yield folder
