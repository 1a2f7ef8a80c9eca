"""An audit campaign samples a run whose participant then withdraws the work (or withdrew it
before the audit opened), and the audit goes on judging what is left.

Found: a campaign item over a run never looked at withdrawals (src/assay/platform/_campaigns.py):
seats opened on a run whose only artifact was withdrawn, an expert shown the summary alone
accepted it, and the audit recorded ``accept`` for work nobody saw; an expert who had claimed
before the withdrawal and opened the artifact got an internal ``BlobMissing`` (a traceback on
the CLI, a 500 over HTTP) instead of a clear refusal.
Fixed: as a review stage does (``Reviews._foregone``), an item whose run lost an artifact a node
shows concludes ``unresolved``/``inconclusive`` ("the artifact 'doc' was withdrawn; nobody can
review it") at the next look, no seat opens, and ``review material`` on a withdrawn artifact is
an InvalidInput naming the URI.
Found too: the store keeps one blob per sha256, and a withdrawal deleted the bytes a campaign's
file item (a manager's own copy of the same text) still showed. Fixed: campaign file items
count among the live blobs (``Platform._live_blobs``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay._errors import InvalidInput
from tests.adversarial.campaign_attacks import audited, expert, experts, open_seats, submit
from tests.platform.conftest import Clock
from tests.review.helpers import answer, sqlite_platform


@pytest.mark.parametrize("when", ["before the audit", "after the audit opened"])
def test_withdrawn_work_is_never_audited(tmp_path: Path, when: str) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        audited(platform, tmp_path)
        experts(platform, "erin")
        run = submit(platform, tmp_path, "audited", "alice")
        if when == "before the audit":
            platform.withdraw(run.submission, "doc", "alice")
        view = platform.reviews.campaigns.create(
            expert(1, submission=True), "runs:problem=audited", "boss"
        )
        if when != "before the audit":
            platform.withdraw(run.submission, "doc", "alice")
        assert open_seats(platform, "erin") == []
        item = view.items[0].item
        with pytest.raises(InvalidInput, match="concluded"):
            platform.reviews.claim(f"{item}/{view.campaign}/campaign/expert/1", "erin")
        shown = platform.reviews.campaigns.show(view.campaign, "boss").items[0]
        assert (shown.decision, shown.status) == ("unresolved", "inconclusive")
        assert "'doc' was withdrawn" in (shown.detail or "")


def test_a_claimed_audit_seat_refuses_the_withdrawn_artifact_clearly(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        audited(platform, tmp_path)
        experts(platform, "erin")
        run = submit(platform, tmp_path, "audited", "alice")
        view = platform.reviews.campaigns.create(
            expert(1, submission=True), "runs:problem=audited", "boss"
        )
        (seat,) = open_seats(platform, "erin")
        claimed = platform.reviews.claim(seat, "erin")
        uri = next(m.uri for m in claimed.materials if "/artifact/" in m.uri)
        assert platform.reviews.material(seat, uri, "erin") == b"alice's private work"
        platform.withdraw(run.submission, "doc", "alice")
        with pytest.raises(InvalidInput, match=r"withdrawn|no longer stored|concluded"):
            platform.reviews.material(seat, uri, "erin")
        with pytest.raises(InvalidInput):  # nor is a verdict on it recorded
            platform.reviews.respond(seat, "erin", answer("pass", uri))
        item = platform.reviews.campaigns.show(view.campaign, "boss").items[0]
        assert item.decision == "unresolved"


def test_an_audit_without_the_submission_is_unaffected(tmp_path: Path) -> None:
    """A node that shows only the statement judges nothing withdrawn: it goes on."""
    with sqlite_platform(tmp_path, Clock()) as platform:
        audited(platform, tmp_path)
        experts(platform, "erin")
        run = submit(platform, tmp_path, "audited", "alice")
        platform.withdraw(run.submission, "doc", "alice")
        view = platform.reviews.campaigns.create(
            expert(1, submission=False, statement=True), "runs:problem=audited", "boss"
        )
        (seat,) = open_seats(platform, "erin")
        claimed = platform.reviews.claim(seat, "erin")
        done = platform.reviews.respond(seat, "erin", answer("fail", claimed.materials[0].uri))
        assert done.concluded is not None and done.concluded["outcome"] == "reject"
        assert view.items[0].automated == "verified"


def test_a_withdrawal_never_deletes_a_campaign_file_with_the_same_bytes(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        audited(platform, tmp_path)
        experts(platform, "erin")
        run = submit(platform, tmp_path, "audited", "alice", text="shared bytes")
        folder = tmp_path / "files"
        folder.mkdir()
        (folder / "copy.md").write_text("shared bytes")  # the manager's own copy
        platform.reviews.campaigns.create(expert(1, submission=True), str(folder), "boss")
        (seat,) = open_seats(platform, "erin")
        uri = platform.reviews.claim(seat, "erin").materials[0].uri
        platform.withdraw(run.submission, "doc", "alice")
        assert platform.reviews.material(seat, uri, "erin") == b"shared bytes"
