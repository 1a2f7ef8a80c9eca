"""Attacks on the scan's refusal of the mutual groups that fool Agda's positivity checker
(agda/agda#8564), found by adv-mutual (session 9) against a first scan (``_agda_mutual``) that
read Agda's mutual groups from tokens and layout. Every spelling below got past it; the lead
replaced it by refusing the ingredients themselves in a whole-file solution
(``_agda_unsound``: no data or record declaration, no module applied to arguments), so each
finding is now an ordinary test, and the "honest" files are refused in a solution exactly for
those declarations (fine in an obligation, the author's file). The report as written:

The exploit is adv-auto's (``test_agda_auto_attacks``): ``P = Negate``, of a type whose arity is
computed, in one mutual group with ``data FixP`` whose constructor takes ``P tt FixP``; both
Agdas then accept ``1 + 1 ≡ 3`` under ``--safe``. The scan reads the group from tokens and
layout; Agda's nicifier forms it from *declarations*. Where the two readings differ, the group
gets through and is verified (both Agdas):

- **a signature over two lines** (``P`` then ``  : T``): the scan reads a signature only when
  its first line holds the ``:``, so ``P`` never waits for a clause;
- **a record with braced parameters** (``record FixP {u : ⊤} : Set where``): a ``{`` before
  ``:`` makes the scan take the declaration for a record expression, so no rule sees it;
- **a line that mentions the name but is no clause of it** (``infix 5 P``, ``syntax P x y = …``,
  another function's clause ``f {P = x} = x`` or ``... | P = P``): the scan takes any line at the
  signature's column naming it before its first ``=`` for a clause;
- **``private``/``instance``/``abstract`` blocks**: Agda's nicifier flattens them (the same
  lone-signature state runs through), but the scan drops a block's waiting signatures when the
  block closes, and does not read a signature after a keyword on its line (``private P : T``);
- **``;`` on one line** (``P : T ; data FixP … where …`` or ``Z = tt ; P : T``): the scan reads
  one signature or clause per line.

**A second hole, agda/agda#8696** (fixed upstream in 2026-08, present in both Agdas here): a
module application (``module N = M ⊤``, ``open M ⊤``, ``let open M ⊤ in``) made inside a
``where``/``let`` block or a mutual group copies ``M``'s data or record type with its arguments
marked unused, so the enclosing function's argument is judged nonvariant and ``f b ⊤ ≡ f b ⊥``
holds by ``refl``: ``1 + 1 ≡ 3`` is verified with no data type in any group, past the scan. A
record's body is such a block too.

False rejects (lesser): mutually inductive data types with no function in their group (``Even``
and ``Odd``, written with ``mutual`` or with forward declarations) are refused, though the hole
needs a function in the group; a data type with a ``{{…}}`` parameter is refused as "defined
apart from its declaration" (``_depth_zero`` counts ``{{`` once, the lexer closes it twice).

Attacks that failed (ordinary tests): a signature with several names, a type on the next line
after ``P :``, a form feed inside the type, a ``where`` block, a nested module, a record with an
instance parameter: the scan refuses them. A clause of another function naming ``P`` (Agda: an
ambiguous clause), an ``opaque`` block (Agda: no definition), explicit braces after a data
type's ``where`` on one line (Agda: parse error): Agda refuses them. Honest files (record
expressions and updates, ``with``, sections, ``where``, pattern lambdas, instances, mixfix
names, ``rewrite``, ``let``, pattern synonyms, ``variable``) are not refused.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from assay import Status
from assay._config import Config
from assay.proofs import judge, plan_for
from assay.proofs._agda_scan import agda_refusals
from assay.sandbox import Limits, Sandbox
from tests.adversarial.test_agda_auto_attacks import _ABSURD, _PRELUDE, HEADER
from tests.helpers import run_kind
from tests.proofs.conftest import need

PYPI = Config(agda_toolchain="pypi", judgment_cache="off")
DEBIAN = Config(agda_toolchain="debian", judgment_cache="off")
LIMITS = Limits(timeout=120, memory_mb=4096)
SIG = "P : (x : ⊤) → ⊤-rec x (Set → Set)"
DATA = "data FixP : Set where\n  wrap : P tt FixP → FixP\n"
_RECORD_ABSURD = _ABSURD.replace("FixP → ⊥", "FixP {tt} → ⊥").replace(
    "no-fixp (wrap x) = x (wrap x)", "no-fixp f = FixP.unwrap f f"
)
_ABSTRACT_ABSURD = (
    "\n⊥-elim : {A : Set} → ⊥ → A\n⊥-elim ()\n\nwrong : 1 + 1 ≡ 3\nwrong = ⊥-elim bang\n"
)

BYPASSES: dict[str, tuple[str, str]] = {
    "signature-over-two-lines": (
        f"P\n  : (x : ⊤) → ⊤-rec x (Set → Set)\n\n{DATA}\nP = Negate\n",
        _ABSURD,
    ),
    "record-with-braced-parameter": (
        "mutual\n  P : (x : ⊤) → ⊤-rec x (Set → Set)\n  P = Negate\n\n"
        "  record FixP {u : ⊤} : Set where\n    inductive\n    constructor wrap\n"
        "    field unwrap : P tt (FixP {u})\n",
        _RECORD_ABSURD,
    ),
    "infix-line-names-it": (f"{SIG}\ninfix 5 P\n\n{DATA}\nP = Negate\n", _ABSURD),
    "syntax-line-names-it": (
        f"{SIG}\nsyntax P x y = y ⟪ x ⟫\n\n{DATA}\nP = Negate\n",
        _ABSURD,
    ),
    "private-on-the-signatures-line": (
        f"private {SIG}\n\n{DATA}\nprivate P = Negate\n",
        _ABSURD,
    ),
    "private-blocks": (f"private\n  {SIG}\n\n{DATA}\nprivate\n  P = Negate\n", _ABSURD),
    "instance-blocks": (f"instance\n  {SIG}\n\n{DATA}\ninstance\n  P = Negate\n", _ABSURD),
    "abstract-blocks": (
        f"abstract\n  {SIG}\n\n{DATA}\nabstract\n  P = Negate\n\n"
        "  no-fixp : FixP → ⊥\n  no-fixp (wrap x) = x (wrap x)\n\n"
        "  bang : ⊥\n  bang = no-fixp (wrap no-fixp)\n",
        _ABSTRACT_ABSURD,
    ),
    "semicolon-before-data": (
        f"{SIG} ; data FixP : Set where\n  wrap : P tt FixP → FixP\nP = Negate\n",
        _ABSURD,
    ),
    "semicolon-before-signature": (f"Z : ⊤\nZ = tt ; {SIG}\n\n{DATA}\nP = Negate\n", _ABSURD),
    "named-argument-in-another-clause": (
        f"{SIG}\nf : {{P : Set}} → Set\nf {{P = x}} = x\n\n{DATA}\nP = Negate\n",
        _ABSURD,
    ),
    "pattern-variable-in-a-with-clause": (
        f"{SIG}\nf : ⊤ → ⊤\nf x with x\n... | P = P\n\n{DATA}\nP = Negate\n",
        _ABSURD,
    ),
}


def _source(group: str, absurd: str = _ABSURD) -> str:
    return f"module Solution where\n\n{HEADER}\n{_PRELUDE}\n{group}{absurd}"


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


def _green(source: str, config: Config, sandbox: Sandbox, scan: bool = True) -> bool:
    """Whether assay's judge calls ``source``'s ``wrong`` a proof of ``1 + 1 ≡ 3`` (``scan``
    false: Agda's own reading, the refusal scan set aside)."""
    need("agda")
    plan = plan_for(
        "agda", source, statement="1 + 1 ≡ 3", name="wrong", header=HEADER, config=config
    )
    if not scan:
        plan = dataclasses.replace(plan, refusals=[])
    verdict = judge("agda", plan, sandbox, LIMITS, config=config).verdict
    return verdict is not None and verdict.green


# --- findings: the group gets past the scan, and Agda verifies ⊥ ---------------------------


@pytest.mark.parametrize("bypass", sorted(BYPASSES))
def test_the_scan_refuses_every_spelling_of_the_group(bypass: str) -> None:
    group, absurd = BYPASSES[bypass]
    assert agda_refusals(_source(group, absurd), header=HEADER)


@pytest.mark.slow
@pytest.mark.parametrize("config", [PYPI, DEBIAN], ids=["pypi", "debian"])
@pytest.mark.parametrize("bypass", sorted(BYPASSES))
def test_no_spelling_of_the_group_is_verified(
    bypass: str, config: Config, sandbox: Sandbox
) -> None:
    group, absurd = BYPASSES[bypass]
    assert not _green(_source(group, absurd), config, sandbox)


@pytest.mark.slow
def test_the_agda_kind_does_not_verify_a_two_line_signature(tmp_path: Path) -> None:
    """The user's path: the ``agda`` kind, the default config (``auto``)."""
    need("agda")
    group, absurd = BYPASSES["signature-over-two-lines"]
    (tmp_path / "Solution.agda").write_text(_source(group, absurd))
    outcome = run_kind(
        "agda",
        file="Solution.agda",
        statement="1 + 1 ≡ 3",
        name="wrong",
        header=HEADER,
        workspace=tmp_path,
        config=Config(judgment_cache="off"),
    )
    assert outcome.status is not Status.VERIFIED, outcome.status


# --- finding 2: a module application inside a block (agda/agda#8696) ----------------------

_COPY = """
open import Agda.Builtin.Bool
open import Agda.Builtin.Unit

data ⊥ : Set where

module M (A : Set) where
  data F (X : Set) : Set where
    c : X → F X

f : Bool → Set → Set
f true X = N.F X
  where
  module N = M ⊤
f false X = ⊤

eq : (b : Bool) → f b ⊤ ≡ f b ⊥
eq b = refl

cast : {A B : Set} → A ≡ B → A → B
cast refl a = a

unF : {A X : Set} → M.F A X → X
unF (M.c x) = x

boom : ⊥
boom = unF (cast (eq true) (M.c tt))

⊥-elim : {A : Set} → ⊥ → A
⊥-elim ()

wrong : 1 + 1 ≡ 3
wrong = ⊥-elim boom
"""
_WHERE_COPY = "f true X = N.F X\n  where\n  module N = M ⊤\n"
_SIGNATURE_OF_F = "f : Bool → Set → Set"
COPIES = {
    "where-module": _COPY,
    "where-open": _COPY.replace(_WHERE_COPY, "f true X = F X\n  where\n  open M ⊤\n"),
    "let-open": _COPY.replace(_WHERE_COPY, "f true X = let open M ⊤ in F X\n"),
    "record-copied": _COPY.replace(
        "  data F (X : Set) : Set where\n    c : X → F X\n",
        "  record F (X : Set) : Set where\n    constructor c\n    field unc : X\n",
    ).replace("unF (M.c x) = x", "unF r = M.F.unc r"),
    "a-functions-group": _COPY.replace(_WHERE_COPY, "f true X = N.F X\n").replace(
        _SIGNATURE_OF_F, f"dummy : ⊤\nmodule N = M ⊤\ndummy = tt\n\n{_SIGNATURE_OF_F}"
    ),
    "a-mutual-block-of-functions": _COPY.replace(_WHERE_COPY, "f true X = N.F X\n").replace(
        _SIGNATURE_OF_F,
        f"mutual\n  dummy : ⊤\n  dummy = tt\n  module N = M ⊤\n\n{_SIGNATURE_OF_F}",
    ),
}
_F_AND_EQ = _COPY[_COPY.index(_SIGNATURE_OF_F) : _COPY.index("cast :")]
COPIES["a-record-body"] = _COPY.replace(
    _F_AND_EQ,
    "record Box : Set₁ where\n  field unit : ⊤\n  module N = M ⊤\n  f : Bool → Set → Set\n"
    "  f true X = N.F X\n  f false X = ⊤\n\nbox : Box\nbox = record { unit = tt }\n\n"
    "eq : (b : Bool) → Box.f box b ⊤ ≡ Box.f box b ⊥\neq b = refl\n\n",
)
COPY_CONTROLS = {
    "top-level-copy": _COPY.replace(_WHERE_COPY, "f true X = N.F X\n").replace(
        _SIGNATURE_OF_F, f"module N = M ⊤\n\n{_SIGNATURE_OF_F}"
    ),
    "no-copy": _COPY.replace(_WHERE_COPY, "f true X = M.F ⊤ X\n"),
    "copy-in-a-nested-module": _COPY.replace(_WHERE_COPY, "f true X = K.N.F X\n").replace(
        _SIGNATURE_OF_F, f"module K where\n  module N = M ⊤\n\n{_SIGNATURE_OF_F}"
    ),
}


def _module(body: str) -> str:
    return f"module Solution where\n\n{HEADER}\n{body}"


@pytest.mark.parametrize("copy", sorted(COPIES))
def test_the_scan_refuses_a_module_application_inside_a_block(copy: str) -> None:
    assert agda_refusals(_module(COPIES[copy]), header=HEADER)


@pytest.mark.slow
@pytest.mark.parametrize("config", [PYPI, DEBIAN], ids=["pypi", "debian"])
@pytest.mark.parametrize("copy", sorted(COPIES))
def test_a_copied_data_type_does_not_make_an_argument_nonvariant(
    copy: str, config: Config, sandbox: Sandbox
) -> None:
    assert not _green(_module(COPIES[copy]), config, sandbox)


@pytest.mark.slow
@pytest.mark.parametrize("control", sorted(COPY_CONTROLS))
def test_agda_refuses_the_cast_when_the_copy_is_outside_a_block(
    control: str, sandbox: Sandbox
) -> None:
    """The controls: a copy at a module's top level outside any group, or none, and Agda
    refuses ``eq b = refl``. So the hole is exactly the copy made inside a block."""
    assert not _green(_module(COPY_CONTROLS[control]), PYPI, sandbox, scan=False)


# --- attacks that failed ------------------------------------------------------------------

REFUSED_BY_THE_SCAN = {
    "several-names": f"P Q : (x : ⊤) → ⊤-rec x (Set → Set)\nQ = Negate\n\n{DATA}\nP = Negate\n",
    "type-on-the-next-line": f"P :\n  (x : ⊤) → ⊤-rec x (Set → Set)\n\n{DATA}\nP = Negate\n",
    "form-feed-in-the-type": f"P : (x : ⊤) →\f⊤-rec x (Set → Set)\n\n{DATA}\nP = Negate\n",
    "where-block": f"Z : ⊤\nZ = tt\n  where\n  {SIG}\n  {DATA.replace(chr(10), chr(10) + '  ')}P = Negate\n",
    "nested-module": f"{SIG}\nmodule M where\n  {DATA.replace(chr(10), chr(10) + '  ')}\nP = Negate\n",
    "record-instance-parameter": (
        f"{SIG}\n\nrecord FixP ⦃ u : ⊤ ⦄ : Set where\n  inductive\n  constructor wrap\n"
        "  field unwrap : P tt (FixP ⦃ u ⦄)\n\nP = Negate\n"
    ),
    "private-data": f"{SIG}\nprivate\n  {DATA.replace(chr(10), chr(10) + '  ')}\nP = Negate\n",
    "mixfix-name": (
        "_⊳_ : (x : ⊤) → ⊤-rec x (Set → Set)\n\n"
        + DATA.replace("P tt FixP", "tt ⊳ FixP")
        + "\n_⊳_ = Negate\n"
    ),
    "another-clause-in-parentheses": f"{SIG}\nf : ⊤ → ⊤\n(f) x = x\n\n{DATA}\nP = Negate\n",
    "a-clause-over-two-lines-first": f"Q : ⊤\nQ =\n  tt\n{SIG}\n\n{DATA}\nP = Negate\n",
    "a-where-blocks-clause-after-semicolon": (
        f"{SIG}\nZ : ⊤\nZ = tt where Q = ⊤ ; P = ⊤\n\n{DATA}\nP = Negate\n"
    ),
}


@pytest.mark.parametrize("attempt", sorted(REFUSED_BY_THE_SCAN))
def test_the_scan_refuses_these_spellings(attempt: str) -> None:
    shapes = agda_refusals(_source(REFUSED_BY_THE_SCAN[attempt]), header=HEADER)
    assert any("agda/agda#8564" in shape for shape in shapes), shapes


REFUSED_BY_AGDA = {
    "another-clause-names-it": (
        f"Q : Set → Set\nQ P = P\n{SIG}\nQ' : Set → Set\nQ' P = P\n\n{DATA}\nP = Negate\n"
    ),
    "opaque-block": f"opaque\n  {SIG}\n\n{DATA}\nP = Negate\n",
    "braces-after-where-on-one-line": (
        f"{SIG} ; data FixP : Set where {{ wrap : P tt FixP → FixP }} ; P = Negate\n"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("attempt", sorted(REFUSED_BY_AGDA))
def test_agda_refuses_these_spellings(attempt: str, sandbox: Sandbox) -> None:
    """They pass the scan, but Agda does not form the group (or parse the file)."""
    assert not _green(_source(REFUSED_BY_AGDA[attempt]), PYPI, sandbox)


# --- false rejects ------------------------------------------------------------------------

_HONEST_HEADER = f"module Solution where\n\n{HEADER}\n\n"
EVEN_ODD = {
    "mutual-block": (
        "mutual\n  data Even : Nat → Set where\n    ezero : Even zero\n"
        "    esuc : ∀ {n} → Odd n → Even (suc n)\n\n"
        "  data Odd : Nat → Set where\n    osuc : ∀ {n} → Even n → Odd (suc n)\n"
    ),
    "forward-declarations": (
        "data Even : Nat → Set\ndata Odd : Nat → Set\n\ndata Even where\n  ezero : Even zero\n"
        "  esuc : ∀ {n} → Odd n → Even (suc n)\n\ndata Odd where\n"
        "  osuc : ∀ {n} → Even n → Odd (suc n)\n"
    ),
}


@pytest.mark.parametrize("spelling", sorted(EVEN_ODD))
def test_mutually_inductive_data_types_are_refused_in_a_solution_only(spelling: str) -> None:
    """By design (session 9): a solution declares no data type at all; an obligation (the
    author's file) may."""
    source = _HONEST_HEADER + EVEN_ODD[spelling]
    assert agda_refusals(source, header=HEADER, obligation=True) == []
    assert all("#8564" in shape for shape in agda_refusals(source, header=HEADER))
    assert agda_refusals(source, header=HEADER)


def test_a_data_type_with_a_double_brace_instance_parameter_is_read_as_one() -> None:
    source = _HONEST_HEADER + "data X {{u : Nat}} : Set where\n  x : X\n"
    assert agda_refusals(source, header=HEADER, obligation=True) == []
    assert len(agda_refusals(source, header=HEADER)) == 1


_D = "\ndata D : Set where\n  d : D\n"
_R = "record R : Set where\n  field a : Nat\n\n"
HONEST = {
    "record-expression": f"{_R}r : R\nr = record {{ a = 1 }}\n{_D}",
    "record-update": f"{_R}r : R\nr = record {{ a = 1 }}\n\ns : R\ns = record r {{ a = 2 }}\n{_D}",
    "record-expression-on-its-own-line": f"{_R}r : R\nr =\n  record {{ a = 1 }}\n{_D}",
    "record-update-on-its-own-line": (
        f"{_R}r : R\nr = record {{ a = 1 }}\n\ns : R\ns =\n  record r {{ a = 2 }}\n{_D}"
    ),
    "with": f"f : Nat → Nat\nf n with n\n... | zero = 0\n... | suc m = m\n{_D}",
    "operator-section": f"_+1 : Nat → Nat\n_+1 = (_+ 1)\n{_D}",
    "where-block": f"f : Nat → Nat\nf n = g n\n  where\n  g : Nat → Nat\n  g x = x\n{_D}",
    "pattern-lambda": f"f : Nat → Nat\nf = λ {{ zero → 0 ; (suc n) → n }}\n{_D}",
    "lambda-where": f"f : Nat → Nat\nf = λ where\n  zero → 0\n  (suc n) → n\n{_D}",
    "instances": (
        "record Show (A : Set) : Set where\n  field show : A → Nat\nopen Show ⦃ ... ⦄\n\n"
        f"instance\n  showNat : Show Nat\n  showNat = record {{ show = λ n → n }}\n{_D}"
    ),
    "infix-operator": f"_⊕_ : Nat → Nat → Nat\nx ⊕ y = x + y\n{_D}",
    "mixfix": (
        "if_then_else_ : {A : Set} → Nat → A → A → A\n"
        f"if zero then x else y = y\nif suc _ then x else y = x\n{_D}"
    ),
    "absurd-clause": f"data ⊥ : Set where\n\nf : ⊥ → Nat\nf ()\n{_D}",
    "record-implicit-parameter": (
        "record Σ {A : Set} (B : A → Set) : Set where\n  constructor _,_\n"
        "  field\n    fst : A\n    snd : B fst\n"
    ),
    "indexed-data": (
        "data Vec (A : Set) : Nat → Set where\n  [] : Vec A zero\n"
        "  _∷_ : ∀ {n} → A → Vec A n → Vec A (suc n)\n"
    ),
    "signature-over-two-lines": f"f\n  : Nat → Nat\nf n = n\n{_D}",
    "rewrite": f"f : (n : Nat) → n ≡ n\nf n rewrite refl {{x = n}} = refl\n{_D}",
    "record-module-function": f"record R : Set where\n  field a : Nat\n  b : Nat\n  b = a\n{_D}",
    "fixity-then-operator": f"infixl 6 _⊕_\n_⊕_ : Nat → Nat → Nat\n_⊕_ = _+_\n{_D}",
    "private-function": f"private\n  f : Nat\n  f = 1\n{_D}",
    "let": f"f : Nat\nf = let x = 1 in x\n{_D}",
    "pattern-synonym": f"pattern one = suc zero\n{_D}",
    "variable": f"variable\n  n : Nat\n{_D}",
    "eta-record": "record R : Set where\n  eta-equality\n  constructor mk\n  field a : Nat\n",
    "mutual-functions-then-data": (
        "mutual\n  ev : Nat → Nat\n  ev zero = 1\n  ev (suc n) = od n\n\n"
        f"  od : Nat → Nat\n  od zero = 0\n  od (suc n) = ev n\n{_D}"
    ),
    "forward-function-signatures": (
        "ev : Nat → Nat\nod : Nat → Nat\nev zero = 1\nev (suc n) = od n\n"
        f"od zero = 0\nod (suc n) = ev n\n{_D}"
    ),
}


@pytest.mark.parametrize("shape", sorted(HONEST))
def test_honest_files_are_refused_only_for_the_declarations_a_solution_may_not_make(
    shape: str,
) -> None:
    """As an obligation (the author's file) nothing here is refused; as a solution, only its
    data and record declarations and module applications are (by design, session 9), and the
    same file without its trailing data type, where that was all, is not refused at all."""
    source = _HONEST_HEADER + HONEST[shape]
    assert agda_refusals(source, header=HEADER, obligation=True) == []
    assert all(
        "#8564" in shape or "#8696" in shape for shape in agda_refusals(source, header=HEADER)
    )
    bare = _HONEST_HEADER + HONEST[shape].replace(_D, "")
    if "data " not in bare and "record " not in bare.replace("record {", ""):
        assert agda_refusals(bare, header=HEADER) == [], bare
