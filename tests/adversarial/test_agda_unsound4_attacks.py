"""Attacks on ``_agda_unsound`` at commit 7f36ffd (adv-unsound4, session 9). Fixed by the lead as
suggested (``unquoteDecl``, ``unquoteDef``, ``unquote``, ``macro``, ``tactic`` and the declaring
primitives refused in a solution); the tests below pass.

FINDING (critical): Agda 2.6.4.3's reflection declares a data type with no ``data`` token:
``unquoteDecl FixP wrap = bindTC (declareData FixP 0 …) λ _ → defineData FixP ((wrap , …) ∷ [])``
inside a ``mutual`` block with ``P = Negate`` is agda/agda#8564 again, and ``1 + 1 ≡ 3`` is
verified green through ``plan_for``/``judge`` with ``Config(agda_toolchain="pypi")`` and with the
default toolchain (``auto``). Debian's 2.6.2.2 has no ``declareData`` and refuses the file.
Fix: refuse the ``unquoteDecl`` and ``unquoteDef`` keywords in a whole-file solution (keywords
cannot be renamed; ``declareData``/``defineData`` only take effect inside them).

Failed attacks below: hiding a module's arguments from the two unapplied ``open`` shapes behind a
character the scan reads as a line end.

Shape (b) takes ``open M`` as unapplied when it ends its line and the next code is at column 0.
The scan's line ends are Agda's (``\\r``, ``\\f``, NEL, U+2028, U+2029 all become ``\\n`` when
Agda reads the file), so ``open S`` + FF/NEL/LS + ``_⇒_ id comp`` passes the scan but Agda
reads the arguments as a new top-level declaration and refuses the file. A vertical tab is the
opposite: Agda reads it as a space (the application type-checks and proves ``⊥``), and so does
the scan, which refuses the tokens after ``S`` on the same line. No finding: every attempt here
fails, and the tests assert it.
"""

from __future__ import annotations

import pytest

from assay._config import Config
from assay.proofs._agda_scan import agda_refusals
from assay.sandbox import Sandbox
from tests.adversarial.test_agda_mutual_attacks import _green
from tests.adversarial.test_agda_unsound_attacks import _COPY, _TOP, DEBIAN, HEADER, PYPI

_WHERE = "f true X = ⊤ IsRelatedTo X\n  where\n  open S{}_⇒_ id comp"

AGDA_READS_A_LINE_BREAK = {
    "form-feed": "\f",
    "next-line": "\x85",
    "line-separator": "\u2028",
    "paragraph-separator": "\u2029",
}


def _source(separator: str) -> str:
    return _TOP + _COPY.replace("BLOCK", _WHERE.replace("{}", separator))


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


# --- finding: a data type declared by reflection ------------------------------------------

REFLECTED = (
    _TOP
    + """open import Agda.Builtin.Reflection
open import Agda.Builtin.Unit
open import Agda.Builtin.List
open import Agda.Builtin.Sigma

⊥ : Set
⊥ = zero ≡ suc zero

T : Bool → Set₁
T true = Set → Set
T false = Set → Set

Negate : (b : Bool) → T b
Negate true X = X → ⊥
Negate false X = X → ⊥

vis : {A : Set} → A → Arg A
vis = arg (arg-info visible (modality relevant quantity-ω))

mutual
  P : (b : Bool) → T b
  P = Negate

  unquoteDecl FixP wrap = bindTC (declareData FixP 0 (agda-sort (lit 0))) λ _ →
    defineData FixP ((wrap , pi (vis (def (quote P) (vis (con (quote true) []) ∷ vis (def FixP []) ∷ []))) (abs "_" (def FixP []))) ∷ [])

PFix : Type
PFix = def (quote P) (vis (con (quote true) []) ∷ vis (def (quote FixP) []) ∷ [])

unquoteDecl no-fixp = bindTC (declareDef (vis no-fixp) (pi (vis (def (quote FixP) [])) (abs "_" (def (quote ⊥) [])))) λ _ →
  defineFun no-fixp (clause (("g" , vis PFix) ∷ []) (vis (con (quote wrap) (vis (var 0) ∷ [])) ∷ [])
    (var 0 (vis (con (quote wrap) (vis (var 0 []) ∷ [])) ∷ [])) ∷ [])

bang : ⊥
bang = no-fixp (wrap no-fixp)

⊥-elim : {A : Set} → ⊥ → A
⊥-elim ()

wrong : 1 + 1 ≡ 3
wrong = ⊥-elim bang
"""
)
AUTO = Config(judgment_cache="off")


def test_the_scan_refuses_a_reflected_data_type() -> None:
    assert agda_refusals(REFLECTED, header=HEADER)


@pytest.mark.slow
@pytest.mark.parametrize("config", [PYPI, AUTO], ids=["pypi", "auto"])
def test_a_reflected_data_type_is_not_verified(config: Config, sandbox: Sandbox) -> None:
    assert not _green(REFLECTED, config, sandbox)


@pytest.mark.slow
def test_debians_agda_has_no_declare_data(sandbox: Sandbox) -> None:
    """2.6.2.2's reflection cannot declare a data type: the file is refused there."""
    assert not _green(REFLECTED, DEBIAN, sandbox)


# --- attacks that failed ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("separator", sorted(AGDA_READS_A_LINE_BREAK))
def test_a_line_end_the_scan_reads_is_agdas_too(separator: str, sandbox: Sandbox) -> None:
    """The scan passes these (the arguments start a column-0 line), and Agda refuses them
    for the same reason: the arguments are a declaration of their own."""
    source = _source(AGDA_READS_A_LINE_BREAK[separator])
    assert not agda_refusals(source, header=HEADER)
    assert not _green(source, PYPI, sandbox, scan=False)


def test_a_vertical_tab_is_a_space_to_the_scan() -> None:
    """Agda reads ``open S\\v_⇒_ id comp`` as an application (it proves ``⊥`` with the scan set
    aside); the scan reads the same line and refuses it."""
    assert agda_refusals(_source("\v"), header=HEADER)


@pytest.mark.slow
def test_a_vertical_tab_application_is_agdas(sandbox: Sandbox) -> None:
    """The guard for the test above: without the scan, Agda does verify ``⊥`` this way."""
    assert _green(_source("\v"), PYPI, sandbox, scan=False)
