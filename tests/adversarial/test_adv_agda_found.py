"""Attacks on the Agda lane that still work (adversarial review ``adv-agda``, notes/adv-agda.md).

Each test states the property assay promises and fails today; it is ``xfail(strict=True)`` so the
suite stays green until the hole is closed, and turns red (XPASS) the moment it is, so the marker
must then be removed.

0. **A proof of ``1 + 1 ≡ 3`` is ``verified`` (false accept), builtin-only, no OPTIONS.** Agda
   2.6.2.2 lets a ``--safe`` module without ``--cubical`` import ``Agda.Primitive.Cubical`` (it is
   only ``--erased-cubical``; every ``Agda.Builtin.Cubical.*`` is refused, this one is not). Its
   ``primHComp``/``primComp`` under a ``with`` escape the side-condition check (the with-function's
   type is only checked by the internal checker, as in agda/agda#8683), giving ``bad : I → Nat``
   with ``bad i0 = 1`` and ``bad i1 = 0``; ``primTransp`` along ``λ i → D (bad i)`` turns ``0 : Nat``
   into ``⊥``. The scan sees no postulate, pragma or option; Agda exits 0. Fix: refuse importing
   ``Agda.Primitive.Cubical`` (and the cubical primitives by name) like ``--cubical`` itself,
   i.e. an import deny-list (or an allow-list: the header's modules, safe stdlib) in the scan.
1. **A wrong proof padded past the workspace read limit is ``inconclusive``.** The same wrong
   proof padded to 1 MiB is refuted (the Agda lexer refuses text over 512 Ki characters); padded
   past ``max_file_bytes`` (16 MiB) it is "larger than the read limit" and ``inconclusive``: a
   refutation masked by the submission's own size. The candidate wrote the file; its size is a
   finding about the work (refuted, saying why), like the lexer's cap it already exceeds.
2. **A wrong hole candidate that stalls Agda is ``error`` in ``hole fill``.** ``classify`` maps
   every ``machinery`` finding to ``error``, including a time (or memory) limit the parent
   observed while checking the candidate's own term: a Church-numeral tower makes Agda compare
   two unary numbers of 2^65536 ``suc`` and the status is ``error`` ("assay's own machinery
   failed") rather than a finding. A search loop that treats ``error`` as "not the candidate's
   fault" rewards stalling over a plain ``type_error``. A limit the candidate's term ran into
   needs its own status (``limit``/``timeout``, say which), or ``type_error`` when the caller
   makes limits rules; ``error`` only for assay's own failures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import CheckContext, Config, Status, build_check
from assay.proofs import fill_hole
from assay.sandbox import Limits, Sandbox
from tests.proofs.conftest import need

HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality"
WRONG = f"module Sol where\n\n{HEADER}\n\nproof : 1 + 1 ≡ 3\nproof = refl\n"
READ_LIMIT = 16 * 1024 * 1024

CUBICAL = """module Sol where

open import Agda.Primitive.Cubical renaming (primTransp to transp; primHComp to hcomp; primComp to comp)
open import Agda.Builtin.Nat
open import Agda.Builtin.Equality

data ⊥ : Set where

D : Nat → Set
D zero    = ⊥
D (suc _) = Nat

bad : I → Nat
bad j with {line}
... | w = w

boom : ⊥
boom = transp (λ i → D (bad i)) i0 0

proof : {statement}
{proof}
"""
FALSE_PROOFS = {
    "hcomp_under_with": ("hcomp {{A = Nat}} {{φ = j}} (λ i _ → 0) 1", "1 + 1 ≡ 3"),
    "comp_under_with": ("comp (λ _ → Nat) {{φ = j}} (λ i _ → 0) 1", "1 + 1 ≡ 3"),
    "every_type_inhabited": ("hcomp {{A = Nat}} {{φ = j}} (λ i _ → 0) 1", "(A : Set) → A"),
}


def _whole_file(workspace: Path, statement: str = "1 + 1 ≡ 3") -> Status:
    spec = {
        "kind": "agda",
        "file": "Sol.agda",
        "stdlib": False,
        "header": HEADER,
        "statement": statement,
        "name": "proof",
    }
    ctx = CheckContext(
        workspace=workspace, sandbox=Sandbox(backend="bwrap"), config=Config(judgment_cache="off")
    )
    return build_check(spec).run(ctx).status


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: Agda.Primitive.Cubical is importable under --safe "
    "without --cubical, and hcomp/comp under `with` prove ⊥; the scan does not refuse it",
)
@pytest.mark.parametrize("case", sorted(FALSE_PROOFS))
def test_a_proof_of_false_through_agda_primitive_cubical_is_refuted(
    case: str, tmp_path: Path
) -> None:
    need("agda")
    line, statement = FALSE_PROOFS[case]
    proof = "proof with boom\n... | ()" if "≡" in statement else "proof A with boom\n... | ()"
    (tmp_path / "Sol.agda").write_text(
        CUBICAL.format(line=line.format(), statement=statement, proof=proof)
    )
    assert _whole_file(tmp_path, statement) is Status.REFUTED


PADDINGS = {
    "line_comment": lambda: WRONG + "-- " + "x" * READ_LIMIT + "\n",
    "block_comment": lambda: WRONG + "{- " + "y" * READ_LIMIT + " -}\n",
    "blank_lines": lambda: WRONG + "\n" * (READ_LIMIT + 1),
}


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: a wrong proof padded past max_file_bytes is "
    "inconclusive (workspace_text), while the same proof padded to 1 MiB is refuted",
)
@pytest.mark.parametrize("case", sorted(PADDINGS))
def test_a_wrong_proof_padded_past_the_read_limit_is_refuted(case: str, tmp_path: Path) -> None:
    need("agda")
    (tmp_path / "Sol.agda").write_text(PADDINGS[case]())
    assert _whole_file(tmp_path) is Status.REFUTED


def test_the_same_wrong_proof_padded_below_the_limit_is_refuted(tmp_path: Path) -> None:
    """The baseline: the lexer's own cap refutes without judging (keeps the finding above honest)."""
    need("agda")
    (tmp_path / "Sol.agda").write_text(WRONG + "-- " + "x" * (1 << 20) + "\n")
    assert _whole_file(tmp_path) is Status.REFUTED


TOWER = "let t = λ {{A : Set}} (f : A → A) (x : A) → f (f x) in {body}"
STALLING = {
    "church_tower_conversion": TOWER.format(
        body="(λ (p : t t t t t suc 0 ≡ t t t t t suc 1) → p) refl"
    ),
    "church_tower_under_builtin_plus": TOWER.format(
        body="(λ (p : t t t t t suc 0 + 0 ≡ 3) → p) refl"
    ),
}


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: hole fill reports a time limit the candidate's own "
    "term ran into as 'error' (assay's machinery), masking a wrong candidate",
)
@pytest.mark.parametrize("case", sorted(STALLING))
def test_a_stalling_wrong_candidate_is_not_an_error(case: str, tmp_path: Path) -> None:
    need("agda")
    obligation = tmp_path / "Plus.agda"
    obligation.write_text(f"module Plus where\n\n{HEADER}\n\nwrong : 1 + 1 ≡ 3\nwrong = {{! !}}\n")
    result = fill_hole(
        obligation,
        7,
        9,
        STALLING[case],
        sandbox=Sandbox(backend="bwrap"),
        stdlib=False,
        limits=Limits(timeout=5, memory_mb=2048),
    )
    assert result.status != "error", result.diagnostics
