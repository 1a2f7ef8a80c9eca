"""External stages: a run waits there, shown as pending with what it awaits; a ``rule`` stage is
concluded by assay applying the contract's JSON Schema to supplied evidence (verified or refuted,
naming the failing place); a ``party`` stage only by the named party, with who and when recorded;
then the later stages run."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from assay.platform import FolderInvalid, Platform
from assay.status import Status
from tests.platform.conftest import PROTOCOL, Clock, make_problem, rows

RULE = {
    "type": "object",
    "required": ["accuracy"],
    "properties": {"accuracy": {"type": "number", "minimum": 0.9}},
}


def _contract(external: dict[str, Any], *, last: bool = False) -> dict[str, Any]:
    stages: list[dict[str, Any]] = [
        {
            "name": "answer",
            "type": "sandbox",
            "checks": [{"kind": "answer_contains", "value": "4"}],
        },
        {"name": "outside", "type": "external", **external},
    ]
    if not last:
        stages.append(
            {
                "name": "exact",
                "type": "sandbox",
                "checks": [{"kind": "answer_equals", "value": "42"}],
            }
        )
    return {"acceptance": "The answer is 42 and the outside world agrees.", "stages": stages}


@pytest.fixture
def ruled(platform: Platform, tmp_path: Path) -> Platform:
    contract = _contract(
        {"mechanism": "rule", "evidence_schema": RULE, "supplied_by": ["operator"]}
    )
    platform.publish(make_problem(tmp_path, problem="ruled", contract=contract), "alice")
    return platform


@pytest.fixture
def partied(platform: Platform, tmp_path: Path) -> Platform:
    contract = _contract({"mechanism": "party", "party": "lab"})
    platform.publish(make_problem(tmp_path, problem="partied", contract=contract), "alice")
    return platform


def _evidence(**values: Any) -> bytes:
    return json.dumps(values).encode()


def test_a_run_waits_at_an_external_stage(ruled: Platform) -> None:
    run = ruled.submit("ruled", {}, "42", "bob")
    assert run.status is None
    assert run.label.startswith("Pending: awaiting evidence meeting the stage's JSON Schema")
    assert [(s.name, s.status) for s in run.stages] == [
        ("answer", Status.VERIFIED),
        ("outside", None),
    ]
    assert run.stages[1].detail.startswith("pending: awaiting")
    view = ruled.show(run.submission, "bob")
    assert view.verdict.text.startswith("Pending: awaiting")
    assert ruled.ledger.find(kind="run.awaiting")[0].body["stage"] == "outside"


def test_a_run_that_fails_before_the_external_stage_does_not_wait(ruled: Platform) -> None:
    run = ruled.submit("ruled", {}, "17", "bob")
    assert run.status is Status.REFUTED
    assert [s.name for s in run.stages] == ["answer"]


def test_rule_evidence_meeting_the_schema_verifies_then_later_stages_run(
    ruled: Platform, clock: Clock
) -> None:
    run = ruled.submit("ruled", {}, "42", "bob")
    clock.advance(hours=2)
    evidence = _evidence(accuracy=0.95)
    done = ruled.record_external(run.submission, "outside", "operator", evidence=evidence)
    assert done.status is Status.VERIFIED, done.detail
    assert [(s.name, s.status) for s in done.stages] == [
        ("answer", Status.VERIFIED),
        ("outside", Status.VERIFIED),
        ("exact", Status.VERIFIED),
    ]
    outside = done.stages[1]
    assert outside.mechanism == "rule"
    assert outside.recorded_by == "operator"
    assert outside.inputs == {"evidence": hashlib.sha256(evidence).hexdigest()}
    assert outside.finished == clock.now
    assert ruled.ledger.blobs.read(outside.inputs["evidence"]) == evidence
    (record,) = ruled.ledger.find(kind="external.recorded")
    assert (record.body["mechanism"], record.body["by"]) == ("rule", "operator")
    assert ruled.show(run.submission, "bob").verdict.text == "Verified"


def test_a_later_stage_can_still_refute(ruled: Platform) -> None:
    run = ruled.submit("ruled", {}, "43", "bob")  # contains a 4, is not 42
    done = ruled.record_external(
        run.submission, "outside", "operator", evidence=_evidence(accuracy=1)
    )
    assert done.status is Status.REFUTED
    assert done.stages[-1].name == "exact"


@pytest.mark.parametrize(
    ("evidence", "place"),
    [
        (_evidence(accuracy=0.5), "$.accuracy"),
        (_evidence(accuracy="high"), "$.accuracy"),
        (_evidence(score=1), "$"),
    ],
)
def test_rule_evidence_not_meeting_the_schema_refutes(
    ruled: Platform, evidence: bytes, place: str
) -> None:
    run = ruled.submit("ruled", {}, "42", "bob")
    done = ruled.record_external(run.submission, "outside", "operator", evidence=evidence)
    assert done.status is Status.REFUTED
    detail = done.stages[1].detail
    assert f"{place}:" in detail or f"at {place}" in detail, detail  # names the failing place
    assert [s.name for s in done.stages] == ["answer", "outside"]  # the run stops there


def test_rule_stage_refuses_what_is_not_evidence(ruled: Platform) -> None:
    run = ruled.submit("ruled", {}, "42", "bob")
    before = rows(ruled)
    for bad in (b"{not json", b'{"accuracy": NaN}', b'{"a": 1, "a": 2}'):
        with pytest.raises(InvalidInput, match="not strict JSON"):
            ruled.record_external(run.submission, "outside", "operator", evidence=bad)
    with pytest.raises(InvalidInput, match="--evidence"):
        ruled.record_external(
            run.submission, "outside", "operator", status=Status.VERIFIED, reason="trust me"
        )
    assert rows(ruled) == before
    assert ruled.show(run.submission, "bob").runs[0].status is None  # still waiting


def test_party_stage_only_by_the_named_party(partied: Platform, clock: Clock) -> None:
    run = partied.submit("partied", {}, "42", "bob")
    assert "'lab'" in run.label
    before = rows(partied)
    for who in ("bob", "alice", "lab2"):
        with pytest.raises(InvalidInput, match="only 'lab'"):
            partied.record_external(
                run.submission, "outside", who, status=Status.VERIFIED, reason="looks fine"
            )
    with pytest.raises(InvalidInput, match="--result"):
        partied.record_external(run.submission, "outside", "lab", status=Status.VERIFIED)
    with pytest.raises(InvalidInput, match="--result"):
        partied.record_external(
            run.submission, "outside", "lab", status=Status.ERROR, reason="broken"
        )
    with pytest.raises(InvalidInput, match="--result"):
        partied.record_external(run.submission, "outside", "lab", evidence=b"{}", reason="x")
    assert rows(partied) == before
    clock.advance(days=1)
    done = partied.record_external(
        run.submission, "outside", "lab", status=Status.VERIFIED, reason="reproduced on our rig"
    )
    assert done.status is Status.VERIFIED
    assert [s.name for s in done.stages] == ["answer", "outside", "exact"]
    outside = done.stages[1]
    assert (outside.mechanism, outside.recorded_by) == ("party", "lab")
    assert outside.detail == "reproduced on our rig"
    (record,) = partied.ledger.find(kind="external.recorded")
    assert record.body["by"] == "lab" and record.at == clock.now
    with pytest.raises(InvalidInput, match="waits at stage"):
        partied.record_external(
            run.submission, "outside", "lab", status=Status.REFUTED, reason="changed my mind"
        )


@pytest.mark.parametrize("status", [Status.REFUTED, Status.INCONCLUSIVE])
def test_party_stage_may_refute_or_not_conclude(partied: Platform, status: Status) -> None:
    run = partied.submit("partied", {}, "42", "bob")
    done = partied.record_external(
        run.submission, "outside", "lab", status=status, reason="could not reproduce"
    )
    assert done.status is status
    assert "could not reproduce" in done.detail
    assert [s.name for s in done.stages] == ["answer", "outside"]


def test_an_external_stage_that_is_last_verifies_the_run(
    platform: Platform, tmp_path: Path
) -> None:
    contract = _contract({"mechanism": "party", "party": "lab"}, last=True)
    platform.publish(make_problem(tmp_path, contract=contract), "alice")
    run = platform.submit("demo", {}, "42", "bob")
    done = platform.record_external(
        run.submission, "outside", "lab", status=Status.VERIFIED, reason="ok"
    )
    assert done.status is Status.VERIFIED, done.detail
    assert platform.show(run.submission, "bob").verdict.text == "Verified"


def test_no_waiting_run_no_record(ruled: Platform) -> None:
    run = ruled.submit("ruled", {}, "17", "bob")
    with pytest.raises(InvalidInput, match="waits at stage 'outside'"):
        ruled.record_external(run.submission, "outside", "operator", evidence=_evidence(accuracy=1))
    with pytest.raises(InvalidInput, match="no submission"):
        ruled.record_external("s-nope", "outside", "operator", evidence=_evidence(accuracy=1))


def test_a_review_stage_waits_for_reviewers_then_the_run_carries_on(
    platform: Platform, tmp_path: Path
) -> None:
    """A run waits at a review stage (pending, not swept), and once the protocol accepts, the
    stages after it run as a first evaluation would."""
    contract = {
        "acceptance": "Reviewed.",
        "stages": [
            {
                "name": "answer",
                "type": "sandbox",
                "checks": [{"kind": "answer_equals", "value": "42"}],
            },
            {"name": "people", "type": "review", "protocol": PROTOCOL},
            {
                "name": "after",
                "type": "sandbox",
                "checks": [{"kind": "answer_equals", "value": "42"}],
            },
        ],
    }
    platform.publish(make_problem(tmp_path, contract=contract), "alice")
    run = platform.submit("demo", {}, "42", "bob")
    assert run.status is None
    assert [(s.name, s.status, s.type) for s in run.stages] == [
        ("answer", Status.VERIFIED, "sandbox"),
        ("people", None, "review"),
    ]
    assert platform.sweep() == []
    platform.reviews.add_user("carol", ["reviewers"], "alice")
    seat = platform.reviews.seats("carol").open[0].seat
    platform.reviews.claim(seat, "carol")
    done = platform.reviews.respond(seat, "carol", b'{"verdict": "pass", "assistance": []}')
    assert done.run is not None and done.run.status is Status.VERIFIED
    assert [(s.name, s.status) for s in done.run.stages] == [
        ("answer", Status.VERIFIED),
        ("people", Status.VERIFIED),
        ("after", Status.VERIFIED),
    ]


def test_a_review_stage_without_a_protocol_is_refused(platform: Platform, tmp_path: Path) -> None:
    contract = {"acceptance": "Reviewed.", "stages": [{"name": "people", "type": "review"}]}
    with pytest.raises(FolderInvalid, match=r"stages\[0\]\.protocol: a review stage names"):
        platform.publish(make_problem(tmp_path, contract=contract), "alice")


def test_a_waiting_run_is_not_swept_as_interrupted(ruled: Platform) -> None:
    run = ruled.submit("ruled", {}, "42", "bob")
    assert ruled.sweep() == []
    assert ruled.show(run.submission, "bob").runs[0].label.startswith("Pending")


def test_a_revoked_party_concludes_nothing_later(partied: Platform) -> None:
    partied.revoke("party:lab", "the lab signed results it never reproduced", "alice")
    run = partied.submit("partied", {}, "42", "bob")
    done = partied.record_external(
        run.submission, "outside", "lab", status=Status.VERIFIED, reason="trust us"
    )
    assert done.status is not Status.VERIFIED
    assert partied.show(run.submission, "bob").verdict.standing is not Status.VERIFIED


def test_a_party_conclusion_under_independent_entry_is_reported_as_recorded(
    platform: Platform, tmp_path: Path
) -> None:
    contract = _contract({"mechanism": "party", "party": "lab"})
    policy = {"independent_entry": {"cutoff": "2031-01-01T00:00:00Z"}}
    platform.publish(make_problem(tmp_path, contract=contract, policy=policy), "alice")
    run = platform.submit("demo", {}, "42", "bob")
    before = rows(platform)
    try:
        platform.record_external(
            run.submission, "outside", "lab", status=Status.REFUTED, reason="did not reproduce"
        )
    except InvalidInput:
        # an error must mean nothing was recorded, or the party retries against a closed stage
        assert rows(platform) == before, "the conclusion was stored, yet the command failed"
        raise


def test_who_may_supply_rule_evidence(platform: Platform, tmp_path: Path) -> None:
    listed = _contract(
        {"mechanism": "rule", "evidence_schema": RULE, "supplied_by": ["bench", "bob"]}
    )
    platform.publish(make_problem(tmp_path, contract=listed), "alice")
    good = _evidence(accuracy=0.99)
    mine = platform.submit("demo", {}, "42", "bob")
    before = rows(platform)
    # the participant never supplies evidence about its own work, even when listed
    for who in ("bob", "alice", "operator"):
        with pytest.raises(InvalidInput, match="may not supply evidence"):
            platform.record_external(mine.submission, "outside", who, evidence=good)
    assert rows(platform) == before  # a refused supplier records nothing
    done = platform.record_external(mine.submission, "outside", "bench", evidence=good)
    assert done.status is Status.VERIFIED
    carol = platform.submit("demo", {}, "42", "carol")
    assert platform.record_external(carol.submission, "outside", "bob", evidence=good).status is (
        Status.VERIFIED
    )
