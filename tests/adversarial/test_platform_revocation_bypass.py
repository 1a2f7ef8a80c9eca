"""A checker is revoked, and still makes submissions verified.

A sandbox check's outcome passes through a gate that turns a revoked checker's conclusion into
``inconclusive``; an external stage's conclusion (``party:NAME`` or ``rule:CONTRACT``) does not.
A run started after the revocation is not marked revoked either (only runs that started before
it are), so nothing stops it from counting.

Found (xfail until fixed): after ``party:bob`` (or the rule stage's checker) is revoked, a
re-check waits at the stage again, bob (or any supplier) records ``verified``, and the current
verdict is ``Verified``.

Refused correctly (passing): a revoked sandbox checker cannot make a new run verified; someone who
manages none of the problems a checker judged cannot revoke it; a revocation does not turn a
verified run into a refutation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from assay.status import Status
from tests.adversarial.platform_attacks import (
    FINDING,
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


PARTY = {"mechanism": "party", "party": "bob"}
RULE = {
    "mechanism": "rule",
    "evidence_schema": {"type": "object", "required": ["passed"]},
    "supplied_by": ["carol"],
}


@pytest.mark.xfail(
    strict=True,
    raises=FINDING,
    reason="external stages are not gated by revocation: a revoked party or rule still "
    "concludes verified on runs started after the revocation",
)
@pytest.mark.parametrize("stage", [PARTY, RULE], ids=["party", "rule"])
def test_a_revoked_external_checker_cannot_verify_new_runs(
    db_url: str, tmp_path: Path, stage: dict[str, Any]
) -> None:
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        published = platform.publish(make_problem(tmp_path, contract=_with_external(stage)), "mgr")
        run = platform.submit("demo", {}, "42", "alice")
        checker = "party:bob" if stage is PARTY else f"rule:{published.contract}"

        def conclude(submission: str) -> Any:
            if stage is PARTY:
                return platform.record_external(
                    submission, "judge", "bob", status=Status.VERIFIED, reason="fine"
                )
            return platform.record_external(
                submission, "judge", "carol", evidence=b'{"passed": true}'
            )

        first = conclude(run.submission)
        assert first.stages[-1].checkers == [checker]
        platform.revoke(checker, "it passes everything", "mgr")
        platform.recheck(run.submission, "alice")
        conclude(run.submission)
        verdict = platform.show(run.submission, "alice").verdict
    assert verdict.standing is not Status.VERIFIED, verdict.text


def test_a_revoked_sandbox_checker_cannot_verify_new_runs(db_url: str, tmp_path: Path) -> None:
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=answer_contract()), "mgr")
        run = platform.submit("demo", {}, "42", "alice")
        assert run.status is Status.VERIFIED
        checker = run.stages[0].checkers[0]
        revocation = platform.revoke(checker, "it passes everything", "mgr")
        assert revocation.runs == [run.run]
        again = platform.recheck(run.submission, "alice")
        assert again.status is Status.INCONCLUSIVE
        verdict = platform.show(run.submission, "alice").verdict
        assert verdict.standing is not Status.VERIFIED
        assert verdict.standing is not Status.REFUTED  # never a finding that the work was wrong


@pytest.mark.parametrize("who", ["alice", "mallory"], ids=["participant", "stranger"])
def test_only_a_manager_revokes(db_url: str, tmp_path: Path, who: str) -> None:
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=answer_contract()), "mgr")
        run = platform.submit("demo", {}, "41", "alice")
        with pytest.raises(InvalidInput, match="--as"):
            platform.revoke(run.stages[0].checkers[0], "it refuted me", who)
        assert platform.show(run.submission, "alice").verdict.standing is Status.REFUTED
