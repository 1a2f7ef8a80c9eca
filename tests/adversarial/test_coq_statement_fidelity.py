"""The trusted Coq statement means what the author wrote, whatever the solution declares (issue 7,
item 2).

A required library's global instances, coercions, canonical structures, hints, options and
arguments reach the requiring file, so a wrapper that elaborates the statement after loading the
solution let the solution choose its meaning (``x == y`` read with a setoid where everything is
equal). The statement is now compiled alone, before the solution, and the solution's term is
checked against it by conversion. Every instance below proves a *different* statement under the
trusted statement's name; none may be verified. The solution may even ``Require Import`` the
compiled statement to reuse the author's definitions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Config, Status
from tests.helpers import run_kind
from tests.proofs.conftest import need

pytestmark = pytest.mark.slow

SETOID_HEADER = (
    "From Coq Require Import SetoidClass.\n"
    "#[global] Instance nat_setoid : Setoid nat := {| equiv := @eq nat |}."
)
MAGMA_HEADER = (
    "Structure magma := Magma { carrier :> Type; op : carrier -> carrier -> carrier }.\n"
    "Canonical nat_add := Magma nat Nat.add."
)
BOOL_HEADER = "Coercion holds (b : bool) : Prop := b = true."
TRIV = (
    "From Coq Require Import SetoidClass.\n"
    "Definition triv (x y : nat) : Prop := True.\n"
    "#[global] Instance triv_equiv : Equivalence triv.\n"
    "Proof. split; red; unfold triv; auto. Qed.\n"
)
WRONG_SETOID = "Theorem wrong : forall x y : nat, x == y. Proof. intros. exact I. Qed.\n"

# name -> (header, trusted statement (false), solution proving something else as `wrong`)
ATTACKS = {
    "global_instance": (
        SETOID_HEADER,
        "forall x y : nat, x == y",
        f"{TRIV}#[global] Instance cheat : Setoid nat | 0 := {{| equiv := triv |}}.\n"
        f"{WRONG_SETOID}",
    ),
    "instance_over_the_authors_class": (
        SETOID_HEADER,
        "forall x y : nat, x == y",
        f"Require Import AssayStatement.\n{TRIV}"
        f"#[global] Instance cheat : Setoid nat | 0 := {{| equiv := triv |}}.\n{WRONG_SETOID}",
    ),
    "hint_extern_instance": (
        SETOID_HEADER,
        "forall x y : nat, x == y",
        f"Require Import AssayStatement.\n{TRIV}"
        "Definition cheat : Setoid nat := {| equiv := triv |}.\n"
        "#[global] Hint Extern 0 (Setoid nat) => exact cheat : typeclass_instances.\n"
        f"{WRONG_SETOID}",
    ),
    "canonical_structure": (
        MAGMA_HEADER,
        "op _ 2 3 = 6",
        "Require Import AssayStatement.\nCanonical nat_mul := Magma nat Nat.mul.\n"
        "Theorem wrong : op nat_mul 2 3 = 6. Proof. reflexivity. Qed.\n",
    ),
    "coercion": (
        BOOL_HEADER,
        "forall b : bool, b",
        "Coercion anything (b : bool) : Prop := True.\n"
        "Theorem wrong : forall b : bool, b. Proof. intros. exact I. Qed.\n",
    ),
    "notation_in_export_module": (
        "",
        "2 + 3 = 6",
        'Module Export Cheat.\nNotation "x + y" := (Nat.mul x y) : nat_scope.\n'
        "End Cheat.\nTheorem wrong : 2 + 3 = 6. Proof. reflexivity. Qed.\n",
    ),
    "global_open_scope": (
        "",
        "2 + 3 = 6",
        'Declare Scope cheat_scope.\nNotation "x + y" := (Nat.mul x y) : cheat_scope.\n'
        "Global Open Scope cheat_scope.\n"
        "Theorem wrong : 2 + 3 = 6. Proof. reflexivity. Qed.\n",
    ),
    "global_arguments_scope": (
        "",
        "Nat.add 2 3 = 6",
        "Declare Scope cheat_scope.\nDelimit Scope cheat_scope with cheat.\n"
        'Notation "3" := 4 : cheat_scope.\n'
        "Global Arguments Nat.add (_ _)%cheat_scope.\n"
        "Theorem wrong : Nat.add 2 3 = 6. Proof. reflexivity. Qed.\n",
    ),
    "redefined_name": (
        "",
        "forall n : nat, n + 1 = n",
        "Definition nat := unit.\nDefinition plus (a b : unit) := tt.\n"
        "Theorem wrong : forall n : nat, plus n n = n. Proof. intros []. reflexivity. Qed.\n",
    ),
    "module_named_like_the_statement": (
        "",
        "1 + 1 = 3",
        "Module Export AssayStatement.\nDefinition assay_statement := True.\n"
        "End AssayStatement.\nDefinition wrong : AssayStatement.assay_statement := I.\n",
    ),
    "require_export_then_shadow": (
        "",
        "1 + 1 = 3",
        "Require Export AssayStatement.\nModule AssayStatement.\n"
        "Definition assay_statement := True.\nEnd AssayStatement.\n"
        "Definition wrong : AssayStatement.assay_statement := I.\n",
    ),
    "local_instance": (
        SETOID_HEADER,
        "forall x y : nat, x == y",
        f"Require Import AssayStatement.\n{TRIV}"
        f"Local Instance cheat : Setoid nat | 0 := {{| equiv := triv |}}.\n{WRONG_SETOID}",
    ),
    "export_instance_in_module": (
        SETOID_HEADER,
        "forall x y : nat, x == y",
        f"Require Import AssayStatement.\n{TRIV}Module Export Cheat.\n"
        f"#[export] Instance cheat : Setoid nat | 0 := {{| equiv := triv |}}.\nEnd Cheat.\n"
        f"{WRONG_SETOID}",
    ),
}


def _judge(tmp_path: Path, header: str, statement: str, solution: str) -> tuple[Status, str]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "Solution.v").write_text(solution)
    outcome = run_kind(
        "coq",
        file="Solution.v",
        header=header,
        statement=statement,
        name="wrong",
        workspace=ws,
        config=Config(judgment_cache="off"),
    )
    return outcome.status, outcome.detail


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_the_solution_cannot_change_what_the_statement_means(name: str, tmp_path: Path) -> None:
    need("coqc")
    status, detail = _judge(tmp_path, *ATTACKS[name])
    assert status is Status.REFUTED, (name, detail)


@pytest.mark.parametrize(
    ("header", "statement", "solution"),
    [
        (
            SETOID_HEADER,
            "forall x : nat, x == x",
            "Theorem wrong : forall x : nat, x = x. Proof. reflexivity. Qed.\n",
        ),
        (
            MAGMA_HEADER,
            "op _ 2 3 = 5",
            "Require Import AssayStatement.\nTheorem wrong : op _ 2 3 = 5. Proof. reflexivity. Qed.\n",
        ),
        (
            BOOL_HEADER,
            "forall b : bool, orb b true",
            "Theorem wrong : forall b : bool, (b || true)%bool = true.\n"
            "Proof. intros []; reflexivity. Qed.\n",
        ),
    ],
)
def test_an_honest_proof_of_the_same_statement_is_verified(
    header: str, statement: str, solution: str, tmp_path: Path
) -> None:
    """Conversion, not syntax: the author's definitions may be unfolded by the solution."""
    need("coqc")
    status, detail = _judge(tmp_path, header, statement, solution)
    assert status is Status.VERIFIED, detail


def test_a_statement_that_does_not_compile_alone_is_the_authors_error(tmp_path: Path) -> None:
    """Without the solution's coercion the statement is ill-typed: the task is broken (error),
    and the solution cannot make it mean something by declaring the coercion itself."""
    need("coqc")
    solution = (
        "Coercion anything (n : nat) : Prop := True.\n"
        "Theorem wrong : forall n : nat, n. Proof. intros. exact I. Qed.\n"
    )
    status, detail = _judge(tmp_path, "", "forall n : nat, n", solution)
    assert status is Status.ERROR and "trusted statement" in detail, detail
