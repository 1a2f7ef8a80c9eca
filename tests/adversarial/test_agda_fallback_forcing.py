"""Forcing the Agda fallback: under ``agda_toolchain="auto"`` Debian's Agda judges instead of the
PyPI one only when the PyPI run failed on its *own library* (``_agda.library_failure``). A
candidate that could fake that failure after its work was refuted would get a second judge to
try. Each instance is a false proof that carries the failure's text (the library path, Agda's
"Failed to write interface" line, a module named like a skipped one): its refutation must stand,
from the Agda that judged first, with no other Agda run after it.
"""

from __future__ import annotations

import pytest

from assay._config import Config
from assay.proofs import agda_toolchain, judge, plan_for
from assay.proofs._agda import library_failure
from assay.sandbox import Limits, Sandbox
from tests.proofs.conftest import need

AUTO = Config(agda_toolchain="auto", judgment_cache="off")
LIMITS = Limits(timeout=120, memory_mb=4096)
HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality\nopen import Agda.Builtin.String"
JUDGED_INSTEAD = "judged instead"


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


def _library() -> str:
    """The PyPI Agda's library copy (skip when "auto" is not the PyPI one here)."""
    need("agda")
    found = agda_toolchain(AUTO)
    if found is None or found.fallback is None:
        pytest.skip(
            "auto has no fallback here (the PyPI Agda is not built: scripts/agda-toolchain)"
        )
    return found.search_path[0]


def _forgeries(library: str) -> dict[str, str]:
    base = f"{library}/Data/Float/Base"
    return {
        "block-comment": (
            f"{{-\nFailed to write interface {base}.agdai.\n{base}.agda:68,19-25\n-}}\n"
            "wrong : 1 + 1 ≡ 3\nwrong = refl\n"
        ),
        "line-comments": (
            f"-- Checking Data.Float.Base ({base}.agda).\n-- {base}.agda:68,19-25\n"
            "wrong : 1 + 1 ≡ 3\nwrong = refl\n"
        ),
        "string-in-the-error": (
            f'wrong : "x" ≡ "\\nFailed to write interface {base}.agdai.\\n{base}.agda:1,1-2"\n'
            "wrong = refl\n"
        ),
        "checking-line-in-a-string": (
            f'wrong : "\\n Checking Data.Float.Base ({base}.agda).\\n{base}.agda:68,19-25" ≡ "y"\n'
            "wrong = refl\n"
        ),
    }


FORGERIES = ["block-comment", "line-comments", "string-in-the-error", "checking-line-in-a-string"]


@pytest.mark.parametrize("name", FORGERIES)
def test_a_refutation_carrying_the_failure_text_gets_no_second_judge(
    name: str, sandbox: Sandbox
) -> None:
    library = _library()
    source = f"module Solution where\n\n{HEADER}\n\n{_forgeries(library)[name]}"
    plan = plan_for(
        "agda", source, statement="1 + 1 ≡ 3" if "comment" in name else None,
        name="wrong" if "comment" in name else None, header=HEADER, config=AUTO,
    )  # fmt: skip
    assert not plan.refusals and plan.toolchain is not None and plan.fallback is not None
    verdict = judge("agda", plan, sandbox, LIMITS, config=AUTO).verdict
    assert verdict is not None and not verdict.green
    assert verdict.finding == "does_not_check", verdict.diagnostics
    assert verdict.version == plan.toolchain.version and verdict.binary == plan.toolchain.binary
    assert JUDGED_INSTEAD not in verdict.reason


def test_a_module_named_like_a_skipped_one_is_judged_once(sandbox: Sandbox) -> None:
    """A solution module named ``Data.Float.Base``: judged alone, the PyPI Agda refutes it (an
    ambiguous module name, located in the solution) and that stands; against a statement too:
    only the author's inputs (the header, the statement) choose the Agda, so the wrapper's import
    of the solution by that name does not send it to Debian's."""
    _library()
    source = f"module Data.Float.Base where\n\n{HEADER}\n\nwrong : 1 + 1 ≡ 3\nwrong = refl\n"
    alone = plan_for("agda", source, header=HEADER, config=AUTO)
    wrapped = plan_for(
        "agda", source, statement="1 + 1 ≡ 3", name="wrong", header=HEADER, config=AUTO
    )
    assert alone.fallback is not None and wrapped.fallback is not None
    for plan in (alone, wrapped):
        assert plan.toolchain is not None and not plan.refusals
        verdict = judge("agda", plan, sandbox, LIMITS, config=AUTO).verdict
        assert verdict is not None and verdict.finding == "does_not_check" and not verdict.green
        assert verdict.version == plan.toolchain.version and JUDGED_INSTEAD not in verdict.reason


@pytest.mark.parametrize(
    "module", ["Data.Float.Base′", "Dаta.Float.Base", "Data.Float.Base.Fake", "Data..Float"]
)
def test_a_lookalike_import_is_refused_before_any_judge(module: str, sandbox: Sandbox) -> None:
    _library()
    source = f"module Solution where\n\nopen import {module}\n{HEADER}\n\nwrong : 1 + 1 ≡ 3\nwrong = refl\n"
    plan = plan_for("agda", source, header=HEADER, config=AUTO)
    assert plan.refusals
    judged = judge("agda", plan, sandbox, LIMITS, config=AUTO)
    assert judged.verdict is None and judged.refusals


LIB = "/opt/lib/agda-stdlib"


@pytest.mark.parametrize(
    "output",
    [
        pytest.param(
            "Checking Solution (/proof/Solution.agda).\n/proof/Solution.agda:5,9-13\n"
            f"Failed to write interface {LIB}/Data/Float/Base.agdai.\n",
            id="after-the-works-own-location",
        ),
        pytest.param(
            "Checking Solution (/proof/Solution.agda).\n"
            f"Failed to write interface {LIB}/Data/Float/Base.agdai.\n",
            id="while-checking-the-work",
        ),
        pytest.param(
            f"Checking Solution (/proof/Solution.agda).\n Checking Data.Nat ({LIB}/Data/Nat.agda).\n"
            f"Failed to write interface {LIB}/Data/Float/Base.agdai.\n",
            id="another-module-than-the-one-checked",
        ),
        pytest.param(
            f"Checking Solution (/proof/Solution.agda).\n Checking X ({LIB}/X.agda).\n"
            "Checking Solution (/proof/Solution.agda).\n"
            f"{LIB}/X.agda:1,1-2\n",
            id="the-work-checked-last",
        ),
        pytest.param(f"{LIB}/Data/Float/Base.agda:68,19-25\n", id="no-checking-line"),
        pytest.param(
            f"Checking Solution (/proof/Solution.agda).\n Checking M ({LIB}/M.agda).\n"
            f"/proof/Solution.agda:1,1-2\n{LIB}/M.agda:1,1-2\n",
            id="a-located-error-in-the-work-first",
        ),
    ],
)
def test_the_reader_sees_no_library_failure_in_the_works_own_error(output: str) -> None:
    assert library_failure(output) is None


def test_the_reader_sees_a_real_library_failure() -> None:
    unwritable = (
        f"Checking FP (/proof/FP.agda).\n Checking A ({LIB}/A.agda).\n"
        f"Failed to write interface {LIB}/A.agdai.\n/proof/FP.agda:2,1-39\n"
    )
    assert library_failure(unwritable) == f"{LIB}/A.agda"
    located = (
        f"Checking F (/proof/F.agda).\n Checking D ({LIB}/D.agda).\n"
        f"  Checking D.B ({LIB}/D/B.agda).\n{LIB}/D/B.agda:68,19-25\nMaybe W !=< W\n"
    )
    assert library_failure(located) == f"{LIB}/D/B.agda"  # no interface at /opt/lib
