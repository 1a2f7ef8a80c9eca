"""The review record and the run must tell one story: whoever reads ``assay review show`` (or
the ``review.concluded`` ledger entry) must not find ``verified`` where ``assay show`` says the
stage concluded nothing.

Found: when the review's checker (``review:<contract>/<stage>``) is revoked before the stage
concludes, ``Reviews._steps`` (src/assay/platform/_reviews.py) gates only the platform's stage
record to ``inconclusive``; the ``review.concluded`` entry written in the same transaction keeps
``status: verified`` (``board.conclusion()`` unchanged), and ``review show`` prints it. A
consumer that reads the review record (a dashboard, a trainer reading ledger entries by kind)
takes the revoked review as a pass. Wanted: write the gated status (and the revocation's
reason) into ``review.concluded`` too, or add ``revoked``/``counted`` to it and to
``StageReview``; and mark a review record whose run was revoked after it concluded."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.status import Status
from tests.platform.conftest import Clock
from tests.review.helpers import claim_and_answer, publish, seats_of, single, sqlite_platform, users


@pytest.mark.parametrize("when", ["before-the-verdict", "after-the-verdict"])
def test_a_revoked_review_is_not_verified_anywhere(tmp_path: Path, when: str) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, single(1, 1))
        users(platform)
        submission = platform.submit("reviewed", {}, "42", "alice").submission
        checker = f"review:{platform.problem('reviewed').contract}/review"
        if when == "before-the-verdict":
            platform.revoke(checker, "a reviewer was bribed", "author")
        claim_and_answer(platform, seats_of(platform, "rev1")[0], "rev1", "pass")
        if when == "after-the-verdict":
            platform.revoke(checker, "a reviewer was bribed", "author")
        assert platform.show(submission, "alice").verdict.standing is not Status.VERIFIED
        (review,) = platform.reviews.show(submission, "alice").reviews
        assert review.concluded is not None
        said = review.concluded.get("status")
        assert said != "verified" or review.concluded.get("revoked"), (
            f"review show says {review.concluded}; assay show says "
            f"{platform.show(submission, 'alice').verdict.text!r}"
        )
