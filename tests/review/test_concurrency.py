"""Claiming is decided inside the ledger's write transaction: reviewers racing for the last
seat, each with its own connection (threads released together), on SQLite and PostgreSQL:
exactly one wins. Two last responses racing conclude the stage exactly once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay import Config
from assay._errors import InvalidInput
from assay.ledger import Ledger
from assay.platform import Platform
from assay.platform import _records as r
from assay.review import records as rr
from tests.platform.conftest import Clock
from tests.review.helpers import answer, publish, seats_of, single

CLAIMERS = 8


def _race(config: Config, clock: Clock, work: list[Callable[[Platform], Any]]) -> list[Any]:
    """Each callable on its own platform (own connection), all released at once."""
    platforms = [Platform(Ledger.open(config), config, clock=clock) for _ in work]
    barrier = threading.Barrier(len(work))
    results: list[Any] = [None] * len(work)

    def one(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work[i](platforms[i])
        except InvalidInput as exc:
            results[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(work))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    for p in platforms:
        p.close()
    return results


def test_exactly_one_of_many_claimers_wins_the_last_seat(
    platform: Platform, config: Config, clock: Clock, tmp_path: Path
) -> None:
    publish(platform, tmp_path, single(seats=1))
    for i in range(CLAIMERS):
        platform.reviews.add_user(f"rev{i}", ["reviewers"], "admin")
    platform.submit("reviewed", {}, "42", "alice")
    (seat,) = seats_of(platform, "rev0")

    def claim(user: str) -> Callable[[Platform], Any]:
        return lambda p: p.reviews.claim(seat, user)

    results = _race(config, clock, [claim(f"rev{i}") for i in range(CLAIMERS)])
    won = [x for x in results if not isinstance(x, InvalidInput)]
    lost = [x for x in results if isinstance(x, InvalidInput)]
    assert len(won) == 1 and len(lost) == CLAIMERS - 1, results
    assert all("is claimed until" in str(x) for x in lost), lost
    (entry,) = platform.ledger.find(kind=rr.CLAIMED)
    assert entry.body["user"] == won[0].user
    assert platform.verify().intact


def test_two_last_responses_conclude_the_stage_once(
    platform: Platform, config: Config, clock: Clock, tmp_path: Path
) -> None:
    publish(platform, tmp_path, single(seats=3, m=2))
    for i in range(3):
        platform.reviews.add_user(f"rev{i}", ["reviewers"], "admin")
    submission = platform.submit("reviewed", {}, "42", "alice").submission
    seats = seats_of(platform, "rev0")
    uris = [platform.reviews.claim(seats[i], f"rev{i}").materials[0].uri for i in range(3)]
    platform.reviews.respond(seats[0], "rev0", answer("pass", uris[0]))

    def respond(i: int) -> Callable[[Platform], Any]:
        return lambda p: p.reviews.respond(seats[i], f"rev{i}", answer("pass", uris[i]))

    results = _race(config, clock, [respond(1), respond(2)])
    assert not any(isinstance(x, InvalidInput) for x in results), results
    assert len(platform.ledger.find(kind=rr.CONCLUDED, subject=submission)) == 1
    assert len(platform.ledger.find(kind=r.FINISHED, subject=submission)) == 1
    assert len(platform.ledger.find(kind=rr.RESPONDED, subject=submission)) == 3
