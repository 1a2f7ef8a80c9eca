"""Races for a vote, each racer on its own connection, on SQLite and PostgreSQL: one reviewer
claiming every seat of a node at once (to hold several voices), and a reviewer whose lease just
lapsed answering while another claims the reopened seat. Refused: one reviewer ends with at most
one seat; the lapsed answer never lands on a seat someone else now holds (regressions)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay import Config
from assay._errors import InvalidInput
from assay.platform import Platform
from assay.review import records as rr
from tests.platform.conftest import Clock, clock, config, platform
from tests.review.helpers import answer, publish, seats_of, single, users
from tests.review.test_concurrency import _race

pytestmark = pytest.mark.slow
__all__ = ["clock", "config", "platform"]  # the platform's fixtures, on both stores


def test_one_reviewer_racing_for_every_seat_holds_one(
    platform: Platform, config: Config, clock: Clock, tmp_path: Path
) -> None:
    publish(platform, tmp_path, single(3, 2))
    users(platform)
    submission = platform.submit("reviewed", {}, "42", "alice").submission
    seats = seats_of(platform, "rev1")

    def claim(seat: str) -> Callable[[Platform], Any]:
        return lambda p: p.reviews.claim(seat, "rev1")

    results = _race(config, clock, [claim(seat) for seat in seats * 2])
    won = [x for x in results if not isinstance(x, InvalidInput)]
    assert len(won) == 1, results
    claims = platform.ledger.find(kind=rr.CLAIMED, subject=submission)
    assert [c.body["user"] for c in claims] == ["rev1"]


def test_a_lapsed_answer_and_a_new_claim_race(
    platform: Platform, config: Config, clock: Clock, tmp_path: Path
) -> None:
    publish(platform, tmp_path, single(1, 1))
    users(platform)
    submission = platform.submit("reviewed", {}, "42", "alice").submission
    (seat,) = seats_of(platform, "rev1")
    claimed = platform.reviews.claim(seat, "rev1")
    clock.now = claimed.until  # exactly the lease's end: lapsed
    uri = claimed.materials[0].uri
    results = _race(
        config,
        clock,
        [
            lambda p: p.reviews.respond(seat, "rev1", answer("pass", uri)),
            lambda p: p.reviews.claim(seat, "rev2"),
        ],
    )
    assert isinstance(results[0], InvalidInput), results
    assert not isinstance(results[1], InvalidInput), results
    assert platform.ledger.find(kind=rr.RESPONDED, subject=submission) == []
