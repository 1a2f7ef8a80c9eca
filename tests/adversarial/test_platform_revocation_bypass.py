"""A checker is revoked, and still makes submissions verified.

Found here and fixed by the lead while this was written (kept as passing regression tests):
- external stages were not gated by revocation: after ``party:bob`` (or the rule stage's
  checker) was revoked, a re-check waited at the stage again, bob (or a supplier) recorded
  ``verified``, and the current verdict read ``Verified``;
- anyone (a participant, a stranger) could revoke any checker, for every problem.

Found by padv2 (xfail until fixed): a revocation is global, and ``revoke`` asks only about the
problems whose runs already used the checker: mallory, manager of a problem of her own, revokes
a built-in kind's id or ``party:bob`` before alice's problem has a run, and every later run
there is ``inconclusive``.

Refused correctly (passing): a revoked sandbox checker cannot make a new run verified; someone who
manages none of the problems a checker judged cannot revoke it; a revocation does not turn a
verified run into a refutation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from assay._version import __version__
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


@pytest.mark.parametrize("checker", ["kind", "party"])
def test_a_revocation_reaches_no_problem_the_revoker_does_not_manage(
    tmp_path: Path, checker: str
) -> None:
    """Anyone becomes a manager by publishing a problem of their own; the manager check of
    ``revoke`` only looks at problems whose runs ALREADY used the checker, and a revocation is
    global. So mallory revokes a built-in kind (every assay release gives kinds a new id, with
    no runs yet) or a party name before alice's problem has any run, and every later run there
    is ``inconclusive``: nobody can be verified on alice's problem."""
    config = store(f"sqlite:///{tmp_path}/ledger.db", tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path / "m", problem="mine"), "mallory")
        checker_id = f"assay:answer_equals@{__version__}" if checker == "kind" else "party:bob"
        try:
            platform.revoke(checker_id, "sabotage", "mallory")
        except InvalidInput:
            return  # refused: mallory manages none of the problems the checker will judge
        contract = answer_contract() if checker == "kind" else _with_external(PARTY)
        platform.publish(make_problem(tmp_path / "a", problem="alices", contract=contract), "al")
        run = platform.submit("alices", {}, "42", "bob" if checker == "kind" else "carol")
        if checker == "party":
            run = platform.record_external(
                run.submission, "judge", "bob", status=Status.VERIFIED, reason="correct"
            )
        assert run.status is Status.VERIFIED, f"mallory's revocation reached alice: {run.detail}"
