"""The contract: what "correct" means for a problem, fixed before anyone submits.

A contract is immutable and content-addressed: its id is the sha256 of its canonical JSON, so two
contracts with one id are the same verification process, byte for byte. It names reference keys,
never bytes: a revision binds each key to exact bytes, so one contract can be reused across data
versions and a changed reference is visibly a new revision.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, ConfigDict, Field, model_validator

from assay._signed import canonical_digest
from assay._wire import WireModel
from assay.status import Mode

NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
"""A role, reference key or stage name: also a file name in the laid-out workspace and
reference folder, so no slash, no leading dot and nothing a shell or a path would read."""


def _name(value: str) -> str:
    if not NAME.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a name (letters, digits, _ . -; not starting with . or -; "
            "at most 64)"
        )
    return value


Name = Annotated[str, AfterValidator(_name)]


def head(path: str) -> str:
    """The key or role a check's path starts with (``labels/train.csv`` -> ``labels``)."""
    parts = PurePosixPath(path).parts
    return parts[0] if parts else path


class Authored(WireModel):
    """A part of the contract or policy an author writes: an unknown key is refused (a typo such
    as ``requierd`` or ``allowence`` would otherwise silently change the problem)."""

    model_config = ConfigDict(extra="forbid")


Prose = Annotated[str, Field(min_length=1, max_length=20_000)]


class Role(Authored):
    """One artifact a submission provides: a file or a folder, laid out as ``{name}``."""

    name: Name
    required: bool = True
    max_bytes: int = Field(16 * 1024 * 1024, gt=0, le=1024**3)
    """Largest artifact (a folder counts every file in it); a larger one is refused."""


class ReferenceKey(Authored):
    """A verifier-side input named by key; the revision binds it to bytes."""

    key: Name
    description: str | None = None


class SandboxStage(Authored):
    """Checks from the registry, run by assay against the laid-out submission."""

    name: Name
    type: Literal["sandbox"] = "sandbox"
    mode: Mode = Mode.ALL
    checks: list[dict[str, Any]] = Field(min_length=1)
    """Check specs as ``assay check`` reads them; paths name roles and reference keys."""
    establishes: str | None = None
    """What a pass of this stage establishes, in the author's words."""


class ReviewStage(Authored):
    """People review the work under a protocol (the review issue builds this)."""

    name: Name
    type: Literal["review"] = "review"
    protocol: dict[str, Any] | None = None
    establishes: str | None = None


POINTER = re.compile(r"(/([^~/]|~[01])*)+")
"""A JSON Pointer (RFC 6901) to a member, never the whole document ("")."""


def _pointer(value: str) -> str:
    if not POINTER.fullmatch(value):
        raise ValueError(f"{value!r} is not a JSON Pointer to a member (e.g. /image)")
    return value


Pointer = Annotated[str, AfterValidator(_pointer)]


class Bind(Authored):
    """Ties a rule stage's evidence to the submission it concludes: the value at ``evidence``
    in the supplied evidence must be the submission's ``role`` artifact's value at ``at`` (the
    artifact read as JSON), or, without ``at``, the artifact's sha256 in hex. Without a bind
    the rule judges the evidence alone, and a report about another entry could conclude this
    one."""

    evidence: Pointer
    role: Name
    at: Pointer | None = Field(None, exclude_if=lambda value: value is None)


class ExternalStage(Authored):
    """A conclusion that comes from outside assay, and the record says how it came."""

    name: Name
    type: Literal["external"] = "external"
    mechanism: Literal["rule", "party"]
    """"rule": assay applies ``schema`` to evidence someone supplies; "party": a named party
    records the conclusion and a reason."""
    evidence_schema: dict[str, Any] | None = None
    """For "rule": the JSON Schema (draft 2020-12) the evidence must satisfy."""
    party: Name | None = None
    """For "party": the one participant name allowed to record this stage."""
    supplied_by: list[Name] | None = None
    """For "rule": who may supply the evidence (required: otherwise anyone, a rival included,
    could decide someone else's run). The submission's own participant never may, even when
    named: a participant's account of its own work is never evidence."""
    binds: list[Bind] = Field(default_factory=list, exclude_if=lambda value: not value)
    """For "rule": what in the evidence must match the submission's artifacts. Written only
    when given, so a stage without binds has the same JSON (and contract id) as before binds
    existed."""
    establishes: str | None = None

    @model_validator(mode="after")
    def _mechanism_inputs(self) -> Self:
        if self.mechanism == "rule" and self.evidence_schema is None:
            raise ValueError(
                "a 'rule' stage needs 'evidence_schema' (the JSON Schema evidence must meet)"
            )
        if self.mechanism == "party" and self.party is None:
            raise ValueError("a 'party' stage needs 'party' (who records the conclusion)")
        if self.mechanism == "rule" and not self.supplied_by:
            raise ValueError(
                "a 'rule' stage needs 'supplied_by' (who may supply the evidence: otherwise a "
                "rival could decide someone else's run)"
            )
        if self.mechanism == "rule" and self.party is not None:
            raise ValueError("'party' is for a 'party' stage; a 'rule' stage has none")
        if self.mechanism == "party" and self.evidence_schema is not None:
            raise ValueError("'evidence_schema' is for a 'rule' stage; a 'party' stage has none")
        if self.mechanism == "party" and self.binds:
            raise ValueError("'binds' is for a 'rule' stage; a 'party' stage has none")
        if self.mechanism == "party" and self.supplied_by is not None:
            raise ValueError("'supplied_by' is for a 'rule' stage; a 'party' stage has 'party'")
        return self


Stage = Annotated[SandboxStage | ReviewStage | ExternalStage, Field(discriminator="type")]


class Contract(WireModel):
    """The verification process: roles, reference keys, acceptance and ordered stages."""

    schema_: Literal["assay.contract/1"] = Field("assay.contract/1", alias="schema")
    roles: list[Role] = Field(default_factory=list)
    references: list[ReferenceKey] = Field(default_factory=list)
    acceptance: Prose
    """What "correct" means, in prose, for people; the stages are what is checked."""
    stages: list[Stage] = Field(min_length=1)
    conformance: list[Name] = Field(default_factory=list)
    """Reference keys of ``program`` checkers that must reproduce fixtures (bound by the
    revision) before they may judge."""
    verifier: Name | None = Field(None, exclude_if=lambda value: value is None)
    """The verifier (a named family of contract versions, e.g. ``extraction-fidelity``) this
    contract is a version of; a new contract naming an existing verifier is its next version.
    Written only when named, so a contract naming none is the same JSON (and id) as before
    verifiers existed."""

    @model_validator(mode="after")
    def _unique(self) -> Self:
        for what, names in (
            ("role", [r.name for r in self.roles]),
            ("reference key", [r.key for r in self.references]),
            ("stage", [s.name for s in self.stages]),
        ):
            seen: set[str] = set()
            for name in names:
                if name in seen:
                    raise ValueError(f"{what} {name!r} is declared twice")
                seen.add(name)
        roles = {r.name for r in self.roles}
        for stage in self.stages:
            for bind in stage.binds if isinstance(stage, ExternalStage) else []:
                if bind.role not in roles:
                    raise ValueError(
                        f"stage {stage.name!r} binds its evidence to {bind.role!r}, which is "
                        "not a role"
                    )
        keys = {r.key for r in self.references}
        for key in self.conformance:
            if key not in keys:
                raise ValueError(f"conformance names {key!r}, which is not a reference key")
        return self

    @property
    def id(self) -> str:
        """sha256 of the canonical JSON: the same process has the same id everywhere."""
        return canonical_digest(self.to_json())

    def role(self, name: str) -> Role | None:
        """The declared role called ``name``, if any."""
        return next((r for r in self.roles if r.name == name), None)


def utc(value: datetime) -> datetime:
    """A timezone-aware datetime in UTC; naive ones are refused (a date without a zone is
    ambiguous, and a seal that opens hours early leaks labels)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("give a timezone (e.g. 2027-01-01T00:00:00Z)")
    return value.astimezone(UTC)


Moment = Annotated[datetime, AfterValidator(utc)]
