"""Reducer edge cases a reviewer or protocol author can reach: scores beyond the float range,
numbers written just below a threshold, ties and ``uncertain`` votes, degenerate graphs.

Found (1): a score field whose schema sets no maximum accepts a 400-digit integer; the score
reducer calls ``float()`` on it (src/assay/review/_reduce.py, ``reduce``: ``values =
[float(r[node.field]) ...]``) and raises OverflowError: the reviewer's response crashes with an
internal error instead of being recorded or refused. Wanted: compute on the exact number
(``Fraction(int)`` for ints, ``Fraction(str)`` for the written decimal), or refuse a non-finite
float conversion in ``check_response`` as an invalid response naming the field.

Found (2): docs/review.md says score is "computed exactly on the numbers as written", but a
response's number is parsed to a float first, so ``0.79999999999999999999`` (below 0.8 as
written) meets a threshold of 0.8. Wanted: parse responses with ``parse_float=Decimal`` (or
keep the literal) before ``_exact``; or drop the claim from the docs.

The rest are refused or decided as documented (regressions)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from assay.review import protocol_problems
from assay.review._reduce import m_of_n, score
from assay.status import Status
from tests.platform.conftest import Clock
from tests.review.helpers import publish, review_node, seats_of, single, sqlite_platform, users


def _score_protocol(maximum: float | None) -> dict[str, Any]:
    node = review_node(1)
    field: dict[str, Any] = {"type": "number"}
    if maximum is not None:
        field["maximum"] = maximum
    node["response_schema"] = {
        "type": "object",
        "required": ["score"],
        "properties": {"score": field},
    }
    node["assistance"] = {"required": False}
    vote = {
        "type": "reduce",
        "op": "score",
        "inputs": ["panel"],
        "field": "score",
        "threshold": 0.8,
        "final": True,
    }
    return {"nodes": {"panel": node, "vote": vote}}


@pytest.mark.parametrize(
    ("written", "maximum", "wanted"),
    [
        ("1" + "0" * 400, None, {Status.VERIFIED, None}),  # recorded (or refused), no crash
        ("-1" + "0" * 400, None, {Status.REFUTED, None}),
        ("0.79999999999999999999", 1, {Status.REFUTED}),  # below 0.8 as written
        ("0.8", 1, {Status.VERIFIED}),
        ("0.30000000000000004", 1, {Status.REFUTED}),
    ],
    ids=["huge", "huge-negative", "just-below", "exact", "float-noise"],
)
def test_a_score_is_judged_on_the_number_written(
    tmp_path: Path, written: str, maximum: float | None, wanted: set[Status | None]
) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, _score_protocol(maximum))
        users(platform)
        platform.submit("reviewed", {}, "42", "alice")
        (seat,) = seats_of(platform, "rev1")
        platform.reviews.claim(seat, "rev1")
        try:
            done = platform.reviews.respond(seat, "rev1", f'{{"score": {written}}}'.encode())
        except InvalidInput:
            assert None in wanted, "refused a valid response"
            return
        assert done.run is not None and done.run.status in wanted, done.concluded


@pytest.mark.parametrize(
    ("verdicts", "m", "outcome"),
    [
        (["pass", "fail", "uncertain"], 2, "unresolved"),
        (["pass", "pass", "uncertain", "fail", "fail"], 3, "unresolved"),
        (["uncertain", "uncertain", "uncertain"], 2, "unresolved"),
        (["pass", "pass", "fail"], 2, "accept"),
        ([True, 1, "PASS", "pass "], 1, "unresolved"),  # only the string 'pass' counts
    ],
)
def test_m_of_n_counts_only_what_it_should(verdicts: list[Any], m: int, outcome: str) -> None:
    assert m_of_n(verdicts, m)[0] == outcome


@pytest.mark.parametrize(
    ("values", "threshold", "outcome"),
    [([0.1, 0.2], 0.15, "accept"), ([0.1, 0.2], 0.15000000000000002, "reject")],
)
def test_score_mean_is_exact(values: list[float], threshold: float, outcome: str) -> None:
    assert score(values, "mean", threshold)[0] == outcome


def _vote(**change: Any) -> dict[str, Any]:
    protocol = single(3, 2)
    protocol["nodes"]["vote"].update(change)
    return protocol


def _panel(**change: Any) -> dict[str, Any]:
    protocol = single(3, 2)
    protocol["nodes"]["panel"].update(change)
    return protocol


@pytest.mark.parametrize(
    ("protocol", "says"),
    [
        (_vote(m=0), "m"),
        (_vote(m=1), "more than half"),
        (_vote(m=4), "at most the seats"),
        (_panel(seats=0), "seats"),
        (_vote(inputs=["vote"]), "reduce node"),
        (_panel(deadline_hours=0), "deadline_hours"),
        (_panel(deadline_hours=-1), "deadline_hours"),
        (_panel(lease_hours=float("nan")), "lease_hours"),
        (_panel(response_schema={"type": "object"}), "verdict"),
        (_panel(response_schema=True), "response_schema"),
        (_vote(op="first_resolved", m=None, inputs=["panel", "panel"]), "inputs"),
    ],
    ids=[
        "m0",
        "m-minority",
        "m-over-seats",
        "seats0",
        "self-input",
        "deadline-now",
        "deadline-past",
        "lease-nan",
        "schema-accepts-anything",
        "schema-true",
        "first-resolved-of-review",
    ],
)
def test_degenerate_protocols_are_refused(protocol: dict[str, Any], says: str) -> None:
    problems = protocol_problems(protocol)
    assert any(says in line for line in problems), problems


def _unanswerable() -> dict[str, Any]:
    return _panel(assistance={"required": True, "unassisted": False, "agents": []})


def _all_conflicted() -> dict[str, Any]:
    return _panel(eligible={"users": ["a", "b", "c"]}, conflicts=["a", "b", "c"])


def _too_few_named() -> dict[str, Any]:
    return _panel(eligible={"users": ["a", "b"]})


@pytest.mark.parametrize(
    ("protocol", "says"),
    [(_unanswerable, "assistance"), (_all_conflicted, "conflicts"), (_too_few_named, "users")],
    ids=["no-declaration-acceptable", "every-eligible-user-conflicted", "fewer-users-than-seats"],
)
def test_a_node_nobody_can_complete_is_refused(protocol: Any, says: str) -> None:
    """Found: these validate, and every review under them can only expire (inconclusive after
    72 h): no declaration is acceptable (``unassisted: false, agents: []``), every named user is
    conflicted, or fewer named users than seats (one seat per reviewer). Wanted: refused in
    ``_review_problems`` (src/assay/review/_protocol.py) naming the key."""
    problems = protocol_problems(protocol())
    assert any(says in line for line in problems), problems
