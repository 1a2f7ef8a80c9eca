"""The submitter tries to review their own work: on the panel, as the expert, named among a
node's eligible users, on a seat someone else holds, or on a later submission of the same
problem. Never: the submitter is conflicted on every node, named or not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from tests.platform.conftest import Clock
from tests.review.helpers import (
    answer,
    claim_and_answer,
    escalation,
    publish,
    seats_of,
    sqlite_platform,
    users,
)


def _named_eligible() -> dict[str, Any]:
    protocol = escalation()
    protocol["nodes"]["panel"]["eligible"] = {"users": ["alice", "rev1", "rev2", "rev3"]}
    return protocol


def _expert_group() -> dict[str, Any]:
    return escalation()


@pytest.mark.parametrize(
    ("protocol", "groups", "node"),
    [
        (escalation, ["reviewers"], "panel"),
        (_named_eligible, ["anything"], "panel"),
        (_expert_group, ["experts"], "expert"),
    ],
    ids=["panel-by-group", "panel-by-name", "expert"],
)
def test_the_submitter_never_claims_a_seat_on_their_own_work(
    tmp_path: Path, protocol: Any, groups: list[str], node: str
) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, protocol())
        users(platform)
        platform.reviews.add_user("alice", groups, "admin")
        platform.submit("reviewed", {}, "42", "alice")
        if node == "expert":
            for i, verdict in enumerate(("pass", "fail", "uncertain"), 1):
                claim_and_answer(platform, seats_of(platform, f"rev{i}")[0], f"rev{i}", verdict)
        assert seats_of(platform, "alice") == []
        seat = seats_of(platform, "rev1" if node == "panel" else "exp1", node)[0]
        with pytest.raises(InvalidInput, match="the submitter never reviews"):
            platform.reviews.claim(seat, "alice")


def test_the_submitter_cannot_answer_on_a_seat_someone_else_holds(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, escalation())
        users(platform)
        platform.submit("reviewed", {}, "42", "alice")
        seat = seats_of(platform, "rev1")[0]
        uri = platform.reviews.claim(seat, "rev1").materials[0].uri
        with pytest.raises(InvalidInput, match="no live claim"):
            platform.reviews.respond(seat, "alice", answer("pass", uri))


def test_a_reviewer_of_one_submission_is_still_the_submitter_of_another(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, escalation())
        users(platform)
        own = platform.submit("reviewed", {}, "42", "rev1").submission
        other = platform.submit("reviewed", {}, "42", "rev2").submission
        assert {s.submission for s in platform.reviews.seats("rev1").open} == {other}
        seat = next(s.seat for s in platform.reviews.seats("rev3").open if s.submission == own)
        with pytest.raises(InvalidInput, match="the submitter never reviews"):
            platform.reviews.claim(seat, "rev1")
