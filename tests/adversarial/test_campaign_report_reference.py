"""Someone who may open a campaign poisons the report's "matches the reference": they run the
reference protocol again over the same work (a file is its sha256 to the report, so the same
bytes uploaded again are the same target) and have it decide the other way.

Found: ``report`` (src/assay/review/_report.py) kept one reference outcome per target, the
last in the ledger, so a later campaign of the reference protocol silently replaced the
expert's decision on that target and flipped every other protocol's match on it (0.67 became
0.33 in the scenario below, by one colluding answer).
Fixed: a target the reference decided two ways has no reference outcome (left out of every
match, as the report's notes say); an attacker can take a target out, never flip it."""

from __future__ import annotations

from pathlib import Path

from assay.platform import review_report
from assay.review import Unit, report
from tests.adversarial.campaign_attacks import claim_answer, open_seats
from tests.platform.conftest import Clock
from tests.review.helpers import single, sqlite_platform, users
from tests.review16.helpers import expert, items, parsed


def _unit(protocol: str, target: str, outcome: str) -> Unit:
    return Unit(protocol=protocol, title=None, target=target, key=target, seats={}, outcome=outcome)


def test_a_target_decided_two_ways_by_the_reference_is_left_out() -> None:
    units = [
        _unit("ref", "a", "accept"),
        _unit("ref", "b", "reject"),
        _unit("p", "a", "accept"),
        _unit("p", "b", "reject"),
        _unit("ref", "b", "accept"),  # the reference again on b, the other way
    ]
    (tested,) = [p for p in report(units, "ref").protocols if p.protocol == "p"]
    assert tested.matches_reference is not None
    assert (tested.matches_reference.k, tested.matches_reference.n) == (1, 1)
    again = [*units[:4], _unit("ref", "b", "reject")]  # agreeing twice is still one decision
    (tested,) = [p for p in report(again, "ref").protocols if p.protocol == "p"]
    assert tested.matches_reference is not None
    assert (tested.matches_reference.k, tested.matches_reference.n) == (2, 2)


def test_a_second_campaign_of_the_reference_cannot_flip_a_match(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        users(platform, reviewers=1, experts=2)
        folder = items(tmp_path, 3)
        ref = platform.reviews.campaigns.create(parsed(expert()), str(folder), "boss")
        panel = platform.reviews.campaigns.create(parsed(single(1, 1)), str(folder), "boss")
        for n, item in enumerate(ref.items):
            (seat,) = open_seats(platform, "exp1", item.item)
            claim_answer(platform, seat, "exp1", "pass" if n else "fail")
        for item in panel.items:
            (seat,) = open_seats(platform, "rev1", item.item)
            claim_answer(platform, seat, "rev1", "pass")
        before = review_report(platform.reviews, [], ref.protocol_id)
        (tested,) = [p for p in before.protocols if p.protocol == panel.protocol_id]
        assert tested.matches_reference is not None
        assert (tested.matches_reference.k, tested.matches_reference.n) == (2, 3)
        # mallory opens the reference protocol again over the same bytes; exp2 colludes
        again = platform.reviews.campaigns.create(parsed(expert()), str(folder), "mallory")
        (seat,) = open_seats(platform, "exp2", again.items[1].item)
        claim_answer(platform, seat, "exp2", "fail")
        after = review_report(platform.reviews, [], ref.protocol_id)
        (tested,) = [p for p in after.protocols if p.protocol == panel.protocol_id]
        assert tested.matches_reference is not None
        assert tested.matches_reference.k == 1 and tested.matches_reference.n == 2
