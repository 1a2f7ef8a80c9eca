"""The submitter withdraws the work a review is to judge, then lets the review run on what is
left (the summary they wrote about it, the statement).

Found: the artifact's bytes are deleted, later seats simply no longer list it, and a reviewer
who passes on the summary alone makes the run ``verified``: nobody judged the work itself. A
reviewer who claimed before the withdrawal and opens the artifact gets an internal error
(BlobMissing) instead of a clear answer. Wanted: a review stage whose submission lost an
artifact it shows concludes ``inconclusive`` (a missing input), and no seat opens on it;
``review material`` on a withdrawn artifact is a clear InvalidInput."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.status import Status
from tests.adversarial.review_attacks import publish_reviewed
from tests.platform.conftest import Clock
from tests.review.helpers import answer, seats_of, single, sqlite_platform, users


@pytest.mark.parametrize("cite", ["summary", "statement"])
def test_a_review_of_withdrawn_work_never_verifies(tmp_path: Path, cite: str) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish_reviewed(platform, tmp_path, single(1, 1), roles=("doc",))
        users(platform)
        work = tmp_path / "work.txt"
        work.write_text("the real, wrong work")
        run = platform.submit("reviewed", {"doc": work}, "great work, trust me", "alice")
        platform.withdraw(run.submission, "doc", "alice")
        seats = seats_of(platform, "rev1")
        if not seats:  # the wanted behaviour: no seat opens on withdrawn work
            assert platform.show(run.submission, "alice").verdict.standing is not Status.VERIFIED
            return
        claimed = platform.reviews.claim(seats[0], "rev1")
        uri = next(m.uri for m in claimed.materials if m.uri.endswith(f"/{cite}"))
        try:
            done = platform.reviews.respond(seats[0], "rev1", answer("pass", uri))
        except InvalidInput:
            return
        status = done.run.status if done.run is not None else None
        assert status is not Status.VERIFIED, (
            "verified, although the work under review was withdrawn before any reviewer saw it"
        )


def test_opening_a_withdrawn_artifact_is_a_clear_refusal(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish_reviewed(platform, tmp_path, single(1, 1), roles=("doc",))
        users(platform)
        work = tmp_path / "work.txt"
        work.write_text("the work")
        run = platform.submit("reviewed", {"doc": work}, "summary", "alice")
        (seat,) = seats_of(platform, "rev1")
        claimed = platform.reviews.claim(seat, "rev1")
        uri = next(m.uri for m in claimed.materials if "/artifact/doc" in m.uri)
        platform.withdraw(run.submission, "doc", "alice")
        with pytest.raises(InvalidInput, match="withdrawn"):
            platform.reviews.material(seat, uri, "rev1")
