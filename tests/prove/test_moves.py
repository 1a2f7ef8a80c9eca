"""The fixed proposer: its vocabulary, its order, its shapes; and retrieval's pool and exclusion.
No Agda here: these are pure functions of their inputs."""

from __future__ import annotations

import pytest

from assay._config import Config
from assay.prove import CLOSERS, Lemma, Move, explicit_arity, propose, rank, retrieve, shapes
from assay.prove._fixture import Import, enclosing, holes, imports, local_lemmas, signature

STDLIB = Config().agda_stdlib


@pytest.mark.parametrize(
    ("printed", "arity"),
    [
        ("(m n : ℕ) → m + n ≡ n + m", 2),
        ("{n : ℕ} → n ≤ n", 0),
        ("ℕ → ℕ → Bool", 2),
        ("∀ {a} {A : Set a} (xs : List A) → xs ++ [] ≡ xs", 1),
        ("(x : ℕ) {y : ℕ} (z : ℕ) → x ≡ z", 2),
        ("{A : Set} {x y : A} → x ≡ y → y ≡ x", 1),
        ("m + n ≡ n + m", 0),
        ("(unbalanced → x", None),
    ],
)
def test_explicit_arity_reads_agdas_printed_types(printed: str, arity: int | None) -> None:
    assert explicit_arity(printed) == arity


def test_a_lemma_comes_in_three_shapes() -> None:
    """Bare, applied to underscores, saturated with in-scope variables (the seed's +-comm case:
    ``+-comm _ _`` leaves unsolved constraints, ``+-comm m n`` solves)."""
    assert shapes(Lemma("+-comm", "fixture", 2), ["m", "n"]) == [
        "+-comm",
        "+-comm _ _",
        "+-comm m m",
        "+-comm m n",
        "+-comm n m",
        "+-comm n n",
    ]
    assert shapes(Lemma("≤-refl", "fixture", 0), ["n"]) == ["≤-refl"]
    assert shapes(Lemma("odd", "fixture", None), ["n"]) == ["odd"]


def test_the_proposer_is_deterministic_and_ordered() -> None:
    lemmas = [Lemma("sym", "fixture", 1), Lemma("P.+-suc", "retrieved", 2)]
    first = propose(["p", "n", "m"], lemmas)
    assert first == propose(["p", "n", "m"], lemmas)
    assert first[:5] == [
        Move("refl", "closer"),
        Move("tt", "closer"),
        Move("p", "context"),
        Move("n", "context"),
        Move("m", "context"),
    ]
    terms = [move.term for move in first]
    assert len(terms) == len(set(terms))
    assert "P.+-suc m n" in terms and "sym p" in terms
    assert tuple(terms[:2]) == CLOSERS


def test_the_vocabulary_never_emits_a_binder_or_a_hole() -> None:
    """Nothing the proposer emits can be a let, a lambda, a pragma or a hole: names applied to
    names and underscores only (the cheat shapes are out of its reach, and the judge refuses
    them anyway: tests/adversarial/test_prove_cheats.py)."""
    moves = propose(["x", "let", "λ"], [Lemma("f", "fixture", 2)])
    for move in moves:
        words = move.term.split()
        assert all(w not in ("=", "in", "→", "{!", "?") for w in words), move


FIXTURE = """module F where

open import Data.Nat using (ℕ; _+_)
open import Relation.Binary.PropositionalEquality using (_≡_; refl)
open import Data.Nat.Properties using (+-comm; +-assoc) renaming (+-suc to plus-suc)
import Data.List.Properties as L

helper : ∀ (n : ℕ) → n ≡ n
helper n = refl

plus-comm : ∀ (m n : ℕ) →
  m + n ≡ n + m
plus-comm m n = {! !}
"""


def test_the_fixture_reading() -> None:
    offset = holes(FIXTURE)[0][0]
    assert enclosing(FIXTURE, offset) == "plus-comm"
    assert signature(FIXTURE, "plus-comm") == "∀ (m n : ℕ) → m + n ≡ n + m"
    assert local_lemmas(FIXTURE, offset, "plus-comm") == ["helper"]
    found = {i.module: i for i in imports(FIXTURE)}
    assert found["Data.Nat.Properties"].names == ("+-comm", "+-assoc", "plus-suc")
    assert found["Data.List.Properties"].qualifier == "L"


def test_retrieval_excludes_the_original_and_names_it() -> None:
    """In-scope rows only, rendered through the fixture's qualifier; the original is excluded
    (and named) unless the exclusion is off, the labeled control."""
    pool = [Import("Data.Nat.Properties", "P", ())]
    statement = "∀ (m n : ℕ) → m + suc n ≡ suc (m + n)"
    kept, gone = retrieve(STDLIB, pool, statement, {"+-suc"}, k=400)
    assert gone == ["P.+-suc"]
    assert "P.+-suc" not in [r.qualified for r in kept]
    assert all(r.qualified.startswith("P.") for r in kept)
    control, none = retrieve(STDLIB, pool, statement, {"+-suc"}, exclusion=False, k=8)
    assert none == [] and "P.+-suc" in [r.qualified for r in control]
    assert retrieve(STDLIB, [], statement, set()) == ([], [])


def test_ranking_is_deterministic() -> None:
    pool = [Import("Data.List.Properties", "L", ())]
    from assay.prove._retrieval import pool as rows_of

    rows = rows_of(STDLIB, pool)
    assert rank("length (xs ++ ys) ≡ length xs + length ys", rows) == rank(
        "length (xs ++ ys) ≡ length xs + length ys", list(reversed(rows))
    )
