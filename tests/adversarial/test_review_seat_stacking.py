"""A reviewer tries to control a vote by holding more than one seat of a node, or to judge
their own report by sitting on the node that reviews it. Each is refused."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.platform import Platform
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


@pytest.fixture
def board(tmp_path: Path) -> Iterator[tuple[Platform, Clock]]:
    clock = Clock()
    with sqlite_platform(tmp_path, clock) as platform:
        publish(platform, tmp_path, escalation())
        users(platform)
        platform.reviews.add_user("both", ["reviewers", "experts"], "admin")
        platform.submit("reviewed", {}, "42", "alice")
        yield platform, clock


def _hold_then_claim_another(p: Platform, clock: Clock) -> None:
    seats = seats_of(p, "rev1", "panel")
    p.reviews.claim(seats[0], "rev1")
    p.reviews.claim(seats[1], "rev1")


def _answer_then_claim_another(p: Platform, clock: Clock) -> None:
    seats = seats_of(p, "rev1", "panel")
    claim_and_answer(p, seats[0], "rev1", "pass")
    p.reviews.claim(seats[1], "rev1")


def _answer_then_respond_on_another(p: Platform, clock: Clock) -> None:
    seats = seats_of(p, "rev1", "panel")
    uri = p.reviews.claim(seats[1], "rev2").materials[0].uri
    claim_and_answer(p, seats[0], "rev1", "pass")
    p.reviews.respond(seats[1], "rev1", answer("pass", uri))  # rev2's seat


def _lapse_then_claim_the_other_while_answered(p: Platform, clock: Clock) -> None:
    seats = seats_of(p, "rev1", "panel")
    claim_and_answer(p, seats[0], "rev1", "pass")
    clock.advance(hours=3)
    p.reviews.claim(seats[2], "rev1")


def _panelist_sits_as_expert(p: Platform, clock: Clock) -> None:
    for i, (user, verdict) in enumerate(
        (("both", "pass"), ("rev2", "fail"), ("rev3", "uncertain"))
    ):
        claim_and_answer(p, seats_of(p, user, "panel")[0], user, verdict)
        del i
    (seat,) = seats_of(p, "exp1", "expert")
    assert seats_of(p, "both", "expert") == []
    p.reviews.claim(seat, "both")


@pytest.mark.parametrize(
    ("attack", "reason"),
    [
        (_hold_then_claim_another, "already holds seat"),
        (_answer_then_claim_another, "already holds seat"),
        (_answer_then_respond_on_another, "no live claim"),
        (_lapse_then_claim_the_other_while_answered, "already holds seat"),
        (_panelist_sits_as_expert, "nobody reviews their own report"),
    ],
    ids=lambda v: v.__name__.strip("_") if callable(v) else "",
)
def test_one_reviewer_holds_at_most_one_voice(
    board: tuple[Platform, Clock], attack: Callable[[Platform, Clock], None], reason: str
) -> None:
    platform, clock = board
    with pytest.raises(InvalidInput, match=reason):
        attack(platform, clock)
