"""A ledger crafted through normal operations that makes the review report say something no
rate or kappa can be: negative reviewer-hours, a kappa interval past 1 or below -1, a zero-width
interval from two items, NaN or infinity in the JSON, or a crash.

Found (1): ``_throughput`` (src/assay/review/_report.py) summed claim-to-response times as they
came, so a response the clock stamped before its claim (a clock set back between them: NTP, a
VM restore, the platform's injectable clock) subtracted time: one such response made the
group's hours negative (printed, with no rate), or shrank the others' hours and inflated their
decisions per hour. Fixed: a negative duration counts no time and no timed decision.
Found (2): ``cohen`` (src/assay/review/_stats.py) passed statsmodels' asymptotic interval on
as it is, estimate ± 1.96 se, which on a few items runs past 1 (the bundled test table's upper
end was 1.24) or below -1; and a degenerate table (one rater used one category; every pair
disagrees) has se 0 and got a zero-width interval, [-1, -1] from two items. Fixed: the ends are
clipped to [-1, 1], and a zero standard error gives no interval, with a note saying why.
(Both also printed a numpy RuntimeWarning on the terminal.)"""

from __future__ import annotations

import itertools
import json
import math
import warnings
from pathlib import Path

import pytest

from assay.platform import Platform, review_report
from assay.review import Answer, Unit, report
from tests.platform.conftest import Clock
from tests.review.helpers import answer, escalation, sqlite_platform, users
from tests.review16.helpers import expert, items, parsed

VERDICTS = ("pass", "fail", "uncertain")


def _finite(document: object) -> None:
    """The JSON is strict: no NaN or infinity anywhere, every number finite."""
    json.dumps(document, allow_nan=False)


def _unit(target: str, verdicts: tuple[str, ...], outcome: str | None, seconds: float) -> Unit:
    unit = Unit(
        protocol="p",
        title="t",
        target=target,
        key=target,
        seats={"panel": len(verdicts)},
        outcome=outcome,
    )
    for seat, verdict in enumerate(verdicts, 1):
        unit.answers.append(Answer("panel", seat, f"r{seat}", verdict, (), seconds))
    return unit


@pytest.mark.slow
@pytest.mark.parametrize("seats", [2, 3])
def test_every_kappa_and_its_interval_lie_in_minus_one_to_one(seats: int) -> None:
    """Every table of 2 to 4 items over two categories (and some over three)."""
    rows = [*itertools.product(VERDICTS[:2], repeat=seats), VERDICTS[:seats]]
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning reaches the terminal
        for count in (2, 3, 4):
            for table in itertools.islice(itertools.combinations_with_replacement(rows, count), 20):
                units = [_unit(f"t{i}", row, "accept", 60.0) for i, row in enumerate(table)]
                done = report(units)
                _finite(done.to_json())
                for node in done.protocols[0].agreement:
                    kappa = node.kappa
                    assert kappa is not None
                    for value in (kappa.value, kappa.low, kappa.high):
                        assert value is None or -1.0 <= value <= 1.0, (table, kappa)
                    if kappa.low is not None and kappa.high is not None:
                        assert kappa.low <= kappa.high
                        assert kappa.value is None or kappa.low <= kappa.value <= kappa.high
                    checked += 1
    assert checked > 40


@pytest.mark.parametrize(
    "table",
    [
        [("pass", "fail"), ("fail", "pass")],  # every pair disagrees
        [("pass", "pass"), ("fail", "pass")],  # seat 2 only ever says pass
    ],
)
def test_a_degenerate_table_gives_no_zero_width_interval(table: list[tuple[str, str]]) -> None:
    units = [_unit(f"t{i}", row, "accept", 60.0) for i, row in enumerate(table)]
    kappa = report(units).protocols[0].agreement[0].kappa
    assert kappa is not None and kappa.value is not None
    assert kappa.low is None and kappa.high is None and "no interval" in kappa.note


@pytest.mark.parametrize(
    "seconds", [[-3600.0], [-7200.0, 1800.0, 1800.0], [0.0, -1.0], [1e-6, -1e-6]]
)
def test_reviewer_hours_are_never_negative(seconds: list[float]) -> None:
    units = [_unit(f"t{i}", ("pass",), "accept", s) for i, s in enumerate(seconds)]
    (speed,) = report(units).protocols[0].throughput
    kept = [s for s in seconds if s >= 0]
    assert speed.decisions.hours >= 0
    assert speed.decisions.count == len(kept)
    assert speed.decisions.hours == pytest.approx(sum(kept) / 3600)
    assert speed.decisions.rate is None or speed.decisions.rate >= 0
    _finite(speed.to_json())


def _respond(platform: Platform, seat: str, user: str, verdict: str, back: Clock | None) -> None:
    claimed = platform.reviews.claim(seat, user)
    if back is not None:
        back.advance(hours=-1)  # the clock is set back between the claim and the response
    platform.reviews.respond(seat, user, answer(verdict, claimed.materials[0].uri))


def test_a_clock_set_back_in_the_ledger_counts_no_time(tmp_path: Path) -> None:
    clock = Clock()
    with sqlite_platform(tmp_path, clock) as platform:
        users(platform, reviewers=0, experts=2)
        view = platform.reviews.campaigns.create(parsed(expert()), str(items(tmp_path, 2)), "boss")
        first, second = (i.item for i in view.items)
        seat = f"{first}/{view.campaign}/campaign/expert/1"
        _respond(platform, seat, "exp1", "pass", clock)  # stamped an hour before its claim
        clock.advance(hours=5)
        seat = f"{second}/{view.campaign}/campaign/expert/1"
        platform.reviews.claim(seat, "exp2")
        clock.advance(minutes=30)
        platform.reviews.respond(
            seat, "exp2", answer("fail", f"assay://campaign/{view.campaign}/item/2")
        )
        done = review_report(platform.reviews, [])
        _finite(done.to_json())
        (speed,) = done.protocols[0].throughput
        assert speed.decisions.count == 1 and speed.decisions.hours == pytest.approx(0.5)
        assert speed.decisions.rate == pytest.approx(2.0)


def test_a_report_over_nothing_decided_has_no_rate_and_no_nan(tmp_path: Path) -> None:
    """Every item ends by its deadline with no answer, or is still open: rates over zero."""
    clock = Clock()
    with sqlite_platform(tmp_path, clock) as platform:
        users(platform)
        folder = items(tmp_path, 3)
        platform.reviews.campaigns.create(parsed(escalation()), str(folder), "boss")
        clock.advance(hours=100)
        platform.reviews.campaigns.create(parsed(expert()), str(folder), "boss")
        seat = next(s.seat for s in platform.reviews.seats("exp1").open)
        platform.reviews.claim(seat, "exp1")  # claimed, never answered
        assert platform.reviews.campaigns.all()
        for cid in platform.reviews.campaigns.all():
            platform.reviews.campaigns.show(cid, "boss")
        done = review_report(platform.reviews, [])
        _finite(done.to_json())
        for protocol in done.protocols:
            assert protocol.matches_reference is None
            for speed in protocol.throughput:
                assert speed.decisions.rate is None or math.isfinite(speed.decisions.rate)
