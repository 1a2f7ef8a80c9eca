"""What people see: runs, submissions and problems, as the viewer may see them.

Reading is where the release rules apply. A participant never sees the detail or evidence of a
check that read a sealed reference before it unseals, never sees results before a held score
release, and (with independent entry) never sees another participant's submission before the
cutoff. Managers of the problem see everything. The ledger itself keeps every word.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from assay._wire import WireModel
from assay.status import Status


class StageView(WireModel):
    """One stage of a run, as the viewer may see it."""

    name: str
    type: Literal["sandbox", "review", "external"]
    status: Status | None
    """None while the run waits at this stage or results are held."""
    detail: str
    mechanism: str | None = None
    checkers: list[str] = Field(default_factory=list)
    isolation: str | None = None
    checks: list[dict[str, Any]] = Field(default_factory=list)
    inputs: dict[str, str] = Field(default_factory=dict)
    started: datetime | None = None
    finished: datetime | None = None
    recorded_by: str | None = None


class RunView(WireModel):
    """One run: the document ``assay submit`` and ``assay recheck`` print."""

    schema_: Literal["assay.run/1"] = Field("assay.run/1", alias="schema")
    submission: str
    run: str
    status: Status | None
    """The final status; None while pending or while results are held."""
    label: str
    """In words: "Verified", "Pending: awaiting ...", "Recorded; results on DATE"."""
    detail: str
    """Why, in one line: the first stage that did not pass, or what the run waits for."""
    stages: list[StageView]
    revoked: str | None = None
    """Why the run stopped counting, when a checker it used was revoked."""
    started: datetime | None = None
    finished: datetime | None = None
    recheck: bool = False


class ArtifactView(WireModel):
    """An artifact by role: its size and sha256 stay stated after its bytes are withdrawn."""

    role: str
    size: int
    sha256: str
    withdrawn: bool = False


class Verdict(WireModel):
    """The current verdict, derived from the runs that still count."""

    standing: Status | None
    """The latest finding (verified or refuted) of a non-revoked run, else the latest status."""
    latest: Status | None
    """The latest non-revoked run, when it differs from the standing one."""
    text: str


class SubmissionView(WireModel):
    """``assay show``: a submission, its runs and its current verdict."""

    schema_: Literal["assay.submission/1"] = Field("assay.submission/1", alias="schema")
    submission: str
    problem: str
    revision: str
    participant: str
    attempt: str
    submitted: datetime
    artifacts: list[ArtifactView]
    summary: str | None
    nominated: bool
    verdict: Verdict
    runs: list[RunView]


class ReferenceView(WireModel):
    """A reference as everyone may see it: key, size and sha256; sealed ones with their date."""

    key: str
    size: int
    sha256: str
    folder: bool
    sealed_until: datetime | None = None
    description: str | None = None


class StageSummary(WireModel):
    """A stage of the contract, before anyone starts: what it runs and what it establishes."""

    name: str
    type: str
    establishes: str
    checks: list[str] = Field(default_factory=list)
    specs: list[dict[str, Any]] = Field(default_factory=list)
    """For a sandbox stage: its check specs. A contract is public: what it checks, and any
    expected value written in it, is shown before anyone starts (an answer kept from
    participants belongs in a sealed reference); only a hidden check's code is withheld."""
    mechanism: str | None = None
    """For an external stage: "rule" or "party"."""
    party: str | None = None
    """For a party stage: who records the conclusion."""
    rule: dict[str, Any] | None = None
    """For a rule stage: the JSON Schema the evidence must meet."""
    supplied_by: list[str] | None = None
    """For a rule stage: who may supply the evidence (None: anyone but the participant)."""
    binds: list[dict[str, Any]] | None = Field(None, exclude_if=lambda value: not value)
    """For a rule stage: what in the evidence must match the submission's artifacts."""
    protocol: dict[str, Any] | None = None
    """For a review stage: its protocol, as the contract states it."""


class ProblemView(WireModel):
    """``assay problem show``: the verification process of the current revision."""

    schema_: Literal["assay.problem/1"] = Field("assay.problem/1", alias="schema")
    problem: str
    title: str
    revision: str
    contract: str | None
    revisions: int
    acceptance: str | None
    roles: list[dict[str, Any]]
    references: list[ReferenceView]
    stages: list[StageSummary]
    skills: list[dict[str, Any]]
    policy: dict[str, Any]
    published: datetime
    published_by: str | None = Field(None, exclude_if=lambda value: value is None)
    """The manager who published the current revision (absent in stores written before the
    publisher was recorded)."""


class Published(WireModel):
    """``assay problem publish``: the ids, and whether anything new was stored."""

    schema_: Literal["assay.published/1"] = Field("assay.published/1", alias="schema")
    problem: str
    revision: str
    contract: str | None
    new: bool
    """False when this exact revision was published before (nothing new was stored)."""
    current_again: bool = False
    """An earlier revision published again: it is the current revision again."""
    conformance: list[dict[str, Any]] = Field(default_factory=list)


class Revocation(WireModel):
    """``assay revoke``: the checker and the runs that stop counting."""

    schema_: Literal["assay.revocation/1"] = Field("assay.revocation/1", alias="schema")
    checker: str
    why: str
    runs: list[str]
