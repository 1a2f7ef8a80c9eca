"""Seats in the ledger, every rule on the test's clock: escalation only on a split, lease lapse
and re-claim, node deadline, conflicts and eligibility, schema-checked responses, independence,
materials and citations, and every step recorded."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.platform import Platform
from assay.review import records as rr
from assay.status import Status
from tests.platform.conftest import Clock
from tests.review.helpers import (
    answer,
    claim_and_answer,
    escalation,
    publish,
    seats_of,
    single,
    users,
)


@pytest.fixture
def escalated(platform: Platform, tmp_path: Path) -> Platform:
    publish(platform, tmp_path, escalation())
    users(platform)
    return platform


def _submit(platform: Platform) -> str:
    run = platform.submit("reviewed", {}, "42", "alice")
    assert run.status is None and run.stages[-1].type == "review"
    return run.submission


def _panel(platform: Platform, verdicts: list[str]) -> list[object]:
    done = []
    for i, verdict in enumerate(verdicts, 1):
        seat = seats_of(platform, f"rev{i}", "panel")[0]
        done.append(claim_and_answer(platform, seat, f"rev{i}", verdict))
    return done


@pytest.mark.parametrize(
    ("verdicts", "status"),
    [(["pass", "pass", "fail"], Status.VERIFIED), (["fail", "uncertain", "fail"], Status.REFUTED)],
)
def test_a_panel_that_agrees_decides_and_the_expert_never_opens(
    escalated: Platform, verdicts: list[str], status: Status
) -> None:
    submission = _submit(escalated)
    *_, last = _panel(escalated, verdicts)
    assert last.run is not None and last.run.status is status  # type: ignore[attr-defined]
    assert seats_of(escalated, "exp1") == []
    record = escalated.reviews.show(submission, "alice").reviews[0]
    nodes = {n.name: n for n in record.nodes}
    assert nodes["expert"].status == "skipped" and nodes["expert_vote"].outcome == "skipped"
    assert record.concluded is not None and record.concluded["status"] == status.value
    assert escalated.show(submission, "alice").verdict.standing is status


def test_a_split_panel_escalates_to_the_expert_who_sees_the_reports(escalated: Platform) -> None:
    submission = _submit(escalated)
    *_, third = _panel(escalated, ["pass", "fail", "uncertain"])
    assert third.run is None  # type: ignore[attr-defined]
    assert [s["node"] for s in third.reductions] == ["panel_vote"]  # type: ignore[attr-defined]
    (seat,) = seats_of(escalated, "exp1")
    claimed = escalated.reviews.claim(seat, "exp1")
    reports = [m for m in claimed.materials if m.uri.startswith("assay://review/")]
    assert len(reports) == 3
    shown = json.loads(escalated.reviews.material(seat, reports[1].uri, "exp1"))
    assert shown["verdict"] == "fail"
    done = escalated.reviews.respond(seat, "exp1", answer("fail", reports[0].uri))
    assert done.run is not None and done.run.status is Status.REFUTED
    assert [s["node"] for s in done.reductions] == ["panel_vote", "expert_vote", "decision"]
    steps = escalated.ledger.find(kind=rr.REDUCED, subject=submission)
    assert [(e.body["node"], e.body["outcome"]) for e in steps] == [
        ("panel_vote", "unresolved"),
        ("expert_vote", "reject"),
        ("decision", "reject"),
    ]
    assert escalated.verify().intact


def test_an_expert_who_says_uncertain_leaves_it_inconclusive(escalated: Platform) -> None:
    _submit(escalated)
    _panel(escalated, ["pass", "fail", "uncertain"])
    (seat,) = seats_of(escalated, "exp1")
    done = claim_and_answer(escalated, seat, "exp1", "uncertain")
    assert done.run is not None and done.run.status is Status.INCONCLUSIVE


def test_a_lapsed_claim_reopens_the_seat_and_refuses_the_late_response(
    escalated: Platform, clock: Clock
) -> None:
    _submit(escalated)
    seat = seats_of(escalated, "rev1")[0]
    claimed = escalated.reviews.claim(seat, "rev1")
    assert claimed.until == clock.now.replace() + (claimed.until - clock.now)
    assert (claimed.until - clock.now).total_seconds() == 2 * 3600  # the default lease
    assert seat not in seats_of(escalated, "rev2")
    with pytest.raises(InvalidInput, match="is claimed until"):
        escalated.reviews.claim(seat, "rev2")
    clock.advance(hours=2, seconds=1)
    assert seat in seats_of(escalated, "rev2")
    with pytest.raises(InvalidInput, match="no live claim"):
        escalated.reviews.respond(seat, "rev1", answer("pass", claimed.materials[0].uri))
    again = escalated.reviews.claim(seat, "rev1")  # the same reviewer may claim it again
    escalated.reviews.respond(seat, "rev1", answer("pass", again.materials[0].uri))


def test_a_node_past_its_deadline_makes_the_stage_inconclusive(
    escalated: Platform, clock: Clock
) -> None:
    submission = _submit(escalated)
    _panel(escalated, ["pass"])
    seat = seats_of(escalated, "rev2")[0]
    clock.advance(hours=72)
    with pytest.raises(InvalidInput, match=r"concluded|deadline"):
        escalated.reviews.claim(seat, "rev2")
    view = escalated.show(submission, "alice")
    assert view.verdict.standing is Status.INCONCLUSIVE
    assert "node 'panel': 1 of 3 seats answered by its deadline 2030-01-04T12:00:00Z" in (
        view.runs[0].detail
    )
    assert escalated.reviews.seats("rev2").open == []


@pytest.mark.parametrize(
    ("user", "groups", "reason"),
    [
        ("alice", ["reviewers"], "the submitter never reviews their own submission"),
        ("outsider", ["writers"], "is not eligible for node 'panel'"),
        ("ghost", None, "is not a user here"),
        ("rival", ["reviewers"], "is conflicted for node 'panel'"),
    ],
)
def test_a_conflicted_or_ineligible_user_cannot_claim(
    platform: Platform, tmp_path: Path, user: str, groups: list[str] | None, reason: str
) -> None:
    protocol = single(seats=1, conflicts=["rival"])
    publish(platform, tmp_path, protocol)
    if groups is not None:
        platform.reviews.add_user(user, groups, "admin")
    _submit(platform)
    platform.reviews.add_user("rev1", ["reviewers"], "admin")
    (seat,) = seats_of(platform, "rev1")
    assert seats_of(platform, user) == []
    with pytest.raises(InvalidInput, match=reason):
        platform.reviews.claim(seat, user)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"verdict": "yes"}, "verdict"),
        ({"rationale": ""}, "rationale"),
        ({"confidence": 1.5}, "confidence"),
        ({"citations": []}, "citations"),
        ({"extra": 1}, "extra"),
        ({"assistance": None}, "assistance: declare it"),
        ({"assistance": [{"agent": "gpt"}]}, r"assistance\[0\]"),
    ],
)
def test_an_invalid_response_is_refused_and_the_seat_stays_claimed(
    escalated: Platform, change: dict[str, object], reason: str
) -> None:
    _submit(escalated)
    seat = seats_of(escalated, "rev1")[0]
    claimed = escalated.reviews.claim(seat, "rev1")
    document = json.loads(answer("pass", claimed.materials[0].uri))
    document.update(change)
    if document.get("assistance", 0) is None:
        del document["assistance"]
    with pytest.raises(InvalidInput, match=reason):
        escalated.reviews.respond(seat, "rev1", json.dumps(document).encode())
    assert [s.seat for s in escalated.reviews.seats("rev1").held] == [seat]
    escalated.reviews.respond(seat, "rev1", answer("pass", claimed.materials[0].uri))


def test_not_strict_json_is_refused(escalated: Platform) -> None:
    _submit(escalated)
    seat = seats_of(escalated, "rev1")[0]
    escalated.reviews.claim(seat, "rev1")
    for data in (b'{"verdict": NaN}', b"[1]", b'{"a": 1, "a": 2}'):
        with pytest.raises(InvalidInput, match="--file"):
            escalated.reviews.respond(seat, "rev1", data)


def test_only_acceptable_agents_may_be_declared(platform: Platform, tmp_path: Path) -> None:
    publish(platform, tmp_path, single(assistance={"agents": ["checker-bot"], "unassisted": False}))
    users(platform, reviewers=1, experts=0)
    _submit(platform)
    (seat,) = seats_of(platform, "rev1")
    uri = platform.reviews.claim(seat, "rev1").materials[0].uri
    for declared, reason in (
        ([], "does not accept unassisted"),
        ([{"agent": "x", "role": "y"}], "'x' is not an acceptable agent"),
    ):
        with pytest.raises(InvalidInput, match=reason):
            platform.reviews.respond(seat, "rev1", answer("pass", uri, assistance=declared))
    done = platform.reviews.respond(
        seat, "rev1", answer("pass", uri, assistance=[{"agent": "checker-bot", "role": "spelling"}])
    )
    assert done.run is not None and done.run.status is Status.VERIFIED
    (entry,) = platform.ledger.find(kind=rr.RESPONDED)
    assert entry.body["assistance"] == [{"agent": "checker-bot", "role": "spelling"}]
    assert entry.body["user"] == "rev1" and entry.body["shown"]


def test_responses_stay_hidden_until_the_node_settles(escalated: Platform) -> None:
    submission = _submit(escalated)
    _panel(escalated, ["pass"])

    def seen(viewer: str) -> list[object]:
        record = escalated.reviews.show(submission, viewer).reviews[0]
        panel = next(n for n in record.nodes if n.name == "panel")
        return [s.response for s in panel.seats if s.state == "answered"]

    assert seen("rev2") == [None] and seen("alice") == [None]
    hidden = escalated.reviews.show(submission, "rev2").reviews[0].nodes[0].seats
    assert [s.response_sha256 for s in hidden if s.state == "answered"] == [None]  # no guessing
    assert seen("rev1") != [None]  # its own author sees it
    record = escalated.reviews.show(submission, "rev2").reviews[0]
    assert "withheld until node 'panel' settles" in str(record.to_json())
    _panel_rest = [
        claim_and_answer(escalated, seats_of(escalated, f"rev{i}")[0], f"rev{i}", "pass")
        for i in (2, 3)
    ]
    assert None not in seen("rev2")


def test_materials_carry_hashes_and_a_citation_must_name_one(
    platform: Platform, tmp_path: Path
) -> None:
    publish(
        platform, tmp_path, single(), files={"skills/how.md": "Read it."}, skills=["skills/how.md"]
    )
    users(platform, reviewers=1, experts=0)
    _submit(platform)
    (seat,) = seats_of(platform, "rev1")
    claimed = platform.reviews.claim(seat, "rev1")
    uris = {
        m.uri.split("/")[-2] if "skill" in m.uri else m.uri.rsplit("/", 1)[-1]
        for m in claimed.materials
    }
    assert {"summary", "statement"} <= uris
    for m in claimed.materials:
        assert len(m.sha256) == 64
        assert (
            hashlib.sha256(platform.reviews.material(seat, m.uri, "rev1")).hexdigest() == m.sha256
        )
    with pytest.raises(
        InvalidInput, match=r"citations\[0\]: .* is not a material this seat showed"
    ):
        platform.reviews.respond(seat, "rev1", answer("pass", "assay://elsewhere/secret"))


def test_a_revoked_review_concludes_nothing(platform: Platform, tmp_path: Path) -> None:
    publish(platform, tmp_path, single())
    users(platform, reviewers=1, experts=0)
    submission = _submit(platform)
    revision = platform.problem("reviewed").contract
    platform.revoke(f"review:{revision}/review", "a reviewer was bribed", "author")
    (seat,) = seats_of(platform, "rev1")
    done = claim_and_answer(platform, seat, "rev1", "pass")
    assert done.run is not None and done.run.status is Status.INCONCLUSIVE
    assert "was revoked (a reviewer was bribed)" in done.run.stages[-1].detail
    assert platform.show(submission, "alice").verdict.standing is not Status.VERIFIED


def test_an_escalation_node_deadline_counts_from_its_opening(
    escalated: Platform, clock: Clock
) -> None:
    submission = _submit(escalated)
    clock.advance(hours=10)
    _panel(escalated, ["pass", "fail", "uncertain"])  # the expert opens now, at +10 h
    clock.advance(hours=71)  # +81 h: past the panel's 72 h, within the expert's
    (seat,) = seats_of(escalated, "exp1")
    assert escalated.show(submission, "alice").verdict.standing is None
    clock.advance(hours=1)
    assert seats_of(escalated, "exp1") == []
    view = escalated.show(submission, "alice")
    assert view.verdict.standing is Status.INCONCLUSIVE
    assert "node 'expert': 0 of 1 seats answered by its deadline 2030-01-04T22:00:00Z" in (
        view.runs[0].detail
    )
    del seat
