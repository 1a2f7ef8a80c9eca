"""A checker is revoked, and still makes submissions verified.

Found here and fixed by the lead while this was written (kept as passing regression tests):
- external stages were not gated by revocation: after ``party:bob`` (or the rule stage's
  checker) was revoked, a re-check waited at the stage again, bob (or a supplier) recorded
  ``verified``, and the current verdict read ``Verified``;
- anyone (a participant, a stranger) could revoke any checker, for every problem.

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


@pytest.mark.parametrize("stage", [PARTY, RULE], ids=["party", "rule"])
def test_a_revoked_external_checker_cannot_verify_new_runs(
    db_url: str, tmp_path: Path, stage: dict[str, Any]
) -> None:
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=_with_external(stage)), "mgr")
        run = platform.submit("demo", {}, "42", "alice")

        def conclude(submission: str) -> Any:
            if stage is PARTY:
                return platform.record_external(
                    submission, "judge", "bob", status=Status.VERIFIED, reason="fine"
                )
            return platform.record_external(
                submission, "judge", "carol", evidence=b'{"passed": true}'
            )

        first = conclude(run.submission)
        (checker,) = first.stages[-1].checkers  # party:bob, or rule:CONTRACT/STAGE
        assert checker.startswith(("party:", "rule:")), checker
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
