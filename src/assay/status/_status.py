"""The four statuses and the outcome of one check.

Only ``refuted`` is a statement about the work. ``inconclusive`` (an input missing, a limit hit) and
``error`` (assay's own machinery failed) say nothing about it, which is why a reward derived from
them is absent rather than 0.0.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from pydantic import field_serializer

from assay._wire import WireModel, unvalidated
from assay.status._clean import clean_text, clean_value


class Status(StrEnum):
    """One status type, used for check outcomes, reports, stages, runs and the API."""

    VERIFIED = "verified"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"

    @property
    def label(self) -> str:
        """What a person is shown: never "failed" for a check that could not run."""
        return _LABELS[self]

    @property
    def concluded(self) -> bool:
        """True when the status is a finding about the work (verified or refuted)."""
        return self in (Status.VERIFIED, Status.REFUTED)


_LABELS = {
    Status.VERIFIED: "Verified",
    Status.REFUTED: "Did not satisfy the verifier",
    Status.INCONCLUSIVE: "Could not determine",
    Status.ERROR: "Verification error",
}


class Outcome(WireModel):
    """What one check found. Build it with the per-status constructors.

    Part of a report on the wire (``assay.report/1``), never a document of its own.
    """

    kind: str | None = None
    """The check kind that produced it; stamped by the engine."""
    status: Status
    """The finding; only ``refuted`` says the work is wrong."""
    detail: str
    """Actionable: what to change, or why no conclusion was reached."""
    evidence: dict[str, Any] | None = None
    """JSON-able facts behind the finding (expected and actual values, receipts, rows)."""

    # Detail and evidence often quote what the candidate or a checker wrote; every serialised
    # form is cleaned (see ``assay.status._clean``), so a report can always be encoded. Done when
    # serialising, not when building: building is on the answer hot path.
    @field_serializer("detail")
    def _serialize_detail(self, detail: str) -> str:
        return clean_text(detail)

    @field_serializer("evidence")
    def _serialize_evidence(self, evidence: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if evidence is None else clean_value(evidence)

    def with_kind(self, kind: str) -> Outcome:
        """The same finding, stamped with the kind that produced it. An ``Outcome`` was
        validated when it was built, and the kind is text, so it is not validated again (once
        per check on the answer hot path); anything else (a subclass, a kind that is not text,
        a status or detail of another type, as ``model_construct`` leaves them) is validated,
        like every Outcome."""
        fields = {"kind": kind, "status": self.status, "detail": self.detail}
        trusted = type(self.status) is Status and type(self.detail) is str  # not model_construct
        if type(self) is Outcome and type(kind) is str and trusted:
            return unvalidated(Outcome, {**fields, "evidence": self.evidence}, set(_ALL_FIELDS))
        return _VALIDATE({**fields, "evidence": self.evidence})

    @classmethod
    def verified(cls, detail: str = "passed", evidence: dict[str, Any] | None = None) -> Outcome:
        """The work met this check."""
        return _VALIDATE({"status": Status.VERIFIED, "detail": detail, "evidence": evidence})

    @classmethod
    def refuted(cls, detail: str, evidence: dict[str, Any] | None = None) -> Outcome:
        """The work does not meet this check; ``detail`` says what to change."""
        return _VALIDATE({"status": Status.REFUTED, "detail": detail, "evidence": evidence})

    @classmethod
    def inconclusive(cls, detail: str, evidence: dict[str, Any] | None = None) -> Outcome:
        """No conclusion about the work (an input missing, a limit hit); ``detail`` says why."""
        return _VALIDATE({"status": Status.INCONCLUSIVE, "detail": detail, "evidence": evidence})

    @classmethod
    def error(cls, detail: str, evidence: dict[str, Any] | None = None) -> Outcome:
        """assay's own machinery failed; never caused by the work."""
        return _VALIDATE({"status": Status.ERROR, "detail": detail, "evidence": evidence})


# The answer hot path builds two outcomes per check (the kind's, then the stamped one). Calling the
# model's validator on a dict validates exactly as ``Outcome(...)`` does (same schema, same
# checks), without the keyword-argument ``__init__`` frame, which costs more than the validation.
_VALIDATE: Callable[[dict[str, Any]], Outcome] = Outcome.__pydantic_validator__.validate_python
_ALL_FIELDS = ("kind", "status", "detail", "evidence")
