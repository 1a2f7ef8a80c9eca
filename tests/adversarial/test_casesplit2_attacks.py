"""The case split's clause reader and its absurd-split solve (casesplit2), attacked.

Class: making ``assay prove --case-split`` claim ``solved`` without the evidence, or write a
clause into the wrong place, through the new clause reader (``_fixture.read_clause``,
``definitions``, ``operator_arguments``, ``clause_of``, ``enclosing``) and the new commit rule (a
split that leaves no hole is committed only on a green batch check, then claimed only through
``Proved``). Tried here: clause shapes that could be mis-assigned to a definition (named and
instance arguments, dotted patterns, ``=?``, prefix and postfix operators, a ``_`` anonymous
definition, an operator whose name holds ``:``, a signature naming two definitions, a signature
in a block comment or an ``abstract`` block); forged splits whose "clauses" are other
declarations (``replay`` must refuse them); a ``Proved`` built from a green verdict with other
bytes (CRLF, a trailing space, a BOM, a tab) or with the other obligation still open; and the
real loop on a file where an absurd split closes one obligation and the other (false) stays open.

No soundness finding: every attack on the evidence is refused. Findings are false rejects of
the reader (strict xfails asserting the right reading until fixed): a ``_ : T``
anonymous definition above (PLFA's style for tests) made every later clause unreadable (the real
loop then left a true ``plus-zero`` unsolved); signatures the reader does not see (``_::_ : …``, ``bad bad2 : …``) or
sees wrongly (inside ``{- … -}``) leave honest clauses unsplit; and two answers Agda really gives
(recorded from Agda 2.6.4.3) are refused: dot patterns ``.(suc _)`` (an indexed family split with
explicit indices) and a record pattern ``record { a = a ; b = b }``. All fixed (cs3), and
the tests pass as ordinary tests: signatures are read among Agda's own tokens (comments are
whitespace), and ``read_clause`` reads a dot pattern ``.(…)`` and a record pattern
``record { f = p ; … }`` as one atom each (a ``;`` only between a record pattern's fields).

Offline tests read text only; the ``slow`` ones (4 cases) judge with the PyPI Agda, about 15 s.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from assay.proofs import Judging, Terms, judge_source
from assay.prove import Meta, Proved, Settings, Step, prove_text, replay
from assay.prove._casesplit import Split, clause_span, render
from assay.prove._fixture import clause_of, definitions, enclosing, holes, position, read_clause
from tests.adversarial.test_prove_cheats import _judging

HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality\n"


def _module(name: str, body: str) -> str:
    return f"module {name} where\n\n{HEADER}\n{body}"


def _owner(body: str) -> str | None:
    """The definition the reader gives the file's last hole to (None: not split)."""
    text = _module("M", body)
    found = holes(text)
    assert found, text
    return enclosing(text, found[-1][0])


# --- clause shapes the reader must give to the right definition (attacks that fail) ----------

READ = {
    "named-argument": ("bad : {m : Nat} (n : Nat) → n ≡ n\nbad {m = k} n = {! !}\n", "bad"),
    "instance-argument": ("bad : ⦃ m : Nat ⦄ (n : Nat) → n ≡ n\nbad ⦃ m ⦄ n = {! !}\n", "bad"),
    "ascii-instance": ("bad : {{m : Nat}} (n : Nat) → n ≡ n\nbad {{m}} n = {! !}\n", "bad"),
    "dotted-variable": ("bad : (m n : Nat) → m ≡ n → n ≡ n\nbad m .m refl = {! !}\n", "bad"),
    "operator-with-equals": ("_=?_ : (m n : Nat) → n ≡ n\nm =? n = {! !}\n", "_=?_"),
    "postfix-operator": ("_! : (n : Nat) → n ≡ n\nn ! = {! !}\n", "_!"),
    "prefix-operator": ("!_ : (n : Nat) → n ≡ n\n! n = {! !}\n", "!_"),
    "snake-case-name": ("plus_zero : (n : Nat) → n ≡ n\nplus_zero n = {! !}\n", "plus_zero"),
    "subscript-lookalike": (
        "bad : (n : Nat) → n ≡ n\nbad = λ n → refl\nbad₁ : (n : Nat) → n ≡ n\nbad₁ n = {! !}\n",
        "bad₁",
    ),
    "two-line-signature": ("bad\n  : (n : Nat) → n ≡ n\nbad n = {! !}\n", "bad"),
    # a variable named like a top-level definition: two readings, never guessed
    "variable-named-like-a-definition": (
        "foo : Nat\nfoo = 0\n_!_ : (m n : Nat) → n ≡ n\nfoo ! n = {! !}\n",
        None,
    ),
    # the clause is in an `abstract` block: indented, never split
    "abstract-block": ("abstract\n  bad : (n : Nat) → n ≡ n\n  bad n = {! !}\n", None),
    # a postulate above (refused by --safe anyway) declares nothing the reader reads
    "postulate-above": (
        "postulate\n  bad : Nat\nbad2 : (n : Nat) → n ≡ n\nbad2 n = {! !}\n",
        "bad2",
    ),
}


@pytest.mark.parametrize("name", sorted(READ))
def test_a_clause_is_given_to_its_own_definition_or_to_none(name: str) -> None:
    body, owner = READ[name]
    assert _owner(body) == owner


# --- findings: honest clauses the reader refused (false rejects; fixed by cs3) -----------------

MISSED = {
    # `_SIGNATURE` excludes `:` from a name, but Agda accepts `_::_` (checked: Agda 2.6.2.2)
    "operator-named-with-colons": ("_::_ : Nat → Nat → Nat\nm :: n = {! !}\n", "_::_"),
    # one signature, two names (Agda accepts `bad bad2 : T`)
    "signature-of-two-names": (
        "bad bad2 : (n : Nat) → n + 0 ≡ n\nbad n = {! !}\nbad2 n = refl\n",
        "bad",
    ),
    # a signature inside a block comment is read as a declaration: `m ! n` gets two readings
    "signature-in-a-block-comment": (
        "{-\nm : Nat\n-}\n_!_ : (m n : Nat) → n + 0 ≡ n\nm ! n = {! !}\n",
        "_!_",
    ),
}


@pytest.mark.parametrize("name", sorted(MISSED))
def test_an_honest_clause_is_read_as_its_definitions(name: str) -> None:
    body, owner = MISSED[name]
    assert _owner(body) == owner


LE = (
    "data _≤_ : Nat → Nat → Set where\n  z≤n : {n : Nat} → zero ≤ n\n"
    "  s≤s : {m n : Nat} → m ≤ n → suc m ≤ suc n\n\n"
)
DOTTED = ["up .zero n z≤n = ?", "up .(suc _) .(suc _) (s≤s p) = ?"]
"""Agda's own answer (2.6.4.3, ``Cmd_make_case``, recorded here) to splitting ``p`` in
``up : (m n : Nat) → m ≤ n → m ≤ suc n`` / ``up m n p = {! !}``: the indices become dot
patterns, ``.(suc _)`` a bracket glued to its dot (``read_clause`` refused it until cs3)."""


def test_agdas_split_of_an_indexed_family_is_read_as_clauses() -> None:
    text = _module("Dot", LE + "up : (m n : Nat) → m ≤ n → m ≤ suc n\nup m n p = {! !}\n")
    span = clause_span(text, holes(text)[0])
    assert span is not None and enclosing(text, holes(text)[0][0]) == "up"
    expected = ("up .zero n z≤n = {! !}", "up .(suc _) .(suc _) (s≤s p) = {! !}")
    assert render(DOTTED, "up", definitions(text, span[0])) == expected


RECORD = "record P : Set where\n  field\n    a : Nat\n    b : Nat\nopen P\n\n"


def test_agdas_split_of_a_record_without_a_constructor_is_read_as_a_clause() -> None:
    """Agda 2.6.4.3's answer to splitting ``p`` in ``sw p = {! !}`` (recorded): one clause whose
    ``;`` is inside the record pattern's braces, not between declarations."""
    text = _module("Rec", RECORD + "sw : (p : P) → a p ≡ a p\nsw p = {! !}\n")
    span = clause_span(text, holes(text)[0])
    assert span is not None
    answer = ["sw record { a = a ; b = b } = ?"]
    expected = ("sw record { a = a ; b = b } = {! !}",)
    assert render(answer, "sw", definitions(text, span[0])) == expected


def test_the_anonymous_definition_is_no_operator() -> None:
    """The cause of the first finding, at the smallest scale: ``_`` fits any left-hand side."""
    assert clause_of(("bad", "n"), ["bad"]) == "bad"
    assert clause_of(("bad", "n"), ["_", "bad"]) == "bad"  # `_` is no mixfix operator (fixed)


def test_a_clause_below_an_anonymous_definition_is_read() -> None:
    """PLFA's style: ``_ : 1 ≡ 1`` / ``_ = refl`` above a definition (found by adv-cs2: ``_`` was
    read as an operator with one argument place that fits any left-hand side, fixed)."""
    assert _owner("_ : 1 ≡ 1\n_ = refl\n\nbad : (n : Nat) → n + 0 ≡ n\nbad n = {! !}\n") == "bad"


def test_a_crlf_clause_is_never_split() -> None:
    """A CRLF file's clause line ends in ``\\r``, a line break to Agda: the reader refuses it
    (never splits it), the safe side. A possible false reject for files written on Windows,
    not asked to be fixed: splitting it would need ``\\r\\n`` read as one break everywhere."""
    text = _module("M", "bad : (n : Nat) → n + 0 ≡ n\nbad n = {! !}\n").replace("\n", "\r\n")
    assert clause_span(text, holes(text)[0]) is None


# --- forged splits: a "clause" that is another declaration never replays -----------------------

FORGED = {
    "another-definitions-clause": ("bad2 zero = {! !}",),
    "a-signature": ("bad zero = {! !}", "bad (suc n) : Nat"),
    "a-fixity": ("bad zero = {! !}", "infixl 5 _⊕_"),
    "a-fixity-after-a-separator": ("bad zero = {! !}", "bad (suc n)\u2028infixl 5 _⊕_"),
    "a-pragma": ("bad zero = {! !}", "bad (suc n) {-# REWRITE foo #-}"),
    "an-open": ("bad zero = {! !}", "open M"),
    "a-postulate": ("bad zero = {! !}", "postulate bad (suc n)"),
    "a-pattern-synonym": ("bad zero = {! !}", "pattern bad n"),
    "an-instance-block": ("bad zero = {! !}", "instance bad (suc n)"),
    "a-comment-hiding-the-rest": ("bad zero = {! !} -- bad (suc n)",),
    "a-right-hand-side-not-a-hole": ("bad zero = refl", "bad (suc n) = {! !}"),
    "a-with-clause": ("bad zero = {! !}", "bad (suc n) with n"),
    "a-where-block": ("bad zero = {! !} where", "bad (suc n) = {! !}"),
    "a-tab": ("bad zero = {! !}", "bad\t(suc n) = {! !}"),
    "a-hole-in-a-pattern": ("bad {! !} = {! !}",),
}

FORGE_TEXT = _module(
    "Forge",
    "_⊕_ : Nat → Nat → Nat\nm ⊕ n = m + n\n\nbad2 : (n : Nat) → n ≡ n\nbad2 n = refl\n\n"
    "bad : (n : Nat) → 1 ⊕ 2 * 0 ≡ 0\nbad n = {! !}\n",
)


@pytest.mark.parametrize("name", sorted(FORGED))
def test_a_forged_split_carrying_another_declaration_never_replays(name: str) -> None:
    hole = holes(FORGE_TEXT)[0]
    span = clause_span(FORGE_TEXT, hole)
    assert span is not None and enclosing(FORGE_TEXT, hole[0]) == "bad"
    assert render(list(FORGED[name]), "bad", definitions(FORGE_TEXT, span[0])) is None
    line, column = position(FORGE_TEXT, hole[0])
    step = Step(hole, line, column, "n", Split("n", span, FORGED[name]))
    with pytest.raises(ValueError, match="is not clauses of"):
        replay(FORGE_TEXT, (step,))


def test_a_named_absurd_pattern_is_one_clause_of_its_definition() -> None:
    """``{p = ()}`` holds an ``=``, inside braces: it is a pattern, not the clause's ``=``."""
    read = read_clause("bad {p = ()} n")
    assert read is not None and read.equals is None
    assert read.atoms == ("bad", "{p = ()}", "n")
    assert render(["bad {p = ()} n"], "bad") == ("bad {p = ()} n",)


# --- the evidence: a green verdict belongs to its bytes, and to a file with no hole left ------

ABSURD = "noconf : (p : zero ≡ suc zero) → zero ≡ suc (suc zero)\nnoconf p = {! !}\n"
OTHER = "bad : (n : Nat) → n ≡ suc n\nbad n = {! !}\n"


@pytest.fixture(scope="module")
def pypi() -> Judging:
    return _judging("pypi")


def _absurd_step(text: str) -> Step:
    hole = holes(text)[0]
    span = clause_span(text, hole)
    assert span is not None
    line, column = position(text, hole[0])
    return Step(hole, line, column, "p", Split("p", span, ("noconf ()",)))


VARIANTS: dict[str, Callable[[str], str]] = {
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "trailing-space": lambda t: t.replace("noconf ()", "noconf () "),
    "bom": lambda t: "\ufeff" + t,
    "tab": lambda t: t.replace("noconf ()", "noconf\t()"),
    "no-final-newline": lambda t: t.rstrip("\n"),
}


@pytest.mark.slow
def test_a_green_verdict_is_evidence_only_for_its_own_bytes(pypi: Judging) -> None:
    """One judgment: the absurd split's file is green and ``Proved`` accepts it; the same
    verdict attached to the same proof in other bytes, or to the same split in a file whose
    other obligation is still open, is refused."""
    original = _module("Absurd", ABSURD)
    step = _absurd_step(original)
    final = replay(original, (step,))
    attempt = judge_source("agda", final, Terms(stdlib=True), pypi)
    assert attempt.status == "solved" and attempt.verdict is not None, attempt.diagnostics
    Proved(original, (step,), final, attempt.verdict)  # the premise: the honest claim holds
    for variant in VARIANTS.values():
        assert variant(final) != final
        with pytest.raises(ValueError, match="not the original"):
            Proved(original, (step,), variant(final), attempt.verdict)
    two = _module("Absurd", ABSURD + "\n" + OTHER)
    step2 = _absurd_step(two)
    half = replay(two, (step2,))
    assert len(holes(half)) == 1
    with pytest.raises(ValueError, match="still open"):
        Proved(two, (step2,), half, attempt.verdict)


@pytest.mark.slow
def test_an_absurd_split_beside_an_open_false_obligation_is_no_solve(pypi: Judging) -> None:
    """The real loop: ``noconf``'s split into ``noconf ()`` is committed (progress: only the
    other hole open), and the file is never claimed, since ``bad`` (false) stays open."""
    text = _module("Half", ABSURD + "\n" + OTHER)
    row = prove_text("Half.agda", text, Meta(canary=True), Settings(pypi, case_split=True))
    assert row.status == "unsolved", row
    assert row.proof is None
    assert all(t.outcome != "solved" for t in row.tried), row.tried
    split = next(t for t in row.tried if t.source == "split" and t.term == "p")
    assert (split.outcome, split.clauses) == ("progress", ["noconf ()"])


CONG = "cong : {A B : Set} (f : A → B) {x y : A} → x ≡ y → f x ≡ f y\ncong f refl = refl\n\n"
PLUS_ZERO = "plus-zero : (n : Nat) → n + 0 ≡ n\nplus-zero n = {! !}\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    "anonymous",
    [
        pytest.param("", id="without"),
        pytest.param("_ : 1 ≡ 1\n_ = refl\n\n", id="below-an-anonymous-definition"),
    ],
)
def test_an_induction_below_an_anonymous_definition_is_solved(
    anonymous: str, pypi: Judging
) -> None:
    """The real loop, the first finding's cost: ``plus-zero`` is solved with the switch
    (``split n; refl; cong suc (plus-zero n)``), but not when a PLFA-style ``_ : 1 ≡ 1`` test
    stands above it."""
    text = _module("Anon", CONG + anonymous + PLUS_ZERO)
    row = prove_text("Anon.agda", text, Meta(), Settings(pypi, case_split=True))
    assert row.status == "solved", row.tried
