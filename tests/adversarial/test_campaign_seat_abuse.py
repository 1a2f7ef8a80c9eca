"""A hostile reviewer plays with campaign seats: claims one twice or two of one node, answers
after the lease lapsed or on another's seat, answers twice, forges a seat id mixing one
campaign's item with another campaign or a review stage's parts (and the other way round),
declares an agent the node does not accept, and races another claimer.

Regression guards (the system held): a campaign seat goes through the review stage's own
``Board`` rules, and a seat id is looked up whole on the item's own board, so no mixture of
parts names a seat."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.platform import Platform
from assay.review import records as rr
from tests.adversarial.campaign_attacks import expert, experts, open_seats
from tests.adversarial.review_attacks import publish_reviewed
from tests.platform.conftest import Clock
from tests.review.helpers import answer, escalation, seats_of, single, sqlite_platform, users
from tests.review16.helpers import items, parsed


def _two(platform: Platform, tmp_path: Path) -> tuple[str, str, str, str]:
    """Two escalation campaigns over the same two files: (cid1, item1 of cid1, cid2, item)."""
    users(platform)
    folder = items(tmp_path, 2)
    one = platform.reviews.campaigns.create(parsed(escalation()), str(folder), "boss")
    two = platform.reviews.campaigns.create(parsed(escalation()), str(folder), "boss")
    return one.campaign, one.items[0].item, two.campaign, two.items[0].item


def test_one_reviewer_holds_one_seat_of_a_node_and_answers_it_once(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        cid, item, _, _ = _two(platform, tmp_path)
        seat = f"{item}/{cid}/campaign/panel/1"
        claimed = platform.reviews.claim(seat, "rev1")
        with pytest.raises(InvalidInput, match="you hold this seat"):
            platform.reviews.claim(seat, "rev1")
        with pytest.raises(InvalidInput, match="one seat per reviewer"):
            platform.reviews.claim(f"{item}/{cid}/campaign/panel/2", "rev1")
        with pytest.raises(InvalidInput):  # however cased, it is rev1 (or nobody)
            platform.reviews.claim(f"{item}/{cid}/campaign/panel/2", "Rev1")
        uri = claimed.materials[0].uri
        platform.reviews.respond(seat, "rev1", answer("pass", uri))
        with pytest.raises(InvalidInput, match="answered"):
            platform.reviews.respond(seat, "rev1", answer("fail", uri))
        responses = [e for e in platform.ledger.find(subject=item) if e.kind == rr.RESPONDED]
        assert len(responses) == 1


def test_nobody_answers_another_s_seat_or_after_the_lease(tmp_path: Path) -> None:
    clock = Clock()
    with sqlite_platform(tmp_path, clock) as platform:
        cid, item, _, _ = _two(platform, tmp_path)
        seat = f"{item}/{cid}/campaign/panel/1"
        uri = platform.reviews.claim(seat, "rev1").materials[0].uri
        for who in ("rev2", "boss", "REV1"):
            with pytest.raises(InvalidInput, match="no live claim"):
                platform.reviews.respond(seat, who, answer("pass", uri))
        clock.advance(hours=2, seconds=1)
        with pytest.raises(InvalidInput, match="no live claim"):
            platform.reviews.respond(seat, "rev1", answer("pass", uri))
        with pytest.raises(InvalidInput, match="is not a material"):
            platform.reviews.material(seat, uri, "rev1")  # a lapsed claim reads nothing


@pytest.mark.parametrize(
    "forge",
    [
        "{item}/{other}/campaign/panel/1",  # campaign 1's item, campaign 2 as the run
        "{other_item}/{cid}/campaign/panel/1",  # campaign 2's item, campaign 1 as the run
        "{item}/{cid}/review/panel/1",  # a review stage's name in place of 'campaign'
        "{item}/{cid}/campaign/panel_vote/1",  # a reduce node
        "{item}/{cid}/campaign/panel/4",  # a seat past the node's seats
        "{item}/{cid}/campaign/panel/01",
        "{item}/{cid}/campaign/expert/1",  # a node that has not opened
        "{cid}.99/{cid}/campaign/panel/1",  # no such item
        "{cid}/{cid}/campaign/panel/1",
        "{item}/{cid}/campaign/panel/1/",
        "cmp-/{cid}/campaign/panel/1",
    ],
)
def test_a_forged_campaign_seat_id_names_no_seat(tmp_path: Path, forge: str) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        cid, item, other, other_item = _two(platform, tmp_path)
        seat = forge.format(item=item, cid=cid, other=other, other_item=other_item)
        before = len(platform.ledger.find())
        with pytest.raises(InvalidInput):
            platform.reviews.claim(seat, "rev1")
        with pytest.raises(InvalidInput):
            platform.reviews.respond(seat, "rev1", answer("pass", f"assay://campaign/{cid}/item/1"))
        assert len(platform.ledger.find()) == before


def test_stage_and_campaign_seat_ids_do_not_cross(tmp_path: Path) -> None:
    """A review stage's run and stage with a campaign item, and the other way round."""
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish_reviewed(platform, tmp_path, single(1, 1))
        users(platform)
        run = platform.submit("reviewed", {}, "42", "alice")
        (stage_seat,) = seats_of(platform, "rev1")
        view = platform.reviews.campaigns.create(
            parsed(single(1, 1)), str(items(tmp_path, 1)), "boss"
        )
        item = view.items[0].item
        forged = [
            f"{item}/{run.run}/review/panel/1",  # a campaign item on the stage's run
            f"{run.submission}/{view.campaign}/campaign/panel/1",  # a submission on the campaign
            f"{run.submission}/{run.run}/campaign/panel/1",
        ]
        before = len(platform.ledger.find())
        for seat in forged:
            with pytest.raises(InvalidInput):
                platform.reviews.claim(seat, "rev1")
        assert len(platform.ledger.find()) == before
        platform.reviews.claim(stage_seat, "rev1")  # the real ones still work
        platform.reviews.claim(f"{item}/{view.campaign}/campaign/panel/1", "rev1")


@pytest.mark.parametrize(
    "assistance",
    [
        [{"agent": "gpt-x", "role": "wrote it"}],  # not an accepted agent
        [{"agent": "claude"}],  # no role
        {"agent": "claude", "role": "r"},  # not a list
        "none",
    ],
)
def test_a_forged_declaration_is_refused_and_the_seat_stays_claimed(
    tmp_path: Path, assistance: object
) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        experts(platform, "erin")
        protocol = parsed(
            {
                "nodes": {
                    "expert": {
                        **json.loads(json.dumps(expert().to_json()["nodes"]["expert"])),
                        "assistance": {"required": True, "unassisted": True, "agents": ["claude"]},
                    },
                    "vote": {
                        "type": "reduce",
                        "op": "m_of_n",
                        "inputs": ["expert"],
                        "m": 1,
                        "final": True,
                    },
                }
            }
        )
        platform.reviews.campaigns.create(protocol, str(items(tmp_path, 1)), "boss")
        (seat,) = open_seats(platform, "erin")
        uri = platform.reviews.claim(seat, "erin").materials[0].uri
        document = json.loads(answer("pass", uri))
        document["assistance"] = assistance
        with pytest.raises(InvalidInput):
            platform.reviews.respond(seat, "erin", json.dumps(document).encode())
        del document["assistance"]
        with pytest.raises(InvalidInput):  # a declaration is required
            platform.reviews.respond(seat, "erin", json.dumps(document).encode())
        assert seat in [s.seat for s in platform.reviews.seats("erin").held]


def test_two_claimers_race_for_one_campaign_seat(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        experts(platform, "e1", "e2", "e3", "e4")
        platform.reviews.campaigns.create(expert(), str(items(tmp_path, 1)), "boss")
        (seat,) = open_seats(platform, "e1")
        won: list[str] = []
        lost: list[str] = []
        barrier = threading.Barrier(4)

        def claim(user: str) -> None:
            barrier.wait()
            try:
                platform.reviews.claim(seat, user)
                won.append(user)
            except InvalidInput:
                lost.append(user)

        threads = [threading.Thread(target=claim, args=(f"e{i}",)) for i in range(1, 5)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert len(won) == 1 and len(lost) == 3
        claims = platform.ledger.find(kind=rr.CLAIMED)
        assert len(claims) == 1
