"""The review's ledger entries: who may judge (users and groups), each claim, each response,
each reduction step and the stage's conclusion. All append-only; state is derived from them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from assay._wire import WireModel

USER = "user.added"
CLAIMED = "review.claimed"
RESPONDED = "review.responded"
REDUCED = "review.reduced"
CONCLUDED = "review.concluded"
KINDS = (CLAIMED, RESPONDED, REDUCED, CONCLUDED)
ROLES = ("participant", "reviewer", "manager")
"""What a user may do through the web pages and the API (``assay user add --role``)."""


class UserRecord(WireModel):
    """A user and the groups added with this entry (a user's groups are the union of all)."""

    name: str
    groups: list[str]
    by: str
    roles: list[str] = Field(default_factory=list)
    """participant, reviewer, manager (what the web pages and the API let the user do)."""
    token_sha256: str | None = None
    """The sha256 of the user's newest bearer token (the token itself is printed once, never
    stored); a newer entry's token replaces this one."""


class Material(WireModel):
    """One thing a reviewer is shown: an immutable content hash and where to read it."""

    uri: str
    """``assay://submission/<id>/artifact/<role>``, ``assay://revision/<id>/reference/<key>``,
    ``assay://review/<run>/<node>/<seat>`` ..."""
    sha256: str
    size: int
    what: str


class ClaimedRecord(WireModel):
    """A seat held by ``user`` until ``until``; what the seat shows them is fixed here."""

    run: str
    stage: str
    node: str
    seat: str
    user: str
    until: datetime
    shown: list[Material]


class RespondedRecord(WireModel):
    """A valid response: who judged, what they declared and were shown, what they answered."""

    run: str
    stage: str
    node: str
    seat: str
    user: str
    response: dict[str, Any]
    response_sha256: str
    assistance: list[dict[str, str]] = Field(default_factory=list)
    shown: list[Material]
    written: dict[str, str] = Field(default_factory=dict)
    """Top-level numbers as the reviewer wrote them, where parsing rounded them (a reducer
    compares the written number)."""


class ReducedRecord(WireModel):
    """One reduction step: the operation, what it read and what it emitted."""

    run: str
    stage: str
    node: str
    op: str
    inputs: dict[str, Any]
    outcome: str
    detail: str


class ConcludedRecord(WireModel):
    """The stage's outcome: accept, reject or unresolved (or a node past its deadline)."""

    run: str
    stage: str
    outcome: str
    status: str
    """The stage's status: the outcome's, or inconclusive when the review was revoked."""
    detail: str
    revoked: str | None = None
    """Why the review's checker was revoked (the status is then inconclusive: a revoked
    review concludes nothing); ``review show`` also fills it when it was revoked later."""
    carried_from: str | None = None
    """The earlier run whose review this one carries over (a re-check opens no new panel)."""
