"""The case split's reader (``_fixture``): the shapes it reads exactly, and the near-misses it
still refuses.

- signatures are read among Agda's own tokens: operator names holding ``:`` (``_::_``), several
  names in one signature (``bad bad2 : T``), a name with its type on the lines below; a
  signature inside a comment (block, nested block, line comment) or a pragma declares nothing,
  and a comment inside a signature hides nothing;
- a clause's dot pattern ``.(suc _)`` and record pattern ``record { a = x ; b = y }`` (both as
  Agda prints them when it splits) are one atom each; a ``;`` anywhere but between a record
  pattern's field assignments is refused (it separates declarations);
- Agda's own split of an indexed family and of a record without a constructor is read and
  judged, and an induction the old reader refused to split is solved by the real loop (slow:
  builtin-only files, a few seconds each on an idle machine).

A misreading here changes only what is proposed (Agda judges every split), but a split the
reader refuses is work the loop gives up: each reading has its own near-miss beside it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.proofs import AgdaLane, Judging, Terms, judge_source
from assay.prove import Meta, Settings, prove_text
from assay.prove._casesplit import Split, apply_split, clause_span, render
from assay.prove._fixture import (
    definitions,
    enclosing,
    fields_only,
    holes,
    local_lemmas,
    position,
    read_clause,
    signature,
)

HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality\n"
TYPE = "(n : Nat) → n + 0 ≡ n"


def _file(body: str, name: str = "M") -> str:
    return f"module {name} where\n\n{HEADER}\n{body}"


SIGNATURES = {
    "operator-named-with-colons": ("_::_ : Nat → Nat → Nat\n", ["_::_"]),
    "two-names": (f"bad bad2 : {TYPE}\n", ["bad", "bad2"]),
    "two-names-type-below": (f"bad bad2\n  : {TYPE}\n", ["bad", "bad2"]),
    "type-on-the-line-below": (f"bad\n  : {TYPE}\n", ["bad"]),
    "anonymous": ("_ : 1 ≡ 1\n", ["_"]),
    "after-a-pragma": (f"{{-# TERMINATING #-}}\nbad : {TYPE}\n", ["bad"]),
    # near-misses: no signature, or not this one
    "in-a-block-comment": ("{-\nm : Nat\n-}\n", []),
    "in-a-nested-block-comment": ("{- {- -}\nm : Nat\n-}\n", []),
    "after-a-nested-block-comment": ("{- {- -} -}\nm : Nat\n", ["m"]),
    "in-a-line-comment": ("-- m : Nat\n", []),
    "a-line-comment-inside-a-signature": (f"bad -- bad2 : Nat\n  : {TYPE}\n", ["bad"]),
    "a-line-comment-after-a-signature": (f"bad : {TYPE} -- bad2 : Nat\n", ["bad"]),
    "a-block-comment-after-a-signature": (f"bad : {TYPE} {{- m : Nat -}}\n", ["bad"]),
    "in-a-pragma": ("{-# BUILTIN m : Nat #-}\n", []),
    "a-comment-opener-in-a-string": ('s = "{-"\nm : Nat\n', ["m"]),
    "after-a-comment-on-its-line": ("{- note -} m : Nat\n", []),  # column 7: a continuation
    "a-colon-glued-to-a-name": ("bad :Nat\n", []),  # `:Nat` is one name to Agda
    "a-qualified-name": ("M.m : Nat\n", []),
    "indented": ("private\n  m : Nat\n", []),
    "a-data-declaration": ("data D : Set where\n", []),
    "a-record-declaration": ("record R : Set where\n", []),
    "a-tab-agda-refuses": ("m : Nat\n\tn : Nat\n", []),  # the file does not lex: nothing read
}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_a_signature_is_read_among_agdas_tokens(name: str) -> None:
    body, declared = SIGNATURES[name]
    text = _file(body)
    assert definitions(text, len(text)) == declared
    assert local_lemmas(text, len(text), None) == declared


def test_a_signatures_type_leaves_its_comments_out() -> None:
    text = _file("bad bad2 -- note\n  : (n : Nat) {- x -} → n + 0 ≡ n\n  -- end\n")
    assert signature(text, "bad") == signature(text, "bad2") == TYPE
    assert signature(text, "m") == ""
    assert signature(_file("{-\nm : Nat\n-}\n"), "m") == ""


OWNERS = {
    "operator-named-with-colons": ("_::_ : Nat → Nat → Nat\nm :: n = {! !}\n", "_::_"),
    "first-of-two-names": (f"bad bad2 : {TYPE}\nbad n = {{! !}}\n", "bad"),
    "second-of-two-names": (f"bad bad2 : {TYPE}\nbad n = refl\nbad2 n = {{! !}}\n", "bad2"),
    "below-a-commented-signature": (
        "{-\nm : Nat\n-}\n_!_ : Nat → Nat → Nat\nm ! n = {! !}\n",
        "_!_",
    ),
    "below-a-nested-comment": (
        "{- {- -}\nm : Nat\n-}\n_!_ : Nat → Nat → Nat\nm ! n = {! !}\n",
        "_!_",
    ),
    "below-a-line-comment": ("-- m : Nat\n_!_ : Nat → Nat → Nat\nm ! n = {! !}\n", "_!_"),
    "a-hole-below-a-commented-clause": (
        f"bad : {TYPE}\nbad n =\n{{- other n =\n-}}\n  {{! !}}\n",
        "bad",
    ),
    "a-dot-pattern": (f"bad : {TYPE}\nbad .(suc _) = {{! !}}\n", "bad"),
    # near-misses: two readings (the signature after the nested comment is real), or none
    "below-a-real-signature-after-a-nested-comment": (
        "{- {- -} -}\nm : Nat\nm = 0\n_!_ : Nat → Nat → Nat\nm ! n = {! !}\n",
        None,
    ),
    "the-hole-is-a-declaration": (f"bad : {TYPE}\nbad n =\n{{! !}}\n", None),
    "a-signature-holds-the-hole": ("bad : {! !}\n", None),
    "a-dot-glued-to-a-name": (f"bad : {TYPE}\nbad f.(suc _) = {{! !}}\n", None),
    "a-semicolon-between-declarations": (f"bad : {TYPE}\nbad n ; bad2 = {{! !}}\n", None),
}


@pytest.mark.parametrize("name", sorted(OWNERS))
def test_a_hole_is_given_to_the_definition_agda_reads(name: str) -> None:
    body, owner = OWNERS[name]
    text = _file(body)
    assert enclosing(text, holes(text)[-1][0]) == owner


CLAUSES: dict[str, tuple[str, ...] | None] = {
    "up .(suc _) .(suc _) (s≤s p) = ?": ("up", ".(suc _)", ".(suc _)", "(s≤s p)"),
    "up .zero n z≤n": ("up", ".zero", "n", "z≤n"),
    "sw record { a = a ; b = b } = ?": ("sw", "record { a = a ; b = b }"),
    "sw record { a = suc n } = ?": ("sw", "record { a = suc n }"),
    "sw record { a = (x , y) ; b = record { c = z ; d = w } } = ?": (
        "sw",
        "record { a = (x , y) ; b = record { c = z ; d = w } }",
    ),
    "sw {p = record { a = x ; b = y }} = ?": ("sw", "{p = record { a = x ; b = y }}"),
    # near-misses, refused
    "up f.(suc _) = ?": None,  # a dot glued to a name
    "up .(suc _ = ?": None,  # unbalanced
    "up .(suc {! !}) = ?": None,  # a hole in a pattern
    "up .{m} = ?": None,  # `.{` is not a dot pattern Agda prints
    "up . (suc _) = ?": None,  # a lone dot
    "sw record{ a = a } = ?": None,  # glued (Agda prints a space)
    "sw record = ?": None,  # the keyword alone
    "sw record (a , b) = ?": None,
    "sw record { a ; b } = ?": None,  # not field assignments
    "sw record { a = a ; } = ?": None,
    "sw record { a = a ; infixl 6 _⊕_ } = ?": None,  # a declaration among the fields
    "sw record { a = a ; open M } = ?": None,
    'sw record { a = "x ; y" } = ?': None,
    "sw (a ; b) = ?": None,  # a `;` outside a record pattern's braces
    "sw {a ; b} = ?": None,
    "sw a ; infixl 6 _⊕_": None,
    "sw a; = ?": None,
    # the right-hand side is not read here (`_one_declaration` refuses its `;` in a split)
    "f n = g (x ; y)": ("f", "n"),
}


@pytest.mark.parametrize("line", sorted(CLAUSES))
def test_dot_and_record_patterns_are_one_atom_each(line: str) -> None:
    read = read_clause(line)
    assert (read.atoms if read else None) == CLAUSES[line]


def test_a_semicolon_only_separates_a_record_patterns_fields() -> None:
    assert fields_only("bad n = {! !}")
    assert fields_only("sw record { a = a ; b = b } = {! !}")
    assert not fields_only("infixl 6 _⊕_ ; bad n = {! !}")
    assert not fields_only("sw record { a = a ; b = b ; } = {! !}")
    assert not fields_only("sw record { a = a ; b = b")  # unbalanced
    assert not fields_only("sw { a = a ; b = b } = {! !}")  # no `record`: a block's `;`
    assert not fields_only("sw myrecord { a = a ; b = b } = {! !}")
    # rendering applies the same rule to every clause Agda gives back
    assert render(["sw record { a = a ; b = b } = ?"], "sw") == (
        "sw record { a = a ; b = b } = {! !}",
    )
    assert render(["sw record { a = a } = ?", "sw a ; infixl 6 _⊕_"], "sw") is None
    assert render(["sw record { a = a } = ? ; infixl 6 _⊕_"], "sw") is None
    text = _file("sw : Nat → Nat\nsw n = {! !} ; infixl 6 _⊕_\n")
    assert clause_span(text, holes(text)[0]) is None


LE = (
    "data _≤_ : Nat → Nat → Set where\n  z≤n : {n : Nat} → zero ≤ n\n"
    "  s≤s : {m n : Nat} → m ≤ n → suc m ≤ suc n\n\n"
)
RECORD = "record P : Set where\n  field\n    a : Nat\n    b : Nat\nopen P\n\n"
AGDA_SPLITS = {
    "indexed-family": ("Dot", LE + "up : (m n : Nat) → m ≤ n → m ≤ suc n\nup m n p = {! !}\n"),
    "record-without-constructor": ("Rec", RECORD + "sw : (p : P) → a p ≡ a p\nsw p = {! !}\n"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(AGDA_SPLITS))
def test_agdas_own_split_is_read_and_judged(name: str, judging: Judging, tmp_path: Path) -> None:
    """The lane's ``make_case`` on ``p`` (Agda 2.6.4.3 answers ``up .(suc _) .(suc _) (s≤s p)``
    and ``sw record { a = a ; b = b }``): the reader renders Agda's clauses, and the batch
    judge accepts the split file with only its new holes open (progress, never a solve)."""
    module, body = AGDA_SPLITS[name]
    text = _file(body, module)
    file = tmp_path / f"{module}.agda"
    file.write_text(text)
    hole = holes(text)[0]
    own, span = enclosing(text, hole[0]), clause_span(text, hole)
    assert own is not None and span is not None
    line, column = position(text, hole[0])
    with AgdaLane(judging.sandbox, config=judging.config) as lane:
        answer = lane.make_case(file, line, column, "p")
    clauses = render(answer, own, definitions(text, span[0]))
    assert clauses is not None, answer
    after = apply_split(text, hole, own, Split("p", span, clauses))
    judged = judge_source("agda", after, Terms(stdlib=True), judging)
    assert judged.status == "progress", judged.diagnostics
    assert judged.remaining_holes == len(holes(after)) == len(clauses)


CONG = "cong : {A B : Set} (f : A → B) {x y : A} → x ≡ y → f x ≡ f y\ncong f refl = refl\n\n"
ONCE_REFUSED = {
    # a signature inside a block comment gave `n ! m` a second reading (`n`'s clause)
    "below-a-commented-signature": (
        "{-\nn : Nat\n-}\n_!_ : (n m : Nat) → n + 0 ≡ n\nn ! m = {! !}\n",
        "cong suc (_!_ n n)",
    ),
    "an-operator-named-with-colons": (
        "_::_ : (n m : Nat) → n + 0 ≡ n\nn :: m = {! !}\n",
        "cong suc (_::_ n n)",
    ),
    "one-signature-two-names": (
        "plus-zero plus-zero′ : (n : Nat) → n + 0 ≡ n\nplus-zero n = {! !}\n"
        "plus-zero′ = plus-zero\n",
        "cong suc (plus-zero n)",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ONCE_REFUSED))
def test_an_induction_the_reader_once_refused_is_solved(name: str, judging: Judging) -> None:
    """The real loop with ``--case-split``: the split on ``n`` is asked and committed, and the
    recursive shape closes the ``suc`` case (before, the hole was given to no definition, so
    it got term moves only and stayed unsolved)."""
    body, recursive = ONCE_REFUSED[name]
    text = _file(CONG + body, "Once")
    row = prove_text("Once.agda", text, Meta(), Settings(judging, case_split=True))
    assert row.status == "solved", row.tried
    assert row.proof is not None
    assert [s.term for s in row.proof] == ["n", "refl", recursive]
