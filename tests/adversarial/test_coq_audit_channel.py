"""The Coq audit must come from a channel the solution cannot write (issue 7, item 1).

A top-level ``Hypothesis``/``Variable``/``Context``/``Parameter``/``Conjecture``/``Axiom`` is an
axiom under another name; a deprecated notation (or definition) whose note is the audit's
all-clear phrase printed it into the wrapper's output, and ``1 + 1 = 3`` was verified. Every
instance here must end refuted, in the whole-file and the hole form, even with the pre-filter
bypassed; the correct proof and ``allowed_axioms`` keep working.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from assay import Config, Status
from assay.proofs import judge, plan_for
from assay.proofs._judges import refusals_for
from assay.sandbox import Limits, Sandbox
from tests.helpers import run_kind
from tests.proofs.conftest import need

pytestmark = pytest.mark.slow
PHRASE = "Closed under the global context"
LIMITS = Limits(timeout=120, memory_mb=4096)


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


# Each declares an assumption (under some name) and makes the wrapper's use of the answer print
# the all-clear phrase.
ASSUMPTIONS = {
    "hypothesis": "Hypothesis cheat : 1 + 1 = 3.",
    "variable": "Variable cheat : 1 + 1 = 3.",
    "context": "Context (cheat : 1 + 1 = 3).",
    "hypotheses": "Hypotheses (junk : True) (cheat : 1 + 1 = 3).",
    "parameter": "Parameter cheat : 1 + 1 = 3.",
    "conjecture": "Conjecture cheat : 1 + 1 = 3.",
    "axiom": "Axiom cheat : 1 + 1 = 3.",
}
PRINTERS = {
    "deprecated_notation": f'#[deprecated(note="{PHRASE}")]\nNotation wrong := cheat.\n',
    "plain": "Definition wrong : 1 + 1 = 3 := cheat.\n",
}
PRINTERS_MORE = {
    "deprecated_since": f'#[deprecated(since="{PHRASE}", note="{PHRASE}")]\nNotation wrong := cheat.\n',
}
MESSAGES = {
    "fail": f"Fail Check {PHRASE.replace(' ', '_')}.\nDefinition wrong : 1 + 1 = 3 := cheat.\n",
    "idtac": (
        f'Definition wrong : 1 + 1 = 3.\nProof. idtac "{PHRASE}". exact cheat. Qed.\n'
        f'Goal True. idtac "{PHRASE}". exact I. Qed.\n'
    ),
    "warning": (
        f'#[deprecated(note="{PHRASE}")]\nNotation phrase := I.\nCheck phrase.\n'
        "Definition wrong : 1 + 1 = 3 := cheat.\n"
    ),
}
SOLUTIONS = {
    **{f"{a}-{p}": f"{ASSUMPTIONS[a]}\n{PRINTERS[p]}" for a in ASSUMPTIONS for p in PRINTERS},
    **{
        f"hypothesis-{p}": f"{ASSUMPTIONS['hypothesis']}\n{PRINTERS_MORE[p]}" for p in PRINTERS_MORE
    },
    **{f"hypothesis-{m}": f"{ASSUMPTIONS['hypothesis']}\n{MESSAGES[m]}" for m in MESSAGES},
    "module_shadow": (
        "Module Classical_Prop.\nHypothesis classic : 1 + 1 = 3.\nEnd Classical_Prop.\n"
        "Definition wrong : 1 + 1 = 3 := Classical_Prop.classic.\n"
    ),
}


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
def test_a_declared_assumption_is_never_verified(
    name: str, sandbox: Sandbox, tmp_path: Path
) -> None:
    """Through the kind (pre-filter included) and through the judge with the pre-filter off."""
    need("coqc")
    solution = SOLUTIONS[name]
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "Wrong.v").write_text(solution)
    outcome = run_kind(
        "coq",
        file="Wrong.v",
        statement="1 + 1 = 3",
        name="wrong",
        workspace=ws,
        config=Config(judgment_cache="off"),
        allowed_axioms=["Classical_Prop.classic"],
    )
    assert outcome.status is Status.REFUTED, (name, outcome.detail)
    plan = plan_for("coq", solution, statement="1 + 1 = 3", name="wrong")
    bypassed = judge("coq", dataclasses.replace(plan, refusals=[]), sandbox, LIMITS).verdict
    assert bypassed is not None and not bypassed.green, (name, bypassed)


HOLE_ANSWERS = {
    "abort_hypothesis": (
        f'Abort.\nHypothesis cheat : 1 + 1 = 3.\n#[deprecated(note="{PHRASE}")]\n'
        "Notation two := cheat.\nGoal True. exact I."
    ),
    "abort_variable_definition": (
        "Abort.\nVariable cheat : 1 + 1 = 3.\nDefinition two : 1 + 1 = 3 := cheat.\n"
        f'Goal True. idtac "{PHRASE}". exact I.'
    ),
    "abort_context": (
        "Abort.\nContext (cheat : 1 + 1 = 3).\n"
        f'#[deprecated(note="{PHRASE}")]\nNotation two := cheat.\nGoal True. exact I.'
    ),
}


@pytest.mark.parametrize("name", sorted(HOLE_ANSWERS))
def test_a_hole_answer_cannot_declare_its_way_out(name: str, tmp_path: Path) -> None:
    need("coqc")
    (tmp_path / "Hole.v").write_text("Theorem two : 1 + 1 = 3.\nProof. {! !} Qed.\n")
    outcome = run_kind(
        "coq",
        obligation="Hole.v",
        statement="1 + 1 = 3",
        name="two",
        answer=HOLE_ANSWERS[name],
        base_dir=tmp_path,
        config=Config(judgment_cache="off"),
    )
    assert outcome.status is Status.REFUTED, (name, outcome.detail)


def test_the_correct_proof_and_allowed_axioms_still_work(sandbox: Sandbox) -> None:
    need("coqc")
    good = "Theorem two : 1 + 1 = 2.\nProof. reflexivity. Qed.\n"
    verdict = judge(
        "coq", plan_for("coq", good, statement="1 + 1 = 2", name="two"), sandbox, LIMITS
    ).verdict
    assert verdict is not None and verdict.green and verdict.assumptions == [], verdict
    classical = (
        "Require Import Classical.\nTheorem lem : forall P : Prop, P \\/ ~ P.\n"
        "Proof. intro P. apply classic. Qed.\n"
    )
    plan = plan_for("coq", classical, statement="forall P : Prop, P \\/ ~ P", name="lem")
    strict = judge("coq", plan, sandbox, LIMITS).verdict
    assert strict is not None and not strict.green
    allowed = judge("coq", plan, sandbox, LIMITS, allowed_axioms=["Classical_Prop.classic"])
    assert allowed.verdict is not None and allowed.verdict.green, allowed.verdict


def test_a_solution_that_writes_into_the_trusted_files_is_not_verified(sandbox: Sandbox) -> None:
    """``Print Universes "file"`` writes any file in the judgment folder; it gets no verdict."""
    need("coqc")
    for target in ("AssayGoal.v", "AssayStatement.vo", "AssayAudit.v"):
        solution = f'Print Universes "{target}".\nTheorem two : 1 + 1 = 3.\nAdmitted.\n'
        plan = plan_for("coq", solution, statement="1 + 1 = 3", name="two")
        verdict = judge("coq", dataclasses.replace(plan, refusals=[]), sandbox, LIMITS).verdict
        assert verdict is not None and not verdict.green, (target, verdict)


@pytest.mark.parametrize(
    "command",
    [
        'Print Universes "AssayGoal.v".',
        'Print Sorted Universes "x".',
        'Print Universes Subgraph(Coq.Init.Logic.eq.u0) "AssayGoal.v".',
        'Redirect "AssayAudit" Print nat.',
        'Cd "/tmp".',
        'Declare ML Module "ltac2_plugin".',
        'Require Extraction.\nExtraction "AssayGoal.v" nat.',
        "Require Extraction.\nExtraction Library Datatypes.",
    ],
)
def test_commands_that_write_files_or_load_plugins_are_refused(command: str) -> None:
    assert refusals_for("coq", f"{command}\nTheorem two : 1 + 1 = 2. Proof. reflexivity. Qed.\n")


KERNEL_FLAGS = {
    "bypass_guard": (
        "#[bypass_check(guard)]\nFixpoint loop (n : nat) : False := loop n.\n"
        "Definition wrong : 1 + 1 = 3 := False_rect _ (loop 0).\n"
    ),
    "bypass_positivity": (
        "#[bypass_check(positivity)]\nInductive bad : Type := c : (bad -> False) -> bad.\n"
        "Definition self (b : bad) : False := match b with c f => f b end.\n"
        "Definition wrong : 1 + 1 = 3 := False_rect _ (self (c self)).\n"
    ),
    "unset_universe_checking": (
        "Unset Universe Checking.\nDefinition tt := Type : Type.\nSet Universe Checking.\n"
        "Hypothesis cheat : 1 + 1 = 3.\nDefinition wrong := cheat.\n"
    ),
}


@pytest.mark.parametrize("name", sorted(KERNEL_FLAGS))
def test_kernel_flags_turned_off_are_seen_by_coqchk(name: str, sandbox: Sandbox) -> None:
    """With the scan bypassed: coqchk's summary names the unsafe constant, so never green."""
    need("coqc")
    plan = plan_for("coq", KERNEL_FLAGS[name], statement="1 + 1 = 3", name="wrong")
    quick = Limits(timeout=60, memory_mb=4096)
    verdict = judge("coq", dataclasses.replace(plan, refusals=[]), sandbox, quick).verdict
    assert verdict is not None and not verdict.green, verdict
    if verdict.finding == "checks":
        assert any("Solution." in entry for entry in verdict.assumptions), verdict.assumptions
