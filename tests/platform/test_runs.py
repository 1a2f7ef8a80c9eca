"""Runs: a re-check is a new run and no run is ever edited; the current verdict is derived from
the runs that count ("Verified; latest re-check: verification error"); a revoked checker's runs
stay readable, marked and uncounted, and never turn into a finding that the work was wrong; a
program checker that has not reproduced its conformance fixtures cannot verify."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from assay.platform import FolderInvalid, Platform
from assay.status import Status
from tests.platform.conftest import SCHEMA_CONTRACT, SCHEMA_FILES, artifact, make_problem

SAT = Path(__file__).resolve().parents[2] / "examples" / "checkers" / "sat"


@pytest.fixture
def schema(platform: Platform, tmp_path: Path) -> Platform:
    platform.publish(make_problem(tmp_path, contract=SCHEMA_CONTRACT, files=SCHEMA_FILES), "alice")
    return platform


def _good(tmp_path: Path) -> dict[str, Path]:
    return {"doc": artifact(tmp_path, "good.json", '{"x": 1}')}


def _bad(tmp_path: Path) -> dict[str, Path]:
    return {"doc": artifact(tmp_path, "bad.json", '{"x": "one"}')}


def _lose_blob(tmp_path: Path, sha: str) -> None:
    """Delete a stored artifact's bytes behind the platform's back (a failing disk)."""
    (tmp_path / "blobs" / sha[:2] / sha).unlink()


def test_a_recheck_is_a_new_run_and_runs_are_never_edited(schema: Platform, tmp_path: Path) -> None:
    first = schema.submit("demo", _good(tmp_path), None, "bob")
    before = schema.ledger.find()
    again = schema.recheck(first.submission, "bob")
    assert again.run != first.run
    assert again.recheck and not first.recheck
    after = schema.ledger.find()
    assert after[: len(before)] == before  # every earlier row is exactly as it was
    assert {e.kind for e in after[len(before) :]} == {
        "run.started",
        "stage.concluded",
        "run.finished",
    }
    view = schema.show(first.submission, "bob")
    assert [r.run for r in view.runs] == [first.run, again.run]
    assert view.verdict.text == "Verified"
    assert schema.ledger.verify().intact


def test_verdict_keeps_the_finding_and_names_the_latest_recheck(
    schema: Platform, tmp_path: Path
) -> None:
    first = schema.submit("demo", _good(tmp_path), None, "bob")
    sha = first.stages[0].inputs["artifact:doc"]
    _lose_blob(tmp_path, sha)
    broken = schema.recheck(first.submission, "bob")
    assert broken.status is Status.ERROR
    assert "verification error" in broken.detail
    view = schema.show(first.submission, "bob")
    assert view.verdict.standing is Status.VERIFIED
    assert view.verdict.latest is Status.ERROR
    assert view.verdict.text == "Verified; latest re-check: verification error"
    # the earlier run is untouched
    assert view.runs[0].status is Status.VERIFIED
    assert view.runs[1].status is Status.ERROR


def test_a_later_finding_replaces_the_standing_verdict(schema: Platform, tmp_path: Path) -> None:
    run = schema.submit("demo", _bad(tmp_path), None, "bob")
    assert run.status is Status.REFUTED
    view = schema.show(run.submission, "bob")
    assert view.verdict.text == "Did not satisfy the verifier"
    assert view.verdict.latest is None


def test_revocation_marks_runs_and_never_refutes(schema: Platform, tmp_path: Path) -> None:
    good = schema.submit("demo", _good(tmp_path), None, "bob")
    bad = schema.submit("demo", _bad(tmp_path), None, "carol")
    checker = good.stages[0].checkers[0]
    assert checker.startswith("assay:json_schema@")
    contracts = schema.ledger.find(kind=("contract.published", "revision.published"))
    revocation = schema.revoke(checker, "it accepted a document missing x", "alice")
    assert sorted(revocation.runs) == sorted([good.run, bad.run])
    for submission, run in ((good.submission, good.run), (bad.submission, bad.run)):
        view = schema.show(submission, "alice")
        (shown,) = view.runs
        assert shown.run == run
        assert shown.revoked is not None and "it accepted a document missing x" in shown.revoked
        assert shown.stages  # still readable, every stage
        assert view.verdict.standing is None  # no longer counted
        assert view.verdict.text.startswith("No verdict: every concluded run was revoked")
        assert "refuted" not in view.verdict.text.lower()
    # the contract and revision are unchanged
    assert schema.ledger.find(kind=("contract.published", "revision.published")) == contracts
    # later runs of the revoked checker conclude nothing: inconclusive, never verified/refuted
    for submission in (good.submission, bad.submission):
        later = schema.recheck(submission, "alice")
        assert later.status is Status.INCONCLUSIVE, later.detail
        assert "revoked" in later.stages[0].checks[0]["detail"]
        assert later.revoked is None  # it counts, and says nothing about the work
        view = schema.show(submission, "alice")
        assert view.verdict.standing is Status.INCONCLUSIVE
    fresh = schema.submit("demo", _good(tmp_path), None, "dave")
    assert fresh.status is Status.INCONCLUSIVE


def test_revoke_needs_a_reason_and_a_checker_id(schema: Platform) -> None:
    with pytest.raises(InvalidInput, match="why"):
        schema.revoke("assay:json_schema@0", "  ", "alice")
    with pytest.raises(InvalidInput, match="not a checker id"):
        schema.revoke("json_schema", "bad", "alice")


def test_withdrawal_keeps_what_runs_examined(schema: Platform, tmp_path: Path) -> None:
    run = schema.submit("demo", _good(tmp_path), None, "bob")
    sha = run.stages[0].inputs["artifact:doc"]
    view = schema.withdraw(run.submission, "doc", "bob")
    (doc,) = view.artifacts
    assert (doc.role, doc.sha256, doc.size, doc.withdrawn) == ("doc", sha, 8, True)
    assert not schema.ledger.blobs.has(sha)
    assert view.runs[0].status is Status.VERIFIED
    assert view.runs[0].stages[0].inputs["artifact:doc"] == sha
    again = schema.recheck(run.submission, "bob")
    assert again.status is Status.INCONCLUSIVE
    assert "withdrawn" in again.detail
    with pytest.raises(InvalidInput, match="already withdrawn"):
        schema.withdraw(run.submission, "doc", "bob")
    with pytest.raises(InvalidInput, match="neither the participant nor a manager"):
        schema.recheck(run.submission, "mallory")


def test_a_shared_blob_survives_another_submissions_withdrawal(
    schema: Platform, tmp_path: Path
) -> None:
    one = schema.submit("demo", _good(tmp_path), None, "bob")
    two = schema.submit("demo", _good(tmp_path), None, "carol")
    schema.withdraw(one.submission, "doc", "bob")
    assert schema.recheck(two.submission, "carol").status is Status.VERIFIED


# ---------------------------------------------------------------- conformance (program checkers)


def _program_problem(root: Path, checker: str | None = None, *, by_file: bool = False) -> Path:
    """The SAT checker as a folder reference (``judge/check.py``), or as a file named by key."""
    contract: dict[str, Any] = {
        "roles": [{"name": "assignment", "max_bytes": 10_000}],
        "references": [
            {"key": "judge", "path": "judge/check.py" if by_file else "judge"},
            {"key": "instance", "path": "instance.cnf"},
        ],
        "acceptance": "The assignment satisfies the formula.",
        "stages": [
            {
                "name": "sat",
                "type": "sandbox",
                "checks": [
                    {
                        "kind": "program",
                        "checker": "judge" if by_file else "judge/check.py",
                        "artifacts": {"assignment": "assignment"},
                        "references": {"instance": "instance"},
                    }
                ],
            }
        ],
        "conformance": {"judge": "fixtures"},
    }
    folder = make_problem(root, contract=contract)
    (folder / "judge").mkdir()
    shutil.copy(SAT / "check.py", folder / "judge" / "check.py")
    if checker is not None:
        (folder / "judge" / "check.py").write_text(checker)
    shutil.copy(SAT / "instance.cnf", folder / "instance.cnf")
    shutil.copytree(SAT / "fixtures", folder / "fixtures")
    return folder


def _verdict(result: str) -> str:
    return (
        f"import json; open('/output/result.json', 'w').write(json.dumps({{'result': '{result}'}}))"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "db_url", ["sqlite"], indirect=True
)  # the sandbox is not database-specific
def test_only_a_conforming_program_checker_verifies(platform: Platform, tmp_path: Path) -> None:
    good = platform.publish(_program_problem(tmp_path / "good"), "alice")
    assert [c["passed"] for c in good.conformance] == [True]
    assert platform.ledger.find(kind="conformance.recorded", subject=good.revision)
    satisfying = {"assignment": artifact(tmp_path, "sat.txt", "1 2 -3 0\n")}
    falsifying = {"assignment": artifact(tmp_path, "unsat.txt", "-1 -2 -3 0\n")}
    verified = platform.submit("demo", satisfying, None, "bob")
    assert verified.status is Status.VERIFIED, verified.detail
    assert verified.stages[0].checkers[0].startswith("program:")
    assert platform.submit("demo", falsifying, None, "bob").status is Status.REFUTED

    # a checker that says "verified" to everything does not conform: it cannot verify
    liar = platform.publish(_program_problem(tmp_path / "liar", _verdict("verified")), "alice")
    assert [c["passed"] for c in liar.conformance] == [False]
    gated = platform.submit("demo", satisfying, None, "carol")
    assert gated.status is Status.INCONCLUSIVE, gated.detail
    assert "has not reproduced" in gated.stages[0].checks[0]["detail"]

    # one that refutes everything does not conform either, but its refutation stands
    harsh = platform.publish(_program_problem(tmp_path / "harsh", _verdict("refuted")), "alice")
    assert [c["passed"] for c in harsh.conformance] == [False]
    assert platform.submit("demo", satisfying, None, "dave").status is Status.REFUTED


def test_results_stay_readable_as_json(schema: Platform, tmp_path: Path) -> None:
    run = schema.submit("demo", _good(tmp_path), None, "bob")
    document = json.loads(json.dumps(schema.show(run.submission, "bob").to_json()))
    assert document["schema"] == "assay.submission/1"
    stage = document["runs"][0]["stages"][0]
    assert stage["mechanism"] == "checks"
    assert stage["checkers"] and stage["isolation"] and stage["started"] and stage["finished"]
    assert set(stage["inputs"]) == {"artifact:doc", "reference:schema"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "db_url", ["sqlite"], indirect=True
)  # the sandbox is not database-specific
def test_conformance_runs_the_checker_exactly_as_runs_do(
    platform: Platform, tmp_path: Path
) -> None:
    """A checker bound as one file would be seen by runs as /checker without its name (no .py,
    no executable bit): publishing refuses it with the line that says so, rather than letting
    conformance pass on the author's file while every run fails."""
    with pytest.raises(
        FolderInvalid, match=r"checks\[0\]\.checker: 'judge' is bound to a single file"
    ):
        platform.publish(_program_problem(tmp_path, by_file=True), "alice")
