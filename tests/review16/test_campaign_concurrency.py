"""A campaign item's seats are guarded as a stage's are: reviewers racing for its last seat,
each with its own connection, on SQLite and PostgreSQL: exactly one wins; two last responses
conclude the item exactly once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay import Config
from assay._errors import InvalidInput
from assay.platform import Platform
from assay.review import records as rr
from tests.platform.conftest import Clock
from tests.review.helpers import answer, single
from tests.review.test_concurrency import _race
from tests.review16.helpers import items, parsed, seats

CLAIMERS = 6


def test_exactly_one_claimer_wins_a_campaign_seat_and_it_concludes_once(
    platform: Platform, config: Config, clock: Clock, tmp_path: Path
) -> None:
    for i in range(CLAIMERS):
        platform.reviews.add_user(f"rev{i}", ["reviewers"], "admin")
    view = platform.reviews.campaigns.create(
        parsed(single(seats=2, m=2)), str(items(tmp_path, 1)), "boss"
    )
    first = seats(platform, "rev0", "panel")[0]

    def claim(user: str) -> Callable[[Platform], Any]:
        return lambda p: p.reviews.claim(first, user)

    results = _race(config, clock, [claim(f"rev{i}") for i in range(CLAIMERS)])
    won = [x for x in results if not isinstance(x, InvalidInput)]
    assert len(won) == 1 and all("is claimed until" in str(x) for x in results if x not in won)
    other = "rev5" if won[0].user != "rev5" else "rev4"
    (second,) = seats(platform, other, "panel")
    uri = f"assay://campaign/{view.campaign}/item/1"
    platform.reviews.claim(second, other)

    def respond(seat: str, user: str) -> Callable[[Platform], Any]:
        return lambda p: p.reviews.respond(seat, user, answer("pass", uri))

    _race(config, clock, [respond(first, won[0].user), respond(second, other)])
    item = view.items[0].item
    kinds = [e.kind for e in platform.ledger.find(subject=item)]
    assert kinds.count(rr.RESPONDED) == 2 and kinds.count(rr.CONCLUDED) == 1
    assert platform.reviews.campaigns.show(view.campaign, "boss").items[0].decision == "accept"
    assert platform.verify().intact
