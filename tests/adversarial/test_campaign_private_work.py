"""A participant of a problem under independent entry (submissions private until the cutoff) or
with sealed references reads what the problem keeps from participants, through an audit
campaign over its runs instead of a review stage.

Found: ``Campaigns.claim``/``seats``/``material`` (src/assay/platform/_campaigns.py) applied
only the submitter rule, not the stage's participant conflict
(``Reviews._participant_conflict``): bob, a participant and an expert, was listed and could
claim an audit seat on alice's private run and read her artifact before the cutoff, or a sealed
reference on a node that shows them. And a campaign claim was stored without the problem, so
``Reviews.readers`` (who may not submit after reading private work) never saw it: a reviewer
who read alice's work in an audit could then submit to the problem.
Fixed: the campaign path applies the same conflict (listing, claim, material) and records the
item's problem on its review entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.platform import Platform
from tests.adversarial.campaign_attacks import (
    CUTOFF,
    audited,
    expert,
    experts,
    open_seats,
    submit,
)
from tests.platform.conftest import Clock
from tests.review.helpers import sqlite_platform

PRIVATE = {"independent_entry": {"cutoff": CUTOFF}}
SEALED = [{"key": "labels", "path": "labels.txt", "sealed_until": CUTOFF}]


def _setup(tmp_path: Path, clock: Clock, private: bool, sealed: bool) -> tuple[Platform, str, str]:
    platform = sqlite_platform(tmp_path, clock)
    audited(
        platform,
        tmp_path,
        policy=PRIVATE if private else None,
        references=SEALED if sealed else None,
        files={"labels.txt": "the hidden answers"} if sealed else None,
    )
    experts(platform, "bob", "erin")
    alice = submit(platform, tmp_path, "audited", "alice", text="alice's original solution")
    submit(platform, tmp_path, "audited", "bob", summary="41")
    shows = {"submission": True, "references": True, "sealed_references": True}
    view = platform.reviews.campaigns.create(
        expert(1, **shows), "runs:problem=audited,status=any", "boss"
    )
    item = next(i.item for i in view.items if i.label == alice.run)
    return platform, view.campaign, item


@pytest.mark.parametrize(
    ("private", "sealed"),
    [(True, False), (False, True), (True, True)],
    ids=["private", "sealed", "both"],
)
def test_a_participant_never_audits_a_competitor_s_private_run(
    tmp_path: Path, private: bool, sealed: bool
) -> None:
    clock = Clock()
    platform, cid, item = _setup(tmp_path, clock, private, sealed)
    with platform:
        seat = f"{item}/{cid}/campaign/expert/1"
        assert seat not in open_seats(platform, "bob")
        assert seat in open_seats(platform, "erin")
        with pytest.raises(InvalidInput, match="participant of 'audited'"):
            platform.reviews.claim(seat, "bob")


def test_after_the_cutoff_a_participant_may_audit(tmp_path: Path) -> None:
    clock = Clock()
    platform, _, _ = _setup(tmp_path, clock, True, True)
    with platform:
        clock.advance(days=400)
        # the campaign's nodes expired meanwhile (72 h); a new audit after the cutoff is fine
        view = platform.reviews.campaigns.create(
            expert(1, submission=True), "runs:problem=audited,status=any", "boss"
        )
        seat = next(s for s in open_seats(platform, "bob", view.campaign + "."))
        platform.reviews.claim(seat, "bob")


def test_an_auditor_of_private_runs_may_not_then_submit(tmp_path: Path) -> None:
    """bob (not yet a participant) audits alice's private run, then tries to submit."""
    clock = Clock()
    platform = sqlite_platform(tmp_path, clock)
    with platform:
        audited(platform, tmp_path, policy=PRIVATE)
        experts(platform, "bob")
        alice = submit(platform, tmp_path, "audited", "alice")
        view = platform.reviews.campaigns.create(
            expert(1, submission=True), "runs:problem=audited,status=any", "boss"
        )
        (seat,) = open_seats(platform, "bob", view.items[0].item)
        claimed = platform.reviews.claim(seat, "bob")
        uri = next(m.uri for m in claimed.materials if "/artifact/" in m.uri)
        assert alice.submission in uri
        with pytest.raises(InvalidInput, match="reviewed work of 'audited'"):
            submit(platform, tmp_path, "audited", "bob")  # the reverse rule sees the claim
        assert platform.reviews.material(seat, uri, "bob") == b"alice's private work"
