"""``program``: an external checker program over the /input, /output protocol, in the sandbox.

Everything on the verifier's side (the checker, its fixtures, the held-back fixtures, the
references) must lie outside the agent's workspace: the agent could otherwise rewrite what judges
it. A submission larger than the staging limit leaves beside the references is refuted (its size
is a property of the work, and it must not turn a refutation into "could not check"); references
too large for the limit are the author's problem (inconclusive).
"""

from __future__ import annotations

import os
import random
import stat
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, Field, model_validator

from assay._errors import InvalidInput, SandboxUnavailable
from assay._signed import SignedStore, UnsafeCache
from assay.checks._context import CheckContext
from assay.checks._kinds._common import workspace_path
from assay.checks._registry import kind
from assay.checks._sandboxing import sandbox_for
from assay.checks._spec import NonBlank, Spec
from assay.sandbox import (
    MAX_DEPTH,
    MAX_ENTRIES,
    NAME,
    Conformance,
    Fixture,
    FixtureResult,
    InputTooLarge,
    Limits,
    Sandbox,
    SubmissionUnstageable,
    conformance,
    default_command,
    run_checker,
    run_fixture,
    with_result_channel,
)
from assay.status import Outcome


def _name(value: str) -> str:
    if not NAME.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a role or key name (letters, digits, _ . -, at most 64)"
        )
    return value


Name = Annotated[str, AfterValidator(_name)]


class ProgramSpec(Spec):
    """An external checker program, its conformance fixtures and the submission's files."""

    runs_code = True

    verifier_fields = ("checker", "references", "fixtures", "held_back_fixtures")
    workspace_fields = ("artifacts",)
    command: list[NonBlank] | None = Field(None, min_length=1)
    """The checker's argv inside the sandbox; defaults from ``checker`` (python3 for a .py file)."""
    checker: NonBlank | None = None
    """The checker file or folder, relative to the task file; mounted read-only at /checker."""
    artifacts: dict[Name, NonBlank] = Field(default_factory=dict)
    """Role -> file or folder in the workspace, placed at /input/artifacts/{role}/."""
    references: dict[Name, NonBlank] = Field(default_factory=dict)
    """Key -> file or folder next to the task (verifier-side), at /input/reference/{key}/."""
    timeout: float = Field(30.0, gt=0, le=3600)
    """Wall-clock seconds for the checker; running out is an error of the checker."""
    memory_mb: int = Field(1024, gt=0)
    """Address space per process, in MiB."""
    result_channel: Literal["file", "fd"] = "file"
    """Where the checker concludes. "file": /output/result.json. "fd": only what it writes on
    descriptor 3 (``ASSAY_RESULT_FD``; strict JSON, the same schema, at most 64 KiB), a private
    channel a process it starts holds only if the checker passes it on; /output/result.json is
    then ignored and /output/evidence is writable by what the checker runs. A checker that runs
    submission code must use "fd" and must not pass descriptor 3 to it (Python's ``subprocess``
    closes it by default; in a shell, run it with ``3>&-``): with "file", the submission can
    overwrite the verdict. Such a submission can still kill its checker: that is ``error``,
    never a verdict. Conformance fixtures run with the same channel."""
    fixtures: NonBlank | None = None
    """Conformance fixtures (a folder of fixture folders, relative to the task file; see
    ``assay checker conform``). When given, the checker may judge only after it reproduced every
    one: checked once per checker digest (its files, command, fixtures, limits, the declared
    roles, the references' keys and bytes, and assay's own judging code) and remembered in a
    signed cache in a private folder; until then the check is ``error``. A fixture without
    ``reference/`` is given this check's references. At least one fixture must expect something
    other than ``verified``. Keep fixtures outside the workspace and the checker folder."""
    held_back_fixtures: NonBlank | None = None
    """Fixtures kept from the checker's author, run exactly as submissions are: all of them when
    the checker conforms, and one at random after each judgment; any disagreement makes the
    outcome ``error``. Each must provide every declared role and no ``reference/`` (it is judged
    under this check's references), so its shape is a submission's. Outcomes only count them,
    never name them. Keep them outside the workspace, the checker folder and the references.
    Limit: a checker that keeps state across runs through host-shared caches can remember the
    ones it was shown; they raise the cost of lying, not make it impossible."""

    @model_validator(mode="after")
    def _runnable(self) -> Self:
        if self.command is None and self.checker is None:
            raise ValueError("give 'checker' (a file or folder) or 'command', or both")
        return self


@kind("program", ProgramSpec)
def program(spec: ProgramSpec, ctx: CheckContext) -> Outcome:
    """An external checker program concludes verified, refuted or inconclusive in /output/result.json.

    It runs in the sandbox with the submission's artifacts and the bound references under
    /input (read-only, listed with hashes in /input/manifest.json) and only /output writable. A
    crashed, hung or malformed checker, a non-zero exit or a result outside the three values is
    ``error``: the checker failed, not the work. The checker's own output is never shown (it may
    have read sealed references); its ``summary`` is the detail. With ``fixtures`` (or
    ``held_back_fixtures``) the checker judges only once it reproduced them all; the outcome
    records its digest and conformance.
    """
    artifacts: dict[str, Path] = {}
    for role, relative in spec.artifacts.items():
        path = workspace_path(ctx, relative)
        if isinstance(path, Outcome):
            return path
        if not path.exists():
            return Outcome.refuted(
                f"the submission does not provide artifact {role!r} ({relative!r})"
            )
        artifacts[role] = path
    base = ctx.base_dir or Path.cwd()
    verifier_side: dict[str, tuple[str, Path]] = {}
    references: dict[str, Path] = {}
    for key, relative in spec.references.items():
        references[key] = (base / relative).resolve()
        verifier_side[f"references.{key}"] = (relative, references[key])
    checker = (base / spec.checker).resolve() if spec.checker else None
    if checker is not None and spec.checker is not None:
        verifier_side["checker"] = (spec.checker, checker)
    folders: dict[str, Path] = {}
    for label, named in (
        ("fixtures", spec.fixtures),
        ("held_back_fixtures", spec.held_back_fixtures),
    ):
        if named is not None:
            folders[label] = (base / named).resolve()
            verifier_side[label] = (named, folders[label])
    outside = _outside_the_workspace(ctx, verifier_side)
    if outside is not None:
        return outside
    for key, path in references.items():
        if not path.exists():
            return Outcome.inconclusive(f"the reference input {key!r} is missing")
    if checker is not None and not checker.exists():
        return Outcome.error(f"the checker {spec.checker!r} does not exist")
    for label, folder in folders.items():
        if not folder.is_dir():
            named = spec.fixtures if label == "fixtures" else spec.held_back_fixtures
            return Outcome.error(f"the checker's {label} folder {named!r} does not exist")
    command = list(spec.command) if spec.command else None
    if spec.result_channel == "fd":
        assert command is not None or checker is not None  # the spec's validator
        command = with_result_channel(command or default_command(checker))  # type: ignore[arg-type]
    limits = Limits(timeout=spec.timeout, memory_mb=spec.memory_mb)
    max_bytes = ctx.config.max_staged_mb * 1024 * 1024
    oversize = _oversize(artifacts, references, max_bytes)
    if oversize is not None:
        return oversize
    store = _store(ctx.config.judgments_folder(), ctx.config.signing_key_file())
    try:
        sandbox = sandbox_for(ctx)
        gate: Conformance | None = None
        held: list[Fixture] = []
        if folders:
            gate, held = conformance(
                sandbox,
                checker,
                command,
                folders.get("fixtures"),
                folders.get("held_back_fixtures"),
                limits,
                references,
                store,
                max_bytes,
                roles=list(spec.artifacts),
            )
            if not gate.passed:
                return Outcome.error(
                    f"the checker has not reproduced its conformance fixtures: {gate.describe()}; "
                    "it may not judge, and this says nothing about the submission",
                    {"conformance": _gate_evidence(gate, store)},
                )
        run = run_checker(sandbox, command, checker, artifacts, references, limits, max_bytes)
    except SubmissionUnstageable as exc:
        return Outcome.refuted(str(exc))
    except InputTooLarge as exc:
        return Outcome.inconclusive(str(exc))
    except UnsafeCache as exc:
        return Outcome.error(f"the conformance cache cannot be used: {exc}")
    except InvalidInput as exc:
        return Outcome.error(f"the checker's fixtures cannot be used: {exc}")
    except SandboxUnavailable as exc:
        return Outcome.error(str(exc))
    evidence: dict[str, Any] = {
        "command": list(run.command),
        "isolation": run.run.isolation,
        "exit_code": run.run.exit_code,
        "result_sha256": run.report.result_sha256,
        "evidence_files": list(run.report.evidence),
        "inputs": run.manifest,
    }
    if gate is not None:
        evidence["conformance"] = _gate_evidence(gate, store)
    if run.failure is not None:
        return Outcome.error(f"{run.failure}; this says nothing about the submission", evidence)
    if gate is not None and held:
        try:
            spot = _spot_check(sandbox, checker, command, held, limits, references, max_bytes)
        except InvalidInput as exc:
            return Outcome.error(f"the checker's fixtures cannot be used: {exc}", evidence)
        evidence["conformance"]["spot_check"] = {"held_back_fixtures_run": 1, "agreed": spot.passed}
        if not spot.passed:
            if store is not None:
                store.remove(gate.digest)  # it must conform again before it judges again
            return Outcome.error(
                "the checker disagreed with one of its held-back fixtures (not named: they stay "
                "unknown to the checker's author), so its verdict cannot be trusted; this says "
                "nothing about the submission",
                evidence,
            )
    summary = run.report.summary or "(no summary)"
    evidence["result"] = run.report.document
    if run.report.result == "verified":
        return Outcome.verified(summary, evidence)
    if run.report.result == "refuted":
        return Outcome.refuted(summary, evidence)
    return Outcome.inconclusive(summary, evidence)


@lru_cache(maxsize=8)
def _store(folder: Path | None, key_file: Path) -> SignedStore | None:
    """Conformance results live in the config's judgments folder (``conformance/``), signed with
    its key; None when the config turns the cache off."""
    if folder is None:
        return None
    return SignedStore(folder, "conformance", key_file, section="conformance")


def _gate_evidence(gate: Conformance, store: SignedStore | None) -> dict[str, Any]:
    evidence = gate.evidence()
    if store is not None and store.refused:
        evidence["cache"] = f"not used: {store.refused}"
    return evidence


def _outside_the_workspace(
    ctx: CheckContext, paths: Mapping[str, tuple[str, Path]]
) -> Outcome | None:
    """``error`` naming the field when a verifier-side path is, lies in, or holds the workspace."""
    if ctx.workspace is None:
        return None
    workspace = ctx.workspace.resolve()
    for field, (named, path) in paths.items():
        if path == workspace or workspace in path.parents:
            where = "is inside"
        elif path in workspace.parents:
            where = "contains"
        else:
            continue
        return Outcome.error(
            f"{field} ({named!r}) {where} the agent's workspace, which the agent being judged "
            "can write: keep the checker, its fixtures and the references outside it"
        )
    return None


def _size(path: Path, cap: int) -> tuple[int, str | None]:
    """Bytes of the regular files staging would copy from ``path`` (a file or a tree), counted
    from ``lstat`` and stopped past ``cap``; with why the tree is too large to stage, if so."""
    try:
        info = os.lstat(path)
    except OSError:
        return 0, None
    if not stat.S_ISDIR(info.st_mode):
        return (info.st_size if stat.S_ISREG(info.st_mode) else 0), None
    total, entries = 0, 0
    queue = [(str(path), 0)]
    while queue and total <= cap:
        folder, depth = queue.pop()
        try:
            with os.scandir(folder) as found:
                children = list(found)
        except OSError:
            continue
        for entry in children:
            entries += 1
            if entries > MAX_ENTRIES:
                return total, f"more than {MAX_ENTRIES} entries"
            try:
                mode = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(mode.st_mode):
                if depth + 1 > MAX_DEPTH:
                    return total, f"folders nested deeper than {MAX_DEPTH}"
                queue.append((entry.path, depth + 1))
            elif stat.S_ISREG(mode.st_mode):
                total += mode.st_size
    return total, None


def _oversize(
    artifacts: Mapping[str, Path], references: Mapping[str, Path], max_bytes: int
) -> Outcome | None:
    """Which side is too large to stage: the references (inconclusive, the author's problem) or
    the submission (refuted: its size is a finding about the work, never a way to mask one)."""
    limit = f"{max_bytes / (1024 * 1024):g} MiB"
    used = 0
    for key, path in references.items():
        size, shape = _size(path, max_bytes - used)
        used += size
        if shape is not None or used > max_bytes:
            return Outcome.inconclusive(
                f"the reference input {key!r} is larger than the {limit} staging limit"
                + (f" ({shape})" if shape else "")
            )
    for role, path in artifacts.items():
        size, shape = _size(path, max_bytes - used)
        used += size
        if shape is not None or used > max_bytes:
            beside = " leaves beside the references" if references else ""
            return Outcome.refuted(
                f"the submission is larger than the {limit} staging limit{beside} "
                f"(artifact {role!r}{': ' + shape if shape else ''})"
            )
    return None


def _spot_check(
    sandbox: Sandbox,
    checker: Path | None,
    command: list[str] | None,
    held: list[Fixture],
    limits: Limits,
    references: Mapping[str, Path],
    max_bytes: int,
) -> FixtureResult:
    """One held-back fixture, chosen at random, run as an ordinary submission."""
    fixture = random.SystemRandom().choice(held)
    return run_fixture(sandbox, command, checker, fixture, limits, references, max_bytes)
