"""The bodies of the platform's ledger entries: what each kind of history row says.

The ledger stores them as opaque JSON; these models give them meaning, and a reader reads them
back through the same models, so a row written today reads the same later.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field
from pydantic_core import PydanticUndefined

from assay._wire import WireModel
from assay.ledger import unvalidated
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


M = TypeVar("M", bound=BaseModel)


def built(model: type[M], **fields: Any) -> M:
    """A record or view of ``model`` from values assay produced itself and knows valid (ids it
    drew, statuses and details its checks returned, times from its clock, rows read back from
    the chain), without pydantic's validation: the same object ``model(**fields)`` gives, at
    a fraction of the cost (a batch of runs builds tens of thousands). Fields not given take
    their defaults; an unknown or missing field is a TypeError. Anything that came from
    outside is validated before it gets here."""
    plan = _PLANS.get(model) or _plan(model)
    values = {**plan.defaults, **fields}  # field order kept; an unknown name makes it longer
    if len(values) != len(plan.defaults) or not plan.required <= fields.keys():
        unknown = sorted(set(fields) - set(plan.defaults))
        missing = sorted(plan.required - fields.keys())
        raise TypeError(f"{model.__name__}: unknown fields {unknown}, missing fields {missing}")
    for name, factory in plan.factories:
        if name not in fields:
            values[name] = factory()
    return unvalidated(model, values, plan.names.copy())


@dataclass(frozen=True)
class _Plan:
    defaults: dict[str, Any]
    """Every field in order, with its default (None for a required one or a factory's)."""
    factories: tuple[tuple[str, Callable[[], Any]], ...]
    required: frozenset[str]
    names: set[str]
    """Every field's name (copied into each object as the fields it was given)."""


_PLANS: dict[type[BaseModel], _Plan] = {}


def _plan(model: type[BaseModel]) -> _Plan:
    defaults: dict[str, Any] = {}
    factories: list[tuple[str, Callable[[], Any]]] = []
    required = set()
    for name, info in model.model_fields.items():
        defaults[name] = None if info.default is PydanticUndefined else info.default
        if info.default_factory is not None:
            factories.append((name, info.default_factory))  # type: ignore[arg-type]
        elif info.default is PydanticUndefined:
            required.add(name)
    plan = _Plan(defaults, tuple(factories), frozenset(required), set(defaults))
    _PLANS[model] = plan
    return plan


def body(record: WireModel) -> dict[str, Any]:
    """``record.to_json()``, written out by hand for the records every run writes (a batch
    writes thousands), and by pydantic for the rest or whenever a value is not plain JSON
    already (a test holds both forms equal)."""
    write = _BODIES.get(type(record))
    made = write(record) if write is not None else None
    return record.to_json() if made is None else made


def _submission(s: Any) -> dict[str, Any]:
    return {
        "submission": s.submission,
        "attempt": s.attempt,
        "problem": s.problem,
        "revision": s.revision,
        "participant": s.participant,
        "artifacts": [
            {"role": a.role, "sha256": a.sha256, "size": a.size, "tree": a.tree}
            for a in s.artifacts
        ],
        "summary": s.summary,
    }


def _started(s: Any) -> dict[str, Any]:
    o = s.owner
    owner = {"host": o.host, "pid": o.pid, "started": o.started}
    return started_body(s.run, s.submission, s.revision, s.contract, owner, s.recheck)


def started_body(
    run: str,
    submission: str,
    revision: str,
    contract: str | None,
    owner: dict[str, Any],
    recheck: bool,
) -> dict[str, Any]:
    """A ``RunStartedRecord``'s JSON form, from its fields (``owner``: ``Owner.to_json()``)."""
    return {
        "run": run,
        "submission": submission,
        "revision": revision,
        "contract": contract,
        "owner": owner,
        "recheck": recheck,
    }


def _finished(s: Any) -> dict[str, Any]:
    return finished_body(s.run, s.submission, s.status, s.detail, s.interrupted)


def finished_body(
    run: str, submission: str, status: Status, detail: str, interrupted: bool
) -> dict[str, Any]:
    """A ``FinishedRecord``'s JSON form, from its fields."""
    return {
        "run": run,
        "submission": submission,
        "status": status.value,
        "detail": detail,
        "interrupted": interrupted,
    }


def _stage(s: Any) -> dict[str, Any] | None:
    started, finished = _moment(s.started), _moment(s.finished)
    if started is None or finished is None:
        return None
    checks = []
    for c in s.checks:
        if c.evidence is not None and not _plain(c.evidence):
            return None
        checks.append(
            {
                "kind": c.kind,
                "status": c.status.value,
                "detail": c.detail,
                "checker": c.checker,
                "evidence": c.evidence,
                "reads_sealed": c.reads_sealed,
            }
        )
    return {
        "run": s.run,
        "name": s.name,
        "type": s.type,
        "status": s.status.value,
        "detail": s.detail,
        "mechanism": s.mechanism,
        "checkers": s.checkers,
        "isolation": s.isolation,
        "checks": checks,
        "inputs": s.inputs,
        "started": started,
        "finished": finished,
        "recorded_by": s.recorded_by,
    }


def _moment(moment: datetime) -> str | None:
    """A UTC time as pydantic writes it (ISO 8601, ``Z``); None for any other zone."""
    if moment.tzinfo is not UTC:
        return None
    return moment.isoformat()[:-6] + "Z"


def _plain(value: Any) -> bool:
    """Whether pydantic's JSON form of ``value`` is ``value`` itself: strings, integers,
    booleans, finite floats, None, and lists and string-keyed dicts of them (a tuple, a
    non-finite float, an enum or any other type is left to pydantic)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(_plain(v) for v in value)
    if kind is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    return False


_BODIES: dict[type[WireModel], Callable[[Any], dict[str, Any] | None]] = {
    SubmissionRecord: _submission,
    RunStartedRecord: _started,
    FinishedRecord: _finished,
    StageRecord: _stage,
}
"""The records every run writes, and their hand-written JSON forms."""
