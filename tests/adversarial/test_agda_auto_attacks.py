"""Attacks on ``agda_toolchain="auto"`` (the PyPI Agda 2.6.4.3 judges, Debian's 2.6.2.2 behind it):
choosing the judge, forging its run-time fallback, the lane's and the cache's Agda, the launcher.
Found by adv-auto (session 9); its three findings are fixed (the lead, as it suggested: the scan
refuses the mutual groups, only the author's inputs choose the Agda, the fallback's verdict is not
cached under the first Agda's key) and their tests assert the right behaviour.

Findings:

- **A proof of ⊥ under ``--safe``** (both Agdas, any ``agda_toolchain``): Agda's positivity
  checker records no occurrence for a formal argument a point-free definition does not bind
  (agda/agda#8564): ``P = Negate`` in one mutual group with ``data FixP`` whose constructor takes
  ``P tt FixP`` hides a negative occurrence. Through the wrapper, ``1 + 1 ≡ 3`` is verified. The
  mutual group can be written five ways (``mutual``, ``interleaved mutual``, a forward ``data``
  or ``record`` signature, a function signature before the data type); defined outside one
  group, or with ``P`` binding its argument (``P tt = Negate tt``), or with a type that shows
  ``P``'s arity (``Set → Set``), Agda refuses ``FixP``.
- **The candidate chooses the judge**: importing any module the PyPI copy lacks (say
  ``Data.Float.Base``) makes Debian's Agda judge. The two Agdas disagree on some closed
  statements (``primIsAlpha`` of a letter newer than Debian's GHC's Unicode tables), so under one
  configuration both ``primIsAlpha c ≡ true`` and ``primIsAlpha c ≡ false`` are verified.
- **The cache serves one Agda's verdict for the other**: a verdict the fallback (Debian) gave is
  also stored under the PyPI plan's key, whose identity names only the PyPI Agda; ``pypi`` alone
  (promised ``error`` on such a file) is then served Debian's verdict.

Attacks that failed (ordinary tests): imports hidden from the choice by layout, comments,
pragmas, separators or odd white space; solution modules named like a builtin or like a module a
library interface depends on (refuted once, no fallback); a hole candidate changing the lane's
Agda; the launcher's plain fallback (``site.main()`` under ``-I -S``) importing an ``agda``
package from the work folder or ``PYTHONPATH``.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import pytest

from assay import Status
from assay._config import Config
from assay.proofs import JudgmentCache, agda_toolchain, judge, plan_for
from assay.proofs._agda import AGDA
from assay.proofs._agda_toolchain import (
    LAUNCHER,
    agda_toolchain_for,
    interpreter_of,
    needs_fallback,
    pypi_launcher,
)
from assay.proofs._holes import fill
from assay.proofs._plan import Plan
from assay.proofs._toolchain import Toolchain
from assay.sandbox import Limits, Sandbox
from tests.helpers import run_kind
from tests.proofs.conftest import need

AUTO = Config(agda_toolchain="auto", judgment_cache="off")
PYPI = Config(agda_toolchain="pypi", judgment_cache="off")
DEBIAN = Config(agda_toolchain="debian", judgment_cache="off")
LIMITS = Limits(timeout=120, memory_mb=4096)
HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality"
JUDGED_INSTEAD = "judged instead"
LACKING = "Data.Float.Base"
"""A module the PyPI copy has no interface for (``.SKIPPED``/``.FAILED``), allowed by the scan."""


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


def _auto() -> Toolchain:
    """The "auto" toolchain (skip when it has no fallback here: the PyPI Agda is not built)."""
    need("agda")
    found = agda_toolchain(AUTO)
    if found is None or found.fallback is None:
        pytest.skip(
            "auto has no fallback here (the PyPI Agda is not built: scripts/agda-toolchain)"
        )
    return found


# --- finding 1: a proof of ⊥ through the positivity checker (agda/agda#8564) ---------------

_PRELUDE = """
data ⊥ : Set where

data ⊤ : Set where
  tt : ⊤

⊤-rec : ∀ {ℓ} {A : Set ℓ} → ⊤ → A → A
⊤-rec tt x = x

Negate : (x : ⊤) → ⊤-rec x (Set → Set)
Negate tt X = (X → ⊥)
"""
_GROUPS = {
    "mutual": (
        "mutual\n  P : (x : ⊤) → ⊤-rec x (Set → Set)\n  P = Negate\n\n"
        "  data FixP : Set where\n    wrap : P tt FixP → FixP\n"
    ),
    "interleaved-mutual": (
        "interleaved mutual\n  P : (x : ⊤) → ⊤-rec x (Set → Set)\n"
        "  data FixP : Set where\n    wrap : P tt FixP → FixP\n  P = Negate\n"
    ),
    "forward-data": (
        "P : (x : ⊤) → ⊤-rec x (Set → Set)\ndata FixP : Set\nP = Negate\n"
        "data FixP where\n  wrap : P tt FixP → FixP\n"
    ),
    "record": (
        "P : (x : ⊤) → ⊤-rec x (Set → Set)\nrecord FixP : Set\nP = Negate\n"
        "record FixP where\n  inductive\n  constructor wrap\n  field unwrap : P tt FixP\n"
    ),
    "signature-first": (
        "P : (x : ⊤) → ⊤-rec x (Set → Set)\n\n"
        "data FixP : Set where\n  wrap : P tt FixP → FixP\n\nP = Negate\n"
    ),
}
_ABSURD = """
no-fixp : FixP → ⊥
no-fixp (wrap x) = x (wrap x)

bang : ⊥
bang = no-fixp (wrap no-fixp)

⊥-elim : {A : Set} → ⊥ → A
⊥-elim ()

wrong : 1 + 1 ≡ 3
wrong = ⊥-elim bang
"""


def _negative(group: str) -> str:
    absurd = _ABSURD
    if group == "record":
        absurd = absurd.replace("no-fixp (wrap x) = x (wrap x)", "no-fixp f = FixP.unwrap f f")
    return f"module Solution where\n\n{HEADER}\n{_PRELUDE}\n{_GROUPS[group]}{absurd}"


@pytest.mark.parametrize("config", [AUTO, DEBIAN], ids=["auto", "debian"])
@pytest.mark.parametrize("group", sorted(_GROUPS))
def test_a_negative_type_hidden_behind_a_point_free_definition_is_not_verified(
    group: str, config: Config, sandbox: Sandbox
) -> None:
    need("agda")
    plan = plan_for(
        "agda", _negative(group), statement="1 + 1 ≡ 3", name="wrong", header=HEADER, config=config
    )
    judged = judge("agda", plan, sandbox, LIMITS, config=config)
    assert judged.verdict is None or not judged.verdict.green, judged.verdict.version


def test_the_agda_kind_does_not_verify_the_negative_type(tmp_path: Path) -> None:
    """The same proof of ``1 + 1 ≡ 3`` as a user runs it: the ``agda`` kind, default config."""
    _auto()
    (tmp_path / "Solution.agda").write_text(_negative("forward-data"))
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


CONTROLS = {
    "no-mutual-group": (
        "P : (x : ⊤) → ⊤-rec x (Set → Set)\nP = Negate\n\n"
        "data FixP : Set where\n  wrap : P tt FixP → FixP\n"
    ),
    "argument-bound": (
        "P : (x : ⊤) → ⊤-rec x (Set → Set)\ndata FixP : Set\nP tt = Negate tt\n"
        "data FixP where\n  wrap : P tt FixP → FixP\n"
    ),
    "arity-in-the-type": (
        "P : Set → Set\ndata FixP : Set\nP = Negate tt\ndata FixP where\n  wrap : P FixP → FixP\n"
    ),
}


@pytest.mark.parametrize("control", sorted(CONTROLS))
def test_the_negative_type_is_refused_when_agda_sees_the_occurrence(
    control: str, sandbox: Sandbox
) -> None:
    """The controls: outside one mutual group, with ``P`` binding ``x``, or with ``P``'s arity
    in its type, the positivity checker sees ``FixP`` to the left of an arrow. So the finding
    is exactly a point-free definition of a computed arity in the data type's mutual group."""
    _auto()
    source = f"module Solution where\n\n{HEADER}\n{_PRELUDE}\n{CONTROLS[control]}{_ABSURD}"
    plan = plan_for("agda", source, statement="1 + 1 ≡ 3", name="wrong", header=HEADER, config=AUTO)
    plan = dataclasses.replace(plan, refusals=[])  # Agda's own reading: the scan (which now
    # refuses the forward declarations of two of them) set aside
    verdict = judge("agda", plan, sandbox, LIMITS, config=AUTO).verdict
    assert verdict is not None and verdict.finding == "does_not_check" and not verdict.green
    assert any("not strictly positive" in line for line in verdict.diagnostics)


# --- finding 2: the candidate chooses the judge ----------------------------------------------

CHAR_HEADER = (
    "open import Agda.Builtin.Bool\nopen import Agda.Builtin.Char\n"
    "open import Agda.Builtin.Equality\nopen import Agda.Builtin.Nat"
)
NEW_LETTER = 0x1E030
"""U+1E030 MODIFIER LETTER CYRILLIC SMALL A (Unicode 15.0): a letter to the PyPI Agda's GHC 9.6,
an unassigned code point to the GHC that built Debian's Agda 2.6.2.2."""


def _char_plan(claim: str, force_debian: bool) -> Plan:
    statement = f"primIsAlpha (primNatToChar {NEW_LETTER}) ≡ {claim}"
    extra = f"open import {LACKING}\n" if force_debian else ""
    source = f"module Solution where\n\n{CHAR_HEADER}\n{extra}\nthm : {statement}\nthm = refl\n"
    return plan_for(
        "agda", source, statement=statement, name="thm", header=CHAR_HEADER, config=AUTO
    )


@pytest.mark.slow
def test_the_candidate_cannot_choose_the_agda_that_judges(sandbox: Sandbox) -> None:
    """Found by adv-auto: under auto the candidate picked Debian's Agda by importing a module the
    PyPI copy lacks, and the Agdas disagree on ``primIsAlpha`` of a Unicode 15 letter, so both
    ``≡ true`` and ``≡ false`` were verified under one configuration. Fixed: only the author's
    inputs choose the Agda, and a solution importing a module it lacks is refused."""
    auto = _auto()
    verdicts = {}
    for claim, force in (("true", False), ("false", True)):
        plan = _char_plan(claim, force)
        assert plan.toolchain is not None and plan.toolchain.version == auto.version
        if force:
            assert any("the author can import it in the header" in r for r in plan.refusals)
        else:
            assert not plan.refusals
        verdicts[claim] = judge("agda", plan, sandbox, LIMITS, config=AUTO).verdict
    greens = {claim: v is not None and v.green for claim, v in verdicts.items()}
    assert not (greens["true"] and greens["false"]), {
        claim: (v.version if v else None) for claim, v in verdicts.items()
    }


# --- finding 3: the cache serves a verdict from one Agda for the other ----------------------

FLOAT = (
    "module Solution where\n\nopen import Data.Float.Base\nopen import Agda.Builtin.Equality\n\n"
    "same : 1.0 ≡ 1.0\nsame = refl\n"
)


@pytest.mark.slow
def test_a_fallen_back_verdict_is_never_served_for_the_first_agda(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    auto = _auto()
    forced = plan_for("agda", FLOAT, config=PYPI)  # the choice by imports bypassed
    plan = dataclasses.replace(forced, fallback=plan_for("agda", FLOAT, config=DEBIAN))
    cache = JudgmentCache(tmp_path / "cache", key_file=tmp_path / "cache.key")
    first = judge("agda", plan, sandbox, LIMITS, cache, config=AUTO).verdict
    assert first is not None and first.green and auto.fallback is not None
    assert first.version == auto.fallback.version and JUDGED_INSTEAD in first.reason
    served = judge("agda", forced, sandbox, LIMITS, cache, config=PYPI).verdict
    assert served is not None
    assert served.version == auto.version, f"{served.version} served (cached={served.cached})"


# --- attacks that failed --------------------------------------------------------------------

HIDDEN_IMPORTS = {
    "module-underscore": f"module S where\nmodule _ where\n  open import {LACKING}\n",
    "nested-module": f"module S where\nmodule M where\n  open import {LACKING} using (Float)\n",
    "comment-between": f"module S where\nimport {{- x -}} {LACKING}\n",
    "pragma-between": f"module S where\nimport {{-# OPTIONS --safe #-}} {LACKING}\n",
    "newline-between": f"module S where\nimport\n  {LACKING}\n",
    "explicit-braces": f"module S where {{\nopen import {LACKING} }}\n",
    "semicolon": f"module S where\nopen import Agda.Builtin.Nat ; open import {LACKING}\n",
    "let-open": f"module S where\nx = let open import {LACKING} in 1\n",
    "before-the-header": f"open import {LACKING}\nmodule S where\n",
    "tab": f"module S where\nimport\t{LACKING}\n",
    "no-break-space": f"module S where\nimport\u00a0{LACKING}\n",
    "line-separator": f"module S where\nimport Agda.Builtin.Nat\u2028import {LACKING}\n",
    "vertical-tab": f"module S where\nimport Agda.Builtin.Nat\x0bimport {LACKING}\n",
    "form-feed": f"module S where\nimport Agda.Builtin.Nat\x0cimport {LACKING}\n",
    "carriage-return": f"module S where\nimport Agda.Builtin.Nat\rimport {LACKING}\n",
    "via-a-lacking-parent": "module S where\nopen import Data.Float using (Float)\n",
}


@pytest.mark.parametrize("name", sorted(HIDDEN_IMPORTS))
def test_no_import_hides_from_the_choice_of_agda(name: str) -> None:
    """Every way of writing the import (or text the lexer cannot read) chooses Debian's Agda."""
    assert needs_fallback(_auto(), [HIDDEN_IMPORTS[name]])


@pytest.mark.parametrize(
    ("source", "statement", "name", "header"),
    [
        pytest.param(
            "module Agda.Builtin.Nat where\n\nwrong : Set\nwrong = wrong\n",
            "Set",
            "wrong",
            HEADER,
            id="named-like-a-builtin",
        ),
        pytest.param(
            f"module Data.Nat.Base where\n\n{HEADER}\n\nwrong : 1 + 1 ≡ 3\nwrong = refl\n",
            "1 + 1 ≡ 3",
            "wrong",
            f"open import Data.Nat.Properties\n{HEADER}",
            id="named-like-a-library-dependency",
        ),
    ],
)
def test_a_shadowing_module_is_refuted_once(
    source: str, statement: str, name: str, header: str, sandbox: Sandbox
) -> None:
    """A solution module named like a builtin, or like a module a built library interface
    imports: Agda reports an ambiguous module (in the work, or located in a library module that
    *has* its interface), which is no library failure: the PyPI refutation stands."""
    auto = _auto()
    plan = plan_for("agda", source, statement=statement, name=name, header=header, config=AUTO)
    assert not plan.refusals and plan.fallback is not None
    verdict = judge("agda", plan, sandbox, LIMITS, config=AUTO).verdict
    assert verdict is not None and verdict.finding == "does_not_check" and not verdict.green
    assert verdict.version == auto.version and JUDGED_INSTEAD not in verdict.reason
    assert any("Ambiguous module name" in line for line in verdict.diagnostics)


OBLIGATIONS = {
    "pypi": "module H where\n\nopen import Agda.Builtin.Nat\n\nx : Nat\nx = {! !}\n",
    "debian": (
        "module H where\n\nopen import Agda.Builtin.Nat\n\nx : Nat\nx = {! !}\n\n"
        f"open import {LACKING}\n"
    ),
}
CANDIDATES = [
    "zero",
    "{! zero",
    "zero !}",
    '"zero',
    "zero -- x",
    "{- zero",
    "zero -}",
    "zero\u2028open",
    "zero ; open",
    "let open M in zero",
    "λ where",
]


@pytest.mark.parametrize("candidate", CANDIDATES)
@pytest.mark.parametrize("agda", sorted(OBLIGATIONS))
def test_a_candidate_cannot_change_the_lanes_agda(agda: str, candidate: str) -> None:
    """The lane chooses from the obligation's text, the judge from the filled text: a candidate
    either is refused or leaves the choice as it was (so the lane and the judge agree)."""
    _auto()
    text = OBLIGATIONS[agda]
    if AGDA.candidate_refusals(candidate):
        return
    start = text.index("{! !}")
    filled = fill(text, (start, start + len("{! !}")), candidate)
    lane, judged = agda_toolchain_for(AUTO, [text]), agda_toolchain_for(AUTO, [filled])
    assert lane is not None and judged is not None and lane.version == judged.version


def test_the_launchers_plain_start_ignores_the_work_folder_and_pythonpath(tmp_path: Path) -> None:
    """``python -I -S _agda_launch.py`` without ``+RTS`` runs the package's entry point after
    ``site.main()``: an ``agda`` package in the working folder or on ``PYTHONPATH`` is not it."""
    launcher = pypi_launcher()
    python = interpreter_of(launcher) if launcher is not None else None
    if python is None:
        pytest.skip("the PyPI Agda is not installed (scripts/agda-toolchain)")
    fake = tmp_path / "agda"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text(
        "def main():\n    print('FAKE AGDA')\n    raise SystemExit(0)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    for args in (["--version"], ["+RTS", "-A1m", "-RTS", "--version"]):
        run = subprocess.run(
            [python, "-I", "-S", str(LAUNCHER), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0 and "FAKE" not in run.stdout, run.stdout + run.stderr
        assert "Agda version 2.6.4.3" in run.stdout
