"""Independence: before a node settles, who else sits on it is as telling as what they said.

Found: ``assay review show`` (src/assay/platform/_reviews.py, ``Reviews.show``: ``SeatRecord(
..., user=seat.user, ...)``) names every seat's holder and responder to any viewer while the
node is still open: a panelist learns who the other two are (and can settle the vote with them
outside assay before answering), and the submitter learns who is judging their work (and whom
to lobby) before the verdict. The responses are withheld, the names are not. Wanted: until the
node settles, show another seat's state only (open/claimed/answered), without ``user`` (and
``shown``), except to that seat's own reviewer; the names appear once the node settles (the
record stays auditable)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.platform.conftest import Clock
from tests.review.helpers import (
    claim_and_answer,
    escalation,
    publish,
    seats_of,
    sqlite_platform,
    users,
)


@pytest.mark.parametrize("viewer", ["rev3", "alice", "outsider"])
def test_an_open_panel_does_not_name_its_members(tmp_path: Path, viewer: str) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, escalation())
        users(platform)
        submission = platform.submit("reviewed", {}, "42", "alice").submission
        claim_and_answer(platform, seats_of(platform, "rev1")[0], "rev1", "pass")
        platform.reviews.claim(seats_of(platform, "rev2")[0], "rev2")
        if viewer == "rev3":
            platform.reviews.claim(seats_of(platform, "rev3")[0], "rev3")
        record = platform.reviews.show(submission, viewer).reviews[0]
        panel = next(n for n in record.nodes if n.name == "panel")
        assert panel.status == "open"
        named = {seat.user for seat in panel.seats if seat.user is not None} - {viewer}
        assert not named, f"{viewer} learns who sits on the open panel: {sorted(named)}"


def test_a_settled_panel_names_its_members(tmp_path: Path) -> None:
    """Regression: once the node settles, the record names who judged."""
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, escalation())
        users(platform)
        submission = platform.submit("reviewed", {}, "42", "alice").submission
        for i, verdict in enumerate(("pass", "pass", "fail"), 1):
            claim_and_answer(platform, seats_of(platform, f"rev{i}")[0], f"rev{i}", verdict)
        record = platform.reviews.show(submission, "outsider").reviews[0]
        panel = next(n for n in record.nodes if n.name == "panel")
        assert {seat.user for seat in panel.seats} == {"rev1", "rev2", "rev3"}
        assert all(seat.response is not None for seat in panel.seats)
