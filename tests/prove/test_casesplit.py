"""The case-split move (``--case-split``): beyond term mode, with Agda still the only judge.

- a structural induction (``+-identityʳ : ∀ n → n + 0 ≡ n``) is solved only with the switch, by
  a split on ``n`` and the recursive shape ``cong suc (+-identityʳ n)``;
- false statements are never solved with the switch on, whatever the split opens;
- the ledger records the split (the variable, the clauses) and is reproducible byte for byte;
- a variable name that is not one identifier is refused before Agda sees it;
- ``Proved`` replays a split step and refuses one that is not a split of the hole's clause.

Builtin-only files (no agda-stdlib): a judgment costs well under a second on an idle machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.proofs import AgdaLane, Judging, LaneInputError
from assay.prove import Meta, Settings, Step, prove_text, replay
from assay.prove._casesplit import (
    Split,
    apply_split,
    clause_span,
    recursive_moves,
    render,
    wrappers,
)
from assay.prove._fixture import holes
from assay.sandbox import Sandbox

HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality\n"
CONG = "cong : {A B : Set} (f : A → B) {x y : A} → x ≡ y → f x ≡ f y\ncong f refl = refl\n"
IDENTITY = (
    f"module Identity where\n\n{HEADER}\n{CONG}\n"
    "+-identityʳ : ∀ (n : Nat) → n + 0 ≡ n\n+-identityʳ n = {! !}\n"
)
CANARIES = {
    "FalseSuc": f"module FalseSuc where\n\n{HEADER}\n{CONG}\nbad : ∀ (n : Nat) → n + 0 ≡ suc n\n"
    "bad n = {! !}\n",
    "FalseZero": f"module FalseZero where\n\n{HEADER}\n{CONG}\nbad : ∀ (n : Nat) → n + n ≡ n\n"
    "bad n = {! !}\n",
    "FalseAll": f"module FalseAll where\n\n{HEADER}\n{CONG}\nbad : (m n : Nat) → m ≡ n\n"
    "bad m n = {! !}\n",
}


@pytest.mark.slow
def test_a_structural_induction_is_solved_only_with_the_switch(judging: Judging) -> None:
    off = prove_text("Identity.agda", IDENTITY, Meta(), Settings(judging))
    assert off.status == "unsolved", off
    assert all(t.source != "split" for t in off.tried)
    on = prove_text("Identity.agda", IDENTITY, Meta(), Settings(judging, case_split=True))
    assert on.status == "solved", on.reason
    assert on.proof is not None
    assert [(s.term, s.clauses) for s in on.proof] == [
        ("n", ["+-identityʳ zero = {! !}", "+-identityʳ (suc n) = {! !}"]),
        ("refl", None),
        ("cong suc (+-identityʳ n)", None),
    ]
    split = next(t for t in on.tried if t.source == "split")
    assert (split.term, split.outcome) == ("n", "progress")
    assert split.clauses == ["+-identityʳ zero = {! !}", "+-identityʳ (suc n) = {! !}"]
    again = prove_text("Identity.agda", IDENTITY, Meta(), Settings(judging, case_split=True))
    first, second = on.to_json(), again.to_json()
    first.pop("timing")
    second.pop("timing")
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


@pytest.mark.slow
def test_a_hole_some_term_closes_is_never_split(judging: Judging) -> None:
    """Term moves come first, so what the fixed space solves is solved by the same proof and
    the same judgments with the switch on: the three sweeps stay comparable."""
    easy = (
        f"module Easy where\n\n{HEADER}\n{CONG}\n"
        "back : (m n : Nat) → m ≡ n → m ≡ n\nback m n p = {! !}\n"
    )
    off = prove_text("Easy.agda", easy, Meta(), Settings(judging)).to_json()
    on = prove_text("Easy.agda", easy, Meta(), Settings(judging, case_split=True)).to_json()
    off.pop("timing")
    on.pop("timing")
    assert off["status"] == "solved"
    assert json.dumps(off, sort_keys=True) == json.dumps(on, sort_keys=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CANARIES))
def test_a_false_statement_is_never_solved_with_the_switch_on(name: str, judging: Judging) -> None:
    row = prove_text(
        f"{name}.agda", CANARIES[name], Meta(canary=True), Settings(judging, case_split=True)
    )
    assert row.status == "unsolved", row
    assert row.proof is None
    assert all(t.outcome != "solved" for t in row.tried)
    assert sum(t.source == "split" and t.outcome == "progress" for t in row.tried) <= 1


@pytest.mark.parametrize("name", ["", "a b", "n)", "(n", "{n}", "n;", "x.y", 'n"', "n\n", "\x00"])
def test_a_bad_variable_name_is_refused_before_agda_sees_it(name: str, tmp_path: Path) -> None:
    file = tmp_path / "Identity.agda"
    file.write_text(IDENTITY)
    lane = AgdaLane(Sandbox(backend="bwrap"))
    with pytest.raises(LaneInputError, match="not a variable name"):
        lane.make_case(file, 10, 17, name)
    assert lane._process is None  # no Agda was started, so nothing reached one
    lane.close()


def test_the_split_replaces_only_a_one_line_clause_ending_in_its_hole() -> None:
    hole = holes(IDENTITY)[0]
    span = clause_span(IDENTITY, hole)
    assert span is not None and IDENTITY[span[0] : span[1]] == "+-identityʳ n = {! !}"
    assert clause_span("f n = g {! !}\n", (8, 13)) is None  # the hole is not the whole side
    assert clause_span("f n = {! !}\n  where x = 1\n", (6, 11)) is None  # a where block
    assert clause_span("  f n = {! !}\n", (8, 13)) is None  # indented: not a top-level clause


def test_only_clauses_of_the_same_definition_with_holes_are_rendered() -> None:
    assert render(["f zero = ?", "f (suc n) = ?"], "f") == ("f zero = {! !}", "f (suc n) = {! !}")
    assert render(["f ()"], "f") == ("f ()",)
    assert render(["g zero = ?"], "f") is None  # another definition
    assert render(["f zero = refl"], "f") is None  # a right-hand side that is not a hole
    assert render(["f zero = ?\npostulate x : ⊥"], "f") is None
    assert render([], "f") is None


def test_proved_replays_a_split_and_refuses_a_forged_one() -> None:
    hole = holes(IDENTITY)[0]
    span = clause_span(IDENTITY, hole)
    assert span is not None
    good = Split("n", span, ("+-identityʳ zero = {! !}", "+-identityʳ (suc n) = {! !}"))
    split_text = replay(IDENTITY, (Step(hole, 10, 17, "n", good),))
    assert "+-identityʳ (suc n) = {! !}\n" in split_text
    assert split_text.startswith(IDENTITY[: span[0]])  # the statement is untouched
    forged = [
        Split("n", span, ("+-identityʳ zero = refl",)),  # a right-hand side slipped in
        Split("n", span, ("other zero = {! !}",)),  # another definition's clause
        Split("n", (0, span[1]), good.clauses),  # a span that eats the statement
    ]
    for split in forged:
        with pytest.raises(ValueError, match="the split on"):
            replay(IDENTITY, (Step(hole, 10, 17, "n", split),))
    with pytest.raises(ValueError, match="the split on"):
        apply_split(IDENTITY, hole, None, good)


def test_the_recursive_shapes_are_a_written_down_vocabulary() -> None:
    assert wrappers("f (suc m) n = {! !}", ["m", "n"], "suc (m + suc n) ≡ suc (suc (m + n))") == [
        ("suc", "suc")
    ]
    assert wrappers("f (x ∷ xs) = {! !}", ["x", "xs"], "x ∷ map id xs ≡ x ∷ xs") == [
        ("∷", "(_∷_ x)")
    ]
    assert wrappers("f (suc m) = {! !}", ["m"], "m ≡ m") == []  # the goal does not mention it
    terms = [m.term for m in recursive_moves("f", 1, ["n"], ["suc"])]
    assert terms == ["f n", "cong suc (f n)"]
    assert recursive_moves("f", 0, ["n"], ["suc"]) == []
    assert all(m.source == "recursive" for m in recursive_moves("f", 2, ["m", "n"], ["suc"]))
