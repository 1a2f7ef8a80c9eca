"""The case split's reader after cs3 (Agda's tokens, dot and record patterns), attacked.

Class: making ``assay prove --case-split`` split a clause it has misread, so that the file it
writes means something else than the ledger says (or Agda judges another hole's split), through
the reader cs3 rewrote (``_fixture``: ``agda_tokens``, ``_declarations``, ``enclosing``,
``read_clause`` with dot and record patterns, ``fields_only``) and its use in ``_casesplit``
(``clause_span``, ``render``, ``apply_split``) and the search (``position``).

Findings (both fixed in session 9 as suggested: ``clause_span`` requires Agda's declaration to
end at the hole, ``position`` counts Agda's line endings; their tests pass), both about the line breaks
Agda has besides ``\\n`` (``\\f``, a lone ``\\r``, NEL, U+2028, U+2029: ``convertLineEndings``),
which the signature reader honours (``_BREAK``) but ``clause_span`` and ``position`` do not:

1. (high) **A ``where`` block behind a line comment that an Agda-only break ends.** ``clause_span``
   looks for an indented continuation line by line (``split("\\n")``) and skips a line that
   starts with ``--`` as a comment. But ``-- note\\f  where\\f  go … `` is, to Agda, a comment
   and then an indented ``where`` block belonging to the clause. The split replaces the clause
   line, so the block moves to the *last* split clause, where its names mean something else
   (a variable the split removed now resolves to a top-level name; a recursive call becomes
   structural). The real loop solves a canary that way: a local lemma ``b ≡ true`` over the
   clause's variable ``b`` (false; ``go`` cannot cover it) becomes, in ``bad true``'s
   ``where``, a lemma about the top-level ``b = true``. ``Proved`` accepts it (``replay``
   re-runs the same ``clause_span``).
2. (medium) **A hole's position is counted in ``\\n`` only.** ``_fixture.position`` gives the
   lane a line one lower than Agda's for every hole after such a break: every obligation below
   it is unsearchable ("no hole opens at line …", a false reject, term moves too), and where
   another interaction point (``?``) sits at that line and column, Agda answers the goal and
   the split for *that* hole: the loop writes another clause's split over this hole's clause
   (dropping its patterns), judges it, and records it as this hole's split.

Attacks that fail (passing tests): clause shapes the token reader gives to the right definition
or to none (``a--b``, a comment glued to a pattern, a non-breaking space, a signature behind a
form feed, a signature inside a multi-line pragma, ``mutual`` with nothing indented, unicode and
``∶`` names), and forged splits whose dot or record patterns would carry a pragma, a
postulate, a second declaration or a break (``render`` refuses each).

Offline tests read text only; the ``slow`` ones run the real loop with the PyPI Agda (5 runs,
about 30 s on a loaded machine).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from assay.proofs import Judging
from assay.proofs._agda import hole_span
from assay.prove import Meta, Settings, prove_text, replay
from assay.prove._casesplit import Split, clause_span, render
from assay.prove._fixture import enclosing, holes, position
from assay.prove._solve import Step
from tests.adversarial.test_prove_cheats import _judging

HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality\n"

BREAKS = {
    "form-feed": "\f",
    "carriage-return": "\r",
    "next-line": "\x85",
    "line-separator": "\u2028",
    "paragraph-separator": "\u2029",
}
"""Agda's line breaks besides ``\\n`` (``convertLineEndings``; a lone CR, not CR LF)."""

WHERE_REASON = (
    "finding 1 (high): clause_span reads continuation lines split at \\n only and skips a "
    "`--` line as a comment, but Agda ends the comment at this break: the indented `where` "
    "block after it belongs to the clause, and a split would move it to the last new clause"
)
POSITION_REASON = (
    "finding 2 (medium): _fixture.position counts lines at \\n only; Agda also breaks at this "
    "character, so the lane is asked about a hole one line above the real one"
)


def _module(name: str, body: str) -> str:
    return f"module {name} where\n\n{HEADER}\n{body}"


def _breaks(reason: str) -> Sequence[object]:
    """The plain newline and each Agda-only break (``reason``: what it was found to do before
    the fix)."""
    premise = [pytest.param("\n", id="newline")]
    return premise + [pytest.param(sep, id=name) for name, sep in BREAKS.items()]


# --- finding 1: a `where` block the clause reader does not see ---------------------------------


@pytest.mark.parametrize("sep", _breaks(WHERE_REASON))
def test_a_clause_with_a_where_block_is_never_split(sep: str) -> None:
    """The clause ``bad n = {! !}`` has a ``where`` block (Agda's reading): it is never split,
    and a forged split of it never replays (``Proved`` re-runs ``apply_split``)."""
    text = _module(
        "W", f"bad : (n : Nat) → n ≡ n\nbad n = {{! !}}\n-- note{sep}  where{sep}  y = n\n"
    )
    hole = holes(text)[0]
    assert enclosing(text, hole[0]) == "bad"  # the reader gives the hole to `bad` either way
    assert clause_span(text, hole) is None
    start = text.index("bad n = ")
    clauses = ("bad zero = {! !}", "bad (suc n) = {! !}")
    step = Step(hole, *position(text, hole[0]), "n", Split("n", (start, hole[1]), clauses))
    with pytest.raises(ValueError, match="does not replace the hole's clause"):
        replay(text, (step,))


FLIP = (
    "open import Agda.Builtin.Bool\n\n"
    "not : Bool → Bool\nnot true = false\nnot false = true\n\n"
    "b : Bool\nb = true\n\n"
    "bad : (b : Bool) → not (not b) ≡ b\nbad b = {! !}\n"
    "-- helpers{sep}  where{sep}  go : (x : Bool) → x ≡ b → x ≡ true{sep}  go true _ = refl"
    "{sep}  lemma : b ≡ true{sep}  lemma = go b refl\n"
)
"""A canary: ``lemma : b ≡ true`` for the clause's variable ``b`` is false (``go`` misses
``go false _``, so no filling of the hole makes the file check: Agda says "Incomplete pattern
matching for go"). Split on ``b``, the block sits under ``bad true``, where ``b`` is the
top-level ``b = true``: ``go`` covers, and ``lemma`` is true."""

LOOP = (
    "cong : {A B : Set} (f : A → B) {x y : A} → x ≡ y → f x ≡ f y\ncong f refl = refl\n\n"
    "plus-zero : (n : Nat) → n + 0 ≡ n\nplus-zero n = {! !}\n"
    "-- a helper{sep}  where{sep}  lemma : n + 0 ≡ n{sep}  lemma = plus-zero n\n"
)
"""A file no filling completes: ``lemma = plus-zero n`` calls the clause itself with the same
argument (Agda: termination checking fails). Split on ``n``, the block sits under
``plus-zero (suc n)``, where ``n`` is the predecessor: the call is structural."""


@pytest.fixture(scope="module")
def pypi() -> Judging:
    return _judging("pypi")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "sep"),
    [
        pytest.param(FLIP, "\n", id="false-local-lemma-newline"),
        pytest.param(
            FLIP,
            "\f",
            id="false-local-lemma-form-feed",
        ),
        pytest.param(
            LOOP,
            "\f",
            id="non-terminating-helper-form-feed",
        ),
    ],
)
def test_a_where_block_never_moves_to_make_a_canary_solved(
    body: str, sep: str, pypi: Judging
) -> None:
    """The real loop on a file no filling completes: never solved. With the block on indented
    lines (``newline``, the premise) the clause is not split and the file stays unsolved; behind
    a form feed the split moves the block under the last clause, and the loop claims a solve
    (``split b; refl; refl``, with ``Proved``)."""
    text = _module("Flip", body.replace("{sep}", sep))
    row = prove_text("Flip.agda", text, Meta(canary=True), Settings(pypi, case_split=True))
    assert row.status == "unsolved", row.proof
    assert all(t.outcome != "solved" for t in row.tried), row.tried


# --- finding 2: a hole's line as Agda counts it ---------------------------------------------


@pytest.mark.parametrize("sep", _breaks(POSITION_REASON))
def test_a_holes_position_is_where_agda_sees_it(sep: str) -> None:
    """``position`` must name the line and column at which Agda (and ``hole_span``, which
    counts as Agda does) finds this very hole."""
    text = _module("P", f"-- a note{sep}-- more\nbad : (n : Nat) → n ≡ n\nbad n = {{! !}}\n")
    hole = holes(text)[0]
    assert hole_span(text, *position(text, hole[0])) == hole


def test_a_crlf_file_is_counted_as_agda_counts_it() -> None:
    """CR LF is one break to both readers (a premise of the finding: only the others differ)."""
    text = _module("P", "-- a note\r\nbad : (n : Nat) → n ≡ n\r\nbad n = {! !}\r\n")
    hole = holes(text)[0]
    assert hole_span(text, *position(text, hole[0])) == hole


PLUS_ZERO = (
    "cong : {A B : Set} (f : A → B) {x y : A} → x ≡ y → f x ≡ f y\ncong f refl = refl\n\n"
    "plus-zero : (n : Nat) → n + 0 ≡ n\nplus-zero n = {! !}\n"
)


@pytest.mark.slow
def test_an_induction_below_a_form_feed_is_solved(pypi: Judging) -> None:
    """The honest ``plus-zero`` (solved without the form feed: test_casesplit2_attacks'
    ``[without]``) is not even searched: the lane has no hole at the line it is asked about."""
    text = _module("FF", "-- a note\f\n" + PLUS_ZERO)
    row = prove_text("FF.agda", text, Meta(), Settings(pypi, case_split=True))
    assert row.status == "solved", row.reason


WRONG = "f : Nat → Nat → Nat\nf zero    m = ?\nf (suc n) m = {! !}\n"
"""``?`` (an interaction point ``holes`` does not list) sits one line above the ``{! !}`` hole,
in the same column: after a form feed above both, the lane's line for the ``{! !}`` hole is
Agda's line of the ``?``."""


@pytest.mark.slow
def test_a_split_is_asked_at_its_own_hole(pypi: Judging) -> None:
    """Every split the loop writes over ``f (suc n) m = {! !}`` refines that clause (on ``n`` or
    ``m``); before the fix the split of the ``?`` clause (``f zero zero``, ``f zero (suc m)``) replaces it, dropping the
    ``suc`` case (Agda then rejects the file, and the ledger records it as this hole's split)."""
    text = _module("Wrong", "-- a note\f\n" + WRONG)
    row = prove_text("Wrong.agda", text, Meta(), Settings(pypi, case_split=True))
    splits = [t for t in row.tried if t.source == "split"]
    assert splits, row.tried  # searched (before the fix: the lane answered for the `?`)
    assert all(c.startswith("f (suc ") for t in splits for c in t.clauses or []), splits


# --- attacks that fail: the token reader gives a clause to the right definition, or to none -----

READ = {
    # `a--b` is one name to Agda, but `--` is never read inside a pattern: not split
    "double-dash-in-a-name": ("a--b : (n : Nat) → n ≡ n\na--b n = {! !}\n", None),
    # a block comment glued to a pattern: not read
    "comment-glued-to-a-pattern": ("bad : (n : Nat) → n ≡ n\nbad n{- x -} = {! !}\n", None),
    # a non-breaking space is a space to Agda, part of a word to the reader: not guessed
    "non-breaking-space": ("bad : (n : Nat) → n ≡ n\nbad\u00a0n = {! !}\n", None),
    # a signature behind a form feed in a comment is a real one (Agda's column 0): two readings
    "signature-behind-a-form-feed": (
        "-- note\fm : Nat\nm = 0\n_!_ : (m n : Nat) → n ≡ n\nm ! n = {! !}\n",
        None,
    ),
    # a multi-line pragma's text declares nothing: `bad ! n` is `_!_`'s
    "signature-in-a-multi-line-pragma": (
        "{-# OPTIONS\nbad : Nat #-}\n_!_ : (m n : Nat) → n ≡ n\nbad ! n = {! !}\n",
        "_!_",
    ),
    # `mutual` with nothing indented is an empty block: `bad` is top-level
    "empty-mutual": ("mutual\nbad : (n : Nat) → n ≡ n\nbad n = {! !}\n", "bad"),
    # a constructor named like the function is indented: not a signature
    "constructor-named-like-a-function": (
        "data D : Set where\n  bad : D\nbad2 : (n : Nat) → n ≡ n\nbad2 n = {! !}\n",
        "bad2",
    ),
    "unicode-name": ("βad : (n : Nat) → n ≡ n\nβad n = {! !}\n", "βad"),
    # `∶` (U+2236) is a name character, not the colon
    "ratio-operator": ("_∶_ : Nat → Nat → Nat\nm ∶ n = {! !}\n", "_∶_"),
    # `_:_` cannot be declared (`:` is reserved): nothing is its clause
    "colon-operator": ("_:_ : Nat → Nat → Nat\nm : n = {! !}\n", None),
}


@pytest.mark.parametrize("name", sorted(READ))
def test_a_clause_is_given_to_the_definition_agda_reads_or_to_none(name: str) -> None:
    body, owner = READ[name]
    text = _module("M", body)
    hole = holes(text)[-1]
    assert enclosing(text, hole[0]) == owner
    if owner is None:
        return
    assert clause_span(text, hole) is not None


# --- attacks that fail: a split whose patterns carry something else never renders ------------

FORGED = {
    "dot-pattern-glued-after": "f .(suc _)x = ?",
    "two-dots": "f ..(x) = ?",
    "spaced-dot": "f . (x) = ?",
    "dot-patterns-glued": "f .(x).(y) = ?",
    "pragma-in-a-dot-pattern": "f .({-# TERMINATING #-} x) = ?",
    "comment-in-a-dot-pattern": "f .(x {- y -}) = ?",
    "postulate-after-a-record-pattern": "f record { a = x } ; postulate p : Nat",
    "postulate-as-a-field": "f record { a = x ; postulate = y } = ?",
    "semicolon-in-a-character": "f record { a = ';' } = ?",
    "empty-record-pattern": "f record {  } = ?",
    "qualified-field": "f record { a.b = x ; c = y } = ?",
    "declaration-after-the-hole": "f record { a = x } = ? ; g = ?",
    "pragma-after-the-hole": "f record { a = x ; b = y } = ? {-# TERMINATING #-}",
    "comment-after-the-hole": "f record { a = x ; b = y } = ? -- c",
    "line-separator-then-postulate": "f .(x) = ?\u2028postulate p : Nat",
    "form-feed-in-a-record-pattern": "f record { a = x\fpostulate p : Nat ; b = y } = ?",
    "another-definitions-record-clause": "g record { a = x ; b = y } = ?",
    "record-brace-glued": "f record{ a = x ; b = y } = ?",
}


@pytest.mark.parametrize("name", sorted(FORGED))
def test_a_forged_dot_or_record_split_never_renders(name: str) -> None:
    assert render([FORGED[name]], "f", ["g"]) is None


def test_agdas_dot_and_record_patterns_render_as_written() -> None:
    """The premise: the shapes Agda prints are rendered as written (hole for ``?``)."""
    clauses = ["f .(suc _) record { a = x ; b = record { c = y ; d = z } } = ?"]
    assert render(clauses, "f") == (clauses[0].replace("?", "{! !}"),)
