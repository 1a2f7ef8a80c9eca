"""The pre-filter understands comments and strings, and finds every refused shape."""

from __future__ import annotations

import pytest

from assay.proofs._agda_scan import agda_candidate_refusals, agda_refusals
from assay.proofs._coq_scan import coq_refusals
from assay.proofs._lean_scan import refusals as lean_refusals


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("x = let postulate p : ⊥ in p", ["`postulate`"]),
        ("postulate\n  cheat : ⊥", ["`postulate`"]),
        ("-- postulate in a comment\nx = tt", []),
        ("{- {- nested -} postulate -}\nx = tt", []),
        ('s = "postulate"', []),
        ("{- fake -} postulate p : ⊥", ["`postulate`"]),
        ("{-# OPTIONS --type-in-type #-}", ["the option --type-in-type"]),
        ("{-# OPTIONS --cubical #-}", ["the option --cubical"]),
        ("{-# OPTIONS --safe --without-K #-}", []),
        ("{-# TERMINATING #-}\nf x = f x", ["the TERMINATING pragma"]),
        ("{-# NO_POSITIVITY_CHECK #-}", ["the NO_POSITIVITY_CHECK pragma"]),
        ("{-# BUILTIN REWRITE _≡_ #-}", ["the BUILTIN pragma"]),
        (
            "open import Agda.Builtin.TrustMe\nx = primTrustMe",
            [
                "`primTrustMe`",
                "the import of 'Agda.Builtin.TrustMe' (a solution may import only the header's "
                "modules, agda-stdlib's --safe modules and Agda's safe builtin modules)",
            ],
        ),
        ("{-# OPTIONS --rewriting", ["an unterminated pragma at line 1, column 1"]),
    ],
)
def test_agda(source: str, found: list[str]) -> None:
    assert agda_refusals(source) == found


def test_agda_allow_list_never_admits_unsafe_options() -> None:
    assert agda_refusals("{-# OPTIONS --guardedness #-}", ["--guardedness"]) == []
    assert agda_refusals("{-# OPTIONS --type-in-type #-}", ["--type-in-type"]) == [
        "the option --type-in-type"
    ]


@pytest.mark.parametrize(
    ("term", "found"),
    [
        ("refl", []),
        ("(Data.Nat.Properties.+-comm _ _)", []),
        ("{! !}", []),
        ("refl\npostulate x : ⊥", ["`postulate`", "a line break"]),
        ("refl -- the rest", ["a line comment"]),
        ("refl {- hide", ["an unterminated comment {- at line 1, column 6"]),
        ("x; y", ["a declaration separator"]),
        ("  ", ["an empty candidate"]),
    ],
)
def test_agda_candidates(term: str, found: list[str]) -> None:
    assert agda_candidate_refusals(term) == found


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("Proof. Admitted.", ["`Admitted`"]),
        ("Proof. admit. Qed.", ["`admit`"]),
        ("Proof. admit . Qed.", ["`admit`"]),
        ("Axiom cheat : False.", ["`Axiom`"]),
        ("Parameter p : nat.", ["`Parameter`"]),
        ("Conjecture c : False.", ["`Conjecture`"]),
        ("Unset Guard Checking.", ["`Unset Guard Checking`"]),
        ("Unset   Positivity\n Checking.", ["`Unset Positivity Checking`"]),
        ("Unset Universe Checking.", ["`Unset Universe Checking`"]),
        ("#[bypass_check(guard)] Fixpoint f (n : nat) : False := f n.", ["`bypass_check`"]),
        ("(* Admitted. Axiom x. *) Proof. auto. Qed.", []),
        ('Definition s := "Admitted".', []),
        ("Proof. admitted_lemma. Qed.", []),
        ("Next Obligation. Admit Obligations.", ["`Admit`"]),
    ],
)
def test_coq(source: str, found: list[str]) -> None:
    assert coq_refusals(source) == found


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("theorem t : 1 = 2 := by sorry", ["`sorry` (a proof gap)"]),
        (
            "theorem t : 2 + 2 = 4 := by native_decide",
            ["`native_decide` (it trusts compiled code instead of the kernel)"],
        ),
        ("axiom cheat : False", ["`axiom` (an axiom)"]),
        (
            "@[implemented_by f] def g := 1",
            [
                "the attribute `implemented_by` (only tags for existing automation: simp, ext, ...)",
                "`implemented_by` (it trusts compiled code instead of the kernel)",
            ],
        ),
        ("unsafe def g := 1", ["`unsafe` (it trusts compiled code instead of the kernel)"]),
        (
            "set_option debug.skipKernelTC true",
            [
                "the option `debug.skipKernelTC` (only limits and linters may be set)",
                "`skipKernelTC` (it turns the kernel off)",
            ],
        ),
        (
            "run_tac pure ()",
            ["`run_tac` (metaprogramming: code that runs while the file is judged)"],
        ),
        ("theorem t : False := sorryAx False", ["`sorryAx` (a proof gap)"]),
        (
            "theorem t : b = true := Lean.ofReduceBool _ _ rfl",
            [
                "`ofReduceBool` (it trusts compiled code instead of the kernel)",
                "the `Lean` namespace (metaprogramming)",
            ],
        ),
        ("-- sorry\n/- axiom -/ theorem t : 1 = 1 := rfl", []),
        ('def s := "sorry"', []),
        (
            'infixl:65 " + " => HMul.hMul',
            ["`infixl` (solutions declare no notation and no instances)"],
        ),
    ],
)
def test_lean(source: str, found: list[str]) -> None:
    assert lean_refusals(source) == found
