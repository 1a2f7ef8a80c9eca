"""The submitter reviews their own work under a spelling of their name that differs only by
case (``Alice`` for ``alice``), registered as a reviewer.

Found: the conflict rule compares names exactly (src/assay/review/_board.py,
``why_not_claim``: ``if user == submitter``), so ``Alice`` claims a seat on ``alice``'s
submission and passes it: ``verified`` by its own author. Names are ASCII (``person``), so
case is the only variant that slips through; whitespace and look-alike letters are refused as
names (kept below as regressions). Wanted: compare names case-insensitively in the conflict,
``conflicts``, one-seat-per-reviewer and own-report rules (or refuse, at ``user add``, a name
that equals an existing participant's or user's name but for case)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay._errors import InvalidInput
from tests.platform.conftest import Clock
from tests.review.helpers import answer, publish, seats_of, single, sqlite_platform, users


@pytest.mark.parametrize("alias", ["Alice", "ALICE", "aLiCe"])
def test_a_case_variant_of_the_submitter_never_reviews(tmp_path: Path, alias: str) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, single(1, 1))
        users(platform)
        platform.submit("reviewed", {}, "42", "alice")
        try:
            platform.reviews.add_user(alias, ["reviewers"], "admin")
        except InvalidInput:
            return  # refusing the look-alike user is a fix too
        assert seats_of(platform, alias) == []
        seat = seats_of(platform, "rev1")[0]
        try:
            claimed = platform.reviews.claim(seat, alias)
        except InvalidInput:
            return
        done = platform.reviews.respond(seat, alias, answer("pass", claimed.materials[0].uri))
        pytest.fail(f"{alias!r} reviewed alice's submission: {done.concluded}")


@pytest.mark.parametrize("alias", ["alice ", " alice", "аlice", "alice\u200b", "ali ce"])
def test_other_spellings_are_not_names(tmp_path: Path, alias: str) -> None:
    with (
        sqlite_platform(tmp_path, Clock()) as platform,
        pytest.raises(InvalidInput, match=r"is not a user name"),
    ):
        platform.reviews.add_user(alias, ["reviewers"], "admin")


def test_a_case_variant_is_one_reviewer_on_a_node(tmp_path: Path) -> None:
    """One person, two seats of one node, by case: ``rev1`` and ``REV1``."""
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, single(3, 2))
        users(platform)
        try:
            platform.reviews.add_user("REV1", ["reviewers"], "admin")
        except InvalidInput:
            return
        platform.submit("reviewed", {}, "42", "alice")
        first, second, _ = seats_of(platform, "rev1")
        platform.reviews.claim(first, "rev1")
        with pytest.raises(InvalidInput):
            platform.reviews.claim(second, "REV1")
