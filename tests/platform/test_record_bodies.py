"""The submission path writes its records without pydantic (``_records.built`` and ``body``,
``NewEntry.trusted``, the ledger's reused encoder): each must give exactly the bytes the models
give, or a stored row (and the hash chain over it) would change."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from fractions import Fraction
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from assay._signed import canonical_json
from assay.ledger import NewEntry
from assay.ledger._chain import body_text
from assay.platform import _records as r
from assay.platform._views import RunView, StageView
from assay.status import Status

T = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
MOMENTS = [
    T,
    T.replace(microsecond=120000),
    T.replace(microsecond=1),
    datetime(1, 1, 1, tzinfo=UTC),
    T.replace(tzinfo=timezone(timedelta(hours=2))),
    T.replace(tzinfo=ZoneInfo("UTC")),
    T.replace(tzinfo=ZoneInfo("Europe/Paris")),
    T.replace(tzinfo=None),
]
EVIDENCE: list[dict[str, Any] | None] = [
    None,
    {},
    {"expected": 42, "got": 41.0, "tolerance": 0.0},
    {"big": 10**40, "neg": -1, "flag": True, "none": None, "text": "x\udc80y ☃"},
    {"nested": {"list": [1, [2.5, {"a": "b"}]], "empty": []}},
    {"inf": float("inf"), "nan": float("nan"), "ninf": -float("inf")},
    {"tuple": (1, 2), "set": {3}, "fraction": Fraction(1, 3), "bytes": b"x"},
    {"status": Status.VERIFIED, "deep": [{"k": Status.REFUTED}]},
    {"list_in": [float("inf")]},
]


def _same(fast: dict[str, Any], slow: dict[str, Any]) -> None:
    """Equal as stored: canonical JSON text (which tells 1 from True and 1 from 1.0)."""
    assert canonical_json(fast) == canonical_json(slow)
    assert json.dumps(fast) == json.dumps(slow)  # same key order too (views print it)


def _check(evidence: dict[str, Any] | None, status: Status = Status.REFUTED) -> r.CheckRecord:
    return r.built(
        r.CheckRecord,
        kind="answer_number",
        status=status,
        detail="value outside tolerance \udc80",
        checker="assay:answer_number@0.1.0",
        evidence=evidence,
        reads_sealed=["held-out"],
    )


@pytest.mark.parametrize("evidence", EVIDENCE, ids=range(len(EVIDENCE)))
@pytest.mark.parametrize("moment", MOMENTS, ids=range(len(MOMENTS)))
def test_a_stage_body_is_what_pydantic_writes(
    evidence: dict[str, Any] | None, moment: datetime
) -> None:
    fields: dict[str, Any] = {
        "run": "r-1",
        "name": "answer",
        "type": "sandbox",
        "status": Status.REFUTED,
        "detail": "1 of 2 checks passed",
        "mechanism": "checks",
        "checkers": ["assay:answer_number@0.1.0"],
        "isolation": "none needed: no submitted code ran",
        "checks": [_check({"reason": "x"}, Status.VERIFIED), _check(evidence)],
        "inputs": {"artifact:a": "0" * 64},
        "started": moment,
        "finished": moment + timedelta(microseconds=999_999),
    }
    fast = r.built(r.StageRecord, **fields)
    slow = r.StageRecord(**fields)
    assert fast == slow
    _same(r.body(fast), slow.to_json())


@pytest.mark.parametrize("summary", [None, "", "42", "x\udc80 ☃ \x00", "4" * 5000])
def test_submission_and_run_bodies_are_what_pydantic_writes(summary: str | None) -> None:
    artifacts = [
        r.ArtifactRecord(role="doc", sha256="a" * 64, size=3),
        r.ArtifactRecord(role="tree", sha256="b" * 64, size=0, tree=True),
    ]
    for artifacts_given in ([], artifacts):
        fields = {
            "submission": "s-1",
            "attempt": "a-1",
            "problem": "demo",
            "revision": "f" * 64,
            "participant": "alice",
            "artifacts": artifacts_given,
            "summary": summary,
        }
        fast = r.built(r.SubmissionRecord, **fields)
        assert fast == r.SubmissionRecord(**fields)
        _same(r.body(fast), r.SubmissionRecord(**fields).to_json())
    owner = r.Owner(host="host/boot", pid=7, started=12.5)
    for contract, recheck in ((None, False), ("c" * 64, True)):
        started = {
            "run": "r-1",
            "submission": "s-1",
            "revision": "f" * 64,
            "contract": contract,
            "owner": owner,
            "recheck": recheck,
        }
        fast_started = r.built(r.RunStartedRecord, **started)
        _same(r.body(fast_started), r.RunStartedRecord(**started).to_json())
    for status in Status:
        for interrupted in (False, True):
            end = {
                "run": "r-1",
                "submission": "s-1",
                "status": status,
                "detail": f"done \udc80 {status}",
                "interrupted": interrupted,
            }
            _same(r.body(r.built(r.FinishedRecord, **end)), r.FinishedRecord(**end).to_json())


def test_other_records_are_written_by_pydantic() -> None:
    awaiting = r.AwaitingRecord(run="r", stage="s", awaits="x", type="review")
    assert r.body(awaiting) == awaiting.to_json()


def test_built_views_equal_validated_ones() -> None:
    stage = {"name": "a", "type": "sandbox", "status": Status.VERIFIED, "detail": "ok"}
    assert r.built(StageView, **stage) == StageView(**stage)
    run = {"submission": "s", "run": "r", "status": None, "label": "l", "detail": "d"}
    fast = r.built(RunView, stages=[], **run)
    slow = RunView(stages=[], **run)
    assert fast == slow
    assert json.dumps(fast.to_json()) == json.dumps(slow.to_json())


def test_built_refuses_unknown_and_missing_fields() -> None:
    with pytest.raises(TypeError, match="nope"):
        r.built(r.ArtifactRecord, role="a", sha256="0" * 64, size=1, nope=1)
    with pytest.raises(TypeError, match=r"missing fields \['sha256'\]"):
        r.built(r.ArtifactRecord, role="a", size=1)


DOCUMENTS: list[Any] = [
    {},
    {"b": 1, "a": [1.5, None, True, "☃\udc80"], "c": {"z": {}, "y": []}},
    {"big": 10**30, "neg": -0.0, "e": 1e300, "tiny": 5e-324},
]


@pytest.mark.parametrize("document", DOCUMENTS, ids=range(len(DOCUMENTS)))
def test_the_ledger_encoder_is_canonical_json(document: dict[str, Any]) -> None:
    assert body_text(document) == canonical_json(document)


@pytest.mark.parametrize("bad", [{"x": float("nan")}, {"x": float("inf")}, {"x": object()}])
def test_the_ledger_encoder_still_refuses_what_is_not_strict_json(bad: dict[str, Any]) -> None:
    from assay._errors import InvalidInput

    with pytest.raises(InvalidInput):
        body_text(bad)


def test_a_trusted_entry_equals_a_validated_one_and_needs_a_zone() -> None:
    fields: dict[str, Any] = {
        "kind": "run.started",
        "subject": "s-1",
        "body": {"run": "r-1"},
        "problem": "demo",
        "participant": None,
        "at": T,
    }
    assert NewEntry.trusted(**fields) == NewEntry(**fields)
    with pytest.raises(ValueError, match="time zone"):
        NewEntry.trusted(**{**fields, "at": T.replace(tzinfo=None)})
