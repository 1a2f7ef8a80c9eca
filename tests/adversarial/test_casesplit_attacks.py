"""Getting a canary "solved" through ``--case-split``: the split move and its recursive shapes.

Class: cheating the case-split move of the proof search. A split asks Agda's interaction lane to
split the hole's clause (``Cmd_make_case``), writes the clauses into the file, judges the whole
file in batch and continues at the new holes with recursive calls; ``Proved`` replays every
split through ``apply_split``. Tried here: pragmas in the obligation that would let a
non-terminating recursion through (``TERMINATING``, ``NON_TERMINATING``), non-structural and
mutual recursion proposed by a hostile proposer at the split's holes, clauses the file reader
misreads (a mixfix operator's clause, a ``with`` clause, a ``where`` block after a blank line,
constructors that are not in scope), a declaration sharing the clause's line (``infixl 6 _⊕_ ;
bad n = {! !}``, also with Agda's other line breaks ``\\r`` and ``\\f``), and a forged split
whose "clause" carries a declaration (``bad false () ; infixl 5 _⊗_``). Agda judges every file,
but a file is judged as a whole: a split that deletes a fixity declaration changes how the
unchanged statement line parses. **Found and fixed: a canary solved** (``infixl 6 _⊕_ ; bad n =
{! !}``: the split ate the declaration, ``refl`` closed both cases; a clause line and every
clause of a split must now hold one declaration only: no ``;``, comment, pragma or character
Agda breaks lines at), a forged split carrying a declaration accepted by ``replay``, and a
``where`` block after a blank or comment line split anyway. Two lesser findings, also fixed
(casesplit2): a split into absurd clauses alone was a false reject (now committed when the batch
check is green with no hole left, and claimed only through ``Proved``), and a mixfix clause's
definition was misread as its first pattern (now read from the signatures above: ``_!_``).
Every attack is a passing test.

Builtin-only files (no agda-stdlib), Debian's Agda (``Config()``): a judgment is about a second.
"""

from __future__ import annotations

import pytest

from assay.proofs import Judging, Terms, judge_source
from assay.prove import Meta, ObligationLedger, Proved, Settings, Step, prove_text, replay
from assay.prove._casesplit import Split, clause_span, render
from assay.prove._fixture import enclosing, holes
from tests.adversarial.test_prove_cheats import TOOLCHAINS, _hostile, _judging

HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality\n"
CONG = "cong : {A B : Set} (f : A → B) {x y : A} → x ≡ y → f x ≡ f y\ncong f refl = refl\n"


def _module(name: str, body: str, header: str = HEADER) -> str:
    return f"module {name} where\n\n{header}\n{CONG}\n{body}"


@pytest.fixture(scope="module")
def judging() -> Judging:
    return _judging("debian")


def _never_solved(row: ObligationLedger) -> None:
    assert row.status == "unsolved", row
    assert row.proof is None
    assert all(t.outcome != "solved" for t in row.tried)


# --- pragmas in the obligation: the recursion they would let through never reaches a verdict --

PRAGMAS = {
    "terminating": "{-# TERMINATING #-}\n",
    "non-terminating": "{-# NON_TERMINATING #-}\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PRAGMAS))
def test_a_termination_pragma_in_the_obligation_refuses_every_split(
    name: str, judging: Judging
) -> None:
    """With the pragma, ``bad zero n = bad n n`` would check; the scan refuses the file with
    every split in it, so no split is committed and no judgment is spent."""
    text = _module("Pragma", f"{PRAGMAS[name]}bad : (m n : Nat) → n ≡ suc n\nbad m n = {{! !}}\n")
    settings = Settings(judging, case_split=True, filter=False, proposer=_hostile(["bad n n"]))
    row = prove_text("Pragma.agda", text, Meta(canary=True), settings)
    _never_solved(row)
    splits = [t for t in row.tried if t.source == "split"]
    assert splits and all(t.outcome == "refused" for t in splits), row.tried
    assert row.judgments == 0 and row.last_state == text


# --- recursion a hostile proposer offers at the split's holes: Agda's termination checker ------


@pytest.mark.slow
def test_non_structural_recursion_after_a_split_solves_no_canary(judging: Judging) -> None:
    """After the split on ``m`` the zero case's goal ``n ≡ suc n`` is the statement itself:
    ``bad n n`` and ``bad zero n`` fit it and are refused as non-terminating."""
    text = _module("Loop", "bad : (m n : Nat) → n ≡ suc n\nbad m n = {! !}\n")
    terms = ["bad m n", "bad n n", "bad zero n", "bad (suc m) n", "λ ()"]
    settings = Settings(judging, case_split=True, filter=False, proposer=_hostile(terms))
    row = prove_text("Loop.agda", text, Meta(canary=True), settings)
    _never_solved(row)
    splits = [i for i, t in enumerate(row.tried) if t.source == "split" and t.outcome == "progress"]
    assert splits, row.tried
    after = [t for t in row.tried[splits[0] + 1 :] if t.line == row.tried[splits[0]].line]
    assert {"bad n n", "bad zero n"} <= {t.term for t in after}
    assert all(t.outcome in ("type_error", "refused") for t in after), after


@pytest.mark.slow
def test_mutual_recursion_through_two_split_definitions_solves_no_canary(
    judging: Judging,
) -> None:
    """Two false lemmas declared first, each defined by the other: the first call is committed
    (the other is still a hole), the call back closes a cycle the termination checker refuses,
    with and without a split of the second definition."""
    text = _module(
        "Mutual",
        "bad : (n : Nat) → n ≡ suc n\nbad2 : (n : Nat) → n ≡ suc n\n"
        "bad n = {! !}\nbad2 n = {! !}\n",
    )
    terms = ["bad2 n", "bad n", "bad zero", "bad2 zero", "bad (suc n)"]
    settings = Settings(judging, case_split=True, filter=False, proposer=_hostile(terms))
    row = prove_text("Mutual.agda", text, Meta(canary=True), settings)
    _never_solved(row)
    assert row.last_state is not None and "bad n = (bad2 n)" in row.last_state
    assert any(t.source == "split" and t.outcome == "progress" for t in row.tried), row.tried


# --- clauses the file reader misreads: the split still only lands where Agda put it -----------

MISREAD = {
    # read as `_!_`'s clause (it was read as `m`, the operator's first pattern)
    "mixfix-operator": "_!_ : (m n : Nat) → m + n ≡ suc n\nm ! n = {! !}\n",
    # a `with` clause's continuation `...` is read as no definition: never split
    "with-clause": "bad : (n : Nat) → n + 0 ≡ suc n\nbad n with n\n... | m = {! !}\n",
    # the where block after a blank line is not seen: the split moves it to the last clause
    "where-after-blank-line": "bad : (n : Nat) → n + 0 ≡ suc n\nbad n = {! !}\n\n"
    "  where\n  helper : Nat\n  helper = zero\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MISREAD))
def test_a_misread_clause_splits_but_solves_no_canary(name: str, judging: Judging) -> None:
    text = _module("Misread", MISREAD[name])
    row = prove_text("Misread.agda", text, Meta(canary=True), Settings(judging, case_split=True))
    _never_solved(row)


@pytest.mark.slow
def test_constructors_out_of_scope_are_printed_qualified_and_solve_no_canary(
    judging: Judging,
) -> None:
    """``zero``/``suc`` not in scope: Agda prints ``Nat.zero`` (a constructor, not a pattern
    variable named ``zero`` that would catch every case)."""
    header = "import Agda.Builtin.Nat as N\nopen N using (Nat)\nopen import Agda.Builtin.Equality\n"
    text = _module("Qual", "bad : (n : Nat) → n ≡ N.zero\nbad n = {! !}\n", header)
    row = prove_text("Qual.agda", text, Meta(canary=True), Settings(judging, case_split=True))
    _never_solved(row)
    split = next(t for t in row.tried if t.source == "split" and t.outcome == "progress")
    assert split.clauses == ["bad Nat.zero = {! !}", "bad (Nat.suc n) = {! !}"]


# --- findings ------------------------------------------------------------------------------

SEMICOLON = {
    # enclosing() reads the lemma's name from a comment line; the split then eats the fixity
    "comment-names-the-lemma": "{- the lemma:\nbad -}\nbad : (n : Nat) → 1 ⊕ 2 * 0 ≡ 0\n",
    # a signature written on two lines: its first line is not read as a signature
    "two-line-signature": "bad\n  : (n : Nat) → 1 ⊕ 2 * 0 ≡ 0\n",
}


def _semicolon(name: str) -> str:
    """False as written: ``infixl 6 _⊕_`` (on the clause's line, after ``;``) makes the
    statement ``1 ⊕ (2 * 0) ≡ 0``, i.e. ``1 ≡ 0``; without that declaration ``_⊕_`` binds
    tighter than ``_*_`` (default fixity 20) and it reads ``(1 ⊕ 2) * 0 ≡ 0``, which holds."""
    return (
        "module Semi where\n\n" + HEADER + "\n_⊕_ : Nat → Nat → Nat\nm ⊕ n = m + n\n\n"
        f"{SEMICOLON[name]}infixl 6 _⊕_ ; bad n = {{! !}}\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SEMICOLON))
def test_the_semicolon_canary_is_false_as_written(name: str, judging: Judging) -> None:
    """The premise: with the declaration in place no proof of the statement exists (``refl``
    in the hole is a type error) and the term-mode search leaves it unsolved."""
    text = _semicolon(name)
    filled = text.replace("{! !}", "(refl)")
    assert judge_source("agda", filled, Terms(stdlib=True), judging).status == "type_error"
    _never_solved(prove_text("Semi.agda", text, Meta(canary=True), Settings(judging)))


@pytest.mark.slow
@pytest.mark.parametrize("separator", ["\r", "\f"])
def test_agdas_other_line_breaks_on_the_clause_line_solve_no_canary(
    separator: str, judging: Judging
) -> None:
    """Agda also breaks lines at ``\\r`` and ``\\f``, which the file reader does not: the same
    deletion (``infixl 6 _⊕_\\rbad n = {! !}`` is one line to ``clause_span``) is stopped today
    only because the lane finds no hole at the position the reader computes for it."""
    text = _semicolon("two-line-signature").replace(" ; bad n", separator + "bad n")
    row = prove_text("Semi.agda", text, Meta(canary=True), Settings(judging, case_split=True))
    _never_solved(row)  # today: "the file does not load: no hole opens at line 11, ..."


@pytest.mark.slow
@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("name", sorted(SEMICOLON))
def test_a_split_never_deletes_a_declaration_sharing_the_clause_line(
    name: str, toolchain: str
) -> None:
    settings = Settings(_judging(toolchain), case_split=True)
    row = prove_text("Semi.agda", _semicolon(name), Meta(canary=True), settings)
    _never_solved(row)


ABSURD = _module(
    "Absurd", "noconf : (p : zero ≡ suc zero) → zero ≡ suc (suc zero)\nnoconf p = {! !}\n"
)


@pytest.mark.slow
def test_a_split_into_absurd_clauses_alone_solves_the_obligation(judging: Judging) -> None:
    row = prove_text("Absurd.agda", ABSURD, Meta(), Settings(judging, case_split=True))
    assert row.status == "solved", row.tried
    assert row.proof is not None
    assert [(s.term, s.clauses) for s in row.proof] == [("p", ["noconf ()"])]


FIXITY_HEADER = HEADER + "open import Agda.Builtin.Bool\nopen import Agda.Builtin.Unit\n"
FIXITY = _module(
    "Fixity",
    "data ⊥ : Set where\n\nT : Bool → Set\nT true = ⊤\nT false = ⊥\n\n"
    "_⊕_ : Nat → Nat → Nat\nm ⊕ n = m + n\ninfixl 6 _⊕_\n\n"
    "_⊗_ : Nat → Nat → Nat\nm ⊗ n = m * n\n\n"
    # false as written: 1 ⊕ (2 ⊗ 0) is 1, and T true is inhabited
    "bad : (b : Bool) → T b → 1 ⊕ 2 ⊗ 0 ≡ 0\nbad b t = {! !}\n",
    FIXITY_HEADER,
)
HONEST = ("bad true t = {! !}", "bad false ()")
FORGED = {
    "fixity-after-an-absurd-clause": ("bad true t = {! !}", "bad false () ; infixl 5 _⊗_"),
    "fixity-in-a-left-hand-side": ("bad false ()", "bad true t ; infixl 5 _⊗_ = {! !}"),
    "a-declaration-after-an-absurd-clause": (
        "bad true t = {! !}",
        "bad false () ; data D : Set where",
    ),
}


def _forged_steps(clauses: tuple[str, ...]) -> tuple[Step, ...]:
    hole = holes(FIXITY)[0]
    span = clause_span(FIXITY, hole)
    assert span is not None
    split = Step(hole, 0, 0, "b", Split("b", span, clauses))
    after = FIXITY[: span[0]] + "\n".join(clauses) + FIXITY[span[1] :]
    return (split, Step(holes(after)[0], 0, 0, "refl"))


@pytest.mark.slow
@pytest.mark.parametrize("toolchain", TOOLCHAINS)
def test_a_fixity_line_in_a_split_makes_agda_accept_the_false_statement(toolchain: str) -> None:
    """The premise of the forged-split finding, with the real judge: the honest split's proof is
    a type error (the statement is false as written), the same with ``; infixl 5 _⊗_`` appended
    to the absurd clause checks green (the statement now parses as ``(1 ⊕ 2) ⊗ 0 ≡ 0``)."""
    judging = _judging(toolchain)
    terms = Terms(stdlib=True)
    honest = replay(FIXITY, _forged_steps(HONEST))
    assert judge_source("agda", honest, terms, judging).status == "type_error"
    span = clause_span(FIXITY, holes(FIXITY)[0])
    assert span is not None  # the forged text built by hand: replay now refuses to build it
    clauses = FORGED["fixity-after-an-absurd-clause"]
    after = FIXITY[: span[0]] + "\n".join(clauses) + FIXITY[span[1] :]
    forged = after.replace("{! !}", "(refl)", 1)
    verdict = judge_source("agda", forged, terms, judging)
    assert verdict.status == "solved", verdict.diagnostics


@pytest.mark.slow
@pytest.mark.parametrize("toolchain", TOOLCHAINS)
def test_proved_refuses_a_false_statement_proved_through_a_forged_split(toolchain: str) -> None:
    judging = _judging(toolchain)
    steps = _forged_steps(FORGED["fixity-after-an-absurd-clause"])
    text = FIXITY[: FIXITY.index("bad b t")] + "bad true t = (refl)\nbad false () ; infixl 5 _⊗_\n"
    attempt = judge_source("agda", text, Terms(stdlib=True), judging)
    assert attempt.status == "solved" and attempt.verdict is not None, attempt.diagnostics
    with pytest.raises(ValueError, match="split"):
        Proved(FIXITY, steps, text, attempt.verdict)


@pytest.mark.parametrize("name", sorted(FORGED))
def test_replay_refuses_a_split_whose_clauses_carry_a_declaration(name: str) -> None:
    assert render(list(FORGED[name]), "bad") is None
    with pytest.raises(ValueError, match="the split on"):
        replay(FIXITY, _forged_steps(FORGED[name]))


@pytest.mark.parametrize("gap", ["\n", "-- a comment\n"])
def test_a_clause_with_a_where_block_after_a_gap_is_never_split(gap: str) -> None:
    text = f"f : Nat → Nat\nf n = {{! !}}\n{gap}  where\n  x : Nat\n  x = n\n"
    assert clause_span(text, holes(text)[0]) is None


def test_the_definition_of_a_mixfix_clause_is_the_operator() -> None:
    text = "_!_ : Nat → Nat → Nat\nm ! n = {! !}\n"
    assert enclosing(text, holes(text)[0][0]) == "_!_"
