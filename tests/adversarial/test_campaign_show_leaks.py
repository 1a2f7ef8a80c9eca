"""Anyone asks ``campaign show`` (the platform call the CLI's ``assay review campaign show`` and
the seat page use) for an audit over runs they may not see: a participant of a problem under
independent entry reads which competitors' runs the checker verified, a participant learns a
held result before the score release, and an auditor reads the automated verdict of the run
they are about to judge (the audit is no longer blind to what it is checking).

Found: ``Campaigns.show`` (src/assay/platform/_campaigns.py) answered every viewer with every
item, its target submission and its ``automated`` status (the web's ``/v1/campaigns`` checks
the manager role first; the platform call and the CLI did not, while ``review show`` of a
stage applies the platform's view rules).
Fixed: the campaign's opener and the managers of every problem it audits see it whole; anyone
else sees only the run items they sat on (and file items), never an ``automated`` status."""

from __future__ import annotations

from pathlib import Path

from assay.platform import Platform
from tests.adversarial.campaign_attacks import (
    CUTOFF,
    audited,
    claim_answer,
    expert,
    experts,
    open_seats,
    submit,
)
from tests.platform.conftest import Clock
from tests.review.helpers import sqlite_platform

PRIVATE = {"independent_entry": {"cutoff": CUTOFF}}
HELD = {"release": {"results": "held", "score_release": CUTOFF}}


def _audit(tmp_path: Path, policy: dict[str, object]) -> tuple[Platform, str, list[str]]:
    platform = sqlite_platform(tmp_path, Clock())
    audited(platform, tmp_path, policy=policy)
    experts(platform, "erin")
    runs = [
        submit(platform, tmp_path, "audited", who, summary)
        for who, summary in (("alice", "42"), ("bob", "41"))
    ]
    view = platform.reviews.campaigns.create(
        expert(1, submission=True), "runs:problem=audited,status=any", "boss"
    )
    assert {i.automated for i in view.items} == {"verified", "refuted"}  # the opener sees all
    return platform, view.campaign, [r.run for r in runs]


def test_a_competitor_reads_nothing_of_a_private_audit(tmp_path: Path) -> None:
    platform, cid, _ = _audit(tmp_path, PRIVATE)
    with platform:
        for viewer in ("bob", "carol", "erin"):
            shown = platform.reviews.campaigns.show(cid, viewer)
            assert shown.items == [] and shown.order in (None, [])


def test_a_held_result_is_not_read_through_an_audit(tmp_path: Path) -> None:
    platform, cid, runs = _audit(tmp_path, HELD)
    with platform:
        for viewer in ("alice", "bob"):
            shown = platform.reviews.campaigns.show(cid, viewer)
            assert all(i.automated is None for i in shown.items)
            assert runs  # the participants' own runs are still held from them


def test_an_auditor_is_not_told_the_automated_verdict(tmp_path: Path) -> None:
    platform, cid, _ = _audit(tmp_path, {})
    with platform:
        first = open_seats(platform, "erin")[0]
        platform.reviews.claim(first, "erin")
        shown = platform.reviews.campaigns.show(cid, "erin")
        assert [i.item for i in shown.items] == [first.partition("/")[0]]  # what erin sat on
        assert shown.items[0].automated is None
        claim_answer(platform, open_seats(platform, "erin")[0], "erin", "pass")
        whole = platform.reviews.campaigns.show(cid, "boss")
        assert len(whole.items) == 2 and all(i.automated for i in whole.items)
