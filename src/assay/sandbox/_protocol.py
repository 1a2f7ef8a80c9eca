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
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._errors import SandboxUnavailable
from assay.sandbox._limits import Limits
from assay.sandbox._result import RunResult
from assay.sandbox._sandbox import Mount, Sandbox
from assay.sandbox._staging import make_readable, snapshot, writable_by_sandbox

SCHEMAS = Path(__file__).with_name("schemas")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
RESULT_LIMIT = 64 * 1024
EVIDENCE_FILES_LIMIT = 1000
VERDICTS = ("verified", "refuted", "inconclusive")


class InputTooLarge(Exception):
    pass


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _copy_in(source: Path, destination: Path, budget: list[int]) -> None:
    """Copy a file or a tree (no symlinks followed, special files left out) within ``budget``."""
    if source.is_symlink():
        return
    if source.is_dir():
        destination.mkdir(parents=True, exist_ok=True)
        for child in sorted(source.iterdir()):
            _copy_in(child, destination / child.name, budget)
        return
    if not stat.S_ISREG(source.lstat().st_mode):
        return
    budget[0] -= source.stat().st_size
    if budget[0] < 0:
        raise InputTooLarge("the checker's inputs are larger than the staging limit")
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, destination)


def _listing(root: Path, group: Path) -> list[dict[str, Any]]:
    files = []
    for path in sorted(group.rglob("*")):
        if path.is_file() and not path.is_symlink():
            files.append(
                {
                    "path": path.relative_to(root).as_posix(),
                    "sha256": _sha256(path),
                    "size": path.stat().st_size,
                }
            )
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
    budget = [max_bytes]
    manifest: dict[str, Any] = {"schema": "assay.manifest/1", "artifacts": {}, "references": {}}
    for section, folder, entries in (
        ("artifacts", "artifacts", artifacts),
        ("references", "reference", references),
    ):
        for name, source in entries.items():
            group = root / folder / name
            group.mkdir(parents=True, exist_ok=True)
            _copy_in(source, group if source.is_dir() else group / source.name, budget)
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
    return CheckerReport(
        result=result,
        summary=summary,
        document=document,
        result_sha256=hashlib.sha256(raw).hexdigest(),
        evidence=tuple(_evidence(output / "evidence")),
    )


def _evidence(folder: Path) -> list[dict[str, Any]]:
    if folder.is_symlink() or not folder.is_dir():
        return []
    files: list[dict[str, Any]] = []
    for top, dirs, names in os.walk(folder, followlinks=False):
        for name in sorted(names):
            path = Path(top) / name
            if path.is_symlink() or not path.is_file():
                continue
            files.append(
                {
                    "path": path.relative_to(folder.parent).as_posix(),
                    "sha256": _sha256(path),
                    "size": path.stat().st_size,
                }
            )
            if len(files) >= EVIDENCE_FILES_LIMIT:
                return files
        dirs.sort()
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
    with tempfile.TemporaryDirectory(prefix="assay-checker-") as scratch_name:
        scratch = Path(scratch_name)
        root, output, manifest = stage_input(scratch, artifacts, references, max_bytes)
        mounts = [Mount(root, "/input"), Mount(output, "/output", writable=True)]
        cwd = "/input"
        if checker is not None:
            staged = scratch / "checker"
            if checker.is_dir():
                snapshot(checker, staged, max_bytes)
            else:
                staged.mkdir()
                shutil.copyfile(checker, staged / checker.name)
                make_readable(staged, executable_from=checker.parent)
            mounts.append(Mount(staged, "/checker"))
            cwd = "/checker"
        run = sandbox.run(command, cwd=cwd, mounts=mounts, limits=limits, untrusted=True)
        report = (
            read_output(output) if run.exit_code == 0 and run.limit is None else CheckerReport()
        )
    return CheckerRun(run, report, manifest, tuple(command))
