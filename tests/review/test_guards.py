"""The review stage's guards beyond the adversary's cases (tests/adversarial/test_review_*.py):
a re-check carries an earlier review over (and a revoked one does not), work withdrawn while a
seat is held ends the review, ``assay show`` records a deadline that passed, managers see who
sits on an open node, and a reviewer of private work may not then submit to the problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.status import Status
from tests.adversarial.review_attacks import publish_reviewed
from tests.platform.conftest import Clock, make_problem
from tests.review.helpers import (
    claim_and_answer,
    escalation,
    publish,
    seats_of,
    single,
    sqlite_platform,
    users,
)


@pytest.mark.parametrize("verdict", ["pass", "fail"])
def test_a_recheck_carries_the_review_over(tmp_path: Path, verdict: str) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, single(1, 1))
        users(platform)
        first = platform.submit("reviewed", {}, "42", "alice")
        claim_and_answer(platform, seats_of(platform, "rev1")[0], "rev1", verdict)
        again = platform.recheck(first.submission, "alice")
        wanted = Status.VERIFIED if verdict == "pass" else Status.REFUTED
        assert again.status is wanted
        assert f"carried over from run {first.run}" in again.stages[-1].detail
        assert seats_of(platform, "rev2") == []
        third = platform.recheck(first.submission, "alice")  # names the first run, not the second
        assert f"carried over from run {first.run}" in third.stages[-1].detail
        review = platform.reviews.show(first.submission, "alice").reviews[-1]
        assert review.concluded is not None and review.concluded["carried_from"] == first.run


def test_a_recheck_after_a_revoked_review_opens_seats(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, single(1, 1))
        users(platform)
        first = platform.submit("reviewed", {}, "42", "alice")
        claim_and_answer(platform, seats_of(platform, "rev1")[0], "rev1", "pass")
        platform.revoke(
            f"review:{platform.problem('reviewed').contract}/review", "bribed", "author"
        )
        again = platform.recheck(first.submission, "alice")
        assert again.status is None  # waiting for a new panel
        assert [s for s in seats_of(platform, "rev2") if f"/{again.run}/" in s]


def test_a_withdrawal_while_a_seat_is_held_ends_the_review(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish_reviewed(platform, tmp_path, single(1, 1), roles=("doc",))
        users(platform)
        work = tmp_path / "work.txt"
        work.write_text("the work")
        run = platform.submit("reviewed", {"doc": work}, "summary", "alice")
        (seat,) = seats_of(platform, "rev1")
        claimed = platform.reviews.claim(seat, "rev1")
        platform.withdraw(run.submission, "doc", "alice")
        with pytest.raises(InvalidInput, match="concluded"):
            claim_and_answer(platform, seat, "rev1", "pass")
        shown = platform.show(run.submission, "alice").runs[-1]
        assert shown.status is Status.INCONCLUSIVE
        assert "withdrawn; nobody can review it" in shown.detail
        assert claimed.materials  # what the seat listed stays recorded


def test_assay_show_records_a_deadline_that_passed(tmp_path: Path) -> None:
    clock = Clock()
    with sqlite_platform(tmp_path, clock) as platform:
        publish(platform, tmp_path, single(1, 1))
        users(platform)
        run = platform.submit("reviewed", {}, "42", "alice")
        assert platform.show(run.submission, "alice").runs[-1].status is None
        clock.advance(hours=73)
        shown = platform.show(run.submission, "alice").runs[-1]
        assert shown.status is Status.INCONCLUSIVE and "deadline" in shown.detail


def test_a_manager_sees_who_sits_on_an_open_node(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, escalation())
        users(platform)
        submission = platform.submit("reviewed", {}, "42", "alice").submission
        claim_and_answer(platform, seats_of(platform, "rev1")[0], "rev1", "pass")
        panel = platform.reviews.show(submission, "author").reviews[0].nodes[0]
        assert panel.status == "open"
        assert {s.user for s in panel.seats} == {"rev1", None}
        mine = platform.reviews.show(submission, "rev1").reviews[0].nodes[0]
        assert {s.user for s in mine.seats} == {"rev1", None}  # their own seat


def test_a_reviewer_of_private_work_may_not_submit_until_the_cutoff(tmp_path: Path) -> None:
    clock = Clock()
    with sqlite_platform(tmp_path, clock) as platform:
        contract = {
            "roles": [{"name": "doc", "required": True, "max_bytes": 10_000}],
            "acceptance": "Reviewers judge the work.",
            "stages": [{"name": "review", "type": "review", "protocol": "protocol.yaml"}],
        }
        folder = make_problem(
            tmp_path,
            problem="reviewed",
            contract=contract,
            policy={"independent_entry": {"cutoff": "2031-01-01T00:00:00Z"}},
            files={"protocol.yaml": json.dumps(single(1, 1))},
        )
        platform.publish(folder, "author")
        users(platform)
        work = tmp_path / "alice.txt"
        work.write_text("alice's work")
        alice = platform.submit("reviewed", {"doc": work}, "mine", "alice").submission
        (seat,) = seats_of(platform, "rev1")
        platform.reviews.claim(seat, "rev1")
        assert platform.reviews.show(alice, "rev1").reviews  # a reviewer of it may look
        with pytest.raises(InvalidInput, match="may not submit"):
            platform.submit("reviewed", {"doc": work}, "copied", "rev1")
        with pytest.raises(InvalidInput, match="may not submit"):
            platform.submit("reviewed", {"doc": work}, "copied", "REV1")
        clock.advance(days=400)
        platform.submit("reviewed", {"doc": work}, "after the cutoff", "rev1")
