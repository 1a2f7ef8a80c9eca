"""A response that comes too late: after the lease lapsed, after the node's deadline, to a node
that has settled, after the stage concluded, or a second answer to one seat. Each is refused and
records nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.platform import Platform
from assay.review import records as rr
from tests.platform.conftest import Clock
from tests.review.helpers import (
    answer,
    claim_and_answer,
    escalation,
    publish,
    seats_of,
    sqlite_platform,
    users,
)


def _after_the_lease(p: Platform, clock: Clock) -> None:
    seat = seats_of(p, "rev1")[0]
    uri = p.reviews.claim(seat, "rev1").materials[0].uri
    clock.advance(hours=2)
    p.reviews.respond(seat, "rev1", answer("pass", uri))


def _after_the_deadline(p: Platform, clock: Clock) -> None:
    seat = seats_of(p, "rev1")[0]
    clock.advance(hours=71)
    uri = p.reviews.claim(seat, "rev1").materials[0].uri  # a lease never outlives the node
    clock.advance(hours=1)
    p.reviews.respond(seat, "rev1", answer("pass", uri))


def _twice_on_one_seat(p: Platform, clock: Clock) -> None:
    seat = seats_of(p, "rev1")[0]
    done = claim_and_answer(p, seat, "rev1", "pass")
    del done
    p.reviews.respond(seat, "rev1", answer("fail", "assay://x"))


def _to_a_settled_node(p: Platform, clock: Clock) -> None:
    seats = seats_of(p, "rev1", "panel")
    for i, seat in enumerate(seats, 1):
        claim_and_answer(p, seat, f"rev{i}", "pass")
    p.reviews.respond(seats[0], "rev1", answer("fail", "assay://x"))


def _after_the_stage_concluded(p: Platform, clock: Clock) -> None:
    seats = seats_of(p, "rev1", "panel")
    for i, seat in enumerate(seats, 1):
        claim_and_answer(p, seat, f"rev{i}", "fail" if i < 3 else "pass")
    p.reviews.claim(seats[2], "rev3")


@pytest.mark.parametrize(
    ("attack", "reason"),
    [
        (_after_the_lease, "no live claim"),
        (_after_the_deadline, "concluded"),
        (_twice_on_one_seat, "takes no more responses"),
        (_to_a_settled_node, "concluded"),
        (_after_the_stage_concluded, "concluded"),
    ],
    ids=lambda v: v.__name__.strip("_") if callable(v) else "",
)
def test_a_late_response_is_refused(
    tmp_path: Path, attack: Callable[[Platform, Clock], None], reason: str
) -> None:
    clock = Clock()
    with sqlite_platform(tmp_path, clock) as platform:
        publish(platform, tmp_path, escalation())
        users(platform)
        submission = platform.submit("reviewed", {}, "42", "alice").submission
        before = len(platform.ledger.find(kind=rr.RESPONDED))
        with pytest.raises(InvalidInput, match=reason):
            attack(platform, clock)
        answered = platform.ledger.find(kind=rr.RESPONDED, subject=submission)
        assert len({e.body["seat"] for e in answered}) == len(answered) >= before
        assert len(platform.ledger.find(kind=rr.CONCLUDED, subject=submission)) <= 1
