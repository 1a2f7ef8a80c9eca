"""A revision: one problem's statement, policy and contract, with every reference bound to bytes.

Its id is the sha256 of its canonical JSON, so publishing an unchanged folder again names the same
revision (nothing new is stored), and any change to the process, a reference, the statement or the
policy is a new revision. Submissions keep the revision they were made under.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Self

from pydantic import Field, model_validator

from assay._signed import canonical_digest
from assay._wire import WireModel
from assay.platform._contract import Authored, Moment, Name


class Binding(WireModel):
    """Exact bytes: a file (sha256 of its bytes) or a folder (sha256 of its manifest)."""

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(ge=0)
    tree: bool = False
    """A folder: ``sha256`` names the manifest listing its files."""
    sealed_until: Moment | None = None
    """Until then the bytes reach only sandbox checks and the problem's managers."""


class Allowance(Authored):
    """At most ``count`` submissions per participant per problem in any ``window_hours``."""

    count: int = Field(gt=0, le=100_000)
    window_hours: float = Field(gt=0, le=24 * 366, allow_inf_nan=False)


class Release(Authored):
    """When participants see results, and when sealed references unseal."""

    results: Literal["immediate", "held"] = "immediate"
    score_release: Moment | None = None
    """With "held": participants see "recorded; results on DATE" until then."""
    label_release: Moment | None = None
    """Sealed references unseal at this date at the latest."""

    @model_validator(mode="after")
    def _dates(self) -> Self:
        if self.results == "held" and self.score_release is None:
            raise ValueError("held results need 'score_release' (when participants see them)")
        if self.results == "immediate" and self.score_release is not None:
            raise ValueError("'score_release' is for held results ('results: held')")
        return self


class IndependentEntry(Authored):
    """Participants cannot see each other's submissions before ``cutoff``; each nominates one."""

    cutoff: Moment


class Policy(Authored):
    """How submissions are admitted and results released; the same for every revision reader."""

    allowance: Allowance | None = None
    release: Release = Field(default_factory=Release)
    independent_entry: IndependentEntry | None = None


class Revision(WireModel):
    """One published version of a problem."""

    schema_: Literal["assay.revision/1"] = Field("assay.revision/1", alias="schema")
    problem: Name
    title: str = Field(min_length=1, max_length=300)
    statement: Binding
    skills: dict[str, Binding] = Field(default_factory=dict)
    """Skill documents (path in the folder -> bytes) that tell a solver how to check locally."""
    contract: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    """The contract id; None: a record-only revision (its work is never called verified)."""
    references: dict[Name, Binding] = Field(default_factory=dict)
    fixtures: dict[Name, Binding] = Field(default_factory=dict)
    """Conformance fixtures (a folder) per program checker's reference key."""
    policy: Policy = Field(default_factory=Policy)

    @property
    def id(self) -> str:
        """sha256 of the canonical JSON."""
        return canonical_digest(self.to_json())

    def unseals_at(self, key: str) -> datetime | None:
        """When reference ``key`` unseals (None: it is not sealed)."""
        binding = self.references.get(key)
        if binding is None or binding.sealed_until is None:
            return None
        label = self.policy.release.label_release
        return min(binding.sealed_until, label) if label else binding.sealed_until
