"""A campaign reviewer asks ``review material`` for bytes other than the ones the seat listed:
an artifact whose role is ``summary`` (the tail of the summary's URI), another item's file,
another seat's material, a URI of another campaign, a report of a seat not yet answered.

Found: ``Campaigns.material`` (src/assay/platform/_campaigns.py) served any URI ending in
``/summary`` as the submission's summary (the stage's ``_bytes_of`` finds a material by its
whole URI: an artifact role named ``summary`` is not the summary), so the auditor of a run
whose artifact is named ``summary`` was served the participant's own summary text in place of
the work, and never checked that the bytes hash to what the seat listed.
Fixed: a run item's material is served by the stage's ``_bytes_of`` and every material is
checked against the sha256 the seat listed."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay._errors import InvalidInput
from tests.adversarial.campaign_attacks import (
    audited,
    expert,
    experts,
    open_seats,
    submit,
)
from tests.platform.conftest import Clock
from tests.review.helpers import escalation, sqlite_platform, users
from tests.review16.helpers import items, parsed


def test_an_artifact_named_summary_is_served_as_itself(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        audited(platform, tmp_path, roles=("summary",))
        experts(platform, "erin")
        submit(platform, tmp_path, "audited", "alice", text="THE WORK ITSELF", role="summary")
        view = platform.reviews.campaigns.create(
            expert(1, submission=True), "runs:problem=audited", "boss"
        )
        (seat,) = open_seats(platform, "erin")
        claimed = platform.reviews.claim(seat, "erin")
        by_uri = {m.uri: m for m in claimed.materials}
        sub = view.items[0].target
        assert (
            platform.reviews.material(seat, f"assay://submission/{sub}/artifact/summary", "erin")
            == b"THE WORK ITSELF"
        )
        assert platform.reviews.material(seat, f"assay://submission/{sub}/summary", "erin") == b"42"
        assert f"assay://submission/{sub}/artifact/summary" in by_uri


def test_a_reviewer_reads_only_what_their_seat_listed(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        users(platform)
        folder = items(tmp_path, 2)
        one = platform.reviews.campaigns.create(parsed(escalation()), str(folder), "boss")
        two = platform.reviews.campaigns.create(parsed(escalation()), str(folder), "boss")
        first, second = (i.item for i in one.items)
        mine = next(s for s in open_seats(platform, "rev1", first))
        platform.reviews.claim(mine, "rev1")
        theirs = next(s for s in open_seats(platform, "rev2", first) if s != mine)
        platform.reviews.claim(theirs, "rev2")
        refused = [
            (mine, f"assay://campaign/{one.campaign}/item/2"),  # the other item's file
            (mine, f"assay://campaign/{two.campaign}/item/1"),  # the same bytes, another campaign
            (theirs, f"assay://campaign/{one.campaign}/item/1"),  # a seat rev1 does not hold
            (mine, f"assay://review/{one.campaign}/panel/2"),  # a report the seat was not shown
            (mine, f"assay://campaign/{one.campaign}/item/1/../2"),
            (
                f"{second}/{one.campaign}/campaign/panel/1",
                f"assay://campaign/{one.campaign}/item/2",
            ),
        ]
        for seat, uri in refused:
            with pytest.raises(InvalidInput, match="is not a material of a seat"):
                platform.reviews.material(seat, uri, "rev1")
        uri = f"assay://campaign/{one.campaign}/item/1"
        assert platform.reviews.material(mine, uri, "rev1") == (folder / "item01.md").read_bytes()
        with pytest.raises(InvalidInput):  # the case of a name is not its holder
            platform.reviews.material(mine, uri, "REV1")


def test_an_item_whose_bytes_are_gone_is_a_clear_refusal(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        users(platform)
        folder = items(tmp_path, 1)
        view = platform.reviews.campaigns.create(parsed(escalation()), str(folder), "boss")
        seat = open_seats(platform, "rev1")[0]
        claimed = platform.reviews.claim(seat, "rev1")
        sha = claimed.materials[0].sha256
        platform.ledger.blobs.delete(sha, tree=False, keep=set())  # lost under the store
        with pytest.raises(InvalidInput, match="no longer stored"):
            platform.reviews.material(seat, claimed.materials[0].uri, "rev1")
        assert view.items[0].label == "item01.md"
