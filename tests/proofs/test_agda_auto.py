"""``agda_toolchain="auto"`` (the default), for real: the PyPI Agda judges, Debian's judges a file
importing a module the PyPI Agda's library copy lacks, and the verdict names the one that spoke.

The PyPI copy of agda-stdlib 1.7.1 has no interface for ``Data.Float.Base`` (it does not check
under Agda 2.6.4.3) and every module importing it (``agda-stdlib.SKIPPED``); the sandbox's
library is read-only, so the PyPI Agda cannot judge such a file. Debian's can.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from assay._config import Config
from assay.proofs import AgdaLane, agda_toolchain, judge, plan_for
from assay.proofs._agda_toolchain import agda_toolchain_for, needs_fallback
from assay.proofs._judges import _key
from assay.proofs._toolchain import Toolchain
from assay.proofs._verdict import Verdict
from assay.sandbox import Limits, Sandbox
from tests.proofs.conftest import need

AUTO = Config(agda_toolchain="auto", judgment_cache="off")
PYPI = Config(agda_toolchain="pypi", judgment_cache="off")
DEBIAN = Config(agda_toolchain="debian", judgment_cache="off")
LIMITS = Limits(timeout=300, memory_mb=4096)
FLOAT = (
    "module Solution where\n\nopen import Data.Float.Base\nopen import Agda.Builtin.Equality\n\n"
    "same : 1.0 ≡ {}\nsame = refl\n"
)
NAT = (
    "module Solution where\n\nopen import Data.Nat using (ℕ; _+_)\n"
    "open import Data.Nat.Properties using (+-comm)\n"
    "open import Relation.Binary.PropositionalEquality using (_≡_)\n\n"
    "comm : ∀ (m n : ℕ) → m + n ≡ n + m\ncomm = {}\n"
)
JUDGED_INSTEAD = "judged instead"
"""What a verdict's reason says when the fallback judged (``_judges.judge``)."""
PYPI_VERSION_TEXT = "2.6.4.3"


def _both() -> tuple[Toolchain, Toolchain]:
    """(the PyPI Agda, Debian's), or skip saying which is missing."""
    need("agda")
    pypi, debian = agda_toolchain(PYPI), agda_toolchain(DEBIAN)
    if pypi is None or debian is None:
        pytest.skip("auto needs both Agdas installed (the PyPI one: scripts/agda-toolchain)")
    return pypi, debian


def _judged(source: str, sandbox: Sandbox, config: Config = AUTO) -> Verdict:
    plan = plan_for("agda", source, config=config)
    assert not plan.refusals, plan.refusals
    verdict = judge("agda", plan, sandbox, LIMITS, config=config).verdict
    assert verdict is not None
    return verdict


def _spoke(verdict: Verdict, toolchain: Toolchain) -> None:
    """``verdict`` names ``toolchain`` (binary, version, command) and no other Agda spoke."""
    assert verdict.binary == toolchain.binary and verdict.version == toolchain.version
    assert len(verdict.steps) == 1 and verdict.steps[0][: len(toolchain.command)] == list(
        toolchain.command
    )
    assert JUDGED_INSTEAD not in verdict.reason


def test_auto_is_the_default_and_carries_debian_behind_pypi() -> None:
    pypi, debian = _both()
    assert Config().agda_toolchain == "auto"
    found = agda_toolchain(Config())
    assert found is not None and found.version == pypi.version
    assert found.fallback == debian and "Data.Float.Base" in found.lacking


@pytest.mark.parametrize(
    ("source", "debian"),
    [
        pytest.param(FLOAT, True, id="skipped-module"),
        pytest.param(NAT, False, id="built-module"),
        pytest.param(FLOAT.replace("open import Data.Float.Base\n", ""), False, id="no-import"),
        pytest.param("-- open import Data.Float\n" + NAT, False, id="import-in-a-comment"),
        pytest.param('s = "open import Data.Float"\n' + NAT, False, id="import-in-a-string"),
        pytest.param(NAT + "open import Data.Float.Properties\n", True, id="skipped-late"),
        pytest.param(NAT + '"unclosed\n', True, id="unlexable-text"),
        pytest.param(NAT + "import\n", True, id="import-without-a-name"),
        pytest.param(NAT + "open import Algebra.FunctionProperties\n", True, id="unbuilt"),
    ],
)
def test_imports_choose_the_agda_conservatively(source: str, debian: bool) -> None:
    pypi, debian_agda = _both()
    chosen = agda_toolchain_for(AUTO, [source])
    assert chosen == (debian_agda if debian else agda_toolchain(AUTO))
    assert needs_fallback(agda_toolchain(AUTO) or pypi, [source]) is debian


@pytest.mark.slow
@pytest.mark.parametrize(
    ("value", "green"),
    [pytest.param("1.0", True, id="true"), pytest.param("2.0", False, id="false")],
)
def test_a_skipped_import_is_judged_by_debian(value: str, green: bool, sandbox: Sandbox) -> None:
    _, debian = _both()
    verdict = _judged(FLOAT.format(value), sandbox)
    _spoke(verdict, debian)
    assert verdict.green is green
    assert verdict.finding == ("checks" if green else "does_not_check")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("proof", "green"),
    [pytest.param("+-comm", True, id="true"), pytest.param("λ m n → refl", False, id="false")],
)
def test_a_built_import_is_judged_by_pypi_and_a_refutation_stands(
    proof: str, green: bool, sandbox: Sandbox
) -> None:
    pypi, _ = _both()
    source = NAT.format(proof).replace("using (_≡_)", "using (_≡_; refl)")
    verdict = _judged(source, sandbox)
    _spoke(verdict, agda_toolchain(AUTO) or pypi)
    assert PYPI_VERSION_TEXT in verdict.version
    assert verdict.green is green
    assert verdict.finding == ("checks" if green else "does_not_check")


@pytest.mark.slow
def test_a_refutation_is_never_judged_again_even_with_a_fallback_at_hand(
    sandbox: Sandbox,
) -> None:
    """The plan carries Debian's plan as its fallback; PyPI refutes the work: its verdict stands."""
    _both()
    source = NAT.format("λ m n → refl").replace("using (_≡_)", "using (_≡_; refl)")
    plan = plan_for("agda", source, config=AUTO)
    assert plan.fallback is not None and plan.toolchain is not None
    assert plan.fallback.toolchain is not None and plan.fallback.toolchain.fallback is None
    verdict = judge("agda", plan, sandbox, LIMITS, config=AUTO).verdict
    assert verdict is not None and verdict.finding == "does_not_check" and not verdict.green
    _spoke(verdict, plan.toolchain)


@pytest.mark.slow
def test_a_library_failure_at_run_time_lets_debian_judge(sandbox: Sandbox) -> None:
    """The PyPI plan of a file whose import its library lacks (the choice by imports bypassed,
    as if ``SKIPPED`` were wrong): its run fails on the library, Debian's plan judges, and the
    verdict names Debian and says why. (Debian's refutation of a false proof through the same
    plan is ``test_a_skipped_import_is_judged_by_debian``'s.)"""
    pypi, debian = _both()
    source = FLOAT.format("1.0")
    forced = plan_for("agda", source, config=PYPI)
    assert forced.toolchain == pypi and forced.fallback is None
    plan = dataclasses.replace(forced, fallback=plan_for("agda", source, config=DEBIAN))
    judged = judge("agda", plan, sandbox, LIMITS, config=AUTO)
    verdict = judged.verdict
    assert verdict is not None and verdict.green
    assert verdict.binary == debian.binary and verdict.version == debian.version
    assert verdict.command.startswith(debian.binary + " ")
    assert JUDGED_INSTEAD in verdict.reason and "Data/Float/Base.agda" in verdict.reason
    assert judged.plan.toolchain == debian
    alone = judge("agda", forced, sandbox, LIMITS, config=PYPI).verdict  # "pypi": no fallback
    assert alone is not None and alone.finding == "machinery" and not alone.green
    assert alone.version == pypi.version


def test_the_cache_key_names_the_agda_that_judges(sandbox: Sandbox) -> None:
    pypi, debian = _both()
    source = NAT.format("+-comm")
    auto_plan, debian_plan = (
        plan_for("agda", source, config=AUTO),
        plan_for("agda", source, config=DEBIAN),
    )
    assert auto_plan.toolchain is not None and auto_plan.toolchain.version == pypi.version
    assert auto_plan.files == debian_plan.files
    keys = {
        _key("agda", plan, plan.toolchain, sandbox, LIMITS, ())
        for plan in (auto_plan, debian_plan, auto_plan.fallback)
        if plan is not None and plan.toolchain is not None
    }
    assert len(keys) == 2  # the fallback plan is Debian's plan, byte for byte
    assert auto_plan.fallback == dataclasses.replace(debian_plan, toolchain=debian)


@pytest.mark.slow
def test_the_lane_uses_the_judges_agda_for_each_file(sandbox: Sandbox, tmp_path: Path) -> None:
    pypi, debian = _both()
    floaty, natty = tmp_path / "Floaty.agda", tmp_path / "Natty.agda"
    floaty.write_text(
        FLOAT.replace("Solution", "Floaty").format("1.0").replace("= refl", "= {! !}"),
        encoding="utf-8",
    )
    natty.write_text(NAT.replace("Solution", "Natty").format("{! !}"), encoding="utf-8")
    with AgdaLane(sandbox, config=AUTO) as lane:
        goal = lane.goal(floaty, 7, 8)
        assert lane.toolchain == debian and "≡" in goal.type
        goal = lane.goal(natty, 8, 8)
        assert lane.toolchain == agda_toolchain(AUTO) and lane.toolchain is not None
        assert lane.toolchain.version == pypi.version and "≡" in goal.type
