"""Attacks on the Agda lane that still work (adversarial review ``adv-agda``, notes/adv-agda.md).

Each test states the property assay promises. All three were ``xfail(strict=True)`` when found
and are fixed now (helper ``agda-fix``): 0 by an import allow-list in the scan
(``proofs._agda_imports``), 1 by ``workspace_text`` refuting an over-the-cap file, 2 by the
``limit`` hole status. The tests after the original ones pin the fixes' edges.

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
from typing import Any

import pytest

from assay import CheckContext, Config, Status, build_check
from assay.proofs import fill_hole
from assay.proofs._agda_scan import agda_refusals
from assay.proofs._holes import classify
from assay.sandbox import Limits, Sandbox
from tests.helpers import run_kind
from tests.proofs.conftest import need

AGDA_STDLIB = Path(Config().agda_stdlib)

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
    assert result.status == "limit", result.diagnostics
    assert result.limit == "time"
    assert result.to_json()["limit"] == "time"


def test_a_stalling_check_is_an_error_only_when_a_known_good_proof_fails_too(
    tmp_path: Path,
) -> None:
    """Limits too small for any proof (the canary fails too) are assay's problem: ``error``."""
    need("agda")
    obligation = tmp_path / "Plus.agda"
    obligation.write_text(f"module Plus where\n\n{HEADER}\n\nright : 1 + 1 ≡ 2\nright = {{! !}}\n")
    result = fill_hole(
        obligation,
        7,
        9,
        "refl",
        sandbox=Sandbox(backend="bwrap"),
        stdlib=False,
        limits=Limits(timeout=0.05, memory_mb=2048),
    )
    assert result.status == "error", result.diagnostics
    assert result.limit is None
    assert "known-good proof fails" in result.diagnostics[-1]


def test_classify_keeps_limits_apart_from_machinery_failures() -> None:
    assert classify(None, "machinery", "", "time") == ("limit", 0)
    assert classify(None, "machinery", "", "memory") == ("limit", 0)
    assert classify(1, "machinery", "", None) == ("error", 0)


# ---- 0. the import allow-list (no Agda needed: the scan alone) ----------------------------

REFUSED_IMPORTS = {
    "open import Agda.Primitive.Cubical\n": "Agda.Primitive.Cubical",
    "import Agda.Primitive.Cubical as C\n": "Agda.Primitive.Cubical",
    "open import {- a comment -} Agda.Primitive.Cubical using (I)\n": "Agda.Primitive.Cubical",
    "open import\n  Agda.Primitive.Cubical\n": "Agda.Primitive.Cubical",
    "x : Set₁\nx = Set\n  where\n    open import Agda.Primitive.Cubical\n": (
        "Agda.Primitive.Cubical"
    ),
    "open import Agda.Builtin.Cubical.Path\n": "Agda.Builtin.Cubical.Path",
    "open import Agda.Builtin.Cubical.Glue\n": "Agda.Builtin.Cubical.Glue",
    "open import Agda.Builtin.TrustMe\n": "Agda.Builtin.TrustMe",
    "open import Agda.Builtin.Size\n": "Agda.Builtin.Size",
    "open import Agda.Builtin.Equality.Rewrite\n": "Agda.Builtin.Equality.Rewrite",
    "open import Agda.Builtin.Equality.Erase\n": "Agda.Builtin.Equality.Erase",
    "open import Agda.Builtin.Reflection.External\n": "Agda.Builtin.Reflection.External",
    "open import Size\n": "Size",
    "open import Codata.Thunk\n": "Codata.Thunk",
    "open import Relation.Binary.PropositionalEquality.TrustMe\n": (
        "Relation.Binary.PropositionalEquality.TrustMe"
    ),
    "open import Debug.Trace\n": "Debug.Trace",
    "open import IO.Primitive\n": "IO.Primitive",
    "open import Data.Nat.NoSuchModule\n": "Data.Nat.NoSuchModule",
    "import AssayGoal\n": "AssayGoal",
    "import Sol\n": "Sol",
}


@pytest.mark.parametrize("imports", sorted(REFUSED_IMPORTS))
def test_an_import_outside_the_allow_list_is_refused_by_name(imports: str) -> None:
    module = REFUSED_IMPORTS[imports]
    shapes = agda_refusals(f"module Sol where\n\n{imports}")
    assert any(shape.startswith(f"the import of {module!r}") for shape in shapes), shapes


ALLOWED_IMPORTS = [
    "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality\n",
    "open import Agda.Primitive using (Level; lsuc)\n",
    "import Agda.Builtin.Sigma as S\n",
    "open import Data.Nat\nopen import Data.Nat.Properties using (+-comm)\n",
    "open import Relation.Binary.PropositionalEquality\n",
    "open import Level\nopen import Data.List\n",
    "open import Codata.Musical.Notation\n",  # --safe --guardedness: Agda wants the flag too
    "-- open import Agda.Primitive.Cubical\n{- import Size -}\n",
]


@pytest.mark.parametrize("imports", ALLOWED_IMPORTS)
def test_builtin_and_safe_stdlib_imports_are_allowed(imports: str) -> None:
    assert agda_refusals(f"module Sol where\n\n{imports}") == []


def test_the_trusted_headers_modules_are_allowed() -> None:
    source = "module Sol where\n\nopen import Size\n"
    assert agda_refusals(source, header="open import Size") == []
    assert agda_refusals(source, header="open import Data.Nat") != []


@pytest.mark.parametrize("name", ["primHComp", "primTransp", "primComp", "primINeg", "primGlue"])
def test_the_cubical_primitive_names_are_refused_too(name: str) -> None:
    shapes = agda_refusals(f"module Sol where\n\nx = {name}\n")
    assert f"the cubical primitive `{name}`" in shapes


def test_an_import_without_a_module_name_is_refused() -> None:
    assert "an `import` without a module name" in agda_refusals("module Sol where\nimport\n")


def test_agda_stdlib_never_reaches_the_cubical_primitives() -> None:
    """The allow-list trusts agda-stdlib's --safe modules: none of them imports cubical Agda."""
    if not AGDA_STDLIB.is_dir():
        pytest.skip(f"agda-stdlib is not installed at {AGDA_STDLIB}")
    for path in AGDA_STDLIB.rglob("*.agda"):
        text = path.read_text(encoding="utf-8")
        assert "Agda.Primitive.Cubical" not in text, path
        assert "Agda.Builtin.Cubical" not in text, path


def test_the_kind_refuses_an_obligation_route_to_the_cubical_primitives(tmp_path: Path) -> None:
    """Hole form: the filled file is scanned with the same allow-list."""
    obligation = tmp_path / "Hole.agda"
    obligation.write_text(
        "module Hole where\n\nopen import Agda.Primitive.Cubical\n"
        f"{HEADER}\n\nproof : 1 + 1 ≡ 3\nproof = {{! !}}\n"
    )
    outcome = run_kind("agda", answer="refl", obligation="Hole.agda", base_dir=tmp_path)
    assert outcome.status is Status.REFUTED
    assert "'Agda.Primitive.Cubical'" in outcome.detail


# ---- 1. every workspace kind that reads a file: over the cap is refuted ---------------------

FILE_KINDS: dict[str, dict[str, Any]] = {
    "file_contains": {"value": "42"},
    "file_equals": {"value": "42\n"},
    "file_json": {"key": "a", "value": 42},
}


@pytest.mark.parametrize("kind", sorted(FILE_KINDS))
def test_a_workspace_file_padded_past_the_read_limit_is_refuted(kind: str, tmp_path: Path) -> None:
    (tmp_path / "out.txt").write_text('{"a": 42}' + " " * 2000)
    outcome = run_kind(
        kind,
        workspace=tmp_path,
        path="out.txt",
        config=Config(max_file_bytes=1000),
        **FILE_KINDS[kind],
    )
    assert outcome.status is Status.REFUTED, outcome.detail
    assert "larger than the 1000 byte read limit" in outcome.detail


@pytest.mark.slow
@pytest.mark.parametrize("rules", [False, True], ids=["default", "limits_are_rules"])
def test_the_agda_kinds_hole_form_reads_a_stalling_candidate_like_coq(
    rules: bool, tmp_path: Path
) -> None:
    """The kind's hole form agrees with coq and lean: a limit is inconclusive, or refuted when
    the author made limits rules (``hole fill`` says ``limit``; the kind has no such status)."""
    need("agda")
    (tmp_path / "Plus.agda").write_text(
        f"module Plus where\n\n{HEADER}\n\nwrong : 1 + 1 ≡ 3\nwrong = {{! !}}\n"
    )
    outcome = run_kind(
        "agda",
        answer=STALLING["church_tower_conversion"],
        obligation="Plus.agda",
        stdlib=False,
        timeout=5,
        limits_are_rules=rules,
        base_dir=tmp_path,
        config=Config(judgment_cache="off"),
    )
    assert outcome.status is (Status.REFUTED if rules else Status.INCONCLUSIVE), outcome.detail
    assert "did not finish within 5s" in outcome.detail
