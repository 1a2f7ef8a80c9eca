"""Coq as a batch judge, for real: exit 0 is not enough; Print Assumptions decides green."""

from __future__ import annotations

import dataclasses

import pytest

from assay.proofs import judge, plan_for
from assay.proofs._coq_audit import coq_assumptions
from assay.sandbox import Limits, Sandbox
from tests.proofs.conftest import need

LIMITS = Limits(timeout=120, memory_mb=4096)
FALSE_STATEMENT = "1 + 1 = 3"

CHEATS = {
    "admitted": "Theorem wrong : 1 + 1 = 3.\nProof.\nAdmitted.\n",
    "admit_tactic": "Theorem wrong : 1 + 1 = 3.\nProof.\n  admit .\nAdmitted.\n",
    "axiom": "Axiom cheat : False.\nTheorem wrong : 1 + 1 = 3.\nProof. destruct cheat. Qed.\n",
    "guard_checking": (
        "Unset Guard Checking.\nFixpoint loop (n : nat) : False := loop n.\nSet Guard Checking.\n"
        "Theorem wrong : 1 + 1 = 3.\nProof. destruct (loop 0). Qed.\n"
    ),
    "positivity_checking": (
        "Unset Positivity Checking.\nInductive bad : Type := c : (bad -> False) -> bad.\n"
        "Set Positivity Checking.\n"
        "Definition self (b : bad) : False := match b with c f => f b end.\n"
        "Theorem wrong : 1 + 1 = 3.\nProof. destruct (self (c self)). Qed.\n"
    ),
}


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_cheats_are_refused_and_the_assumption_audit_agrees(name: str, sandbox: Sandbox) -> None:
    need("coqc")
    plan = plan_for("coq", CHEATS[name], statement=FALSE_STATEMENT, name="wrong")
    refused = judge("coq", plan, sandbox, LIMITS)
    assert refused.verdict is None and refused.refusals
    bypassed = judge("coq", dataclasses.replace(plan, refusals=[]), sandbox, LIMITS).verdict
    assert bypassed is not None
    assert not bypassed.green, (name, bypassed.diagnostics)
    if bypassed.exit_code == 0:  # coqc accepted it: only the audit stands between it and green
        assert bypassed.finding == "checks" and bypassed.assumptions


def test_a_real_proof_is_green(sandbox: Sandbox) -> None:
    need("coqc")
    solution = "Require Import PeanoNat.\nTheorem comm : forall n m : nat, n + m = m + n.\nProof. intros. apply Nat.add_comm. Qed.\n"
    plan = plan_for("coq", solution, statement="forall n m : nat, n + m = m + n", name="comm")
    verdict = judge("coq", plan, sandbox, LIMITS).verdict
    assert verdict is not None and verdict.green and verdict.assumptions == []
    steps = verdict.steps
    assert steps[0][:2] == ["sh", "-c"] and "AssayStatement.v || exit" in steps[0][2]
    assert steps[1] == ["/usr/bin/coqc", "-q", "-Q", ".", "", "Solution.v"]
    for step in steps[2:]:  # each trusted step first checks the files assay wrote
        assert step[:2] == ["sh", "-c"] and "sha256sum -c --status" in step[2], step
    assert "exec /usr/bin/coqchk -silent -o" in steps[3][2]


def test_a_weakened_statement_does_not_pass(sandbox: Sandbox) -> None:
    need("coqc")
    solution = "Theorem comm : forall n : nat, n + 0 = n.\nProof. intros. rewrite <- plus_n_O. reflexivity. Qed.\n"
    plan = plan_for("coq", solution, statement="forall n m : nat, n + m = m + n", name="comm")
    verdict = judge("coq", plan, sandbox, LIMITS).verdict
    assert verdict is not None and not verdict.green and verdict.finding == "does_not_check"


def test_an_allowed_axiom(sandbox: Sandbox) -> None:
    need("coqc")
    solution = (
        "Require Import Classical.\nTheorem lem : forall P : Prop, P \\/ ~ P.\n"
        "Proof. intro P. apply classic. Qed.\n"
    )
    plan = plan_for("coq", solution, statement="forall P : Prop, P \\/ ~ P", name="lem")
    strict = judge("coq", plan, sandbox, LIMITS).verdict
    assert (
        strict is not None and not strict.green and strict.assumptions == ["Classical_Prop.classic"]
    )
    allowed = judge("coq", plan, sandbox, LIMITS, allowed_axioms=["Classical_Prop.classic"]).verdict
    assert allowed is not None and allowed.green


@pytest.mark.parametrize(
    ("output", "axioms"),
    [
        ("Closed under the global context\n", []),
        ("Axioms:\nS.ax : False\n", ["S.ax"]),
        ("Axioms:\nS.a : forall n : nat,\n      n = n\nS.b : True\n", ["S.a", "S.b"]),
        (
            "Axioms:\nS.loop is assumed to be guarded.\n",
            ["unreadable: S.loop is assumed to be guarded."],
        ),
        ("", None),
    ],
)
def test_print_assumptions_parsing(output: str, axioms: list[str] | None) -> None:
    assert coq_assumptions(output) == axioms
