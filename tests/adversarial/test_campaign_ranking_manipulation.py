"""One judge of a ranking campaign moves an item up the order by how they write a number, not by
what it is.

Found: ``ranking`` (src/assay/platform/_campaigns.py) kept only responses whose score was an
``int``/``float``, but ``Board.responses`` hands a reducer the number *as written* (a
``Decimal``) whenever the float would round it (``0.10000000000000000001``). So a judge who
wrote a low score with 20 decimals was silently left out of the mean: the other judge's 0.9
alone ranked the item first, while the score reducer (which reads the written number) decided
on the true mean. The order and the decision disagreed, and one judge chose which.
Fixed: the ranking reads each score exactly as the reducer does (``exact_score``): a written
number counts at its written value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.platform.conftest import Clock
from tests.review.helpers import sqlite_platform, users
from tests.review16.helpers import items, parsed, ranking


def _score(platform: object, seat: str, user: str, written: str) -> None:
    claimed = platform.reviews.claim(seat, user)  # type: ignore[attr-defined]
    body = (
        f'{{"score": {written}, "rationale": "r", '
        f'"citations": {json.dumps([claimed.materials[0].uri])}, "assistance": []}}'
    )
    platform.reviews.respond(seat, user, body.encode())  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("low", "expected_first"),
    [
        ("0.1", "item02.md"),  # a plain float: counted (the baseline)
        ("0.10000000000000000001", "item02.md"),  # written past a float's precision
        ("1e-1", "item02.md"),
        ("0.099999999999999999999999", "item02.md"),
    ],
)
def test_how_a_score_is_written_never_changes_the_order(
    tmp_path: Path, low: str, expected_first: str
) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        users(platform, reviewers=2, experts=0)
        view = platform.reviews.campaigns.create(parsed(ranking()), str(items(tmp_path, 2)), "boss")
        scores = {1: ("0.9", low), 2: ("0.6", "0.6")}  # means ~0.5 and 0.6
        for item in view.items:
            n = int(item.item.rpartition(".")[2])
            for j, written in enumerate(scores[n], 1):
                seat = f"{item.item}/{view.campaign}/campaign/judges/{j}"
                _score(platform, seat, f"rev{j}", written)
        shown = platform.reviews.campaigns.show(view.campaign, "boss")
        assert shown.order is not None
        assert shown.order[0].label == expected_first
        assert [o.scores for o in shown.order] == [2, 2]  # every judge counted
        assert shown.order[1].score == pytest.approx(0.5)


def test_an_unfinished_item_is_not_ranked_on_half_its_scores(tmp_path: Path) -> None:
    """A judge answers, the other lets the node expire: no mean from one judge alone."""
    clock = Clock()
    with sqlite_platform(tmp_path, clock) as platform:
        users(platform, reviewers=2, experts=0)
        view = platform.reviews.campaigns.create(parsed(ranking()), str(items(tmp_path, 2)), "boss")
        first = view.items[0].item
        _score(platform, f"{first}/{view.campaign}/campaign/judges/1", "rev1", "1")
        clock.advance(hours=100)
        shown = platform.reviews.campaigns.show(view.campaign, "boss")
        assert shown.order == []
        assert shown.items[0].decision == "unresolved"
