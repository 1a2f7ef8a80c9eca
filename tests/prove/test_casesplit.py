"""The case-split move (``--case-split``): beyond term mode, with Agda still the only judge.

- a structural induction (``+-identityʳ : ∀ n → n + 0 ≡ n``) is solved only with the switch, by
  a split on ``n`` and the recursive shape ``cong suc (+-identityʳ n)``;
- false statements are never solved with the switch on, whatever the split opens;
- the ledger records the split (the variable, the clauses) and is reproducible byte for byte;
- a variable name that is not one identifier is refused before Agda sees it;
- ``Proved`` replays a split step and refuses one that is not a split of the hole's clause;
- a split whose clauses are all absurd solves the obligation, through ``Proved`` only (the batch
  check, not the reader, decides that a clause without a right-hand side is absurd);
- a mixfix clause (``n ! m = {! !}``) is its operator's (``_!_``): the split budget and the
  recursive shapes are keyed on it, and an induction over it is solved; clauses the reader cannot
  read are no definition's (never guessed).

Builtin-only files (no agda-stdlib): a judgment costs well under a second on an idle machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.proofs import AgdaLane, Judging, LaneInputError, Terms, judge_source
from assay.prove import Meta, Proved, Settings, Step, prove_text, replay
from assay.prove._casesplit import (
    Split,
    _accepted,
    apply_split,
    clause_span,
    common_head,
    recursive_moves,
    render,
    wrappers,
)
from assay.prove._fixture import clause_of, definitions, enclosing, holes, read_clause
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


ABSURD = {
    # a hidden argument: Agda writes the absurd pattern in braces
    "hidden": (
        "noconf : {p : zero ≡ suc zero} → zero ≡ suc (suc zero)\nnoconf {p} = {! !}\n",
        ("p", ["noconf {()}"]),
    ),
    # an empty family: no constructor of Fin zero, the clause keeps its other pattern
    "empty-family": (
        "data Fin : Nat → Set where\n  fz : {n : Nat} → Fin (suc n)\n"
        "  fs : {n : Nat} → Fin n → Fin (suc n)\n\n"
        "noconf : Fin zero → (m : Nat) → m ≡ suc m\nnoconf f m = {! !}\n",
        ("f", ["noconf () m"]),
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ABSURD))
def test_a_split_into_absurd_clauses_is_a_solve_with_the_evidence(
    name: str, judging: Judging
) -> None:
    """No hole is left after the split: it is committed because the batch check of the split
    file is green, and the solve is claimed through ``Proved`` (replayed, green final bytes)."""
    body, split = ABSURD[name]
    text = f"module Absurd where\n\n{HEADER}\n{body}"
    off = prove_text("Absurd.agda", text, Meta(), Settings(judging))
    assert off.status == "unsolved", off
    row = prove_text("Absurd.agda", text, Meta(), Settings(judging, case_split=True))
    assert row.status == "solved", row.tried
    assert row.proof is not None
    assert [(s.term, s.clauses) for s in row.proof] == [split]
    tried = next(t for t in row.tried if t.source == "split")
    assert (tried.term, tried.outcome, tried.clauses) == (split[0], "solved", split[1])


@pytest.mark.slow
def test_a_clause_without_a_right_hand_side_is_the_judges_call(judging: Judging) -> None:
    """The reader does not decide what is absurd: it passes ``bad p`` (no right-hand side, no
    absurd pattern), and Agda's batch check refuses the file, so the split is not committed
    and no ``Proved`` can be built from it."""
    text = (
        f"module NotAbsurd where\n\n{HEADER}\nbad : (p : Nat) → zero ≡ suc zero\nbad p = {{! !}}\n"
    )
    hole = holes(text)[0]
    span = clause_span(text, hole)
    assert span is not None
    assert render(["bad p"], "bad") == ("bad p",)
    split = Split("p", span, ("bad p",))
    after = replay(text, (Step(hole, 8, 9, "p", split),))
    assert holes(after) == []
    attempt = judge_source("agda", after, Terms(stdlib=True), judging)
    assert attempt.status != "solved", attempt.diagnostics
    assert not _accepted(attempt, after)
    assert attempt.verdict is not None
    with pytest.raises(ValueError, match="not green"):
        Proved(text, (Step(hole, 8, 9, "p", split),), after, attempt.verdict)


MIXFIX = (
    f"module Mixfix where\n\n{HEADER}\n{CONG}\n_!_ : (n m : Nat) → n + 0 ≡ n\nn ! m = {{! !}}\n"
)


@pytest.mark.slow
def test_an_induction_over_a_mixfix_definition_is_solved(judging: Judging) -> None:
    """``n ! m``'s definition is ``_!_``: Agda's split prints ``suc n ! m`` (no brackets), the
    recursive shapes call ``_!_`` and wrap it in ``cong suc`` (the constructor of the
    operator's first argument)."""
    row = prove_text("Mixfix.agda", MIXFIX, Meta(), Settings(judging, case_split=True))
    assert row.status == "solved", row.tried
    assert row.proof is not None
    assert [(s.term, s.clauses) for s in row.proof] == [
        ("n", ["zero ! m = {! !}", "suc n ! m = {! !}"]),
        ("refl", None),
        ("cong suc (_!_ n n)", None),
    ]
    assert {t.term for t in row.tried if t.source == "recursive"} >= {"_!_ n m", "_!_ n n"}


DECLARED = (
    "_!_ : Nat → Nat → Nat\nif_then_else_ : Bool → Nat → Nat → Nat\n_=?_ : Nat → Nat → Bool\n"
)
CLAUSES = {
    "m ! n = {! !}": "_!_",
    "suc m ! suc n = {! !}": "_!_",
    "_!_ m n = {! !}": "_!_",
    "if b then x else y = {! !}": "if_then_else_",
    "m =? n = {! !}": "_=?_",
    "f (suc n) {p = ()} = {! !}": "f",
    "... | m = {! !}": None,  # a with clause's continuation: no definition read
    "f n with n": None,
    "f n rewrite p = {! !}": None,
    "m ! n ! k = {! !}": None,  # not one reading of `_!_`
    "(m ! n) k = {! !}": None,  # an operator applied to more: not read
    "f x@(suc n) = {! !}": None,  # an as-pattern: not read
    "f .(n) = {! !}": "f",  # a dot pattern, as Agda prints it: one atom
    "f g.(n) = {! !}": None,  # a word glued to a bracket: not read
    'f "a" = {! !}': None,
    "g n = {! !}": None,  # no signature above names g
    "f x : Nat": None,  # a signature's colon: not a pattern
    "infix 4 ! x = {! !}": None,  # a declaration's keyword: not a pattern
}


@pytest.mark.parametrize("line", sorted(CLAUSES))
def test_a_clause_is_the_definition_its_shape_names_or_none(line: str) -> None:
    text = f"f : Nat → Nat\n{DECLARED}{line}\n"
    found = read_clause(line)
    assert (None if found is None else clause_of(found.atoms, definitions(text, len(text)))) == (
        CLAUSES[line]
    )
    assert enclosing(text, len(text)) == CLAUSES[line]


def test_a_clause_naming_two_definitions_is_not_guessed() -> None:
    """``m ! n`` with a top-level ``m`` declared reads as ``m``'s clause or ``_!_``'s: neither
    is chosen."""
    text = "m : Nat\nm = zero\n_!_ : Nat → Nat → Nat\nm ! n = {! !}\n"
    assert enclosing(text, holes(text)[0][0]) is None
    two_lines = "bad\n  : (n : Nat) → n ≡ n\nbad n = {! !}\n"
    assert enclosing(two_lines, holes(two_lines)[0][0]) == "bad"
    in_a_block = "f : Nat\nf = zero\nprivate\n  g : Nat\n  g = {! !}\n"
    assert enclosing(in_a_block, holes(in_a_block)[0][0]) is None  # never `f`


def test_the_clauses_of_a_mixfix_split_are_its_operators() -> None:
    assert render(["m ! zero = ?", "m ! suc n = ?"], "_!_") == (
        "m ! zero = {! !}",
        "m ! suc n = {! !}",
    )
    assert render(["noconf {()}"], "noconf") == ("noconf {()}",)
    assert render(["noconf () m"], "noconf") == ("noconf () m",)
    assert render(["zero ! n = ?"], "f") is None  # another definition's clause
    assert render(["m ! n = ?"], "_!_", ["m"]) is None  # `m`'s or `_!_`'s: not guessed
    assert wrappers("suc n ! m = {! !}", ["n", "m"], "suc (n + 0) ≡ suc n", "_!_") == [
        ("suc", "suc")
    ]
    assert wrappers("suc n ! m = {! !}", ["n", "m"], "suc (n + 0) ≡ suc n") == []


@pytest.mark.parametrize(
    ("goal", "head"),
    [
        ("suc (length (xs ++ ys)) ≡ suc (length xs + length ys)", "suc"),
        ("suc (m + suc n) ≡ suc (suc (m + n))", "suc"),
        # as Agda 2.6.4.3 lays out a long normalised goal (agda-stdlib's length is a foldr)
        (
            "suc (foldr (λ _ → suc) 0 (xs ++ ys)) ≡\nsuc\n(foldr (λ _ → suc) 0 xs +\n foldr (λ _ → suc) 0 ys)",
            "suc",
        ),
        ("length (map f xs) ≡ length xs", "length"),
        ("x ∷ map id xs ≡ x ∷ xs", None),  # an operator's application: the pattern rule's
        ("suc m ≡ n", None),  # one side only
        ("f a b ≡ f a c", None),  # more than one argument
        ("(suc a) ≡ (suc b)", None),  # a bracketed side: not read
        ("a ≡ b ≡ c", None),  # not one equation
    ],
)
def test_the_common_head_of_a_goal_is_read_or_refused(goal: str, head: str | None) -> None:
    assert common_head(goal) == head


LISTS = (
    "open import Agda.Builtin.List\n\n"
    "length : List Nat → Nat\nlength [] = zero\nlength (x ∷ xs) = suc (length xs)\n\n"
    "_++_ : List Nat → List Nat → List Nat\n[] ++ ys = ys\n(x ∷ xs) ++ ys = x ∷ (xs ++ ys)\n\n"
)
LENGTH = {
    "true": "len-app : (xs ys : List Nat) → length (xs ++ ys) ≡ length xs + length ys\n"
    "len-app xs ys = {! !}\n",
    "canary": "len-app : (xs ys : List Nat) → length (xs ++ ys) ≡ suc (length xs + length ys)\n"
    "len-app xs ys = {! !}\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LENGTH))
def test_cong_of_the_goals_common_head_reaches_an_induction_over_lists(
    name: str, judging: Judging
) -> None:
    """The list pattern ``(x ∷ xs)`` binds no ``suc``; the goal's two sides share it
    (``suc (length (xs ++ ys)) ≡ suc (length xs + length ys)``), so ``cong suc (len-app xs ys)``
    is proposed. The false variant (a canary) is never solved."""
    text = f"module Lengths where\n\n{HEADER}{LISTS}{CONG}\n{LENGTH[name]}"
    row = prove_text(
        "Lengths.agda", text, Meta(canary=name == "canary"), Settings(judging, case_split=True)
    )
    if name == "canary":
        assert row.status == "unsolved" and row.proof is None, row
        assert all(t.outcome != "solved" for t in row.tried)
        return
    assert row.status == "solved", row.tried
    assert row.proof is not None
    assert [(s.term, s.clauses) for s in row.proof] == [
        ("xs", ["len-app [] ys = {! !}", "len-app (x ∷ xs) ys = {! !}"]),
        ("refl", None),
        ("cong suc (len-app xs ys)", None),
    ]
