"""The bodies of the platform's ledger entries: what each kind of history row says.

The ledger stores them as opaque JSON; these models give them meaning, and a reader reads them
back through the same models, so a row written today reads the same later.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from assay._wire import WireModel
from assay.status import Status

PROBLEM = "problem.published"
REVISION = "revision.published"
CONTRACT = "contract.published"
CONFORMANCE = "conformance.recorded"
SUBMISSION = "submission.made"
REFUSED = "submission.refused"
RUN_STARTED = "run.started"
STAGE = "stage.concluded"
AWAITING = "run.awaiting"
RESUMED = "run.resumed"
FINISHED = "run.finished"
WITHDRAWN = "artifact.withdrawn"
NOMINATED = "submission.nominated"
EXTERNAL = "external.recorded"
REVOKED = "checker.revoked"


class ArtifactRecord(WireModel):
    """What a run examined: it stays readable after the bytes are withdrawn."""

    role: str
    sha256: str
    size: int
    tree: bool = False


class ProblemRecord(WireModel):
    """A problem exists; ``managers`` see sealed references and held results."""

    problem: str
    managers: list[str]


class SubmissionRecord(WireModel):
    """One submission: its artifacts by role and/or its summary, under one revision."""

    submission: str
    attempt: str
    problem: str
    revision: str
    participant: str
    artifacts: list[ArtifactRecord] = Field(default_factory=list)
    summary: str | None = None


class RefusedRecord(WireModel):
    """A submission refused at the door (it still counts toward the allowance)."""

    submission: str
    problem: str
    participant: str
    reason: str


class Owner(WireModel):
    """The process evaluating a run, so a run it left unfinished can be told from one in flight."""

    host: str
    pid: int
    started: float
    """The process's start time (from /proc), so a reused pid is not mistaken for it."""


class RunStartedRecord(WireModel):
    """A run began: one evaluation of one submission under its revision's contract."""

    run: str
    submission: str
    revision: str
    contract: str | None
    owner: Owner
    recheck: bool = False


class CheckRecord(WireModel):
    """One check's outcome inside a stage, with the checker that produced it."""

    kind: str
    status: Status
    detail: str
    checker: str
    """``assay:<kind>@<version>`` or ``program:<sha256>``: what a revocation names."""
    evidence: dict[str, Any] | None = None
    reads_sealed: list[str] = Field(default_factory=list)
    """Sealed reference keys this check read: its detail and evidence are withheld from
    participants until they unseal."""


class StageRecord(WireModel):
    """One stage's conclusion within a run."""

    run: str
    name: str
    type: Literal["sandbox", "review", "external"]
    status: Status
    detail: str
    mechanism: str
    """How it concluded: "checks", "review", "rule" or "party"."""
    checkers: list[str] = Field(default_factory=list)
    isolation: str | None = None
    checks: list[CheckRecord] = Field(default_factory=list)
    inputs: dict[str, str] = Field(default_factory=dict)
    """sha256 of every input the stage read: ``artifact:<role>``, ``reference:<key>``,
    ``evidence``."""
    started: datetime
    finished: datetime
    recorded_by: str | None = None
    """For an external stage: who supplied the evidence or the conclusion."""


class AwaitingRecord(WireModel):
    """A run waits at a stage for something outside assay."""

    run: str
    stage: str
    awaits: str
    type: Literal["external", "review"] = "external"


class ResumedRecord(WireModel):
    """A waiting run continues (an external conclusion arrived)."""

    run: str
    stage: str
    owner: Owner


class FinishedRecord(WireModel):
    """A run's final status (one of the four)."""

    run: str
    submission: str
    status: Status
    detail: str
    interrupted: bool = False
    """The evaluating process stopped before the run finished. Not provably assay's fault (the
    participant may have killed it), so such a run still counts toward the allowance."""


class WithdrawnRecord(WireModel):
    """An artifact's bytes were deleted; what runs examined stays stated."""

    submission: str
    artifact: ArtifactRecord
    by: str


class NominatedRecord(WireModel):
    """A participant's final submission for a problem (the latest nomination counts)."""

    submission: str
    problem: str
    participant: str


class ExternalRecord(WireModel):
    """An external conclusion for one waiting run's stage."""

    run: str
    stage: str
    mechanism: Literal["rule", "party"]
    by: str
    status: Status
    reason: str
    evidence_sha256: str | None = None


class RevokedRecord(WireModel):
    """A checker found not to implement its contract: every run it produced on ``problems``
    stops counting, and it concludes nothing there afterwards."""

    checker: str
    why: str
    by: str
    problems: list[str] | None = None
    """The problems the revocation covers: those its author manages (None: every problem)."""


def revokes(revocation: dict[str, Any], problem: str | None) -> bool:
    """Whether a revocation's body covers runs of ``problem``."""
    covered = revocation.get("problems")
    return covered is None or problem in covered


class ConformanceRecord(WireModel):
    """Whether a program checker reproduced its fixtures when the revision was published."""

    revision: str
    key: str
    checker: str
    conformance_key: str | None = None
    """The checker run as one check spec (``_evaluate.conformance_key``): what a run looks up."""
    passed: bool
    detail: str
    digest: str | None = None
