"""Lean: the judge is complete, but Lean cannot be installed on these machines.

Execution tests run wherever ``lake`` is on PATH and skip here with that reason. The source audit
and the output parsing are tested on Lean's output as its documentation and users show it (no
toolchain was available to capture it on this machine; see the README).
"""

from __future__ import annotations

import shutil

import pytest

from assay import CheckContext, Status, build_check
from assay.proofs._languages import lean_assumptions, lean_plan
from assay.proofs._toolchain import Toolchain

# Output of `lake env lean AssayGoal.lean` for the wrapper's `#print axioms assay_goal`.
FIXTURES = {
    "clean": ("'assay_goal' does not depend on any axioms\n", []),
    "classical": (
        "'assay_goal' depends on axioms: [propext, Classical.choice, Quot.sound]\n",
        ["propext", "Classical.choice", "Quot.sound"],
    ),
    "sorry_warning_then_axioms": (
        "AssayGoal.lean:3:8: warning: declaration uses 'sorry'\n"
        "'assay_goal' depends on axioms: [sorryAx]\n",
        ["sorryAx"],
    ),
    "native_decide": (
        "'assay_goal' depends on axioms: [propext, Lean.ofReduceBool]\n",
        ["propext", "Lean.ofReduceBool"],
    ),
    "last_line_wins": (
        "'helper' does not depend on any axioms\n'assay_goal' depends on axioms: [cheat]\n",
        ["cheat"],
    ),
    "nothing_printed": ("AssayGoal.lean:1:0: error: unknown package 'Solution'\n", None),
}


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_print_axioms_parsing(name: str) -> None:
    output, axioms = FIXTURES[name]
    assert lean_assumptions(output) == axioms


def test_the_wrapper_restates_the_statement_and_audits_axioms() -> None:
    toolchain = Toolchain("lean", "/usr/bin/lake", "Lean (version 4.x)", "lake")
    plan = lean_plan(
        toolchain, "theorem t : 1 = 1 := rfl\n", statement="1 = 1", name="t", header=""
    )
    wrapper = plan.files["AssayGoal.lean"].decode()
    assert wrapper.startswith("import Solution\n")
    assert "theorem assay_goal : 1 = 1 := t" in wrapper
    assert wrapper.rstrip().endswith("#print axioms assay_goal")
    assert plan.steps[0][:3] == ["/usr/bin/lake", "env", "lean"]


def test_without_lake_the_kind_is_inconclusive_and_says_why(tmp_path: object) -> None:
    if shutil.which("lake") is not None:
        pytest.skip("lake is installed here; the execution tests below cover it")
    check = build_check({"kind": "lean", "file": "x.lean", "statement": "1 = 1", "name": "t"})
    from pathlib import Path

    folder = Path(str(tmp_path))
    (folder / "x.lean").write_text("theorem t : 1 = 1 := rfl\n")
    outcome = check.run(CheckContext(workspace=folder))
    assert outcome.status is Status.INCONCLUSIVE
    assert "lake is not installed" in outcome.detail


def test_sorry_is_refused_before_any_judgment(tmp_path: object) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    (folder / "x.lean").write_text("theorem t : 1 = 2 := by sorry\n")
    check = build_check({"kind": "lean", "file": "x.lean", "statement": "1 = 2", "name": "t"})
    outcome = check.run(CheckContext(workspace=folder))
    assert outcome.status is Status.REFUTED  # no toolchain is needed to refuse a shape
    assert "`sorry`" in outcome.detail


@pytest.mark.skipif(
    shutil.which("lake") is None,
    reason="Lean cannot be installed on these machines (no lake on PATH)",
)
def test_lean_judges_a_real_proof(tmp_path: object) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    (folder / "x.lean").write_text("theorem t (n m : Nat) : n + m = m + n := Nat.add_comm n m\n")
    check = build_check(
        {"kind": "lean", "file": "x.lean", "statement": "∀ (n m : Nat), n + m = m + n", "name": "t"}
    )
    assert check.run(CheckContext(workspace=folder)).status is Status.VERIFIED
