"""``program``: an external checker program over the /input, /output protocol, in the sandbox."""

from __future__ import annotations

import random
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Self

from pydantic import AfterValidator, Field, model_validator

from assay._errors import InvalidInput, SandboxUnavailable
from assay._signed import SignedStore, default_cache_dir
from assay.checks._context import CheckContext
from assay.checks._kinds._common import workspace_path
from assay.checks._registry import kind
from assay.checks._sandboxing import sandbox_for
from assay.checks._spec import NonBlank, Spec
from assay.sandbox import InputTooLarge, Limits, Sandbox, run_checker
from assay.sandbox._conform import Conformance, Fixture, FixtureResult, conformance, run_fixture
from assay.sandbox._protocol import NAME
from assay.status import Outcome


def _name(value: str) -> str:
    if not NAME.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a role or key name (letters, digits, _ . -, at most 64)"
        )
    return value


Name = Annotated[str, AfterValidator(_name)]


class ProgramSpec(Spec):
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
    fixtures: NonBlank | None = None
    """Conformance fixtures (a folder of fixture folders, relative to the task file; see
    ``assay checker conform``). When given, the checker may judge only after it reproduced every
    one: checked once per checker digest (its files, command, fixtures, limits and assay's
    protocol version) and remembered in a signed cache; until then the check is ``error``. A
    fixture without ``reference/`` is given this check's references."""
    held_back_fixtures: NonBlank | None = None
    """Fixtures kept from the checker's author, run exactly as submissions are (so the checker
    cannot tell them apart by the manifest): all of them when the checker conforms, and one at
    random after each judgment; any disagreement makes the outcome ``error``. Keep them outside
    the checker folder."""

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
    references: dict[str, Path] = {}
    for key, relative in spec.references.items():
        path = (base / relative).resolve()
        if not path.exists():
            return Outcome.inconclusive(f"the reference input {key!r} is missing")
        references[key] = path
    checker = (base / spec.checker).resolve() if spec.checker else None
    if checker is not None and not checker.exists():
        return Outcome.error(f"the checker {spec.checker!r} does not exist")
    command = list(spec.command) if spec.command else None
    limits = Limits(timeout=spec.timeout, memory_mb=spec.memory_mb)
    max_bytes = ctx.config.max_staged_mb * 1024 * 1024
    folders: dict[str, Path] = {}
    for label, named in (
        ("fixtures", spec.fixtures),
        ("held_back_fixtures", spec.held_back_fixtures),
    ):
        if named is not None:
            folders[label] = base / named
            if not folders[label].is_dir():
                return Outcome.error(f"the checker's {label} folder {named!r} does not exist")
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
                _store(ctx.config.judgment_cache),
                max_bytes,
                roles=list(spec.artifacts),
            )
            if not gate.passed:
                return Outcome.error(
                    f"the checker has not reproduced its conformance fixtures: {gate.describe()}; "
                    "it may not judge, and this says nothing about the submission",
                    {"conformance": gate.evidence()},
                )
        run = run_checker(sandbox, command, checker, artifacts, references, limits, max_bytes)
    except InputTooLarge as exc:
        return Outcome.inconclusive(str(exc))
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
        evidence["conformance"] = gate.evidence()
    if run.failure is not None:
        return Outcome.error(f"{run.failure}; this says nothing about the submission", evidence)
    if gate is not None and held:
        try:
            spot = _spot_check(sandbox, checker, command, held, limits, references, max_bytes)
        except InvalidInput as exc:
            return Outcome.error(f"the checker's fixtures cannot be used: {exc}", evidence)
        evidence["conformance"]["spot_check"] = {"fixture": spot.name, "got": spot.got}
        if not spot.passed:
            store = _store(ctx.config.judgment_cache)
            if store is not None:
                store.remove(gate.digest)  # it must conform again before it judges again
            return Outcome.error(
                f"the checker disagreed with a held-back fixture ({spot.name!r}: expected "
                f"{spot.expected}, got {spot.got}), so its verdict cannot be trusted; this says "
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
def _store(folder: str | None) -> SignedStore | None:
    """Conformance results live beside the judgment cache (``conformance/``); "off": none."""
    if folder == "off":
        return None
    return SignedStore(
        (Path(folder) if folder else default_cache_dir()) / "conformance", "conformance"
    )


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
