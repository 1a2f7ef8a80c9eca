"""External stages concluded by the wrong people or on evidence that should not meet the rule.

Found here and fixed by the lead while this was written (now passing): two suppliers recording the
same waiting run at once both land: the run gets two external conclusions (refuted, then verified),
and its last state wins, so evidence that refuted the work is overwritten (seen 5 of 6 times:
"Verified").

Found here and fixed by the lead while this was written (kept as passing regression tests):
- the party a party stage names could record the stage for its OWN submission (bob submits,
  bob records verified);
- a rule stage's evidence could come from anyone but the participant, so a rival who learned a
  submission id refuted someone else's run with failing evidence (rule stages now need
  ``supplied_by``);
- the rule stage validated with plain ``jsonschema`` and Python's ``re``: ``^\\d+$`` accepted
  ``"١٢"``, ``"１２"`` and ``"12\\n"``, ``^\\w+$`` accepted ``"é"``, and a schema declaring
  draft-04 was applied as 2020-12 (its ``dependencies`` ignored); it now uses the
  ``json_schema`` kind's validation.

Refused correctly (passing): a party stage recorded by anyone but the party; a participant's own
evidence; evidence that is not strict JSON (NaN, duplicate keys, an integer too long, a number
beyond the float range, deep nesting, nothing) is refused without recording anything; a party
cannot record ``error``.
"""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from assay.platform import Platform
from assay.status import Status
from tests.adversarial.platform_attacks import (
    Clock,
    answer_contract,
    make_problem,
    opened,
    store,
)


def _with_external(stage: dict[str, Any]) -> dict[str, Any]:
    contract = answer_contract()
    contract["stages"] = [*contract["stages"], {"name": "judge", "type": "external", **stage}]
    return contract


RULE = {
    "mechanism": "rule",
    "evidence_schema": {"type": "object", "properties": {"passed": {"const": True}}},
    "supplied_by": ["ci"],
}
DIGITS = {
    "mechanism": "rule",
    "evidence_schema": {
        "type": "object",
        "required": ["code"],
        "properties": {
            "code": {"type": "string", "pattern": "^\\d+$"},
            "word": {"type": "string", "pattern": "^\\w+$"},
        },
    },
    "supplied_by": ["ci"],
}
PARTY = {"mechanism": "party", "party": "bob"}


def test_a_rival_cannot_refute_someone_elses_run(db_url: str, tmp_path: Path) -> None:
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=_with_external(RULE)), "mgr")
        run = platform.submit("demo", {}, "42", "alice")
        try:
            platform.record_external(
                run.submission, "judge", "mallory", evidence=b'{"passed": false}'
            )
        except InvalidInput:
            return  # refused: the fix
        verdict = platform.show(run.submission, "alice").verdict
    assert verdict.standing is not Status.REFUTED, "a rival's evidence refuted alice's run"


@pytest.mark.parametrize(
    "evidence",
    [
        {"code": "\u0661\u0662"},
        {"code": "\uff11\uff12"},
        {"code": "12\n"},
        {"code": "1", "word": "é"},
    ],
    ids=["arabic-indic-digits", "fullwidth-digits", "trailing-newline", "non-ascii-word"],
)
def test_rule_evidence_the_schema_rejects_is_not_verified(
    tmp_path: Path, evidence: dict[str, str]
) -> None:
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=_with_external(DIGITS)), "mgr")
        run = platform.submit("demo", {}, "42", "alice")
        concluded = platform.record_external(
            run.submission, "judge", "ci", evidence=json.dumps(evidence).encode()
        )
    assert concluded.status is not Status.VERIFIED, concluded.stages[-1].detail


def test_a_party_cannot_conclude_its_own_submission(db_url: str, tmp_path: Path) -> None:
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=_with_external(PARTY)), "mgr")
        run = platform.submit("demo", {}, "42", "bob")  # bob, the party, submits too
        try:
            concluded = platform.record_external(
                run.submission, "judge", "bob", status=Status.VERIFIED, reason="I checked it"
            )
        except InvalidInput:
            return  # refused: the fix
    assert concluded.status is not Status.VERIFIED, "bob's word on bob's own work verified it"


DRAFT4 = {
    "mechanism": "rule",
    "evidence_schema": {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "dependencies": {"passed": ["report"]},
    },
    "supplied_by": ["ci"],
}


def test_a_rule_schema_of_another_draft_is_refused_or_applied(tmp_path: Path) -> None:
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    with opened(config, Clock()) as platform:
        try:
            platform.publish(make_problem(tmp_path, contract=_with_external(DRAFT4)), "mgr")
        except InvalidInput:
            return  # refused at publish: the fix
        run = platform.submit("demo", {}, "42", "alice")
        concluded = platform.record_external(
            run.submission, "judge", "ci", evidence=b'{"passed": true}'
        )
    assert concluded.status is not Status.VERIFIED, "the draft-04 dependency was ignored"


TWO_SUPPLIERS = {**RULE, "supplied_by": ["ci1", "ci2"]}


@pytest.mark.slow
def test_one_waiting_run_is_concluded_once(db_url: str, tmp_path: Path) -> None:
    config = store(db_url, tmp_path)
    clock = Clock()
    with opened(config, clock) as platform:
        platform.publish(make_problem(tmp_path, contract=_with_external(TWO_SUPPLIERS)), "mgr")
        submissions = [platform.submit("demo", {}, "42", "alice").submission for _ in range(8)]
    for submission in submissions:
        with opened(config, clock) as one, opened(config, clock) as two:
            barrier = threading.Barrier(2)

            def record(
                side: Platform,
                who: str,
                evidence: bytes,
                sub: str = submission,
                gate: threading.Barrier = barrier,
            ) -> None:
                gate.wait(timeout=60)
                with contextlib.suppress(InvalidInput):
                    side.record_external(sub, "judge", who, evidence=evidence)

            threads = [
                threading.Thread(target=record, args=(one, "ci1", b'{"passed": false}')),
                threading.Thread(target=record, args=(two, "ci2", b'{"passed": true}')),
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=120)
        with opened(config, clock) as platform:
            kinds = [e.kind for e in platform.ledger.find(subject=submission)]
            verdict = platform.show(submission, "alice").verdict
        assert kinds.count("external.recorded") == 1, kinds
        assert verdict.standing is not Status.VERIFIED or kinds.count("run.finished") == 1


# ------------------------------------------------------------------ refused correctly


@pytest.mark.parametrize("who", ["alice", "mallory", "mgr"])
def test_only_the_named_party_records_a_party_stage(db_url: str, tmp_path: Path, who: str) -> None:
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=_with_external(PARTY)), "mgr")
        run = platform.submit("demo", {}, "42", "alice")
        before = len(platform.ledger.find())
        with pytest.raises(InvalidInput, match="--as"):
            platform.record_external(
                run.submission, "judge", who, status=Status.VERIFIED, reason="trust me"
            )
        assert len(platform.ledger.find()) == before
        assert platform.show(run.submission, "alice").verdict.standing is None


def test_the_participant_cannot_supply_its_own_evidence(tmp_path: Path) -> None:
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=_with_external(RULE)), "mgr")
        run = platform.submit("demo", {}, "42", "alice")
        with pytest.raises(InvalidInput, match="--as"):
            platform.record_external(run.submission, "judge", "alice", evidence=b'{"passed": true}')


@pytest.mark.parametrize(
    "evidence",
    [
        b'{"passed": true, "n": NaN}',
        b'{"passed": true, "passed": true}',
        b'{"passed": true, "n": 1' + b"0" * 5000 + b"}",
        b'{"passed": true, "n": 1e999}',
        b"[" * 100_000 + b"]" * 100_000,
        b"",
    ],
    ids=["nan", "duplicate-key", "long-integer", "overflow", "deep-nesting", "empty"],
)
def test_evidence_that_is_not_strict_json_is_refused(tmp_path: Path, evidence: bytes) -> None:
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=_with_external(RULE)), "mgr")
        run = platform.submit("demo", {}, "42", "alice")
        before = len(platform.ledger.find())
        with pytest.raises(InvalidInput, match="--evidence"):
            platform.record_external(run.submission, "judge", "ci", evidence=evidence)
        assert len(platform.ledger.find()) == before


def test_a_party_cannot_record_error(tmp_path: Path) -> None:
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=_with_external(PARTY)), "mgr")
        run = platform.submit("demo", {}, "42", "alice")
        with pytest.raises(InvalidInput, match="--result"):
            platform.record_external(
                run.submission, "judge", "bob", status=Status.ERROR, reason="oops"
            )
