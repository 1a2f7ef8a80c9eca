"""Sealed references, held results and hidden expected values reaching someone who must not see
them.

Found (xfail until fixed): expected values written in the contract (``answer_number``'s value,
``file_equals``'s content, ``answer_one_of``'s values) are quoted to the participant in the run's
detail and evidence after one wrong submission, though ``assay problem show`` does not show them.

Found by padv2 (xfail until fixed): with contracts public, ``problem show`` prints a
``hidden_python`` check's inline ``code`` (the kind's one promise is that its source never shows).

Found here and fixed by the lead while this was written (passing):
- a check's verifier-side path could climb out of its reference key with ``..``
  (``mine/../../references-<rid>/labels``): publishing accepted it, and since the platform lays
  every revision's references out side by side in one scratch folder, an author's check read
  another problem's sealed reference (or a host file) and its detail showed it;
- held results leaked through ``assay external record``: before the score release its error
  said "no run ... waits at stage" when an earlier stage failed, and something else when the
  run passed it and waited.

Refused correctly (passing): the detail and evidence of a check that reads a sealed reference
are withheld from the participant in submit, show and recheck, shown to a manager, and shown to
the participant once the label release passes; a WORKSPACE-side path that climbs with ``..``
(``d/../../../references-<rid>/labels``) is refused by the kinds at run time ("escapes the
workspace"); ``problem show`` names a sealed reference without its bytes; with publishing's
``_climbs`` switched off (a contract stored before that rule), the run-time defence
(``_evaluate._escape``) still refuses a climbing verifier path, to another problem's sealed
reference, a host file or the scratch root, as ``inconclusive`` without reading it (padv2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from tests.adversarial.platform_attacks import (
    SEALED_UNTIL,
    Clock,
    artifact,
    make_problem,
    opened,
    store,
)

CNF = "p cnf 3 2\n1 -2 0\n3 0\n"
"""The victim's sealed formula: its second clause, ``3``, is the secret the attack reads."""

ALL_FALSE = "v -1 -2 -3 0\n"


def _sealed_sat(sealed_until: str = SEALED_UNTIL) -> dict[str, Any]:
    return {
        "roles": [{"name": "a", "max_bytes": 1000}],
        "references": [{"key": "labels", "path": "labels.cnf", "sealed_until": sealed_until}],
        "acceptance": "The assignment satisfies the sealed formula.",
        "stages": [
            {
                "name": "held-out",
                "type": "sandbox",
                "checks": [{"kind": "sat_assignment", "artifact": "a", "formula": "labels"}],
            }
        ],
    }


def _climbing(formula: str) -> dict[str, Any]:
    return {
        "roles": [{"name": "a", "max_bytes": 1000}],
        "references": [{"key": "mine", "path": "mine"}],
        "acceptance": "whatever",
        "stages": [
            {
                "name": "s",
                "type": "sandbox",
                "checks": [{"kind": "sat_assignment", "artifact": "a", "formula": formula}],
            }
        ],
    }


def test_a_check_path_climbs_into_another_problems_sealed_reference(
    db_url: str, tmp_path: Path
) -> None:
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        victim = platform.publish(
            make_problem(
                tmp_path, problem="victim", contract=_sealed_sat(), files={"labels.cnf": CNF}
            ),
            "alice",
        )
        platform.submit("victim", {"a": artifact(tmp_path, "x", ALL_FALSE)}, None, "carol")
        formula = f"mine/../../references-{victim.revision[:16]}/labels"
        evil = make_problem(
            tmp_path, problem="evil", contract=_climbing(formula), files={"mine/x": "x"}
        )
        try:
            platform.publish(evil, "mallory")
        except InvalidInput:
            return  # refused at the door: the fix
        run = platform.submit("evil", {"a": artifact(tmp_path, "y", ALL_FALSE)}, None, "mallory")
    shown = json.dumps(run.to_json())
    assert "line 3 of the formula: 3" not in shown, "the victim's sealed clause was shown"
    assert run.status is not None and run.status.value == "error", shown


@pytest.mark.parametrize(
    "check",
    [
        {"kind": "sat_assignment", "artifact": "a", "formula": "mine/../../../../../etc/hostname"},
        {"kind": "json_schema", "artifact": "a", "schema": "mine/../../../../../etc/os-release"},
        {"kind": "sat_assignment", "artifact": "a", "formula": "mine/./../mine/../../x"},
    ],
    ids=["sat-host-file", "schema-host-file", "dot-dot-back-in"],
)
def test_publishing_refuses_a_verifier_path_that_climbs_out_of_its_key(
    tmp_path: Path, check: dict[str, Any]
) -> None:
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    contract = _climbing("mine")
    contract["stages"][0]["checks"] = [check]
    folder = make_problem(tmp_path, problem="evil", contract=contract, files={"mine/x": "x"})
    with opened(config, Clock()) as platform, pytest.raises(InvalidInput, match=r"\.\."):
        platform.publish(folder, "mallory")


RULE_AFTER_ANSWER: dict[str, Any] = {
    "acceptance": "The answer is 42, and the benchmark report says it passed.",
    "stages": [
        {
            "name": "answer",
            "type": "sandbox",
            "checks": [{"kind": "answer_equals", "value": "42"}],
        },
        {
            "name": "ci",
            "type": "external",
            "mechanism": "rule",
            "evidence_schema": {"type": "object", "required": ["passed"]},
            "supplied_by": ["ci"],
        },
    ],
}

HELD = {"release": {"results": "held", "score_release": SEALED_UNTIL}}


@pytest.mark.parametrize("who", ["alice", "mallory"], ids=["participant", "anyone"])
def test_held_results_leak_through_external_record(db_url: str, tmp_path: Path, who: str) -> None:
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(
            make_problem(tmp_path, problem="held", contract=RULE_AFTER_ANSWER, policy=HELD), "mgr"
        )
        said = {}
        for guess in ("41", "42"):
            run = platform.submit("held", {}, guess, "alice")
            assert run.status is None and run.label.startswith("Recorded; results on")
            try:
                platform.record_external(run.submission, "ci", who, evidence=b"not json")
            except InvalidInput as exc:
                said[guess] = str(exc).replace(run.submission, "SUBMISSION")
            else:
                said[guess] = "accepted"
    assert said["41"] == said["42"], f"the held result leaks: {said}"


@pytest.mark.parametrize(
    ("check", "summary", "files", "secret"),
    [
        ({"kind": "answer_number", "value": 987654}, "41", {}, "987654"),
        (
            {"kind": "answer_one_of", "values": ["Ulaanbaatar", "Ulan Bator"]},
            "Paris",
            {},
            "Ulaanbaatar",
        ),
        (
            {"kind": "file_equals", "path": "doc", "value": "SECRET-CONTENT"},
            None,
            {"doc": "guess"},
            "SECRET-CONTENT",
        ),
        (
            {"kind": "file_json", "path": "doc", "key": "k", "value": "SECRET-VALUE"},
            None,
            {"doc": '{"k": 1}'},
            "SECRET-VALUE",
        ),
    ],
    ids=["answer_number", "answer_one_of", "file_equals", "file_json"],
)
def test_inline_expected_values_are_not_quoted_to_participants(
    tmp_path: Path,
    check: dict[str, Any],
    summary: str | None,
    files: dict[str, str],
    secret: str,
) -> None:
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    contract: dict[str, Any] = {
        "roles": [{"name": "doc", "required": False, "max_bytes": 1000}],
        "acceptance": "The right value.",
        "stages": [{"name": "s", "type": "sandbox", "checks": [check]}],
    }
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, problem="p", contract=contract), "mgr")
        public = json.dumps(platform.problem("p").to_json())
        given = {role: artifact(tmp_path, role, text) for role, text in files.items()}
        run = platform.submit("p", given, summary, "alice")
        seen = json.dumps(run.to_json()) + json.dumps(
            platform.show(run.submission, "alice").to_json()
        )
    assert run.status is not None and run.status.value == "refuted"
    # either the process shows the value before anyone starts, or the runs never quote it
    assert secret in public or secret not in seen, f"{secret!r} reached the participant"


# ------------------------------------------------------------------ refused correctly


def test_a_sealed_checks_detail_is_withheld_until_it_unseals(db_url: str, tmp_path: Path) -> None:
    config = store(db_url, tmp_path)
    clock = Clock()
    with opened(config, clock) as platform:
        platform.publish(
            make_problem(tmp_path, problem="v", contract=_sealed_sat(), files={"labels.cnf": CNF}),
            "mgr",
        )
        run = platform.submit("v", {"a": artifact(tmp_path, "x", ALL_FALSE)}, None, "alice")
        assert run.status is not None and run.status.value == "refuted"
        for view in (
            run,
            platform.show(run.submission, "alice"),
            platform.recheck(run.submission, "alice"),
        ):
            text = json.dumps(view.to_json())
            assert "line 3" not in text and '"literals"' not in text, text
            assert "withheld until 2031-01-01T00:00:00Z" in text
        assert "line 3 of the formula: 3" in json.dumps(
            platform.show(run.submission, "mgr").to_json()
        )
        clock.advance(days=800)  # past the unseal date
        assert "line 3 of the formula: 3" in json.dumps(
            platform.show(run.submission, "alice").to_json()
        )


def test_problem_show_names_a_sealed_reference_without_its_bytes(tmp_path: Path) -> None:
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(
            make_problem(tmp_path, problem="v", contract=_sealed_sat(), files={"labels.cnf": CNF}),
            "mgr",
        )
        shown = json.dumps(platform.problem("v").to_json())
    assert "labels" in shown and "2031-01-01" in shown
    assert "p cnf" not in shown and "-2 0" not in shown


@pytest.mark.parametrize(
    "check",
    [
        {"kind": "file_equals", "path": "d/../../../references-RID/labels", "value": "nope"},
        {"kind": "file_contains", "path": "d/../../../references-RID/labels", "value": "3 0"},
        {"kind": "sat_assignment", "artifact": "d/../../../references-RID/labels", "formula": "f"},
    ],
    ids=["file_equals", "file_contains", "sat-artifact"],
)
def test_a_workspace_path_cannot_climb_into_another_problems_references(
    tmp_path: Path, check: dict[str, Any]
) -> None:
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    with opened(config, Clock()) as platform:
        victim = platform.publish(
            make_problem(
                tmp_path, problem="victim", contract=_sealed_sat(), files={"labels.cnf": CNF}
            ),
            "alice",
        )
        platform.submit("victim", {"a": artifact(tmp_path, "x", ALL_FALSE)}, None, "carol")
        rid = victim.revision[:16]
        climbing = {k: v.replace("RID", rid) if isinstance(v, str) else v for k, v in check.items()}
        contract = {
            "roles": [{"name": "d", "max_bytes": 1000}],
            "references": [{"key": "f", "path": "f.cnf"}],
            "acceptance": "whatever",
            "stages": [{"name": "s", "type": "sandbox", "checks": [climbing]}],
        }
        files = {"f.cnf": "p cnf 1 1\n1 0\n"}
        try:
            platform.publish(
                make_problem(tmp_path, problem="evil", contract=contract, files=files), "m"
            )
        except InvalidInput:
            return  # refused at publish: also fine
        folder = tmp_path / "dd"
        folder.mkdir()
        (folder / "x").write_text("x")
        run = platform.submit("evil", {"d": folder}, None, "mallory")
    assert run.status is not None and run.status.value == "refuted"
    assert "escapes the workspace" in run.stages[0].detail


@pytest.mark.parametrize(
    "formula",
    ["mine/../../references-RID/labels", "mine/../../../../../../etc/hostname", "mine/../.."],
    ids=["other-problem", "host-file", "scratch-root"],
)
def test_the_run_time_defence_holds_for_a_contract_stored_before_the_publish_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, formula: str
) -> None:
    """``_escape`` (run time) must refuse a climbing verifier path even when publishing let it
    through (a contract stored before ``_climbs`` existed): publishing's check is switched off
    here, so only the run-time defence stands between the check and the sealed formula."""
    from assay.platform import _folder

    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    with opened(config, Clock()) as platform:
        victim = platform.publish(
            make_problem(
                tmp_path, problem="victim", contract=_sealed_sat(), files={"labels.cnf": CNF}
            ),
            "alice",
        )
        platform.submit("victim", {"a": artifact(tmp_path, "x", ALL_FALSE)}, None, "carol")
        climbing = formula.replace("RID", victim.revision[:16])
        evil = make_problem(
            tmp_path, problem="evil", contract=_climbing(climbing), files={"mine/x": "x"}
        )
        monkeypatch.setattr(_folder, "_climbs", lambda value: False)
        platform.publish(evil, "mallory")
        run = platform.submit("evil", {"a": artifact(tmp_path, "y", ALL_FALSE)}, None, "mallory")
    shown = json.dumps(run.to_json())
    assert "line 3 of the formula" not in shown and "p cnf" not in shown
    assert run.status is not None and run.status.value == "inconclusive", shown
    assert "leaves the reference it names" in shown


def test_problem_show_never_prints_a_hidden_checks_code(tmp_path: Path) -> None:
    """``hidden_python`` exists to be withheld ("its source never shows"), but contracts are now
    public and ``problem show`` prints every spec in full: the hidden assertion, and so the
    expected value a policy then hard-codes, is on screen (and in the MCP/JSON view)."""
    hidden = "import solution\nassert solution.f(12345) == 'SECRET-EXPECTED'\n"
    contract = {
        "roles": [{"name": "sol", "max_bytes": 1000}],
        "acceptance": "f is right on inputs you are not shown.",
        "stages": [
            {"name": "s", "type": "sandbox", "checks": [{"kind": "hidden_python", "code": hidden}]}
        ],
    }
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    with opened(config, Clock()) as platform:
        try:
            platform.publish(make_problem(tmp_path, contract=contract), "mgr")
        except InvalidInput:
            return  # refused at the door (e.g. "give 'file' naming a sealed reference"): fine
        shown = json.dumps(platform.problem("demo").to_json(), default=str)
    assert "SECRET-EXPECTED" not in shown, "the hidden check's source is shown to everyone"
