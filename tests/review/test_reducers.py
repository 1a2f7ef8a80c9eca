"""Reducers are pure and deterministic: counts, aggregates against thresholds, first resolved;
over 1,000 responses they simply run (no timed assertion)."""

from __future__ import annotations

import pytest

from assay.review import ReduceNode, first_resolved, m_of_n, reduce, score


@pytest.mark.parametrize(
    ("verdicts", "m", "outcome"),
    [
        (["pass", "pass", "fail"], 2, "accept"),
        (["fail", "pass", "fail"], 2, "reject"),
        (["pass", "fail", "uncertain"], 2, "unresolved"),
        (["uncertain", "uncertain", "uncertain"], 2, "unresolved"),
        (["pass"], 1, "accept"),
        (["Pass", "PASS", True, 1], 1, "unresolved"),  # only the exact string counts
    ],
)
def test_m_of_n(verdicts: list[object], m: int, outcome: str) -> None:
    assert m_of_n(verdicts, m)[0] == outcome


@pytest.mark.parametrize(
    ("values", "aggregate", "threshold", "below", "outcome"),
    [
        ([0.9, 0.7, 0.8], "mean", 0.8, None, "accept"),
        ([0.9, 0.7, 0.7], "mean", 0.8, None, "reject"),
        ([0.9, 0.7, 0.7], "max", 0.8, None, "accept"),
        ([0.9, 0.7, 0.8], "min", 0.8, None, "reject"),
        ([0.75], "mean", 0.8, 0.5, "unresolved"),
        ([], "mean", 0.8, None, "unresolved"),
    ],
)
def test_score(
    values: list[float], aggregate: str, threshold: float, below: float | None, outcome: str
) -> None:
    assert score(values, aggregate, threshold, below)[0] == outcome


def test_first_resolved_takes_the_first_in_order_and_waits_for_earlier_ones() -> None:
    assert first_resolved([("a", "unresolved"), ("b", "reject")]) == (
        "reject",
        "'b' resolved: reject",
    )
    assert first_resolved([("a", "accept"), ("b", None)]) == ("accept", "'a' resolved: accept")
    assert first_resolved([("a", None), ("b", "accept")]) is None
    assert first_resolved([("a", "unresolved"), ("b", "skipped")])[0] == "unresolved"  # type: ignore[index]


def test_reducers_over_a_thousand_responses_are_deterministic() -> None:
    responses = [
        {"verdict": ("pass", "fail", "uncertain")[i % 3], "grade": (i % 100) / 100}
        for i in range(1000)
    ]
    vote = ReduceNode(type="reduce", op="m_of_n", inputs=["panel"], m=501)
    graded = ReduceNode(
        type="reduce", op="score", inputs=["panel"], field="grade", threshold=0.5, reject_below=0.4
    )
    first = reduce(vote, {"panel": responses}, {})
    assert first == reduce(vote, {"panel": list(responses)}, {})
    assert first is not None and first[0] == "unresolved"
    assert reduce(graded, {"panel": responses}, {}) == (
        "unresolved",
        reduce(graded, {"panel": responses}, {})[1],
    )  # type: ignore[index]
    assert reduce(vote, {}, {}) is None  # the node has not settled: no decision yet
    assert reduce(vote, {"panel": None}, {})[0] == "skipped"  # type: ignore[index]
