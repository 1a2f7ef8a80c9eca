"""The external-checker protocol: a filesystem contract, the same on every backend.

::

    /input/manifest.json            what is being checked, with sha256 and size of every file
    /input/artifacts/{role}/...     the submission's files, by role
    /input/reference/{key}/...      reference inputs bound by the verifier
    /output/result.json             {"result": "verified"|"refuted"|"inconclusive", "summary": ...}
    /output/evidence/...            optional evidence files (hashed and kept)

The schemas are ``schemas/manifest.schema.json`` and ``schemas/result.schema.json`` beside this
module. Reading /output never follows a symlink: a checker cannot make the verifier read a host
file by linking to it.

/output is the one host folder a checker writes. As root it is its own tmpfs of at most
``OUTPUT_MB`` and ``OUTPUT_ENTRIES`` (mounted by the verifier, unmounted after), so a checker
cannot fill the host's disk and a tree of any depth goes with one unmount. Its evidence is walked
breadth-first without recursion, within ``EVIDENCE_FILES_LIMIT`` files and ``EVIDENCE_DEPTH``
levels, and each file is hashed from at most ``EVIDENCE_BYTES_LIMIT`` bytes read. The scratch
folder is removed whatever happens (without recursion: Python 3.11's ``shutil.rmtree`` recurses).
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
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from assay._errors import SandboxUnavailable
from assay.sandbox._cgroup import pid_alive
from assay.sandbox._folders import CappedFolder, FolderError, remove_tree, sweep_stale, walk_files
from assay.sandbox._limits import Limits
from assay.sandbox._result import RunResult
from assay.sandbox._sandbox import Mount, Sandbox
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
OUTPUT_MB = 64
OUTPUT_ENTRIES = 10_000
VERDICTS = ("verified", "refuted", "inconclusive")


class InputTooLarge(Exception):
    pass


def _sha256(path: Path, limit: int | None = None) -> tuple[str, int]:
    """The sha256 and size of a regular file, read without following a link; at most ``limit``
    bytes are read (OSError past it)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file")
        digest = hashlib.sha256()
        size = 0
        while block := os.read(fd, 1 << 20):
            size += len(block)
            if limit is not None and size > limit:
                raise OSError(f"larger than {limit} bytes")
            digest.update(block)
    finally:
        os.close(fd)
    return digest.hexdigest(), size


def _copy_in(source: Path, destination: Path, budget: int) -> int:
    """Copy a file or a tree (no symlinks, special files left out) within ``budget`` bytes
    actually read; returns the bytes copied."""
    try:
        if source.is_symlink():
            return 0
        if source.is_dir():
            return snapshot(source, destination, budget, links=False)
        destination.parent.mkdir(parents=True, exist_ok=True)
        return max(copy_file_capped(source, destination, budget), 0)
    except StagingTooLarge:
        raise InputTooLarge("the checker's inputs are larger than the staging limit") from None


def _listing(root: Path, group: Path) -> list[dict[str, Any]]:
    files = []
    for path, _ in sorted(walk_files(group, MAX_ENTRIES, MAX_DEPTH + 1)):
        digest, size = _sha256(path)
        files.append({"path": path.relative_to(root).as_posix(), "sha256": digest, "size": size})
    return files


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
            if source.is_dir() and not source.is_symlink():
                budget -= _copy_in(source, group, budget)
            else:
                group.mkdir()
                budget -= _copy_in(source, group / source.name, budget)
            manifest[section][name] = _listing(root, group)
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    make_readable(root)
    output.mkdir()
    writable_by_sandbox(output)
    return root, output, manifest


@dataclass(frozen=True)
class CheckerReport:
    """What the checker concluded, or why its output cannot be used (``problem``)."""

    result: str | None = None
    summary: str = ""
    document: dict[str, Any] = field(default_factory=dict)
    result_sha256: str | None = None
    evidence: tuple[dict[str, Any], ...] = ()
    problem: str | None = None


def _read_no_follow(path: Path, limit: int) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file")
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    return data


def read_output(output: Path) -> CheckerReport:
    """Parse /output strictly: any defect is a ``problem`` (the caller records error)."""
    from assay.checks._strict import StrictJSONError, loads_strict

    try:
        raw = _read_no_follow(output / "result.json", RESULT_LIMIT)
    except FileNotFoundError:
        return CheckerReport(problem="the checker wrote no /output/result.json")
    except OSError as exc:
        return CheckerReport(
            problem=f"/output/result.json cannot be read safely ({exc.strerror or exc})"
        )
    if len(raw) > RESULT_LIMIT:
        return CheckerReport(problem=f"/output/result.json is larger than {RESULT_LIMIT} bytes")
    try:
        document = loads_strict(raw)
    except StrictJSONError as exc:
        return CheckerReport(problem=f"/output/result.json is not strict JSON: {exc}")
    if not isinstance(document, dict):
        return CheckerReport(problem="/output/result.json is not a JSON object")
    result = document.get("result")
    if result not in VERDICTS:
        return CheckerReport(
            problem=f"/output/result.json has result {result!r}; a checker may only say "
            "verified, refuted or inconclusive"
        )
    summary = document.get("summary", "")
    if not isinstance(summary, str):
        return CheckerReport(problem="/output/result.json: summary must be a string")
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
    cannot be hashed within ``EVIDENCE_BYTES_LIMIT``."""
    if folder.is_symlink() or not folder.is_dir():
        return []
    files: list[dict[str, Any]] = []
    for path, _ in walk_files(folder, EVIDENCE_FILES_LIMIT * 10, EVIDENCE_DEPTH):
        digest, size = _sha256(path, EVIDENCE_BYTES_LIMIT)
        files.append(
            {"path": path.relative_to(folder.parent).as_posix(), "sha256": digest, "size": size}
        )
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
                read_output(capped.path)
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
