"""A participant of a problem uses the review commands to read what the problem keeps from
participants: a competitor's submission before the independent-entry cutoff, and the sealed
references (hidden test data) before they unseal.

Found (1): ``Reviews.show`` (src/assay/platform/_reviews.py) never calls
``Platform._view_context``: under ``independent_entry`` (a submission is private to its
participant and the managers until the cutoff, docs/problems.md) ``assay review show
SUBMISSION --as bob`` answers for alice's submission, and after a node settles prints the
reviewers' responses about her work. ``review seats`` lists private submissions too.
Found (2): the conflict rule excludes only the submitter (src/assay/review/_board.py,
``why_not_claim``), so bob, a participant of the same problem who is also a reviewer, claims a
seat on alice's submission and reads her artifact (``review material``) before the cutoff:
he can submit her work as his own.
Found (3): on a node with ``sealed_references: true``, the same participant-reviewer is shown
the sealed references and reads their bytes before they unseal, then submits knowing the hidden
answers (or submits first and reads them afterwards, and re-checks).

Wanted: ``review show`` gated by ``_view_context`` (reviewers holding/answering a seat of that
submission and managers excepted); a user who has submitted to the problem (any revision) is
conflicted on every node of another submission of it until the cutoff / unseal date (or at least
on nodes that show sealed references), named in the refusal; ``review material`` re-checks it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from tests.adversarial.review_attacks import publish_reviewed
from tests.platform.conftest import Clock, make_problem
from tests.review.helpers import seats_of, single, sqlite_platform, users

CUTOFF = "2031-01-01T00:00:00Z"
"""A year after the test's clock starts (T0 = 2030-01-01)."""


def _private(platform: Any, tmp_path: Path, protocol: dict[str, Any]) -> tuple[str, str]:
    """A problem under independent entry; alice and bob (also a reviewer) both submit."""
    contract = {
        "roles": [{"name": "doc", "required": True, "max_bytes": 10_000}],
        "references": [{"key": "labels", "path": "labels.txt", "sealed_until": CUTOFF}],
        "acceptance": "Reviewers judge the work.",
        "stages": [{"name": "review", "type": "review", "protocol": "protocol.yaml"}],
    }
    folder = make_problem(
        tmp_path,
        problem="reviewed",
        contract=contract,
        policy={"independent_entry": {"cutoff": CUTOFF}},
        files={"protocol.yaml": json.dumps(protocol), "labels.txt": "the hidden answers"},
    )
    platform.publish(folder, "author")
    users(platform)
    platform.reviews.add_user("bob", ["reviewers"], "admin")
    work = tmp_path / "alice.txt"
    work.write_text("alice's original solution")
    alice = platform.submit("reviewed", {"doc": work}, "mine", "alice").submission
    work = tmp_path / "bob.txt"
    work.write_text("bob's weak attempt")
    bob = platform.submit("reviewed", {"doc": work}, "mine", "bob").submission
    return alice, bob


def _sealed_protocol() -> dict[str, Any]:
    protocol = single(1, 1)
    protocol["nodes"]["panel"]["shows"] = {"references": True, "sealed_references": True}
    return protocol


def test_review_show_respects_independent_entry(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        alice, _ = _private(platform, tmp_path, single(1, 1))
        with pytest.raises(InvalidInput, match="private"):
            platform.show(alice, "bob")  # the platform's own rule, as a baseline
        with pytest.raises(InvalidInput, match="private"):
            platform.reviews.show(alice, "bob")
        with pytest.raises(InvalidInput, match="private"):
            platform.reviews.show(alice, "outsider")


@pytest.mark.parametrize("protocol", [single(1, 1), _sealed_protocol()], ids=["work", "sealed"])
def test_a_competitor_never_reads_a_private_submission_or_sealed_data(
    tmp_path: Path, protocol: dict[str, Any]
) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        alice, _ = _private(platform, tmp_path, protocol)
        mine = [s for s in seats_of(platform, "bob") if s.startswith(alice)]
        assert mine == [], "bob, a participant of the problem, is offered a seat on alice's work"
        seat = next(s for s in seats_of(platform, "rev1") if s.startswith(alice))
        try:
            claimed = platform.reviews.claim(seat, "bob")
        except InvalidInput:
            return
        read = {m.uri: platform.reviews.material(seat, m.uri, "bob") for m in claimed.materials}
        pytest.fail(f"bob read, before the cutoff: {sorted(read)}")


def test_sealed_data_read_by_a_reviewer_is_not_then_used_to_submit(tmp_path: Path) -> None:
    """Read first, submit after: a reviewer shown a sealed reference is conflicted as a
    participant until it unseals (or their submission is refused)."""
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish_reviewed(
            platform,
            tmp_path,
            _sealed_protocol(),
            roles=("doc",),
            references=[{"key": "labels", "path": "labels.txt", "sealed_until": CUTOFF}],
            files={"labels.txt": "the hidden answers"},
        )
        users(platform)
        work = tmp_path / "alice.txt"
        work.write_text("alice's work")
        platform.submit("reviewed", {"doc": work}, "mine", "alice")
        (seat,) = seats_of(platform, "rev1")
        claimed = platform.reviews.claim(seat, "rev1")
        sealed = next(m.uri for m in claimed.materials if m.uri.endswith("/reference/labels"))
        assert platform.reviews.material(seat, sealed, "rev1") == b"the hidden answers"
        work = tmp_path / "copied.txt"
        work.write_text("the hidden answers")
        with pytest.raises(InvalidInput):
            platform.submit("reviewed", {"doc": work}, "I just knew", "rev1")
