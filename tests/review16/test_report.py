"""The review report, from the ledger alone: agreement (raw, Cohen's and Fleiss' kappa),
decisions matching a reference protocol, audits against the automated checker, decisions per
reviewer-hour by declared assistance, each with its 95 % interval from statsmodels; the
reviewer-hours from the test's clock."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

from assay._errors import InvalidInput
from assay.platform import Platform
from assay.platform._campaigns import protocol_id
from assay.platform._review_report import review_report
from assay.review._report import Answer, Unit, report
from tests.platform.conftest import Clock
from tests.review.helpers import answer, escalation, publish, users
from tests.review16.helpers import expert, parsed

CLAUDE = [{"agent": "claude", "role": "summarised the essay"}]


def _unit(target: str, verdicts: tuple[str, str], outcome: str, protocol: str = "two") -> Unit:
    unit = Unit(protocol=protocol, title=None, target=target, key=target, seats={"panel": 2})
    unit.outcome = outcome
    for seat, verdict in enumerate(verdicts, 1):
        unit.answers.append(Answer("panel", seat, f"r{seat}", verdict, (), 600.0))
    return unit


def test_two_seats_give_cohens_kappa_and_every_rate_an_interval() -> None:
    rows = [
        ("pass", "pass"),
        ("pass", "fail"),
        ("fail", "fail"),
        ("fail", "fail"),
        ("pass", "pass"),
    ]
    outcomes = ["accept", "unresolved", "reject", "reject", "accept"]
    units = [_unit(f"t{i}", v, o) for i, (v, o) in enumerate(zip(rows, outcomes, strict=True))]
    reference = [_unit(f"t{i}", ("pass", "pass"), "accept", "ref") for i in range(4)]
    done = report(units + reference, "ref")
    (two,) = [p for p in done.protocols if p.protocol == "two"]
    (panel,) = two.agreement
    assert (panel.raw.k, panel.raw.n) == (4, 5)
    low, high = proportion_confint(4, 5, method="wilson")
    assert (panel.raw.low, panel.raw.high) == pytest.approx((low, high))
    expected = cohens_kappa(np.array([[2, 1], [0, 2]]))  # rows fail/pass of seat 1
    assert panel.kappa is not None and panel.kappa.method == "cohen"
    assert panel.kappa.value == pytest.approx(expected.kappa)
    assert (panel.kappa.low, panel.kappa.high) == pytest.approx(
        (expected.kappa_low, min(1.0, expected.kappa_upp))  # no kappa lies above 1
    )
    assert expected.kappa_upp > 1  # statsmodels' asymptotic end runs past it here
    assert two.matches_reference is not None
    assert (two.matches_reference.k, two.matches_reference.n) == (1, 4)  # t0 only
    (speed,) = two.throughput
    assert speed.decisions.count == 10 and speed.decisions.hours == pytest.approx(10 / 6)
    assert speed.decisions.rate == pytest.approx(6.0)
    assert speed.decisions.low is not None and speed.decisions.low < 6 < speed.decisions.high
    assert two.automated_disagreement is None  # nothing here was automated


def test_undefined_kappa_says_why() -> None:
    done = report([_unit("a", ("pass", "pass"), "accept"), _unit("b", ("pass", "pass"), "accept")])
    kappa = done.protocols[0].agreement[0].kappa
    assert kappa is not None and kappa.value is None and "single category" in kappa.note


def _claim_respond(
    platform: Platform,
    clock: Clock,
    seat: str,
    user: str,
    verdict: str,
    minutes: float,
    **extra: object,
) -> None:
    claimed = platform.reviews.claim(seat, user)
    clock.advance(minutes=minutes)
    platform.reviews.respond(seat, user, answer(verdict, claimed.materials[0].uri, **extra))


def _open(platform: Platform, user: str, prefix: str, node: str) -> str:
    return next(
        s.seat
        for s in platform.reviews.seats(user).open
        if s.seat.startswith(prefix) and s.node == node
    )


PANELS = [
    ("pass", "pass", "pass"),  # accept
    ("fail", "fail", "pass"),  # reject
    ("pass", "fail", "uncertain"),  # split: the expert passes it -> accept
    ("pass", "pass", "fail"),  # accept
]
REFERENCE = ["pass", "fail", "pass", "fail"]  # the single expert's audit of the same runs


def test_the_report_compares_escalation_with_a_single_expert_from_the_ledger(
    platform: Platform, clock: Clock, tmp_path: Path
) -> None:
    publish(
        platform, tmp_path, escalation(), policy={"allowance": {"count": 50, "window_hours": 24}}
    )
    users(platform, experts=2)
    submissions = []
    for i, panel in enumerate(PANELS):
        run = platform.submit("reviewed", {}, "42", f"p{i}")
        submissions.append(run.submission)
        for n, verdict in enumerate(panel, 1):
            seat = _open(platform, f"rev{n}", run.submission, "panel")
            if n == 1:  # rev1 works with an agent, and faster
                _claim_respond(platform, clock, seat, "rev1", verdict, 15, assistance=CLAUDE)
            else:
                _claim_respond(platform, clock, seat, f"rev{n}", verdict, 30)
    seat = _open(platform, "exp1", submissions[2], "expert")
    _claim_respond(platform, clock, seat, "exp1", "pass", 30)
    audit = platform.reviews.campaigns.create(
        parsed(expert()), "runs:problem=reviewed,status=any", "author"
    )
    for item in audit.items:
        verdict = REFERENCE[submissions.index(item.target)]
        seat = _open(platform, "exp2", item.item, "expert")
        _claim_respond(platform, clock, seat, "exp2", verdict, 20)
    escalation_id = protocol_id(parsed(escalation()))
    expert_id = audit.protocol_id
    done = review_report(platform.reviews, [escalation_id[:8]], expert_id[:8])
    assert {p.protocol for p in done.protocols} == {escalation_id, expert_id}
    (esc,) = [p for p in done.protocols if p.protocol == escalation_id]
    (ref,) = [p for p in done.protocols if p.protocol == expert_id]
    assert esc.outcomes == {"accept": 3, "reject": 1} and esc.units == 4
    assert esc.matches_reference is not None
    assert (esc.matches_reference.k, esc.matches_reference.n) == (3, 4)
    (panel,) = [a for a in esc.agreement if a.node == "panel"]
    assert (panel.raw.k, panel.raw.n) == (5, 12)
    table = np.array([[row.count(c) for c in ("fail", "pass", "uncertain")] for row in PANELS])
    assert panel.kappa is not None and panel.kappa.method == "fleiss"
    assert panel.kappa.value == pytest.approx(fleiss_kappa(table))
    assert panel.kappa.low is not None and panel.kappa.high is not None
    speed = {t.assistance: t for t in esc.throughput}
    assisted, plain = speed["assisted: claude"], speed["unassisted"]
    assert (assisted.decisions.count, assisted.decisions.hours) == (4, pytest.approx(1.0))
    assert assisted.decisions.rate == pytest.approx(4.0)
    assert (plain.decisions.count, plain.decisions.hours) == (9, pytest.approx(4.5))
    assert (assisted.agrees_with_decision.k, assisted.agrees_with_decision.n) == (4, 4)
    assert (plain.agrees_with_decision.k, plain.agrees_with_decision.n) == (5, 9)
    assert ref.automated_disagreement is not None  # the audit rejected one verified run
    assert (ref.automated_disagreement.k, ref.automated_disagreement.n) == (1, 4)
    assert esc.automated_disagreement is None and ref.matches_reference is None
    with pytest.raises(InvalidInput, match="names no reviewed protocol") as caught:
        review_report(platform.reviews, ["ffffffff"])
    assert caught.value.where == "--protocol"
