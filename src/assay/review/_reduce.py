"""The reducers: pure, deterministic functions from earlier responses or outcomes to accept,
reject or unresolved. A reducer never calls a model, reads a clock or draws a random number;
the same inputs give the same outcome and the same one-line reason, which the ledger records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

from assay.review._protocol import ReduceNode

SKIPPED = "skipped"
"""The outcome of a reducer over a node that never opened (its condition did not hold)."""


def m_of_n(verdicts: Sequence[Any], m: int) -> tuple[str, str]:
    """Accept on at least ``m`` passes, reject on at least ``m`` fails, else unresolved."""
    passes = sum(1 for v in verdicts if v == "pass")
    fails = sum(1 for v in verdicts if v == "fail")
    others = len(verdicts) - passes - fails
    counted = f"{passes} pass, {fails} fail, {others} other of {len(verdicts)}"
    if passes >= m:
        return "accept", f"{counted}: at least {m} pass"
    if fails >= m:
        return "reject", f"{counted}: at least {m} fail"
    return "unresolved", f"{counted}: neither reaches {m}"


def score(
    values: Sequence[float | int | Decimal],
    aggregate: str,
    threshold: float,
    reject_below: float | None = None,
) -> tuple[str, str]:
    """The aggregate (mean, min or max) of ``values`` against the threshold, computed exactly on
    the numbers as written: accept at or above it, reject below ``reject_below`` (default: the
    threshold), unresolved between."""
    if not values:
        return "unresolved", "no scores to aggregate"
    value = aggregate_of(values, aggregate)
    floor = threshold if reject_below is None else reject_below
    said = f"{aggregate} of {len(values)} scores is {_shown(value)}"
    if value >= exact_score(threshold):
        return "accept", f"{said}, at least the threshold {threshold:g}"
    if value < exact_score(floor):
        return "reject", f"{said}, below {floor:g}"
    return "unresolved", f"{said}, between {floor:g} and the threshold {threshold:g}"


def aggregate_of(values: Sequence[float | int | Decimal], aggregate: str) -> Fraction:
    """The mean, min or max of ``values`` (not empty), exactly on the numbers as written: what
    a score reducer compares with its threshold, and what a ranking campaign orders by."""
    exact = [exact_score(v) for v in values]
    if aggregate == "mean":
        return sum(exact, Fraction(0)) / len(exact)
    return min(exact) if aggregate == "min" else max(exact)


def exact_score(value: float | int | Decimal) -> Fraction:
    """The number as written (0.1 is one tenth), so a mean of 0.9, 0.7 and 0.8 meets a
    threshold of 0.8 as a person reading the scores expects; float rounding never decides.
    An integer is taken whole (never through a float, which a huge one overflows), and a
    ``Decimal`` is the reviewer's literal (``Board.responses``)."""
    if isinstance(value, (int, Decimal)):
        return Fraction(value)
    return Fraction(repr(float(value)))


def _shown(value: Fraction) -> str:
    """The aggregate in a detail line: ``%g`` when a float holds it, else its sign and size."""
    try:
        return f"{float(value):g}"
    except OverflowError:
        return f"{'-' if value < 0 else ''}a number of {len(str(abs(int(value))))} digits"


def first_resolved(outcomes: Sequence[tuple[str, str | None]]) -> tuple[str, str] | None:
    """The first of ``(node, outcome)`` (in the listed order) that is accept or reject; None
    while an earlier one is still undecided (outcome None); unresolved when none resolves."""
    for node, outcome in outcomes:
        if outcome is None:
            return None
        if outcome in ("accept", "reject"):
            return outcome, f"{node!r} resolved: {outcome}"
    return "unresolved", "no branch resolved"


def reduce(
    node: ReduceNode,
    responses: Mapping[str, Sequence[Mapping[str, Any]] | None],
    outcomes: Mapping[str, str | None],
) -> tuple[str, str] | None:
    """Apply ``node`` to its inputs: ``responses`` by review node (None: skipped, never opened),
    ``outcomes`` by reduce node (None: not decided yet); a review node not yet settled is
    absent from ``responses``. None while it cannot decide yet."""
    if node.op == "first_resolved":
        return first_resolved([(n, outcomes.get(n)) for n in node.inputs])
    if node.inputs[0] not in responses:
        return None
    found = responses[node.inputs[0]]
    if found is None:
        return SKIPPED, f"{node.inputs[0]!r} never opened"
    if node.op == "m_of_n":
        assert node.m is not None
        return m_of_n([r.get("verdict") for r in found], node.m)
    assert node.field is not None and node.threshold is not None
    values = [r[node.field] for r in found]
    return score(values, node.aggregate, node.threshold, node.reject_below)
