"""Combining outcomes into one report, and the score a trainer reads from it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum
from typing import Literal

from pydantic import Field

from assay._errors import InvalidInput
from assay._wire import WireModel, unvalidated
from assay.status._status import Outcome, Status


class Mode(StrEnum):
    """How several outcomes become one status and score."""

    ALL = "all"
    """Verified iff every check is verified; score 1.0 or 0.0."""
    WEIGHTED = "weighted"
    """Score is the verified share of the weights; status as in ``all``. Beside a refutation, a
    check that did not conclude earns nothing: the score is what the findings establish."""


_PRECEDENCE = (Status.REFUTED, Status.ERROR, Status.INCONCLUSIVE, Status.VERIFIED)
"""A task's status is the first of these that any of its outcomes has."""
_KNOWN = frozenset(_PRECEDENCE)


class Report(WireModel):
    """The combined verdict over several checks: the document ``assay.report/1``.

    ``score`` is None exactly when the status is ``inconclusive`` or ``error``, that is when no
    finding decides it: a trainer masks it instead of learning from a 0.0 that says nothing about
    the work. A refutation decides it whatever else happened (see ``combine``).

    ``to_json()`` is the wire form printed by ``assay check``; always encodable, because details
    and evidence are cleaned when serialised (see ``Outcome``).
    """

    schema_: Literal["assay.report/1"] = Field("assay.report/1", alias="schema")
    task: str | None = None
    """The task file judged, when the report is about one (``assay check`` names it)."""
    status: Status
    """The task's status: the first of refuted, error, inconclusive, verified any outcome has."""
    score: float | None
    """The reward: 1.0 or 0.0 in mode ``all``, the verified share of the weights in mode
    ``weighted``; null when no finding decides it (``inconclusive`` or ``error``): mask it."""
    mode: Mode = Mode.ALL
    """How the outcomes were combined."""
    outcomes: tuple[Outcome, ...]
    """One per check, in the task's order."""


def combine(
    outcomes: Sequence[Outcome],
    mode: Mode | str = Mode.ALL,
    weights: Sequence[float] | None = None,
) -> Report:
    """Combine outcomes; an empty list is refused, because nothing checked is not a pass.

    The status is the first of refuted, error, inconclusive, verified that any outcome has. A
    refutation is a finding about the work that stands whatever else happened, so nothing hides
    it: if an error or a limit outranked it, a candidate able to trigger one anywhere in the task
    would turn every refutation into a masked sample. The same order holds in both modes.
    """
    if type(mode) is not Mode:  # the enum's call is a Python function: skipped when it is one
        mode = Mode(mode)
    if not outcomes:
        raise InvalidInput(
            "there are no checks: an empty check list is never a pass", where="checks"
        )
    if weights is None:
        weights = [1.0] * len(outcomes)
    if len(weights) != len(outcomes):
        raise InvalidInput("one weight per outcome is required", where="weights")

    statuses = {o.status for o in outcomes}
    if not statuses <= _KNOWN:  # an Outcome built without validation: never read as a pass
        raise ValueError(f"an outcome's status is not one of the four: {statuses - _KNOWN}")
    for status in _PRECEDENCE:  # the first any outcome has (a loop: no generator per report)
        if status in statuses:
            break

    score: float | None
    if not status.concluded:
        score = None
    elif mode is Mode.ALL:
        score = 1.0 if status is Status.VERIFIED else 0.0
    else:
        # shares of the largest weight, summed exactly: 1e308 weights do not overflow to NaN
        top = max(weights)
        total = math.fsum(w / top for w in weights)
        passed = math.fsum(
            w / top for o, w in zip(outcomes, weights, strict=True) if o.status is Status.VERIFIED
        )
        score = passed / total
        if status is not Status.VERIFIED:  # a failed check never rounds away into full reward
            score = min(score, math.nextafter(1.0, 0.0))
    found = tuple(outcomes)
    for outcome in found:
        if type(outcome) is not Outcome:  # a caller's own values: validated
            return Report(status=status, score=score, mode=mode, outcomes=found)
    fields = {
        "schema_": "assay.report/1",
        "task": None,
        "status": status,
        "score": score,
        "mode": mode,
        "outcomes": found,
    }
    return unvalidated(Report, fields, set(_GIVEN))


_GIVEN = ("status", "score", "mode", "outcomes")
