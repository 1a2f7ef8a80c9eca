"""Release policy: held results show "Recorded; results on DATE" to participants until the score
release (managers see them at once); with independent entry, nobody but the participant and the
managers sees a submission before the cutoff, and each participant nominates one final
submission (the latest nomination counts; none after the cutoff)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.platform import Platform
from assay.status import Status
from tests.platform.conftest import ANSWER_CONTRACT, Clock, make_problem

SCORES = "2030-02-01T00:00:00Z"
CUTOFF = "2030-01-15T00:00:00Z"


def test_held_results(platform: Platform, clock: Clock, tmp_path: Path) -> None:
    policy = {"release": {"results": "held", "score_release": SCORES}}
    platform.publish(make_problem(tmp_path, contract=ANSWER_CONTRACT, policy=policy), "alice")
    run = platform.submit("demo", {}, "41", "bob")
    recorded = f"Recorded; results on {SCORES}"
    assert run.status is None
    assert run.label == recorded
    assert run.stages == []
    assert "refuted" not in str(run.to_json()).lower()
    view = platform.show(run.submission, "bob")
    assert view.verdict.text == recorded and view.verdict.standing is None
    assert all(r.status is None for r in view.runs)
    again = platform.recheck(run.submission, "bob")
    assert again.label == recorded
    # the manager sees the results at once
    managed = platform.show(run.submission, "alice")
    assert managed.verdict.standing is Status.REFUTED
    assert managed.runs[0].stages[0].detail
    # after the score release, the participant does too
    clock.now = datetime.fromisoformat(SCORES)
    view = platform.show(run.submission, "bob")
    assert view.verdict.standing is Status.REFUTED
    assert view.runs[0].status is Status.REFUTED


def test_immediate_results_are_shown_at_once(platform: Platform, tmp_path: Path) -> None:
    platform.publish(make_problem(tmp_path, contract=ANSWER_CONTRACT), "alice")
    assert platform.submit("demo", {}, "42", "bob").status is Status.VERIFIED


@pytest.fixture
def independent(platform: Platform, tmp_path: Path) -> Platform:
    policy = {"independent_entry": {"cutoff": CUTOFF}}
    platform.publish(make_problem(tmp_path, contract=ANSWER_CONTRACT, policy=policy), "alice")
    return platform


def test_submissions_are_private_until_the_cutoff(independent: Platform, clock: Clock) -> None:
    bob = independent.submit("demo", {}, "42", "bob")
    assert independent.show(bob.submission, "bob").participant == "bob"
    assert independent.show(bob.submission, "alice").participant == "bob"  # the manager
    with pytest.raises(InvalidInput, match="private") as caught:
        independent.show(bob.submission, "carol")
    assert "42" not in str(caught.value)
    for act in (independent.recheck, independent.nominate):
        with pytest.raises(InvalidInput):
            act(bob.submission, "carol")
    with pytest.raises(InvalidInput):
        independent.withdraw(bob.submission, "doc", "carol")
    clock.now = datetime.fromisoformat(CUTOFF)
    assert independent.show(bob.submission, "carol").verdict.standing is Status.VERIFIED


def test_without_independent_entry_submissions_are_not_private(
    platform: Platform, tmp_path: Path
) -> None:
    platform.publish(make_problem(tmp_path, contract=ANSWER_CONTRACT), "alice")
    bob = platform.submit("demo", {}, "42", "bob")
    assert platform.show(bob.submission, "carol").participant == "bob"


def test_nomination(independent: Platform, clock: Clock) -> None:
    first = independent.submit("demo", {}, "41", "bob")
    second = independent.submit("demo", {}, "42", "bob")
    carol = independent.submit("demo", {}, "42", "carol")
    assert independent.nominate(first.submission, "bob").nominated
    assert not independent.show(second.submission, "bob").nominated
    independent.nominate(second.submission, "bob")  # the latest nomination counts
    assert independent.show(second.submission, "bob").nominated
    assert not independent.show(first.submission, "bob").nominated
    assert not independent.show(carol.submission, "carol").nominated  # one per participant
    with pytest.raises(InvalidInput, match="only the participant"):
        independent.nominate(carol.submission, "bob")
    entries = independent.ledger.find(kind="submission.nominated")
    assert [(e.participant, e.subject) for e in entries] == [
        ("bob", first.submission),
        ("bob", second.submission),
    ]
    clock.now = datetime.fromisoformat(CUTOFF)
    with pytest.raises(InvalidInput, match="closed at the cutoff"):
        independent.nominate(first.submission, "bob")
    assert independent.show(second.submission, "bob").nominated


def test_held_results_cannot_be_probed_through_an_external_stage(
    platform: Platform, tmp_path: Path
) -> None:
    contract = {
        "acceptance": "The answer is 42 and a benchmark agrees.",
        "stages": [
            {
                "name": "answer",
                "type": "sandbox",
                "checks": [{"kind": "answer_equals", "value": "42"}],
            },
            {
                "name": "bench",
                "type": "external",
                "mechanism": "rule",
                "evidence_schema": {"type": "object"},
                "supplied_by": ["operator"],
            },
        ],
    }
    policy = {"release": {"results": "held", "score_release": SCORES}}
    platform.publish(make_problem(tmp_path, contract=contract, policy=policy), "alice")
    passed = platform.submit("demo", {}, "42", "bob")
    failed = platform.submit("demo", {}, "41", "bob")
    assert passed.label == failed.label  # what bob is shown says nothing yet
    said = []
    for run in (passed, failed):
        with pytest.raises(InvalidInput) as caught:
            platform.record_external(run.submission, "bench", "bob", evidence=b"{not json")
        said.append(str(caught.value).replace(run.submission, "S"))
    assert said[0] == said[1], said
