"""What callers hand the ledger and what it gives back: entries, and the chain's report."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from assay._wire import WireModel, unvalidated


class NewEntry(BaseModel):
    """One fact to append. The ledger gives it no meaning: the platform picks ``kind`` and
    ``subject`` and what ``body`` holds; ``problem`` and ``participant`` are indexed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str = Field(min_length=1)
    """What happened, e.g. ``run.started`` (the platform decides the names)."""
    subject: str = Field(min_length=1)
    """The id this entry is about (a submission, a run, a problem)."""
    body: dict[str, Any]
    """A strict JSON object (no NaN or infinity), stored and hashed as canonical JSON."""
    problem: str | None = None
    """The problem this entry belongs to, if any (indexed)."""
    participant: str | None = None
    """The participant this entry belongs to, if any (indexed)."""
    at: datetime | None = None
    """When it happened: an aware datetime (stored in UTC, microseconds); None: now."""

    @field_validator("kind", "subject", "problem", "participant")
    @classmethod
    def _storable(cls, value: str | None) -> str | None:
        """Text both databases store as given: no NUL (PostgreSQL refuses it) and valid
        Unicode (a lone surrogate has no UTF-8 form)."""
        if value is not None:
            if "\x00" in value:
                raise ValueError("must not contain NUL")
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError("must be valid Unicode (a lone surrogate is not)") from None
        return value

    @field_validator("at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        """A naive time means nothing once stored; refuse it rather than guess its zone."""
        if value is not None and value.utcoffset() is None:
            raise ValueError("must carry a time zone (UTC)")
        return value

    @classmethod
    def trusted(
        cls,
        kind: str,
        subject: str,
        body: dict[str, Any],
        problem: str | None,
        participant: str | None,
        at: datetime,
    ) -> NewEntry:
        """The same entry without pydantic's validation, for a caller whose values are its own
        and already checked (the platform's hot path: kinds are its constants, subjects its
        ids, problems and participants names it looked up or checked; a batch makes thousands).
        ``at`` must still carry a time zone; the body is still refused at ``append`` unless it
        is strict JSON."""
        if at.utcoffset() is None:
            raise ValueError("at: must carry a time zone (UTC)")
        return unvalidated(
            cls,
            {
                "kind": kind,
                "subject": subject,
                "body": body,
                "problem": problem,
                "participant": participant,
                "at": at,
            },
        )


class Entry(NewEntry):
    """An appended entry as stored: its place in the chain and the hashes that fix it there."""

    seq: int
    """Its position in the one chain (1, 2, 3, ... with no gaps)."""
    at: datetime  # always set once stored
    """When it happened, in UTC."""
    prev_hash: str
    """The previous entry's ``hash`` (64 zeros for the first)."""
    hash: str
    """sha256 of the canonical JSON of [seq, kind, subject, problem, participant, at, body,
    prev_hash] (``at`` as stored text)."""


class ChainReport(WireModel):
    """The result of walking the whole chain (``assay ledger verify``).

    Intact means every row's hash matches its contents and every row names the row before it.
    It does not prove that no rows were removed from the *end* or that the whole chain was not
    rewritten by someone who recomputed every hash: compare ``head`` with a copy kept elsewhere.
    """

    schema_: Literal["assay.ledger_verify/1"] = Field("assay.ledger_verify/1", alias="schema")
    intact: bool
    """Whether every row checked out."""
    rows: int
    """Rows walked (all of them when intact; up to the first bad one otherwise)."""
    head: str | None
    """The last good row's hash (None for an empty store): keep it to detect a rewrite later."""
    first_bad_seq: int | None = None
    """The first row that fails, when not intact."""
    problem: str | None = None
    """Why it fails, naming the row (edited, or deleted / reordered) or the blob (edited)."""
    blobs: int | None = None
    """Blobs re-hashed against their names (None: not checked)."""
