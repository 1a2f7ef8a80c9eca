"""``program``: an external checker program over the /input, /output protocol, in the sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Self

from pydantic import AfterValidator, Field, model_validator

from assay._errors import SandboxUnavailable
from assay.checks._context import CheckContext
from assay.checks._kinds._common import workspace_path
from assay.checks._registry import kind
from assay.checks._sandboxing import sandbox_for
from assay.checks._spec import NonBlank, Spec
from assay.sandbox import InputTooLarge, Limits, run_checker
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
    have read sealed references); its ``summary`` is the detail.
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
    try:
        run = run_checker(
            sandbox_for(ctx),
            list(spec.command) if spec.command else None,
            checker,
            artifacts,
            references,
            Limits(timeout=spec.timeout, memory_mb=spec.memory_mb),
            ctx.config.max_staged_mb * 1024 * 1024,
        )
    except InputTooLarge as exc:
        return Outcome.inconclusive(str(exc))
    except SandboxUnavailable as exc:
        return Outcome.error(str(exc))
    evidence = {
        "command": list(run.command),
        "isolation": run.run.isolation,
        "exit_code": run.run.exit_code,
        "result_sha256": run.report.result_sha256,
        "evidence_files": list(run.report.evidence),
        "inputs": run.manifest,
    }
    if run.failure is not None:
        return Outcome.error(f"{run.failure}; this says nothing about the submission", evidence)
    summary = run.report.summary or "(no summary)"
    evidence["result"] = run.report.document
    if run.report.result == "verified":
        return Outcome.verified(summary, evidence)
    if run.report.result == "refuted":
        return Outcome.refuted(summary, evidence)
    return Outcome.inconclusive(summary, evidence)
