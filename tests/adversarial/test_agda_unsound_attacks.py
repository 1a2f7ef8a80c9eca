"""Attacks on ``_agda_unsound``, the token rules that keep the ingredients of known proofs of
``⊥`` out of a whole-file Agda solution (adv-unsound, session 9). All three findings were fixed
by the lead as suggested (every ``import`` read like ``open import``, ``as`` ends an unapplied
import, a later line counts as an argument unless it starts no further right than a lower bound
of the block's column, explicit layout braces refused) except that any ``record`` but a record
value ``record { … }`` is now refused, updates included: the tests below assert that.

The rule refuses any ``data``/``codata`` token, a ``record`` declaration (not a record
expression or update), any ``module … = …`` and an ``open`` followed by arguments (on its line,
or on a later line indented past ``open``). Three readings differ from Agda's, and each gets
``1 + 1 ≡ 3`` verified on both Agdas with no refusal (all critical):

- **``import M args as N``** is not read at all: inside a ``where`` block,
  ``import Relation.Binary.Reasoning.Base.Single _⇒_ id comp as N`` applies an agda-stdlib
  module (the import is allowed) and copies its data type ``_IsRelatedTo_`` inside a block:
  agda/agda#8696, with no declaration of the solution's own.
- **an ``open``'s arguments left of ``open`` but inside the block**: Agda's layout continues a
  declaration on any later line indented past the *block's* column (its first token's), not
  past ``open``'s own column. With ``y = tt ; open S`` (or ``y = tt ;`` then ``open S`` on a
  deeper line) the next line's ``_⇒_ id comp`` is an argument the rule does not see; ``let``
  reads the same, and ``open import`` too.
- **a record declaration read as an update**: ``record FixP {u : let t = true in Bool} : Set
  where`` is read as ``record e { … }`` because its braced group holds an ``=``; so
  agda/agda#8564 (``P = Negate`` in one mutual group with the record) verifies ``⊥``. Any ``=``
  in a braced parameter's type does it (a ``let``, a named argument ``{A = …}``).

Attacks that failed: explicit braces after ``where``/``let`` (``where { open S`` then the
arguments at any column) and ``private open S`` in a ``where`` block (Agda: parse or layout
error); arguments on ``open``'s own line behind a comment, in parentheses, ``⦃ ⦄``, a
``module N = …`` or ``let open S args in`` on one line (the scan refuses them).

False rejects (lesser): ``open import M as N`` (``as`` is not among the words that end an
unapplied ``open``: the commonest honest import spelling is refused) and a record update of a
parenthesised expression ``record (0 , 0) { fst = 1 }`` (read as a declaration).
"""

from __future__ import annotations

import pytest

from assay._config import Config
from assay.proofs._agda_scan import agda_refusals
from assay.sandbox import Limits, Sandbox
from tests.adversarial.test_agda_mutual_attacks import _green

PYPI = Config(agda_toolchain="pypi", judgment_cache="off")
DEBIAN = Config(agda_toolchain="debian", judgment_cache="off")
LIMITS = Limits(timeout=120, memory_mb=4096)
HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality"
_TOP = f"module Solution where\n\n{HEADER}\nopen import Agda.Builtin.Bool\n"

_NEGATE = """
⊥ : Set
⊥ = zero ≡ suc zero

T : Bool → Set₁
T true = Set → Set
T false = Set → Set

Negate : (b : Bool) → T b
Negate true X = X → ⊥
Negate false X = X → ⊥

mutual
  P : (b : Bool) → T b
  P = Negate

  record FixP {u : TELESCOPE} : Set where
    inductive
    constructor wrap
    field unwrap : P true (FixP {u})

no-fixp : FixP {true} → ⊥
no-fixp f = FixP.unwrap f f

bang : ⊥
bang = no-fixp (wrap no-fixp)

⊥-elim : {A : Set} → ⊥ → A
⊥-elim ()

wrong : 1 + 1 ≡ 3
wrong = ⊥-elim bang
"""
RECORDS = {
    "let-in-a-braced-parameter": "let t = true in Bool",
    "named-argument-in-a-braced-parameter": "Id {A = Set} Bool",
}
_ID = "\nId : {A : Set₁} → A → A\nId x = x\n"

_COPY = """open import Agda.Builtin.Unit
import Relation.Binary.Reasoning.Base.Single as S

⊥ : Set
⊥ = zero ≡ suc zero

_⇒_ : Set → Set → Set
X ⇒ Y = X → Y

id : {X : Set} → X ⇒ X
id x = x

comp : {X Y Z : Set} → X ⇒ Y → Y ⇒ Z → X ⇒ Z
comp f g x = g (f x)

f : Bool → Set → Set
BLOCK
f false X = ⊤

eq : (b : Bool) → f b ⊤ ≡ f b ⊥
eq b = refl

cast : {A B : Set} → A ≡ B → A → B
cast refl a = a

boom : ⊥
boom = S.begin_ _⇒_ id comp (cast (eq true) (S._∎ _⇒_ id comp ⊤)) tt

⊥-elim : {A : Set} → ⊥ → A
⊥-elim ()

wrong : 1 + 1 ≡ 3
wrong = ⊥-elim boom
"""
_LIBRARY = "Relation.Binary.Reasoning.Base.Single"
OPENS = {
    "import-as-in-where": (
        f"f true X = N._IsRelatedTo_ ⊤ X\n  where\n  import {_LIBRARY} _⇒_ id comp as N"
    ),
    "open-import-after-a-semicolon": (
        f"f true X = ⊤ IsRelatedTo X\n  where\n  y = tt ; open import {_LIBRARY}\n    _⇒_ id comp"
    ),
    "semicolon-at-the-end-of-a-line": (
        "f true X = ⊤ IsRelatedTo X\n  where\n  y = tt ;\n    open S\n    _⇒_ id comp"
    ),
    "where-after-a-semicolon": (
        "f true X = ⊤ IsRelatedTo X\n  where\n  y = tt ; open S\n    _⇒_ id comp"
    ),
    "let-after-a-semicolon": (
        "f true X = let y = tt ; open S\n                 _⇒_ id comp in ⊤ IsRelatedTo X"
    ),
}


def _record(name: str) -> str:
    return _TOP + _ID + _NEGATE.replace("TELESCOPE", RECORDS[name])


def _open(name: str) -> str:
    return _TOP + _COPY.replace("BLOCK", OPENS[name])


ATTACKS = {f"record:{k}": _record(k) for k in RECORDS} | {f"open:{k}": _open(k) for k in OPENS}


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_scan_refuses_the_attack(attack: str) -> None:
    assert agda_refusals(ATTACKS[attack], header=HEADER)


@pytest.mark.slow
@pytest.mark.parametrize("config", [PYPI, DEBIAN], ids=["pypi", "debian"])
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_attack_is_not_verified(attack: str, config: Config, sandbox: Sandbox) -> None:
    assert not _green(ATTACKS[attack], config, sandbox)


# --- attacks that failed -------------------------------------------------------------------

REFUSED_BY_AGDA = {
    "where-explicit-braces": "f true X = ⊤ IsRelatedTo X\n  where { open S\n_⇒_ id comp }",
    "where-explicit-braces-semicolon": (
        "f true X = ⊤ IsRelatedTo X\n  where { y = tt ; open S\n _⇒_ id comp }"
    ),
    "let-explicit-braces": "f true X = let { open S\n_⇒_ id comp } in ⊤ IsRelatedTo X",
    "where-open-on-the-clauses-line": "f true X = ⊤ IsRelatedTo X where open S\n  _⇒_ id comp",
    "private-open-in-where": (
        "f true X = ⊤ IsRelatedTo X\n  where\n  private open S\n    _⇒_ id comp"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("attempt", sorted(REFUSED_BY_AGDA))
def test_agda_refuses_these_spellings(attempt: str, sandbox: Sandbox) -> None:
    """They pass the scan, but Agda does not read the arguments as an application."""
    source = _TOP + _COPY.replace("BLOCK", REFUSED_BY_AGDA[attempt])
    assert not _green(source, PYPI, sandbox)


REFUSED_BY_THE_SCAN = {
    "comment-between": "f true X = ⊤ IsRelatedTo X\n  where\n  open S {- c -} _⇒_ id comp",
    "parenthesised": "f true X = ⊤ IsRelatedTo X\n  where\n  open S (_⇒_) id comp",
    "instance-braces": "f true X = ⊤ IsRelatedTo X\n  where\n  open S ⦃ ⦄",
    "module-application": "f true X = N._IsRelatedTo_ ⊤ X\n  where\n  module N = S _⇒_ id comp",
    "let-open-on-one-line": "f true X = let open S _⇒_ id comp in ⊤ IsRelatedTo X",
    "continuation-past-open": "f true X = ⊤ IsRelatedTo X\n  where\n  open S\n    _⇒_ id comp",
    "line-separator": "f true X = ⊤ IsRelatedTo X\n  where\n  open S\u2028    _⇒_ id comp",
}


@pytest.mark.parametrize("attempt", sorted(REFUSED_BY_THE_SCAN))
def test_the_scan_refuses_these_spellings(attempt: str) -> None:
    shapes = agda_refusals(_TOP + _COPY.replace("BLOCK", REFUSED_BY_THE_SCAN[attempt]), HEADER)
    assert any("agda/agda#8696" in shape for shape in shapes), shapes


# --- false rejects -------------------------------------------------------------------------

FALSE_REJECTS = {
    "open-import-as": (
        "open import Relation.Binary.PropositionalEquality as Eq\nx : 1 ≡ 1\nx = Eq.refl\n"
    ),
    "where-open-ending-the-clause": (
        "open import Relation.Binary.PropositionalEquality\nx : 1 ≡ 1\nx = begin 1 ∎\n"
        "  where open ≡-Reasoning\n\ny : 1 ≡ 1\ny = refl\n"
    ),
}


def test_an_open_inside_a_block_that_goes_on_is_refused_by_design() -> None:
    """Session 9's last rule: inside a block, only ``open M`` ending its line *and the block*
    (the next code at column 0) is taken as unapplied; a block that goes on after it could hold
    its arguments on any line Agda reads as a continuation, so it is refused."""
    source = (
        f"module Solution where\n\n{HEADER}\nopen import Relation.Binary.PropositionalEquality"
        "\nx : 1 ≡ 1\nx = y\n  where\n  open ≡-Reasoning\n  y : 1 ≡ 1\n  y = refl\n"
    )
    assert any("#8696" in shape for shape in agda_refusals(source, header=HEADER))


@pytest.mark.parametrize("honest", sorted(FALSE_REJECTS))
def test_honest_solutions_are_not_refused(honest: str) -> None:
    """Found refused by adv-unsound (``as`` after the name); fixed."""
    source = f"module Solution where\n\n{HEADER}\n{FALSE_REJECTS[honest]}"
    assert agda_refusals(source, header=HEADER) == []


def test_a_record_update_is_refused_by_design() -> None:
    """``record (0 , 0) { fst = 1 }`` is an honest update, but a declaration whose braced
    parameters hold an ``=`` read as one (finding 3): a solution writes record values only as
    ``record { … }``."""
    source = (
        f"module Solution where\n\n{HEADER}\nopen import Agda.Builtin.Sigma\n"
        "r : Σ Nat (λ _ → Nat)\nr = record (0 , 0) { fst = 1 }\n"
    )
    assert any("record" in shape for shape in agda_refusals(source, header=HEADER))
